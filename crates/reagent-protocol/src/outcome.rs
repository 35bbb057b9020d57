//! How a run ends ([`Outcome`], [`ErrorKind`]) and what a guardrail did ([`Guardrail`],
//! [`GuardrailAction`]): the names events carry, serialized as snake_case.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered without a tool call or called `task_complete`.
    Completed,
    /// `max_iterations` reached.
    MaxIterations,
    /// A token, time or tool-call budget ran out (a final answer was still asked for).
    BudgetExhausted,
    /// A guardrail (repetition...) stopped the run.
    GuardrailStop,
    /// The model server failed or could not be reached.
    ProviderError,
    /// Cancelled by the user (Ctrl-C) or the caller.
    Cancelled,
    /// The process running it died or was stopped before the run finished (set by the store
    /// when it finds a run that never wrote `run_finished`).
    Interrupted,
    /// The model answered, but every tool call of the run failed: the answer rests on no
    /// tool result, so it is not reported as completed.
    NoProgress,
    /// The model ended the run and every verification check passed.
    Verified,
    /// The model ended the run; after its retries some verification checks pass, not all.
    PartialPass,
    /// The model ended the run; after its retries no verification check passes.
    VerificationFailed,
    /// The model ended the run after changing files, and nothing checked the change: no
    /// verification was asked for and no command succeeded after the last change.
    Unchecked,
    /// The model's answer only repeats the error a tool call gave: it reports a failure as
    /// its result.
    CopiedError,
}

impl Outcome {
    /// Every outcome, in declaration order.
    pub const ALL: [Outcome; 13] = [
        Outcome::Completed,
        Outcome::MaxIterations,
        Outcome::BudgetExhausted,
        Outcome::GuardrailStop,
        Outcome::ProviderError,
        Outcome::Cancelled,
        Outcome::Interrupted,
        Outcome::NoProgress,
        Outcome::Verified,
        Outcome::PartialPass,
        Outcome::VerificationFailed,
        Outcome::Unchecked,
        Outcome::CopiedError,
    ];

    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::MaxIterations => "max_iterations",
            Outcome::BudgetExhausted => "budget_exhausted",
            Outcome::GuardrailStop => "guardrail_stop",
            Outcome::ProviderError => "provider_error",
            Outcome::Cancelled => "cancelled",
            Outcome::Interrupted => "interrupted",
            Outcome::NoProgress => "no_progress",
            Outcome::Verified => "verified",
            Outcome::PartialPass => "partial_pass",
            Outcome::VerificationFailed => "verification_failed",
            Outcome::Unchecked => "unchecked",
            Outcome::CopiedError => "copied_error",
        }
    }

    /// Whether the run ended with the model's answer accepted: `completed` (nothing to check,
    /// or a command succeeded after the last change) or `verified`.
    pub fn is_success(self) -> bool {
        matches!(self, Outcome::Completed | Outcome::Verified)
    }
}

impl std::str::FromStr for Outcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::ALL
            .into_iter()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "unknown outcome '{s}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Why a run that ended in error failed, as a type a program can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Nothing answered at the server's address, or it did not answer in time.
    ServerUnreachable,
    /// The server does not have the model.
    ModelNotFound,
    /// The prompt did not fit the server's context window, even after compaction.
    ContextOverflow,
    /// The server refused the request (an HTTP 4xx other than the above).
    RefusedRequest,
    /// The server failed (HTTP 5xx) or sent a reply that could not be read.
    ServerError,
    /// The run was cancelled.
    Cancelled,
    /// Anything else: bad configuration, a bug.
    Internal,
}

/// Which guardrail fired. Serialized as the snake_case names events always carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Guardrail {
    /// `max_iterations` reached.
    MaxIterations,
    /// The same call again and again, or an A→B→A→B cycle.
    Repetition,
    /// A reply cut off by the generation limit.
    Truncation,
    /// The token budget ran out.
    BudgetTokens,
    /// The wall-time budget ran out.
    BudgetTime,
    /// The tool-call budget ran out.
    BudgetToolCalls,
    /// The prompt approached or passed the context window.
    ContextWindow,
    /// The server refused the prompt as too long, or it still does not fit after compaction.
    ContextOverflow,
    /// Asking for the final answer failed.
    FinalAnswer,
    /// The server refused a feature (JSON Schema, tools, think): the request stepped down.
    FeatureFallback,
    /// A streamed reply broke off: the text so far is kept as the partial result.
    StreamCut,
    /// A reply degenerated into a repeating character or phrase and was cut.
    DegenerateOutput,
    /// The model answered, but every tool call of the run had failed.
    NoProgress,
    /// The final answer only copied the restated tool results: asked again, more narrowly.
    EchoedAnswer,
    /// The run changed files and nothing checked the change (outcome `unchecked`).
    Unchecked,
    /// The final answer only repeats a tool's error (outcome `copied_error`).
    CopiedError,
    /// The workspace could not be recorded before the run's first change.
    Checkpoint,
}

impl Guardrail {
    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Guardrail::MaxIterations => "max_iterations",
            Guardrail::Repetition => "repetition",
            Guardrail::Truncation => "truncation",
            Guardrail::BudgetTokens => "budget_tokens",
            Guardrail::BudgetTime => "budget_time",
            Guardrail::BudgetToolCalls => "budget_tool_calls",
            Guardrail::ContextWindow => "context_window",
            Guardrail::ContextOverflow => "context_overflow",
            Guardrail::FinalAnswer => "final_answer",
            Guardrail::FeatureFallback => "feature_fallback",
            Guardrail::StreamCut => "stream_cut",
            Guardrail::DegenerateOutput => "degenerate_output",
            Guardrail::NoProgress => "no_progress",
            Guardrail::EchoedAnswer => "echoed_answer",
            Guardrail::Unchecked => "unchecked",
            Guardrail::CopiedError => "copied_error",
            Guardrail::Checkpoint => "checkpoint",
        }
    }
}

/// What a guardrail did. Serialized as the snake_case names events always carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GuardrailAction {
    /// Told the model what went wrong and let it go on.
    Hint,
    /// Ended the run.
    Stop,
    /// Sent the request again.
    Retry,
    /// Compacted the history.
    Compact,
    /// Asked for the final answer without tools.
    FinalAnswer,
    /// Only warned.
    Warn,
    /// The guardrail's own step failed.
    Failed,
    /// Stepped down to a feature the server accepts.
    Fallback,
    /// Kept what arrived as the partial result.
    PartialResult,
    /// Cut the text.
    Cut,
}

impl GuardrailAction {
    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardrailAction::Hint => "hint",
            GuardrailAction::Stop => "stop",
            GuardrailAction::Retry => "retry",
            GuardrailAction::Compact => "compact",
            GuardrailAction::FinalAnswer => "final_answer",
            GuardrailAction::Warn => "warn",
            GuardrailAction::Failed => "failed",
            GuardrailAction::Fallback => "fallback",
            GuardrailAction::PartialResult => "partial_result",
            GuardrailAction::Cut => "cut",
        }
    }
}
