//! Run configuration: the model, how tools are offered, and every guardrail's setting.

use std::path::PathBuf;
use std::time::Duration;

use reagent_protocol::ModelOptions;
use serde::{Deserialize, Serialize};

/// How tools are offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// Native when the server says the model supports tools, else constrained when the server
    /// supports JSON-Schema output, else prompt.
    #[default]
    Auto,
    /// The server's own tool calling (`tools` in the request).
    Native,
    /// Tools described in the system prompt; the reply is forced by a JSON Schema to be one
    /// tool call or a final answer. Makes even very small models emit valid calls.
    Constrained,
    /// Tools described in the system prompt with examples; free text parsed by the parser.
    Prompt,
}

impl ToolMode {
    /// The name used on the command line and in events.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolMode::Auto => "auto",
            ToolMode::Native => "native",
            ToolMode::Constrained => "constrained",
            ToolMode::Prompt => "prompt",
        }
    }
}

impl std::str::FromStr for ToolMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(ToolMode::Auto),
            "native" => Ok(ToolMode::Native),
            "constrained" => Ok(ToolMode::Constrained),
            "prompt" => Ok(ToolMode::Prompt),
            other => Err(format!(
                "unknown tool mode '{other}' (expected auto, native, constrained or prompt)"
            )),
        }
    }
}

/// Limits checked at the start of every iteration. When one runs out, the model is asked once,
/// without tools, for its final answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Budgets {
    /// Total tokens (prompt + completion) over the run.
    pub max_total_tokens: Option<u64>,
    /// Wall-clock time of the run.
    pub max_wall_time: Option<Duration>,
    /// Tool calls executed.
    pub max_tool_calls: Option<u32>,
}

/// Settings of the context-window guardrail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompactionConfig {
    /// Compact when the estimated prompt passes this share of the context window.
    pub trigger_ratio: f64,
    /// Rounds (an assistant turn and its tool results) at the end kept verbatim.
    pub keep_recent_rounds: usize,
    /// A compaction brings the estimate down to this share of the window when it can (folding
    /// old rounds into one digest), so the next one is many iterations away.
    pub low_water_ratio: f64,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            trigger_ratio: 0.75,
            keep_recent_rounds: 3,
            low_water_ratio: 0.5,
        }
    }
}

/// Everything that shapes one run. Serializable (a server or hub receives it as JSON); absent
/// fields take [`AgentConfig::new`]'s defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Model name as the server knows it.
    pub model: String,
    /// How tools are offered.
    pub tool_mode: ToolMode,
    /// Stop after this many model calls (default 20).
    pub max_iterations: u32,
    /// Generation options; `num_predict` defaults to 2048 so a degenerate model cannot fill the
    /// context, and `num_ctx` to the smaller of the model's trained context and
    /// [`AgentConfig::default_ctx_cap`].
    pub options: ModelOptions,
    /// Cap for the default context window (16,384: a full 128k context can exhaust a small GPU).
    pub default_ctx_cap: u32,
    /// Budgets.
    pub budgets: Budgets,
    /// The same call this many times in a row is a repetition (default 3; 0 disables).
    pub repetition_threshold: usize,
    /// At most this many nudges per run (default 2).
    pub max_nudges: u32,
    /// Retry a truncated reply once with doubled `num_predict`.
    pub retry_truncated: bool,
    /// Context-window compaction.
    pub compaction: CompactionConfig,
    /// Stream replies (text pieces become `text_delta` events).
    pub stream: bool,
    /// Replace the built-in system prompt.
    pub system_prompt: Option<String>,
    /// Force one parser format family (the corpus family names, e.g. `hermes`).
    pub parse_format: Option<String>,
    /// Model profiles consulted before the built-in ones.
    pub profiles: Vec<crate::profiles::ModelProfile>,
    /// A tool's output is copied into its `tool_result` event up to this many bytes (the rest is
    /// cut and the event marked `truncated`); default 256 KiB.
    pub event_output_cap: usize,
    /// Checks run when the model ends a run, and the workspace checkpoint before its first
    /// change.
    pub verify: VerifyConfig,
}

/// What is checked when the model ends a run, and whether the workspace is recorded before the
/// run's first change (see [`crate::verify`] and [`crate::checkpoint`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyConfig {
    /// Checks run when the model ends the run (`file_exists:PATH`, `tests:CMD`, `auto`...).
    /// With none, a run that changed files and ran no command after its last change ends
    /// `unchecked`.
    pub checks: Vec<crate::verify::Check>,
    /// How many times failing checks go back to the model before the run ends (default 2).
    pub retries: u32,
    /// Bytes of one check's output kept in its event and shown to the model (default 4000).
    pub output_cap: usize,
    /// Time limit of a check's command (default 5 minutes; `run_command`'s own maximum caps it).
    pub check_timeout: Duration,
    /// Record the workspace before the run's first change (a library default of `false`; the
    /// CLI turns it on).
    pub checkpoints: bool,
    /// Where a workspace outside git keeps its checkpoint copies (one folder per run); default
    /// `<workspace>/.reagent/checkpoints` (a path the tools never write).
    pub checkpoint_dir: Option<PathBuf>,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            checks: Vec::new(),
            retries: 2,
            output_cap: 4000,
            check_timeout: crate::verify::CHECK_TIMEOUT,
            checkpoints: false,
            checkpoint_dir: None,
        }
    }
}

impl Default for AgentConfig {
    /// The defaults of [`AgentConfig::new`] with an empty model name.
    fn default() -> Self {
        AgentConfig::new("")
    }
}

impl AgentConfig {
    /// Defaults for `model`.
    pub fn new(model: impl Into<String>) -> Self {
        AgentConfig {
            model: model.into(),
            tool_mode: ToolMode::Auto,
            max_iterations: 20,
            options: ModelOptions {
                num_predict: Some(2048),
                ..ModelOptions::default()
            },
            default_ctx_cap: 16_384,
            budgets: Budgets::default(),
            repetition_threshold: 3,
            max_nudges: 2,
            retry_truncated: true,
            compaction: CompactionConfig::default(),
            stream: false,
            system_prompt: None,
            parse_format: None,
            profiles: Vec::new(),
            event_output_cap: 256 * 1024,
            verify: VerifyConfig::default(),
        }
    }
}
