//! The event stream of a run: the one wire format every consumer reads.
//!
//! Serialized as one JSON object per line, each with `type`, `run_id` and `ts` (RFC 3339, UTC,
//! milliseconds) plus the fields of its kind. The schema is documented in the README; fields are
//! only ever added, never renamed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The run this belongs to.
    pub run_id: String,
    /// When it happened (RFC 3339, UTC).
    pub ts: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl Event {
    /// An event stamped with the current time.
    pub fn now(run_id: &str, kind: EventKind) -> Self {
        Event {
            run_id: run_id.to_owned(),
            ts: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            kind,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// The model answered, but every tool call of the run failed: the answer rests on no
    /// tool result, so it is not reported as completed.
    NoProgress,
}

impl Outcome {
    /// The snake_case name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::MaxIterations => "max_iterations",
            Outcome::BudgetExhausted => "budget_exhausted",
            Outcome::GuardrailStop => "guardrail_stop",
            Outcome::ProviderError => "provider_error",
            Outcome::Cancelled => "cancelled",
            Outcome::NoProgress => "no_progress",
        }
    }
}

/// State of one endpoint of a pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolEndpointState {
    /// Base URL.
    pub url: String,
    /// Whether it is taking requests.
    pub up: bool,
    /// Requests in flight.
    pub in_flight: u32,
    /// Consecutive failures.
    pub failures: u32,
}

/// The kinds of event, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// The run begins.
    RunStarted {
        /// The task as given.
        task: String,
        /// Model name.
        model: String,
        /// Provider name (`ollama`, `openai`...).
        provider: String,
        /// How tools are offered: `native`, `constrained` or `prompt`.
        tool_mode: String,
        /// Workspace directory.
        workspace: String,
        /// Context window in force.
        num_ctx: u32,
        /// Names of the tools offered.
        tools: Vec<String>,
    },
    /// A request is about to be sent.
    LlmRequest {
        /// 1-based loop iteration.
        iteration: u32,
        /// Number of messages sent.
        messages: usize,
        /// reagent's estimate of the prompt size in tokens.
        estimated_tokens: u64,
    },
    /// A reply arrived.
    LlmResponse {
        /// 1-based loop iteration.
        iteration: u32,
        /// Wall time of the model call.
        latency_ms: u64,
        /// Prompt tokens evaluated.
        prompt_tokens: u64,
        /// Tokens generated.
        completion_tokens: u64,
        /// Prompt tokens served from the server's cache, when reported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cached_prompt_tokens: Option<u64>,
        /// Which extraction layer found the tool calls (`native`, `json`, `tool_call_tag`, a
        /// parser family...), `null` when there were none.
        parse_layer: Option<String>,
        /// `stop`, `length`, `tool_calls` or the server's word.
        finish_reason: String,
        /// Number of tool calls found.
        tool_calls: usize,
        /// Endpoint that answered.
        endpoint: String,
    },
    /// A piece of streamed answer text (not written to `--events` files).
    TextDelta {
        /// The text.
        text: String,
    },
    /// A tool ran.
    ToolCall {
        /// 1-based loop iteration.
        iteration: u32,
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments after coercion.
        arguments: Value,
        /// Whether the tool succeeded.
        ok: bool,
        /// How long it ran.
        duration_ms: u64,
        /// One-line summary of the result or the error.
        summary: String,
    },
    /// A guardrail fired.
    Guardrail {
        /// Which one: `max_iterations`, `repetition`, `truncation`, `budget_tokens`,
        /// `budget_time`, `budget_tool_calls`, `context_window`, `context_overflow`...
        guardrail: String,
        /// What it did: `hint`, `stop`, `retry`, `compact`, `final_answer`, `warn`.
        action: String,
        /// Human-readable detail.
        detail: String,
    },
    /// The model was nudged to act.
    Nudge {
        /// Why: `empty_reply` or `narration`.
        reason: String,
        /// How many nudges so far in this run.
        count: u32,
    },
    /// A provider call is retried.
    Retry {
        /// Attempt number that failed (1-based).
        attempt: u32,
        /// Delay before the next attempt.
        delay_ms: u64,
        /// The error.
        error: String,
    },
    /// State of an endpoint pool.
    PoolState {
        /// Every endpoint.
        endpoints: Vec<PoolEndpointState>,
    },
    /// The run ended; always the last event.
    RunFinished {
        /// How it ended.
        outcome: Outcome,
        /// Loop iterations used.
        iterations: u32,
        /// Tool calls executed.
        tool_calls: u32,
        /// Total prompt tokens.
        prompt_tokens: u64,
        /// Total completion tokens.
        completion_tokens: u64,
        /// Wall time of the run.
        wall_ms: u64,
        /// Time spent waiting for the model.
        model_ms: u64,
        /// Files the run created or changed (workspace-relative).
        files_changed: Vec<String>,
        /// Error text when the outcome is an error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}
