//! What a run returns, whatever way it ended.

use std::time::Duration;

use reagent_protocol::{Message, Outcome};

use crate::config::ToolMode;

/// The result of a run. Every stop returns the transcript, the files changed and the last
/// assistant text, so nothing is lost when a guardrail or an error ends the run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The run's id (also in every event).
    pub run_id: String,
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
    /// Every message of the run.
    pub transcript: Vec<Message>,
    /// What went wrong, for error outcomes.
    pub error: Option<String>,
    /// The tool mode used.
    pub tool_mode: ToolMode,
    /// Wall time of the run.
    pub wall_time: Duration,
    /// Time spent waiting for the model.
    pub model_time: Duration,
}
