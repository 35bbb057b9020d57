//! The event stream of a run: the one wire format every consumer reads.
//!
//! Serialized as one JSON object per line, each with `schema_version`, `run_id`, `seq` (gapless
//! per run, from 1), `ts` (RFC 3339, UTC, milliseconds) and `type`, plus the fields of its kind.
//! The events of a run are complete: the conversation can be rebuilt from them alone
//! (`reagent_core::rebuild_transcript`). The JSON Schema is generated from these types into
//! `schema/events.schema.json`; fields are only ever added, never renamed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::ToolCall;
pub use crate::outcome::{ErrorKind, Guardrail, GuardrailAction, Outcome};

/// The version of the event schema written into every event. Raised when a kind or field is
/// added; old readers keep working because nothing is renamed or removed.
pub const SCHEMA_VERSION: u32 = 3;

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// [`SCHEMA_VERSION`] of the writer (events written before versioning read as 1).
    #[serde(default = "first_schema_version")]
    pub schema_version: u32,
    /// The run this belongs to.
    pub run_id: String,
    /// Position in the run, from 1, without gaps (events written before versioning read as 0).
    #[serde(default)]
    pub seq: u64,
    /// When it happened (RFC 3339, UTC, milliseconds).
    pub ts: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

fn first_schema_version() -> u32 {
    1
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Event {
    /// Event number `seq` of `run_id`, stamped with the current time.
    pub fn new(run_id: &str, seq: u64, kind: EventKind) -> Self {
        Event {
            schema_version: SCHEMA_VERSION,
            run_id: run_id.to_owned(),
            seq,
            ts: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            kind,
        }
    }

    /// The `type` name of this event's kind, as serialized.
    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }
}

/// State of one endpoint of a pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// Why the loop added a user message of its own (not a tool result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserMessageReason {
    /// A nudge after an empty or narrating reply.
    Nudge,
    /// A hint after a repetition.
    RepetitionHint,
    /// The request for a final answer (budget or repetition).
    FinalAnswerRequest,
    /// A follow-up message given to a session after a run ended.
    FollowUp,
    /// Verification checks failed after the model ended the run: their output, and a request
    /// to fix what they report.
    VerificationFailed,
}

/// The kinds of event, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// The run begins.
    RunStarted {
        /// The task as given (for a follow-up run: the follow-up message).
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
        /// The session this run belongs to (a session holds one or more runs).
        #[serde(default)]
        session_id: String,
        /// The system prompt the conversation opens with.
        #[serde(default)]
        system_prompt: String,
        /// Whether the run continues a session's earlier conversation (a follow-up or a resume)
        /// instead of starting a new one.
        #[serde(default)]
        follow_up: bool,
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
    /// The assistant message the loop appended to the conversation.
    AssistantMessage {
        /// 1-based loop iteration.
        iteration: u32,
        /// The text as kept in the conversation (in the text modes, with the call markup).
        content: String,
        /// Reasoning kept apart from the content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        /// The tool calls extracted from the reply.
        calls: Vec<ToolCall>,
        /// The structured calls the message itself carries (native mode).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Which extraction layer found the calls.
        parse_layer: Option<String>,
        /// The reply text as the server sent it, when `content` differs from it (native mode
        /// keeps the text without call markup): what `reagent runs replay` feeds the parser.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
    },
    /// A piece of streamed answer text (opt-in for subscribers; never stored).
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of streamed reasoning (opt-in for subscribers; never stored).
    ReasoningDelta {
        /// The text.
        text: String,
    },
    /// A tool is about to run.
    ToolCallStarted {
        /// 1-based loop iteration.
        iteration: u32,
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Arguments after coercion.
        arguments: Value,
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
    /// The result of a tool call as the model is given it.
    ToolResult {
        /// 1-based loop iteration.
        iteration: u32,
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Whether the tool succeeded.
        ok: bool,
        /// The result (`{"ok":...}` JSON), up to the configured cap.
        output: String,
        /// Whether `output` was cut at the cap.
        truncated: bool,
    },
    /// A guardrail fired.
    Guardrail {
        /// Which one.
        guardrail: Guardrail,
        /// What it did.
        action: GuardrailAction,
        /// Human-readable detail.
        detail: String,
    },
    /// The model was nudged to act.
    Nudge {
        /// Why: `unread_call` (a tool call the parser could not read), `empty_reply` or
        /// `narration`.
        reason: String,
        /// How many nudges so far in this run.
        count: u32,
    },
    /// The loop added a user message of its own (nudge, hint, final-answer request, follow-up).
    UserMessage {
        /// Why it was added.
        reason: UserMessageReason,
        /// Its text.
        content: String,
    },
    /// The history was compacted: the oldest rounds removed and a digest appended.
    Compaction {
        /// Rounds (an assistant turn with its results) removed.
        rounds_removed: usize,
        /// Messages removed after the pinned opening (system prompt and task).
        messages_removed: usize,
        /// Estimated prompt tokens before.
        estimated_tokens_before: u64,
        /// Estimated prompt tokens after.
        estimated_tokens_after: u64,
        /// The digest message appended in their place.
        digest: String,
    },
    /// A command, a write or a tool call waits for a person's approval.
    ApprovalRequested {
        /// Id of this approval, unique in the run.
        approval_id: String,
        /// What is to be approved, in one line: the command, `write PATH`, or the tool call.
        command: String,
        /// For a write: the unified diff of the change, whole.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    /// A person (or the policy) answered an approval.
    ApprovalDecided {
        /// Id of the approval.
        approval_id: String,
        /// Whether the command may run.
        approved: bool,
        /// What the person told the model with a denial.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
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
    /// The workspace was recorded before the run's first change (`reagent runs undo` restores
    /// it), or, with `after`, as the run left it.
    Checkpoint {
        /// `git` (a commit on a private ref; the user's index, HEAD and branches untouched) or
        /// `files` (copies of the files before the run first changed them).
        method: String,
        /// The workspace directory recorded.
        workspace: String,
        /// `git`: the private ref (`refs/reagent/checkpoints/<run_id>`); `files`: the
        /// directory holding the copies and their manifest.
        location: String,
        /// `git`: the checkpoint commit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
        /// `true`: the workspace as the run left it (its last event but `run_finished`), so
        /// `reagent runs undo` can tell what changed since; `false`: before its first change.
        #[serde(default, skip_serializing_if = "is_false")]
        after: bool,
    },
    /// One verification check ran after the model ended the run.
    VerificationCheck {
        /// Which round of checks (1 = when the model first ended the run, then one per retry).
        round: u32,
        /// The check as given (`file_exists:PATH`, `tests:CMD`, `git_clean`...).
        check: String,
        /// Whether it passed.
        passed: bool,
        /// What it found (a command's exit status and output), capped.
        output: String,
        /// How long it took.
        duration_ms: u64,
    },
    /// The run is one attempt of several at the same task (`--attempts`): after a failed
    /// verification the workspace is restored and the task tried again with a new seed.
    Attempt {
        /// This attempt's number, from 1.
        number: u32,
        /// Attempts allowed.
        of: u32,
        /// The first attempt's run id (absent on the first attempt itself).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_run_id: Option<String>,
        /// The seed this attempt samples with, when one is set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seed: Option<i64>,
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
        /// The kind of error, when the outcome is an error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_kind: Option<ErrorKind>,
        /// The final answer.
        #[serde(default)]
        answer: String,
    },
}

impl EventKind {
    /// The `type` name, as serialized.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::RunStarted { .. } => "run_started",
            EventKind::LlmRequest { .. } => "llm_request",
            EventKind::LlmResponse { .. } => "llm_response",
            EventKind::AssistantMessage { .. } => "assistant_message",
            EventKind::TextDelta { .. } => "text_delta",
            EventKind::ReasoningDelta { .. } => "reasoning_delta",
            EventKind::ToolCallStarted { .. } => "tool_call_started",
            EventKind::ToolCall { .. } => "tool_call",
            EventKind::ToolResult { .. } => "tool_result",
            EventKind::Guardrail { .. } => "guardrail",
            EventKind::Nudge { .. } => "nudge",
            EventKind::UserMessage { .. } => "user_message",
            EventKind::Compaction { .. } => "compaction",
            EventKind::ApprovalRequested { .. } => "approval_requested",
            EventKind::ApprovalDecided { .. } => "approval_decided",
            EventKind::Retry { .. } => "retry",
            EventKind::PoolState { .. } => "pool_state",
            EventKind::Checkpoint { .. } => "checkpoint",
            EventKind::VerificationCheck { .. } => "verification_check",
            EventKind::Attempt { .. } => "attempt",
            EventKind::RunFinished { .. } => "run_finished",
        }
    }

    /// Whether this is a streamed delta (text or reasoning): opt-in for subscribers, never
    /// written to the store or an events file.
    pub fn is_delta(&self) -> bool {
        matches!(
            self,
            EventKind::TextDelta { .. } | EventKind::ReasoningDelta { .. }
        )
    }
}

/// The JSON Schema of [`Event`], as published in `schema/events.schema.json`.
pub fn event_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Event)).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_match_the_serialized_tag() {
        let kinds = [
            EventKind::TextDelta { text: "a".into() },
            EventKind::UserMessage {
                reason: UserMessageReason::FollowUp,
                content: "b".into(),
            },
            EventKind::Guardrail {
                guardrail: Guardrail::BudgetToolCalls,
                action: GuardrailAction::FinalAnswer,
                detail: String::new(),
            },
        ];
        for kind in kinds {
            let event = Event::new("r", 1, kind);
            let v = serde_json::to_value(&event).expect("serializes");
            assert_eq!(v["type"], event.type_name());
            assert_eq!(v["seq"], 1);
            assert_eq!(v["schema_version"], SCHEMA_VERSION);
            let back: Event = serde_json::from_value(v).expect("reads back");
            assert_eq!(back, event);
        }
    }

    #[test]
    fn guardrail_names_serialize_to_the_old_strings() {
        let v = serde_json::to_value(EventKind::Guardrail {
            guardrail: Guardrail::BudgetToolCalls,
            action: GuardrailAction::FinalAnswer,
            detail: "d".into(),
        })
        .expect("serializes");
        assert_eq!(v["guardrail"], "budget_tool_calls");
        assert_eq!(v["action"], "final_answer");
        assert_eq!(
            Guardrail::ContextOverflow.as_str(),
            serde_json::to_value(Guardrail::ContextOverflow).expect("serializes")
        );
        assert_eq!(
            GuardrailAction::Compact.as_str(),
            serde_json::to_value(GuardrailAction::Compact).expect("serializes")
        );
    }

    #[test]
    fn an_event_of_the_first_schema_still_reads() {
        let old = r#"{"run_id":"r","ts":"2026-01-01T00:00:00.000Z","type":"nudge","reason":"empty_reply","count":1}"#;
        let e: Event = serde_json::from_str(old).expect("reads");
        assert_eq!((e.schema_version, e.seq), (1, 0));
    }

    #[test]
    fn outcomes_parse_from_their_names() {
        for o in Outcome::ALL {
            assert_eq!(o.as_str().parse::<Outcome>(), Ok(o));
        }
        assert!("finished".parse::<Outcome>().is_err());
    }
}
