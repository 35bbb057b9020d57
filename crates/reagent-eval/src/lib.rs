//! # reagent-eval
//!
//! An evaluation harness for reagent: a **suite** is a TOML file of small workspace tasks, each
//! with the files its workspace starts with and the checks that decide whether the run succeeded
//! (the answer contains a word, a file exists or contains a text, a command succeeds). Every run
//! of a task gets a fresh temporary copy of its files. Tasks run once per tool mode and seed;
//! the result ([`EvalResult`]) holds every run and a summary per mode, category and task (pass
//! rate, mean iterations, tokens and time), is saved as JSON, and two results can be compared
//! per category ([`compare`]).
//!
//! A suite may have reference solutions beside it (`<suite>.solutions.toml`, [`Solutions`]),
//! never read by a run: [`check_solution`] evaluates a task's checks on its starting files and
//! on its solution without a model, so a suite's test shows each task's checks are sound.
//!
//! Besides reagent's own tool modes, [`Mode::Seed`] runs the loop configured like a simple
//! agent loop (the baseline reagent is measured against): native tools, no guardrails or
//! nudges, and a three-layer parse of the reply.
//!
//! ```no_run
//! # async fn demo(provider: std::sync::Arc<dyn reagent_protocol::Provider>) -> Result<(), reagent_eval::EvalError> {
//! use reagent_eval::{Harness, HarnessConfig, Mode, Suite};
//!
//! let suite = Suite::load("evals/small-tasks.toml".as_ref())?;
//! let mut config = HarnessConfig::new(reagent_core::AgentConfig::new("qwen3:8b"));
//! config.modes = vec![Mode::Tool(reagent_core::ToolMode::Constrained), Mode::Seed];
//! let harness = Harness::new(provider, config);
//! let on_run = |so_far: &reagent_eval::EvalResult| eprintln!("{} runs done", so_far.runs.len());
//! let result = harness.run(&suite, &on_run, &Default::default()).await;
//! println!("{}", reagent_eval::render_summary(&result));
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod check;
mod error;
mod mode;
mod report;
mod result;
mod runner;
mod seed;
mod solution;
mod spread;
mod suite;

pub use check::{answer_contains, CheckOutcome, COMMAND_CHECK_TIMEOUT};
pub use error::EvalError;
pub use mode::{parse_modes, Mode};
pub use report::{compare, render_comparison, render_summary, Comparison, ComparisonRow};
pub use result::{
    default_result_path, summarize, timestamp, EvalResult, ModeSummary, NamedStats, Stats, TaskRun,
    RESULT_FORMAT,
};
pub use runner::{EventHandler, Harness, HarnessConfig};
pub use seed::{seed_parse, SeedParse};
pub use solution::{check_solution, Solution, Solutions};
pub use spread::Spread;
pub use suite::{Check, Suite, Task};
