//! Exit codes of the `reagent` binary (documented in the README; a contract for scripts).

use reagent_protocol::Outcome;

/// Process exit codes. All below 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitCode {
    /// The task completed (`completed`), or every verification check passed (`verified`).
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
    /// Verification: after the retries (and attempts) no check passes.
    VerificationFailed = 10,
    /// Verification: after the retries (and attempts) some checks pass, not all.
    PartialPass = 11,
    /// The run changed files and nothing checked them (no `--verify`, no command after the
    /// last change).
    Unchecked = 12,
    /// The answer only repeats the error of a tool call.
    CopiedError = 13,
}

impl ExitCode {
    /// The exit code for a run's outcome.
    pub(crate) fn from_outcome(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Completed | Outcome::Verified => ExitCode::Completed,
            Outcome::MaxIterations => ExitCode::MaxIterations,
            Outcome::BudgetExhausted => ExitCode::BudgetExhausted,
            Outcome::GuardrailStop => ExitCode::GuardrailStop,
            Outcome::ProviderError => ExitCode::ProviderError,
            Outcome::Cancelled | Outcome::Interrupted => ExitCode::Cancelled,
            Outcome::NoProgress => ExitCode::NoProgress,
            Outcome::VerificationFailed => ExitCode::VerificationFailed,
            Outcome::PartialPass => ExitCode::PartialPass,
            Outcome::Unchecked => ExitCode::Unchecked,
            Outcome::CopiedError => ExitCode::CopiedError,
        }
    }
}
