//! The request and response bodies of the HTTP API (serde + the OpenAPI schemas).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/runs`: start a run.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRun {
    /// The task, in plain words.
    pub task: String,
    /// Model name as the model server knows it.
    pub model: String,
    /// `ollama`, `openai`, `anthropic` or `gemini` (default: the server's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model server's base URL (default: the server's, else the provider's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `native`, `constrained`, `prompt` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<String>,
    /// Most loop iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Token, time and tool-call budgets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<RunBudgets>,
    /// The directory to work on; must lie under one of the server's workspace roots.
    pub workspace: String,
    /// What happens to a command that matches an `ask` rule: wait for a person's answer
    /// (`ask`, the default), run it (`allow`) or refuse it (`deny`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalPolicy>,
}

/// Budgets of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunBudgets {
    /// Total tokens (prompt + completion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Wall-clock seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_secs: Option<f64>,
    /// Tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u32>,
}

/// What a run does with a command that needs approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Wait for `POST /v1/approvals/{id}`.
    #[default]
    Ask,
    /// Run it.
    Allow,
    /// Refuse it.
    Deny,
}

/// `201` of `POST /v1/runs` and `POST /v1/runs/{id}/messages`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CreatedRun {
    /// The new run's id.
    pub id: String,
    /// Its session.
    pub session_id: String,
    /// `running`.
    pub status: String,
}

/// `GET /v1/runs` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListRuns {
    /// Page size (default 50, at most 500).
    pub limit: Option<u32>,
    /// Runs to skip (newest first).
    pub offset: Option<u64>,
    /// Only runs with this outcome (`running`, `interrupted` or an outcome of the event
    /// schema).
    pub outcome: Option<String>,
    /// Only runs of this model.
    pub model: Option<String>,
}

/// One run, as listed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RunSummary {
    /// Run id.
    pub id: String,
    /// Its session.
    pub session_id: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// When it finished.
    pub finished_at: Option<String>,
    /// Model name.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// `running`, `interrupted` or an outcome of the event schema.
    pub outcome: String,
    /// Loop iterations.
    pub iterations: i64,
    /// Prompt plus completion tokens.
    pub tokens: i64,
    /// Tool calls.
    pub tool_calls: i64,
    /// The task.
    pub task: String,
}

impl From<reagent_store::RunRecord> for RunSummary {
    fn from(r: reagent_store::RunRecord) -> Self {
        RunSummary {
            tokens: r.total_tokens(),
            id: r.id,
            session_id: r.session_id,
            started_at: r.started,
            finished_at: r.finished,
            model: r.model,
            provider: r.provider,
            outcome: r.outcome,
            iterations: r.iterations,
            tool_calls: r.tool_calls,
            task: r.task,
        }
    }
}

/// `GET /v1/runs`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunList {
    /// The page, newest first.
    pub runs: Vec<RunSummary>,
    /// Runs matching the filter, over all pages.
    pub total: Option<u64>,
    /// The `offset` of the next page, when there is one.
    pub next_offset: Option<u64>,
}

/// `GET /v1/runs/{id}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunDetail {
    /// The run.
    pub run: RunSummary,
    /// The conversation, rebuilt from the run's events (messages as in session snapshots).
    #[schema(value_type = Vec<Object>)]
    pub transcript: Vec<Value>,
    /// How it ended, once it has.
    pub result: Option<RunOutcome>,
}

/// A finished run's result (from its `run_finished` event).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunOutcome {
    /// How it ended.
    pub outcome: String,
    /// The final answer.
    pub answer: String,
    /// Loop iterations used.
    pub iterations: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Wall time in milliseconds.
    pub wall_ms: u64,
    /// Time waiting for the model, in milliseconds.
    pub model_ms: u64,
    /// Files created or changed.
    pub files_changed: Vec<String>,
    /// The error, for error outcomes.
    pub error: Option<String>,
    /// The error's kind.
    pub error_kind: Option<String>,
}

/// `202` of `POST /v1/runs/{id}/cancel`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CancelAccepted {
    /// The run.
    pub id: String,
    /// `cancelling`.
    pub status: String,
}

/// `POST /v1/runs/{id}/messages`: a follow-up to a finished run's session.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FollowUp {
    /// The message.
    pub content: String,
}

/// `GET /v1/runs/{id}/events` and `/ws` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events with a greater `seq` (for clients that cannot send `Last-Event-ID`).
    pub after: Option<u64>,
    /// Also send the streamed text and reasoning as they come (`text_delta` and
    /// `reasoning_delta` events). Deltas are never stored: only a client following a live run
    /// gets them, best effort (one that falls behind misses some), and each carries the `seq`
    /// of the event before it.
    pub deltas: Option<bool>,
}

/// A command waiting for a person's answer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Approval {
    /// Approval id (as in the `approval_requested` event).
    pub id: String,
    /// The run that waits.
    pub run_id: String,
    /// The tool (`run_command`).
    pub tool: String,
    /// What would run.
    pub summary: String,
    /// The tool's arguments.
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// When it was asked (RFC 3339, UTC).
    pub requested_at: String,
}

/// `GET /v1/approvals`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApprovalList {
    /// Pending approvals, oldest first.
    pub approvals: Vec<Approval>,
}

/// `POST /v1/approvals/{id}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalAnswer {
    /// The answer.
    pub decision: Decision,
}

/// An answer to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run the command.
    Allow,
    /// Refuse it.
    Deny,
}

/// `200` of `POST /v1/approvals/{id}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApprovalDecided {
    /// The approval.
    pub id: String,
    /// The answer given.
    pub decision: Decision,
}

/// `GET /v1/health`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// reagent's version.
    pub version: String,
}
