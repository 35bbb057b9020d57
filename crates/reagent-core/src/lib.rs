//! # reagent-core
//!
//! The agent loop. An [`Agent`] holds a [`Provider`](reagent_protocol::Provider), a
//! [`ToolRegistry`](reagent_tools::ToolRegistry), a workspace and an [`AgentConfig`]; each
//! [`Agent::run`] sends the task, extracts the tool calls the model emits (natively, in a
//! constrained JSON shape, or buried in text), runs them, feeds the results back and repeats,
//! under guardrails: max iterations, repetition (hint, then stop), nudges for empty or narrating
//! replies, one retry of truncated replies, token/time/tool-call budgets (ending with a final
//! answer), and context-window compaction. Every step is an [`Event`](reagent_protocol::Event)
//! delivered to an [`EventSink`].
//!
//! Architecture invariant: this crate knows no HTTP and no concrete provider, and never prints.
//!
//! ```no_run
//! # async fn demo(provider: std::sync::Arc<dyn reagent_protocol::Provider>) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use reagent_core::{Agent, AgentConfig, EventSink};
//! use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
//!
//! let workspace = Arc::new(Workspace::open(std::path::Path::new("."))?);
//! let tools = Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default()));
//! let agent = Agent::new(provider, tools, workspace, AgentConfig::new("qwen3:8b"));
//! let events = EventSink::new(&reagent_core::new_run_id(), Arc::new(|e| println!("{e:?}")));
//! let result = agent.run("list the files", &events, &Default::default()).await;
//! println!("{:?}: {}", result.outcome, result.answer);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod agent;
mod arguments;
mod config;
pub mod degenerate;
mod events;
pub mod guardrails;
mod history;
mod profiles;
mod prompts;
mod result;
pub mod tool_mode;
mod turn;

pub use agent::Agent;
pub use arguments::ArgumentChecker;
pub use config::{AgentConfig, Budgets, CompactionConfig, ToolMode};
pub use events::EventSink;
pub use history::{digest_rounds, Compaction, History, DIGEST_PREFIX};
pub use profiles::{profile_for, ModelProfile};
pub use result::RunResult;

/// A fresh run id (a UUID v4 without dashes).
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
