//! # reagent-protocol
//!
//! The shared vocabulary of reagent, with no business logic and no I/O:
//!
//! - [`Message`], [`ToolCall`] and [`ToolSpec`]: the conversation the agent loop keeps;
//! - [`ChatRequest`] / [`ChatResponse`] and the [`Provider`] trait that every model backend
//!   (Ollama, OpenAI-compatible, Anthropic, Gemini) implements;
//! - [`Event`]: the run's event stream, the one wire format that the CLI, the `--events` JSONL
//!   file and (later) the server and hub consume.
//!
//! Design decision: the loop (`reagent-core`) depends only on the [`Provider`] trait, never on a
//! concrete backend, and wire formats of providers never leak in here: each provider crate
//! converts at its own edge. [`Event`] *is* a wire format (its JSON Schema is generated into
//! `schema/events.schema.json`); [`Message`] and [`ToolCall`] serialize too, for session
//! snapshots and the store.
//!
//! ```
//! use reagent_protocol::{Message, Role};
//! let m = Message::user("list the files");
//! assert_eq!(m.role, Role::User);
//! ```
#![deny(missing_docs)]

mod event;
mod message;
mod outcome;
mod provider;
mod wire;

pub use event::{
    event_schema, ErrorKind, Event, EventKind, Guardrail, GuardrailAction, Outcome,
    PoolEndpointState, UserMessageReason, SCHEMA_VERSION,
};
pub use message::{Message, Role, ToolCall, ToolSpec};
pub use provider::{
    CancellationToken, Capabilities, ChatRequest, ChatResponse, ChatSignal, Feature, FinishReason,
    ModelInfo, ModelOptions, Provider, ProviderError, SignalSink, ToolChoice, Usage,
};
pub use wire::WireCache;
