//! What a run returns, whatever way it ended.

use std::time::Duration;

use reagent_protocol::{ErrorKind, Message, Outcome};
use serde::{Deserialize, Serialize};

use crate::config::ToolMode;

/// Why a run failed: a kind a program can act on, and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What went wrong, in words.
    pub message: String,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The result of a run. Every stop returns the transcript, the files changed and the last
/// assistant text, so nothing is lost when a guardrail or an error ends the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    /// The run's id (also in every event).
    pub run_id: String,
    /// The session the run belongs to.
    pub session_id: String,
    /// How the run ended.
    pub outcome: Outcome,
    /// The final answer (the `task_complete` summary, the last reply, or the answer asked for
    /// when a budget ran out).
    pub answer: String,
    /// Model calls made.
    pub iterations: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Prompt tokens over the run.
    pub prompt_tokens: u64,
    /// Completion tokens over the run.
    pub completion_tokens: u64,
    /// Workspace-relative files created or changed.
    pub files_changed: Vec<String>,
    /// The last non-empty assistant text.
    pub last_assistant_text: String,
    /// Every message of the session so far.
    pub transcript: Vec<Message>,
    /// What went wrong, for error outcomes.
    pub error: Option<RunError>,
    /// The tool mode used.
    pub tool_mode: ToolMode,
    /// Wall time of the run.
    pub wall_time: Duration,
    /// Time spent waiting for the model.
    pub model_time: Duration,
    /// What the last round of verification checks found (none when no check ran).
    #[serde(default)]
    pub checks: Vec<crate::verify::CheckResult>,
    /// The workspace as it was before the run's first change, when checkpoints are on and the
    /// run changed something (restore it with [`crate::checkpoint::Checkpoint::restore`]).
    #[serde(default)]
    pub checkpoint: Option<crate::checkpoint::Checkpoint>,
}
