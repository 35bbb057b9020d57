//! # reagent-mcp
//!
//! The Model Context Protocol for reagent, through the official Rust SDK `rmcp`.
//!
//! - **Client**: the servers named in the config file's `[mcp.servers.*]` ([`McpConfig`]) are
//!   started (stdio) or dialled (streamable HTTP, headers from the config with `${VAR}`s from
//!   the environment) and kept running by a supervisor task each ([`McpClients`]): a server that
//!   exits, crashes, never finishes its handshake or stops answering is marked down, its calls
//!   fail with an error naming it, and it is restarted with backoff (250 ms doubling to 30 s).
//!   [`McpClients`] is a [`ToolSource`](reagent_tools::ToolSource): a registry built for a run
//!   holds the tools of the servers that are up at that moment, namespaced
//!   (`files__read_text_file`), with their schemas; the agent loop checks their arguments, and
//!   records their events, as it does for the built-ins. Results (text, images and binary
//!   resources as a note, text resources) become tool results capped at
//!   [`tool::RESULT_MAX_BYTES`].
//! - **Server**: [`WorkspaceServer`] offers reagent's workspace tools, with their confinement
//!   and argument checks, to other agents over stdio or streamable HTTP (behind a bearer
//!   token).
//!
//! A stdio server with `sandbox = true` (the default) runs under a Landlock ruleset built from
//! the run's sandbox policy (see [`confine`]), confined to the run's workspace: [`McpPool`]
//! starts such servers once per workspace a run uses (`reagent serve`, `reagent worker`).
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod confine;
mod connect;
mod manager;
mod pool;
mod serve;
mod serve_http;
mod supervisor;
pub mod tool;

pub use config::{
    ApprovalMode, ApprovalRule, ConfigError, McpConfig, ServerConfig, ServerSpec, Transport,
};
pub use manager::{ListedTool, McpClients, ServerStatus};
pub use pool::McpPool;
pub use serve::WorkspaceServer;
