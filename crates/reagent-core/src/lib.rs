//! # reagent-core
//!
//! The agent loop. An [`Agent`] holds what sessions share: a
//! [`Provider`](reagent_protocol::Provider), a [`ToolRegistry`](reagent_tools::ToolRegistry) and an
//! [`AgentConfig`]. A [`Session`] is one conversation of an agent over a workspace, as a value:
//! given a task (and later follow-ups) with [`Session::push_user`], stepped one loop iteration at
//! a time with [`Session::step`] or run to the end, cancelled for one run without ending it,
//! snapshotted and resumed. Each run sends the task, extracts the tool calls the model emits
//! (natively, in a constrained JSON shape, or buried in text), runs them, feeds the results back
//! and repeats, under guardrails: max iterations, repetition (hint, then stop), nudges for empty
//! or narrating replies, one retry of truncated replies, token/time/tool-call budgets (ending with
//! a final answer), and context-window compaction. When the model ends a run, the configured
//! [`verify`] checks run (failures go back to the model, then the run ends `verified`,
//! `partial_pass` or `verification_failed`); a run that changed files nothing checked ends
//! `unchecked`, one whose answer only repeats a tool error `copied_error`. With checkpoints on,
//! the workspace is recorded before a run's first change ([`checkpoint`]) and [`Attempts`]
//! retries a failed verification from it. Every step is an
//! [`Event`](reagent_protocol::Event) delivered to an [`EventSink`]; the events are complete
//! ([`rebuild_transcript`] rebuilds the conversation from them) and an [`EventBus`] fans them out
//! to live subscribers.
//!
//! Architecture invariant: this crate knows no HTTP and no concrete provider, and never prints.
//!
//! ```no_run
//! # async fn demo(provider: std::sync::Arc<dyn reagent_protocol::Provider>) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use reagent_core::{Agent, AgentConfig, EventSink, Session};
//! use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
//!
//! let tools = Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default()));
//! let agent = Arc::new(Agent::new(provider, tools, AgentConfig::new("qwen3:8b")));
//! let workspace = Arc::new(Workspace::open(std::path::Path::new("."))?);
//! let mut session = Session::new(agent, workspace);
//! let events = EventSink::new(&reagent_core::new_run_id(), Arc::new(|e| println!("{e:?}")));
//! let result = session.run("list the files", &events, &Default::default()).await;
//! println!("{:?}: {}", result.outcome, result.answer);
//! // A follow-up continues the same conversation, as a new run.
//! session.push_user("now count them");
//! let next = EventSink::new(&reagent_core::new_run_id(), Arc::new(|e| println!("{e:?}")));
//! let result = session.run_to_end(&next, &Default::default()).await;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod agent;
mod arguments;
mod attempts;
mod bus;
pub mod checkpoint;
mod config;
pub mod degenerate;
mod events;
pub mod guardrails;
mod history;
mod profiles;
mod prompts;
mod rebuild;
mod replay;
mod result;
mod session;
pub mod spans;
mod text_edits;
pub mod tool_mode;
mod turn;
pub mod verify;
mod weak_model;

pub use agent::Agent;
pub use arguments::ArgumentChecker;
pub use attempts::{AttemptSummary, Attempts};
pub use bus::{EventBus, Received, Subscription};
pub use config::{AgentConfig, Budgets, CompactionConfig, ToolMode, VerifyConfig};
pub use events::EventSink;
pub use history::{digest_rounds, Compaction, History, DIGEST_PREFIX};
pub use profiles::{profile_for, ModelProfile};
pub use rebuild::{rebuild_transcript, RebuildError};
pub use replay::{replay, Decision, Divergence, ReplayError, ReplayReport};
pub use result::{RunError, RunResult};
pub use session::{Session, SessionSettings, SessionSnapshot, Step, SNAPSHOT_VERSION};
pub use weak_model::schema_narrowing;

/// A fresh run id (a UUID v4 without dashes).
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
