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
//! - Tools are synchronous ([`Tool::call`]); the loop runs them on a blocking thread. File
//!   tools resolve every path relative to an open directory fd of the workspace
//!   ([`Workspace`]), never by "canonicalize then open".
//! - `run_command` delegates process confinement to `reagent-sandbox`.
//! - A tool never panics and never returns a Rust error for bad input: a bad call becomes
//!   [`ToolResult::Err`], which the loop feeds back to the model.
#![deny(missing_docs)]

mod registry;
pub mod run_command;
pub mod workspace;

pub use registry::{Tool, ToolContext, ToolRegistry, ToolResult, ToolsConfig};
pub use workspace::Workspace;
