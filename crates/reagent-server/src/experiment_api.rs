//! The request and response bodies of the experiments' routes (`/v1/experiments…`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/experiments`: start an experiment.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartExperiment {
    /// The experiment's config as `reagent cycles run --config` reads it (TOML or YAML, a
    /// ContReAct-Ollama YAML too), naming no file: `operator.mode` is `dashboard` or `none`,
    /// `model.provider` `ollama` or `openai` with a `base_url` the server allows.
    pub config: String,
}

/// `POST /v1/experiments`: the experiment started.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExperimentStarted {
    /// Its id (the config's `run_id`).
    pub id: String,
    /// `running`.
    pub status: String,
    /// Keys of the config that are understood but not acted on (ContReAct-Ollama's Telegram
    /// keys), each with why.
    pub unsupported: Vec<String>,
}

/// An experiment in a list.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExperimentSummary {
    /// Its id.
    pub id: String,
    /// `running`, `stopped`, `completed`, `failed`, or `interrupted` (its process died).
    pub status: String,
    /// The model.
    pub model: String,
    /// Cycles planned.
    pub cycles: i64,
    /// Cycles done.
    pub cycles_done: i64,
    /// Created (RFC 3339).
    pub created: String,
    /// Last changed (RFC 3339).
    pub updated: String,
    /// Whether this server runs it (it can be stopped and its operator answered here).
    pub live: bool,
}

/// `GET /v1/experiments`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExperimentList {
    /// Newest first.
    pub experiments: Vec<ExperimentSummary>,
}

/// A message of the agent waiting for the operator's answer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OperatorMessage {
    /// Its id, to answer it by.
    pub id: String,
    /// What the agent wrote.
    pub message: String,
    /// When it was sent (RFC 3339).
    pub asked: String,
    /// How long it waits; then the agent is told the operator did not reply.
    pub timeout_secs: f64,
}

/// `GET /v1/experiments/{id}`: the experiment as `reagent cycles report --json` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExperimentDetail {
    /// The experiment.
    pub summary: ExperimentSummary,
    /// The report: `experiment` (its row), `cycles` (a row per finished cycle: outcome,
    /// tool calls, memory operations, operator messages, tokens, duration, similarity,
    /// reflection), `matrix` (the reflections' similarity), `memory` (as it stands).
    #[schema(value_type = Object)]
    pub report: Value,
    /// The operator messages waiting for an answer.
    pub pending: Vec<OperatorMessage>,
}

/// `GET /v1/experiments/{id}/operator`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OperatorMessages {
    /// Oldest first.
    pub pending: Vec<OperatorMessage>,
}

/// `POST /v1/experiments/{id}/operator/{message}`: the operator's reply.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorReply {
    /// The reply the agent gets as the tool's result.
    pub reply: String,
}

/// The reply was handed to the agent.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OperatorReplied {
    /// The message answered.
    pub id: String,
}

/// `POST /v1/experiments/{id}/stop` and `…/resume` were accepted.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ExperimentAccepted {
    /// The experiment.
    pub id: String,
    /// `stopping` or `running`.
    pub status: String,
}

/// `GET /v1/experiments/{id}/events`: where to start.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExperimentEventsQuery {
    /// Only events with a greater `seq` (for clients that cannot send `Last-Event-ID`).
    pub after: Option<u64>,
}
