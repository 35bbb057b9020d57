//! # reagent-tools
//!
//! The workspace tools an agent uses, confined to one directory, and the [`ToolRegistry`] the
//! agent loop calls them through.
//!
//! Tools (exact names and arguments are a contract): `read_file`, `write_file`, `edit_file`,
//! `list_directory`, `find_files`, `grep_search`, `run_command`, `task_complete`.
//! Every result is JSON: `{"ok": true, "output": ...}` or `{"ok": false, "error": "..."}`.
//!
//! Design decisions:
//! - The loop calls tools asynchronously ([`AsyncTool::call`]); the built-ins are blocking
//!   ([`Tool::call`]) and enter the registry through the [`BlockingTool`] adapter, which runs
//!   them on a blocking thread unless they are quick. Further tools (MCP servers) come from
//!   [`ToolSource`]s in [`ToolsConfig::sources`], read each time a registry is built. File
//!   tools resolve every path relative to an open directory fd of the workspace
//!   ([`Workspace`]) with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)`,
//!   never by "canonicalize then open"; writes are temp-file-plus-rename beneath that fd.
//! - Protected paths (`.git`, `.env`, `reagent.toml`, `.reagent`) stay read-only, compared
//!   after NFKC, case folding and confusable folding.
//! - `run_command` delegates process confinement to `reagent-sandbox`.
//! - A tool never panics and never returns a Rust error for bad input: a bad call becomes
//!   [`ToolResult::Err`], which the loop feeds back to the model.
//! - The registry orders tools by name, so the tool schema sent to the model is stable and
//!   the server's prompt cache stays valid.
//!
//! ```
//! use std::sync::Arc;
//! use reagent_tools::{ToolContext, ToolRegistry, ToolsConfig, Workspace};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let ctx = ToolContext::new(Arc::new(Workspace::open(dir.path()).unwrap()));
//! let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
//! let r = tools.call("write_file", &json!({"path": "a.txt", "content": "hi\n"}), &ctx);
//! assert!(r.is_ok());
//! let r = tools.call("read_file", &json!({"path": "a.txt"}), &ctx);
//! assert_eq!(r.to_json(), json!({"ok": true, "output": "hi\n"}));
//! let r = tools.call("read_file", &json!({"path": "../etc/passwd"}), &ctx);
//! assert!(!r.is_ok());
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod async_tool;
mod config;
mod registry;
pub mod run_command;
mod tools;
pub mod workspace;

pub use async_tool::{
    call_async_catching_panics, AsyncTool, BlockingTool, ToolSource, ToolSources,
};
pub use config::{FileLimits, ToolsConfig};
pub use registry::{
    call_catching_panics, call_tool, Approval, Approver, DuplicateTool, Tool, ToolContext,
    ToolEvents, ToolRegistry, ToolResult, Verdict,
};
pub use tools::nearby::{workspace_files, WorkspaceFiles};
pub use workspace::Workspace;
