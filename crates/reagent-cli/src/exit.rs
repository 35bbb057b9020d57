//! Exit codes of the `reagent` binary (documented in the README; a contract for scripts).

use reagent_protocol::Outcome;

/// Process exit codes. All below 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitCode {
    /// The task completed.
    Completed = 0,
    /// An unexpected internal error.
    Internal = 1,
    /// Bad usage: unknown flag, bad config file, bad value.
    Usage = 2,
    /// Max iterations reached.
    MaxIterations = 3,
    /// A token, time or tool-call budget ran out.
    BudgetExhausted = 4,
    /// A guardrail stopped the run.
    GuardrailStop = 5,
    /// The model server failed or could not be reached.
    ProviderError = 6,
    /// Cancelled (Ctrl-C).
    Cancelled = 7,
    /// The model answered, but every tool call of the run had failed.
    NoProgress = 8,
    /// `reagent runs replay`: today's loop acts differently from the recording.
    ReplayDiffers = 9,
}

impl ExitCode {
    /// The exit code for a run's outcome.
    pub(crate) fn from_outcome(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Completed => ExitCode::Completed,
            Outcome::MaxIterations => ExitCode::MaxIterations,
            Outcome::BudgetExhausted => ExitCode::BudgetExhausted,
            Outcome::GuardrailStop => ExitCode::GuardrailStop,
            Outcome::ProviderError => ExitCode::ProviderError,
            Outcome::Cancelled | Outcome::Interrupted => ExitCode::Cancelled,
            Outcome::NoProgress => ExitCode::NoProgress,
        }
    }
}
