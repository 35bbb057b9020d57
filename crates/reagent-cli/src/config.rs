//! The TOML config file: defaults for `reagent run`. Unknown keys are errors, with the key's
//! name, so a typo never silently does nothing. Command-line flags override the file.
//!
//! ```toml
//! model = "qwen3:8b"
//! provider = "ollama"          # ollama | openai | anthropic | gemini
//! tool_mode = "auto"           # auto | native | constrained | prompt
//! max_iterations = 20
//! store = "~/runs.db"         # a SQLite file or postgres://… (default: the XDG data dir)
//!
//! [options]
//! num_ctx = 16384
//! temperature = 0.2
//!
//! [budgets]
//! max_tokens = 200000
//! max_time_secs = 600
//!
//! [sandbox]
//! mode = "workspace-write"     # read-only | workspace-write | full
//! network = false
//!
//! [serve]                      # reagent serve only
//! base_urls = ["http://127.0.0.1:8000/v1"]  # a request's base_url may also name these
//! max_concurrent_runs = 16
//! [verify]
//! checks = ["tests:pytest -q", "file_exists:README.md"]   # or ["auto"]
//! retries = 2                  # failing checks back to the model (default 2)
//! attempts = 1                 # best of N, restoring the workspace between attempts
//! checkpoints = true           # record the workspace before the first change (default)
//! timeout_secs = 300           # time limit of a check's command
//! [mcp.servers.files]          # an MCP server over stdio (see reagent_mcp::config)
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//! ```

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    pub(crate) model: Option<String>,
    pub(crate) provider: Option<String>,
    pub(crate) host: Option<String>,
    #[serde(default)]
    pub(crate) base_urls: Vec<String>,
    /// Environment variable holding the API key (default per provider, e.g. OPENAI_API_KEY).
    pub(crate) api_key_env: Option<String>,
    pub(crate) tool_mode: Option<String>,
    pub(crate) max_iterations: Option<u32>,
    pub(crate) stream: Option<bool>,
    pub(crate) timeout_secs: Option<f64>,
    pub(crate) max_retries: Option<u32>,
    pub(crate) system_prompt: Option<String>,
    pub(crate) format: Option<String>,
    /// Where runs are recorded: a SQLite path or a `postgres://` URL (`--store` wins).
    pub(crate) store: Option<String>,
    #[serde(default)]
    pub(crate) options: OptionsConfig,
    #[serde(default)]
    pub(crate) budgets: BudgetsConfig,
    #[serde(default)]
    pub(crate) guardrails: GuardrailsConfig,
    #[serde(default)]
    pub(crate) tools: ToolsFileConfig,
    #[serde(default)]
    pub(crate) sandbox: SandboxFileConfig,
    /// Model profiles, consulted before the built-in ones.
    #[serde(default)]
    pub(crate) profiles: Vec<ProfileConfig>,
    /// `reagent serve`'s own settings.
    #[serde(default)]
    pub(crate) serve: ServeFileConfig,
    /// `[verify]`: checks, retries, attempts and checkpoints of `reagent run`.
    #[serde(default)]
    pub(crate) verify: VerifyFileConfig,
    /// `[mcp.servers.NAME]`: MCP servers whose tools runs are offered.
    #[serde(default)]
    pub(crate) mcp: reagent_mcp::McpConfig,
}

/// `[serve]`: what clients of `reagent serve` may ask for.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServeFileConfig {
    /// Model server URLs a request's `base_url` may name besides the configured provider's
    /// (`host` / `base_urls`); any other is refused with 403. The provider key is never sent
    /// to these.
    #[serde(default)]
    pub(crate) base_urls: Vec<String>,
    /// Runs in progress at once; past it new runs get 429 (default 16).
    pub(crate) max_concurrent_runs: Option<usize>,
}

/// `[verify]`: checks when the model ends a run, attempts, checkpoints.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerifyFileConfig {
    /// Checks, as `--verify` takes them.
    #[serde(default)]
    pub(crate) checks: Vec<String>,
    pub(crate) retries: Option<u32>,
    pub(crate) attempts: Option<u32>,
    /// Time limit of a check's command, in seconds (default 300).
    pub(crate) timeout_secs: Option<f64>,
    /// Record the workspace before a run's first change (default true for `reagent run`).
    pub(crate) checkpoints: Option<bool>,
    /// Where checkpoints of workspaces outside git keep their copies (default: the
    /// `checkpoints` folder beside the default store, `$XDG_DATA_HOME/reagent/checkpoints`).
    pub(crate) checkpoint_dir: Option<PathBuf>,
}

/// One `[[profiles]]` entry: defaults for models whose name contains `match`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileConfig {
    #[serde(rename = "match")]
    pub(crate) matches: String,
    pub(crate) temperature: Option<f32>,
    pub(crate) think: Option<bool>,
    pub(crate) format: Option<String>,
    pub(crate) system_hint: Option<String>,
    /// The tool mode `auto` means for these models.
    pub(crate) tool_mode: Option<reagent_core::ToolMode>,
    /// Constrained runs end with the plain question (weak models).
    #[serde(default)]
    pub(crate) plain_final_question: bool,
    /// The constrained schema narrows free-text arguments to the task and workspace (weak
    /// models).
    #[serde(default)]
    pub(crate) narrow_schema: bool,
    /// Change tasks ask for whole files as text before the tool loop (default: for models of
    /// at most 3B by their name).
    pub(crate) edits_as_text: Option<bool>,
    /// The small-model measures (default: for models of at most 3B by their name that call
    /// tools).
    pub(crate) small_model: Option<bool>,
}

/// `[options]`: generation options.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OptionsConfig {
    pub(crate) num_ctx: Option<u32>,
    pub(crate) num_predict: Option<u32>,
    pub(crate) temperature: Option<f32>,
    pub(crate) seed: Option<i64>,
    pub(crate) keep_alive: Option<String>,
    pub(crate) think: Option<bool>,
}

/// `[budgets]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BudgetsConfig {
    pub(crate) max_tokens: Option<u64>,
    pub(crate) max_time_secs: Option<f64>,
    pub(crate) max_tool_calls: Option<u32>,
}

/// `[guardrails]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GuardrailsConfig {
    pub(crate) repetition_threshold: Option<usize>,
    pub(crate) max_nudges: Option<u32>,
    pub(crate) retry_truncated: Option<bool>,
    pub(crate) compaction_trigger: Option<f64>,
    pub(crate) keep_recent_rounds: Option<usize>,
    pub(crate) compaction_low_water: Option<f64>,
    pub(crate) default_ctx_cap: Option<u32>,
}

/// `[tools]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolsFileConfig {
    pub(crate) read_only: Option<bool>,
    #[serde(default)]
    pub(crate) disabled: Vec<String>,
    pub(crate) command_timeout_secs: Option<f64>,
}

/// `[sandbox]`: confinement of `run_command`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxFileConfig {
    pub(crate) mode: Option<String>,
    pub(crate) network: Option<bool>,
    #[serde(default)]
    pub(crate) writable_roots: Vec<PathBuf>,
    #[serde(default)]
    pub(crate) readable_roots: Vec<PathBuf>,
    #[serde(default)]
    pub(crate) protected_paths: Vec<PathBuf>,
    /// Run commands even where the kernel cannot confine them (not recommended).
    pub(crate) allow_unconfined: Option<bool>,
    #[serde(default)]
    pub(crate) rules: Vec<CommandRuleConfig>,
}

/// One `[[sandbox.rules]]` entry: commands starting with `prefix` are allowed, asked or forbidden.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandRuleConfig {
    pub(crate) prefix: String,
    pub(crate) action: String,
}

impl FileConfig {
    /// Load the config: `explicit` if given (must exist), else `./reagent.toml`, else
    /// `~/.config/reagent/config.toml`, else defaults.
    pub(crate) fn load(explicit: Option<&Path>) -> anyhow::Result<Self> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => default_locations().into_iter().find(|p| p.is_file()),
        };
        let Some(path) = path else {
            return Ok(FileConfig::default());
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("bad config file {}", path.display()))
    }

    /// Parse config text.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        Ok(toml::from_str(text)?)
    }
}

fn default_locations() -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("reagent.toml")];
    if let Some(home) = std::env::var_os("HOME") {
        v.push(PathBuf::from(home).join(".config/reagent/config.toml"));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_config_parses() {
        let c = FileConfig::parse(
            r#"
            model = "qwen3:8b"
            tool_mode = "constrained"
            [options]
            num_ctx = 8192
            [budgets]
            max_tool_calls = 10
            [sandbox]
            mode = "read-only"
            [[sandbox.rules]]
            prefix = "git push"
            action = "forbid"
            "#,
        )
        .unwrap();
        assert_eq!(c.model.as_deref(), Some("qwen3:8b"));
        assert_eq!(c.options.num_ctx, Some(8192));
        assert_eq!(c.budgets.max_tool_calls, Some(10));
        assert_eq!(c.sandbox.rules[0].action, "forbid");
        let c = FileConfig::parse(
            "[verify]\nchecks = [\"tests:pytest -q\", \"git_clean\"]\nretries = 1\nattempts = 3\ncheckpoints = false\n",
        )
        .unwrap();
        assert_eq!(c.verify.checks, ["tests:pytest -q", "git_clean"]);
        assert_eq!((c.verify.retries, c.verify.attempts), (Some(1), Some(3)));
        assert_eq!(c.verify.checkpoints, Some(false));
        let err = FileConfig::parse("[verify]\ncheck = []")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `check`"), "{err}");
    }

    #[test]
    fn the_serve_section_parses_and_names_unknown_keys() {
        let c = FileConfig::parse(
            "[serve]\nbase_urls = [\"http://127.0.0.1:8000/v1\"]\nmax_concurrent_runs = 4",
        )
        .unwrap();
        assert_eq!(c.serve.base_urls, ["http://127.0.0.1:8000/v1"]);
        assert_eq!(c.serve.max_concurrent_runs, Some(4));
        let empty = FileConfig::parse("").unwrap();
        assert!(empty.serve.base_urls.is_empty());
        let err = FileConfig::parse("[serve]\nbase_url = []")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `base_url`"), "{err}");
    }

    #[test]
    fn unknown_keys_are_named_in_the_error() {
        let err = FileConfig::parse("modle = \"x\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `modle`"), "{err}");
        let err = FileConfig::parse("[options]\nnum_cxt = 1")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `num_cxt`"), "{err}");
    }
}
