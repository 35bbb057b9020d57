//! The experiment's config: reagent's own shape (TOML or YAML) or a ContReAct-Ollama YAML file
//! (`run_id`, `model_name`, `cycle_count`, `ollama_client_config.host`, `model_options`), read
//! strictly: an unknown key or a bad value is an error naming the key and its line. Paths in the
//! file are relative to the file; the system prompt file is read here, so the stored config is
//! all a resume needs.

use std::path::{Path, PathBuf};

use reagent_protocol::ModelOptions;
use serde::{Deserialize, Deserializer, Serialize};

use crate::CyclesError;

/// What each cycle starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryMode {
    /// Each cycle is a fresh session: the system prompt, the earlier reflections, the advisory.
    #[default]
    Reflections,
    /// One session over all cycles (compacted by reagent's context guardrail).
    Full,
}

/// Who answers `send_message_to_operator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OperatorMode {
    /// A person at the terminal (stdin), within `timeout_secs`.
    Terminal,
    /// The lines of the `replies` file, in order.
    Script,
    /// The dashboard of `reagent serve`, within `timeout_secs` (the experiment must be started
    /// there: `POST /v1/experiments`).
    Dashboard,
    /// Nobody: the agent is told no operator is present.
    #[default]
    None,
}

/// The model and how to reach it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// As `reagent run --provider`: `ollama`, `openai` (any OpenAI-compatible server)...
    pub provider: String,
    /// The server's base URL (the provider's default when absent).
    pub base_url: Option<String>,
    /// The model's name on the server.
    pub name: String,
    /// Generation options.
    pub options: ModelOptions,
    /// The system prompt (read from `system_prompt_file`), else the project's own text.
    pub system_prompt: Option<String>,
    /// The file it was read from.
    pub system_prompt_file: Option<PathBuf>,
    /// The model asked for embeddings (default: the model itself).
    pub embedding_model: Option<String>,
}

/// The operator's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OperatorConfig {
    /// Who answers.
    pub mode: OperatorMode,
    /// Mode `script`: the replies file, one reply a line.
    pub replies: Option<PathBuf>,
    /// Modes `terminal` and `dashboard`: how long to wait for an answer.
    pub timeout_secs: f64,
}

/// The similarity monitor's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimilarityConfig {
    /// Above this, the strong advisory.
    pub strong: f64,
    /// Above this (and not above `strong`), the moderate advisory.
    pub moderate: f64,
}

/// Per-cycle limits (reagent's guardrails apply inside every cycle too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Model calls per cycle.
    pub max_iterations: u32,
    /// Wall time per cycle, in seconds.
    pub max_time_secs: f64,
}

/// A whole experiment, resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentConfig {
    /// The experiment's id.
    pub run_id: String,
    /// Cycles to run.
    pub cycles: u32,
    /// What each cycle starts from.
    pub history: HistoryMode,
    /// The model.
    pub model: ModelConfig,
    /// The operator.
    pub operator: OperatorConfig,
    /// The similarity monitor.
    pub similarity: SimilarityConfig,
    /// Per-cycle limits.
    pub limits: Limits,
}

/// A config read from a file, with what it holds that reagent does not act on.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The experiment.
    pub config: ExperimentConfig,
    /// Keys that are understood but unsupported (ContReAct-Ollama's Telegram keys), each with
    /// why; the caller shows them.
    pub unsupported: Vec<String>,
}

// ---- the file's shapes ------------------------------------------------------------------

/// A number of cycles: at least 1.
#[derive(Debug, Clone, Copy)]
struct Count(u32);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = i64::deserialize(d)?;
        u32::try_from(n)
            .ok()
            .filter(|n| *n >= 1)
            .map(Count)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("must be a whole number from 1, got {n}"))
            })
    }
}

/// A similarity threshold: between 0 and 1.
#[derive(Debug, Clone, Copy)]
struct Ratio(f64);

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if (0.0..=1.0).contains(&x) {
            Ok(Ratio(x))
        } else {
            Err(serde::de::Error::custom(format!(
                "must be between 0 and 1, got {x}"
            )))
        }
    }
}

/// A positive number of seconds.
#[derive(Debug, Clone, Copy)]
struct Seconds(f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let x = f64::deserialize(d)?;
        if x.is_finite() && x > 0.0 && x < 1e9 {
            Ok(Seconds(x))
        } else {
            Err(serde::de::Error::custom(format!(
                "must be a positive number of seconds, got {x}"
            )))
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionsFile {
    temperature: Option<f32>,
    seed: Option<i64>,
    top_p: Option<f32>,
    num_ctx: Option<u32>,
    /// `-1`: no limit (ContReAct-Ollama's word for it).
    num_predict: Option<i64>,
    repeat_penalty: Option<f32>,
    repeat_last_n: Option<i32>,
    think: Option<bool>,
    keep_alive: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    provider: Option<String>,
    base_url: Option<String>,
    name: String,
    #[serde(default)]
    options: OptionsFile,
    system_prompt_file: Option<PathBuf>,
    embedding_model: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OperatorFile {
    #[serde(default)]
    mode: OperatorMode,
    replies: Option<PathBuf>,
    timeout_secs: Option<Seconds>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SimilarityFile {
    strong: Option<Ratio>,
    moderate: Option<Ratio>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    max_iterations: Option<Count>,
    max_time_secs: Option<Seconds>,
}

/// reagent's own shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReagentFile {
    run_id: String,
    cycles: Count,
    #[serde(default)]
    history: HistoryMode,
    model: ModelFile,
    #[serde(default)]
    operator: OperatorFile,
    #[serde(default)]
    similarity: SimilarityFile,
    #[serde(default)]
    limits: LimitsFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OllamaClientFile {
    host: Option<String>,
}

/// ContReAct-Ollama's shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContReActFile {
    run_id: String,
    model_name: String,
    cycle_count: Count,
    #[serde(default)]
    ollama_client_config: OllamaClientFile,
    #[serde(default)]
    model_options: OptionsFile,
    telegram_enabled: Option<serde_yaml_ng::Value>,
    telegram_bot_token: Option<serde_yaml_ng::Value>,
    telegram_authorized_users: Option<serde_yaml_ng::Value>,
    telegram_timeout_minutes: Option<serde_yaml_ng::Value>,
}

/// Defaults.
const DEFAULT_STRONG: f64 = 0.8;
const DEFAULT_MODERATE: f64 = 0.7;
const DEFAULT_OPERATOR_TIMEOUT: f64 = 300.0;
const DEFAULT_MAX_ITERATIONS: u32 = 30;
const DEFAULT_MAX_TIME: f64 = 900.0;

impl OptionsFile {
    fn resolve(self) -> ModelOptions {
        let mut o = ModelOptions {
            temperature: self.temperature,
            seed: self.seed,
            top_p: self.top_p,
            num_ctx: self.num_ctx,
            repeat_penalty: self.repeat_penalty,
            repeat_last_n: self.repeat_last_n,
            think: self.think,
            keep_alive: self.keep_alive,
            ..ModelOptions::default()
        };
        o.num_predict = match self.num_predict {
            // No limit: as large as the context allows.
            Some(n) if n < 0 => Some(self.num_ctx.unwrap_or(8192)),
            Some(n) => Some(u32::try_from(n).unwrap_or(u32::MAX)),
            None => None,
        };
        o
    }
}

/// Read the config at `path`: `.toml` as TOML, `.yaml`/`.yml` as YAML (either shape; a file
/// with `model_name` or `cycle_count` is ContReAct-Ollama's), anything else by its content.
pub fn load(path: &Path) -> Result<Loaded, CyclesError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CyclesError::Config(format!("cannot read {}: {e}", path.display())))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let yaml = match ext {
        "yaml" | "yml" => true,
        "toml" => false,
        _ => toml::from_str::<toml::Table>(&text).is_err(),
    };
    let at = |e: String| CyclesError::Config(format!("{}: {e}", path.display()));
    if yaml {
        parse_yaml(&text, base).map_err(at)
    } else {
        parse_toml(&text, base).map_err(at)
    }
}

/// A reagent-shaped TOML config; relative paths are taken from `base`.
pub fn parse_toml(text: &str, base: &Path) -> Result<Loaded, String> {
    let file: ReagentFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let line = |key: &str| line_of(text, key);
    Ok(Loaded {
        config: file.resolve(Some(base), &line)?,
        unsupported: Vec::new(),
    })
}

/// A YAML config of either shape; relative paths are taken from `base`.
pub fn parse_yaml(text: &str, base: &Path) -> Result<Loaded, String> {
    yaml_with(text, Some(base))
}

/// A config sent as text (over HTTP: `reagent serve`), TOML or YAML by its content. It may
/// name no file (`model.system_prompt_file`, `operator.replies`): a config naming one is an
/// error, and no file is read.
pub fn parse_sent(text: &str) -> Result<Loaded, String> {
    if toml::from_str::<toml::Table>(text).is_ok() {
        let file: ReagentFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let line = |key: &str| line_of(text, key);
        return Ok(Loaded {
            config: file.resolve(None, &line)?,
            unsupported: Vec::new(),
        });
    }
    yaml_with(text, None)
}

fn yaml_with(text: &str, base: Option<&Path>) -> Result<Loaded, String> {
    let keys: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let contreact = keys.get("model_name").is_some() || keys.get("cycle_count").is_some();
    let line = |key: &str| line_of(text, key);
    if !contreact {
        let file: ReagentFile = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
        return Ok(Loaded {
            config: file.resolve(base, &line)?,
            unsupported: Vec::new(),
        });
    }
    let file: ContReActFile = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    let mut unsupported = Vec::new();
    for (key, value) in [
        ("telegram_enabled", &file.telegram_enabled),
        ("telegram_bot_token", &file.telegram_bot_token),
        ("telegram_authorized_users", &file.telegram_authorized_users),
        ("telegram_timeout_minutes", &file.telegram_timeout_minutes),
    ] {
        if value.is_some() {
            unsupported.push(format!(
                "`{key}` (line {}) is not supported: reagent has no Telegram operator; \
                 the operator is `none` (use reagent's TOML shape for terminal, script or dashboard)",
                line(key).unwrap_or(0)
            ));
        }
    }
    let config = ExperimentConfig {
        run_id: check_id(file.run_id, line("run_id"))?,
        cycles: file.cycle_count.0,
        history: HistoryMode::Reflections,
        model: ModelConfig {
            provider: "ollama".to_owned(),
            base_url: file.ollama_client_config.host,
            name: file.model_name,
            options: file.model_options.resolve(),
            system_prompt: None,
            system_prompt_file: None,
            embedding_model: None,
        },
        operator: OperatorConfig {
            mode: OperatorMode::None,
            replies: None,
            timeout_secs: DEFAULT_OPERATOR_TIMEOUT,
        },
        similarity: SimilarityConfig {
            strong: DEFAULT_STRONG,
            moderate: DEFAULT_MODERATE,
        },
        limits: Limits {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_time_secs: DEFAULT_MAX_TIME,
        },
    };
    Ok(Loaded {
        config,
        unsupported,
    })
}

impl ReagentFile {
    /// `base`: where relative paths start; `None` when the config may name no file.
    fn resolve(
        self,
        base: Option<&Path>,
        line: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<ExperimentConfig, String> {
        let at = |key: &str| line(key).map_or(String::new(), |n| format!(" (line {n})"));
        let Some(base) = base else {
            for (key, named) in [
                (
                    "system_prompt_file",
                    self.model.system_prompt_file.is_some(),
                ),
                ("replies", self.operator.replies.is_some()),
            ] {
                if named {
                    return Err(format!(
                        "{key}{}: a config sent to the server may name no file",
                        at(key)
                    ));
                }
            }
            return self.resolve(Some(Path::new(".")), line);
        };
        let strong = self.similarity.strong.map_or(DEFAULT_STRONG, |r| r.0);
        let moderate = self.similarity.moderate.map_or(DEFAULT_MODERATE, |r| r.0);
        if moderate > strong {
            return Err(format!(
                "similarity.moderate{} ({moderate}) must not be above similarity.strong ({strong})",
                at("moderate")
            ));
        }
        let mode = self.operator.mode;
        let replies = self.operator.replies.map(|p| base.join(p));
        match (mode, &replies) {
            (OperatorMode::Script, None) => {
                return Err(format!(
                "operator.mode{} is `script`: give operator.replies, a file with one reply a line",
                at("mode")
            ))
            }
            (OperatorMode::Script, Some(p)) if !p.is_file() => {
                return Err(format!(
                    "operator.replies{}: {} is not a file",
                    at("replies"),
                    p.display()
                ))
            }
            _ => {}
        }
        let provider = self.model.provider.unwrap_or_else(|| "ollama".to_owned());
        if !["ollama", "openai", "local"].contains(&provider.as_str()) {
            return Err(format!(
                "model.provider{}: `{provider}` is not one of ollama, openai, local",
                at("provider")
            ));
        }
        let prompt_file = self.model.system_prompt_file.map(|p| base.join(p));
        let system_prompt = match &prompt_file {
            Some(p) => Some(std::fs::read_to_string(p).map_err(|e| {
                format!(
                    "model.system_prompt_file{}: cannot read {}: {e}",
                    at("system_prompt_file"),
                    p.display()
                )
            })?),
            None => None,
        };
        Ok(ExperimentConfig {
            run_id: check_id(self.run_id, line("run_id"))?,
            cycles: self.cycles.0,
            history: self.history,
            model: ModelConfig {
                provider,
                base_url: self.model.base_url,
                name: self.model.name,
                options: self.model.options.resolve(),
                system_prompt,
                system_prompt_file: prompt_file,
                embedding_model: self.model.embedding_model,
            },
            operator: OperatorConfig {
                mode,
                replies,
                timeout_secs: self
                    .operator
                    .timeout_secs
                    .map_or(DEFAULT_OPERATOR_TIMEOUT, |s| s.0),
            },
            similarity: SimilarityConfig { strong, moderate },
            limits: Limits {
                max_iterations: self
                    .limits
                    .max_iterations
                    .map_or(DEFAULT_MAX_ITERATIONS, |c| c.0),
                max_time_secs: self.limits.max_time_secs.map_or(DEFAULT_MAX_TIME, |s| s.0),
            },
        })
    }
}

/// An experiment id: 1–100 characters of letters, digits, `-`, `_`, `.`, `:`.
pub fn check_id(id: String, line: Option<usize>) -> Result<String, String> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if ok {
        Ok(id)
    } else {
        let at = line.map_or(String::new(), |n| format!(" (line {n})"));
        Err(format!(
            "run_id{at}: `{id}` must be 1-100 letters, digits, '-', '_', '.' or ':'"
        ))
    }
}

/// The 1-based line where `key` is first set (`key =` or `key:` at the start of a line).
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(['=', ':']))
        })
        .map(|i| i + 1)
}

impl ExperimentConfig {
    /// The config for one run of a batch: `seed` and `model` replaced where given, and the id
    /// derived from this one (`ID-MODEL-sSEED`, the model's `:` and `/` made `_`).
    pub fn variant(&self, seed: Option<i64>, model: Option<&str>) -> ExperimentConfig {
        let mut c = self.clone();
        let mut id = self.run_id.clone();
        if let Some(m) = model {
            c.model.name = m.to_owned();
            id.push('-');
            id.extend(m.chars().map(|ch| match ch {
                ':' | '/' => '_',
                ch if ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.') => ch,
                _ => '_',
            }));
        }
        if let Some(s) = seed {
            c.model.options.seed = Some(s);
            id.push_str(&format!("-s{s}"));
        }
        c.run_id = id;
        c
    }
}
