//! # reagent-bench
//!
//! Measures reagent's own cost, the part of an agent's wall time that is not the model, side by
//! side with peer frameworks (issue 6). The pieces:
//!
//! - [`server`]: a fast, stateless scripted Ollama server (`/api/chat`, `/api/show`,
//!   `/api/tags`) that answers instantly with tool calls, run as its own process so its CPU is
//!   not counted against the agent;
//! - [`workload`]: the shared task: read `N` distinct 4 KB files one by one, then answer;
//! - [`single`]: one reagent run, measured from inside (CPU at every request, peak RSS);
//! - [`many`]: a thousand concurrent runs in one process through the library API (RSS per idle
//!   run, iterations per second);
//! - [`cache`]: the prompt-cache share against a real llama-server;
//! - [`resume`]: a long session resumed from its snapshot, to the follow-up's first request;
//! - [`usage`]: CPU time and RSS from the kernel.
//!
//! The `reagent-bench` binary exposes each as a subcommand; `benches/run.sh` and
//! `benches/bench.py` drive it together with the Python peers (the official `ollama` client
//! loop, LangGraph, smolagents), measuring every agent as a child process (`wait4` rusage), and
//! print the table.
//!
//! ```
//! use reagent_bench::workload::Plan;
//! let plan = Plan::from_model("bench-150").unwrap();
//! assert_eq!(plan.iterations, 150);
//! ```
#![deny(missing_docs)]

pub mod cache;
pub mod many;
pub mod resume;
pub mod runner;
pub mod server;
pub mod single;
pub mod usage;
pub mod workload;

/// Why a benchmark could not run or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The provider, workspace or server could not be set up.
    #[error("setup failed: {0}")]
    Setup(String),
    /// A run did not do what the plan said.
    #[error("a run did not complete: {0}")]
    Incomplete(String),
    /// Reading or writing files.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
