//! Task-free multi-cycle experiments (`reagent cycles`), after the ContReAct protocol of "What Do
//! LLM Agents Do When Left Alone?" (arXiv 2509.21224): no external task; the agent runs cycle
//! after cycle, each one reagent [`Session`](reagent_core::Session) whose ReAct loop ends at a
//! reply without a tool call, the *reflection*, which the next cycle is given. It has a
//! persistent key-value memory ([`memory`]), can message an operator ([`operator`]), and a
//! similarity monitor ([`similarity`]) warns it when its reflections repeat.
//!
//! - [`config`]: the experiment file (reagent's TOML/YAML, or a ContReAct-Ollama YAML).
//! - [`runner`]: [`runner::Experiment`] runs (and resumes) an experiment on a store.
//! - [`log`]: the study's JSONL log (`CYCLE_START`, `LLM_INVOCATION`, `TOOL_CALL`, `CYCLE_END`),
//!   each event also kept in the store.
//! - [`report`], [`rate`], [`compare`]: what is read back afterwards.
//!
//! Everything an experiment is lives in the store (migration 0006: `cycle_experiments`,
//! `cycle_records`, `cycle_events`, `cycle_memory`, `cycle_ratings`), so an experiment stopped
//! anywhere (even by `kill -9`) resumes at its first unfinished cycle. Never prints.

#![deny(missing_docs)]

pub mod charts;
pub mod compare;
pub mod config;
pub mod log;
pub mod memory;
pub mod operator;
pub mod prompts;
pub mod rate;
pub mod report;
pub mod runner;
pub mod similarity;
mod tally;
mod think;

pub use config::{ExperimentConfig, HistoryMode, Loaded, OperatorMode};
pub use runner::{Experiment, ExperimentSummary, Status};

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum CyclesError {
    /// The config file cannot be read or is wrong (the message names the key and the line).
    #[error("{0}")]
    Config(String),
    /// An experiment with this id exists already.
    #[error("experiment `{0}` exists already: continue it with `reagent cycles resume {0}`, or pick a new run_id")]
    Exists(String),
    /// Another live process runs this experiment.
    #[error("{0}")]
    Busy(String),
    /// No experiment has this id.
    #[error("no experiment `{0}` in the store (see `reagent cycles list`)")]
    NotFound(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] reagent_store::StoreError),
    /// The model server failed outside a cycle (building the provider, rating).
    #[error("{0}")]
    Provider(String),
    /// The log file could not be written.
    #[error("cannot write the log {path}: {message}")]
    Log {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// Anything else that makes the experiment impossible (the message says what).
    #[error("{0}")]
    Other(String),
}
