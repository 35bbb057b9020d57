//! Turning flags and config into library configurations: which provider, which tools, which
//! sandbox. Shared by `run`, `tool` and `demo`, so a tool runs under exactly the confinement it
//! has inside a run.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use reagent_local::{
    catalog_model, ensure_installed, ensure_model, CatalogModel, Locations, ServerConfig,
    ServerFiles, WarmConfig, WarmServer,
};
use reagent_providers::{ProviderConfig, ProviderKind};
use reagent_tools::ToolsConfig;

use crate::config::FileConfig;

/// The provider configuration from flags and config.
pub(crate) fn provider_config(
    kind: Option<&str>,
    host: Option<&str>,
    base_urls: &[String],
    api_key_env: Option<&str>,
    timeout_secs: Option<f64>,
    max_retries: Option<u32>,
) -> anyhow::Result<ProviderConfig> {
    let kind: ProviderKind = kind
        .unwrap_or("ollama")
        .parse()
        .map_err(|e| anyhow::anyhow!("--provider: {e}"))?;
    if host.is_some() && kind != ProviderKind::Ollama {
        bail!("--host is for Ollama; use --base-url with --provider {kind}");
    }
    let mut cfg = ProviderConfig::new(kind);
    cfg.base_urls = match (base_urls, host) {
        ([], Some(host)) => vec![reagent_providers::ollama::normalize_ollama_host(host)],
        (urls, _) => urls.to_vec(),
    };
    let key_var = api_key_env.or(kind.api_key_env());
    cfg.api_key = key_var
        .and_then(|v| std::env::var(v).ok())
        .filter(|k| !k.is_empty());
    if let Some(t) = timeout_secs {
        cfg.timeout = Duration::try_from_secs_f64(t)
            .map_err(|_| anyhow::anyhow!("--timeout: {t} is not a valid number of seconds"))?;
    }
    if let Some(r) = max_retries {
        cfg.max_retries = r;
    }
    Ok(cfg)
}

/// The tools configuration from flags and config (sandbox included).
pub(crate) fn tools_config(
    read_only: bool,
    disabled: Vec<String>,
    sandbox_mode: Option<&str>,
    allow_network: bool,
    file: &FileConfig,
) -> anyhow::Result<ToolsConfig> {
    let mut tools = ToolsConfig {
        read_only,
        disabled,
        ..ToolsConfig::default()
    };
    let s = &file.sandbox;
    let policy = &mut tools.command.policy;
    if let Some(mode) = sandbox_mode.or(s.mode.as_deref()) {
        policy.mode = mode
            .parse()
            .map_err(|e| anyhow::anyhow!("sandbox mode: {e}"))?;
    }
    policy.network = allow_network || s.network.unwrap_or(false);
    policy
        .writable_roots
        .extend(s.writable_roots.iter().cloned());
    policy
        .readable_roots
        .extend(s.readable_roots.iter().cloned());
    policy
        .protected_paths
        .extend(s.protected_paths.iter().cloned());
    tools
        .protected
        .extend(s.protected_paths.iter().map(|p| p.display().to_string()));
    policy.allow_unconfined = s.allow_unconfined.unwrap_or(false);
    if let Some(t) = file.tools.command_timeout_secs {
        tools.command.default_timeout =
            Duration::try_from_secs_f64(t).context("tools.command_timeout_secs")?;
    }
    for rule in &s.rules {
        let rules = std::mem::take(&mut tools.command.rules);
        tools.command.rules = match rule.action.as_str() {
            "allow" => rules.allow(&rule.prefix),
            "ask" => rules.ask(&rule.prefix),
            "forbid" => rules.forbid(&rule.prefix),
            other => bail!(
                "sandbox.rules: action `{other}` for `{}` must be allow, ask or forbid",
                rule.prefix
            ),
        };
    }
    Ok(tools)
}

/// `--provider local`: the embedded llama-server, kept warm between runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LocalPlan {
    /// `--model-file`: a GGUF to serve instead of the cached SmolLM2.
    pub(crate) model_file: Option<PathBuf>,
    /// The context size to start the server with.
    pub(crate) ctx_size: u32,
}

/// The model name a local server is started under when none is given: the `--model-file`
/// name without `.gguf`, else `default` (for `reagent run --provider local` the catalog's
/// [`reagent_local::DEFAULT_MODEL`], chosen on the coding suite; the hub's managed server
/// keeps the fastest, [`SMOLLM2`]).
pub(crate) fn local_model_name(model_file: Option<&Path>, default: &str) -> String {
    model_file
        .and_then(|f| f.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| default.to_owned())
}

/// The name the embedded server has always served SmolLM2-135M under (a catalog alias of
/// `smollm2:135m`).
pub(crate) const SMOLLM2: &str = "SmolLM2-135M-Instruct";

/// How long a kept local server waits for the next run: `$REAGENT_LOCAL_IDLE_SECS`, else
/// [`reagent_local::DEFAULT_IDLE`].
fn local_idle() -> anyhow::Result<Duration> {
    match std::env::var("REAGENT_LOCAL_IDLE_SECS") {
        Ok(v) if !v.trim().is_empty() => {
            v.trim()
                .parse::<u64>()
                .map(Duration::from_secs)
                .map_err(|_| {
                    anyhow::anyhow!("REAGENT_LOCAL_IDLE_SECS: `{v}` is not a number of seconds")
                })
        }
        _ => Ok(reagent_local::DEFAULT_IDLE),
    }
}

/// Where the embedded llama-server's files are, and the files (installed when missing:
/// minutes, with progress on stderr as `who: …` unless `quiet`); `model_file` replaces the
/// embedded SmolLM2.
pub(crate) async fn local_files(
    model_file: Option<&PathBuf>,
    who: &'static str,
    quiet: bool,
) -> anyhow::Result<(Locations, ServerFiles)> {
    let mut locations = Locations::from_env()?;
    if let Some(file) = model_file {
        if !file.is_file() {
            bail!(
                "--model-file: {} is not a file (give a GGUF model)",
                file.display()
            );
        }
        locations.model_override = Some(file.clone());
    }
    let progress = setup_progress(who, quiet);
    let files = ensure_installed(&locations, Duration::from_secs(3600), &progress)
        .await
        .context("cannot set up the embedded model server (see DEVELOPERS.md)")?;
    Ok((locations, files))
}

/// Starts (or reuses) the embedded llama-server serving `model` as `plan` says, installing
/// it first when it is missing (minutes, with progress on stderr unless `quiet`).
pub(crate) async fn start_local(
    plan: &LocalPlan,
    model: &str,
    quiet: bool,
) -> anyhow::Result<WarmServer> {
    let (locations, files) = match catalog_entry(plan, model) {
        Some(entry) => catalog_files(entry, quiet).await?,
        None => local_files(plan.model_file.as_ref(), "reagent", quiet).await?,
    };
    let config = WarmConfig {
        server: ServerConfig {
            ctx_size: plan.ctx_size,
            alias: model.to_owned(),
            ..ServerConfig::new(files)
        },
        run_dir: locations.cache_dir.join("run"),
        idle: local_idle()?,
    };
    let server = WarmServer::acquire(&config)
        .await
        .context("cannot start the embedded model server")?;
    tracing::debug!(reused = server.reused(), url = %server.base_url(), "embedded llama-server");
    Ok(server)
}

/// The catalog model a local run serves by name (`--model qwen2.5-coder:1.5b`), unless
/// `--model-file` gives the file.
fn catalog_entry(plan: &LocalPlan, model: &str) -> Option<&'static CatalogModel> {
    match plan.model_file {
        Some(_) => None,
        None => catalog_model(model),
    }
}

/// The files of a catalog model, installed first when missing (minutes, with progress on
/// stderr unless `quiet`).
async fn catalog_files(
    model: &CatalogModel,
    quiet: bool,
) -> anyhow::Result<(Locations, ServerFiles)> {
    let locations = Locations::from_env()?;
    let progress = setup_progress("reagent", quiet);
    let files = ensure_model(&locations, model.name, Duration::from_secs(3600), &progress)
        .await
        .with_context(|| format!("cannot set up the local model {}", model.name))?;
    Ok((locations, files))
}

/// The provider configuration for a local run: OpenAI-compatible, at `server`.
pub(crate) fn local_provider(cfg: &ProviderConfig, server: &WarmServer) -> ProviderConfig {
    ProviderConfig {
        kind: ProviderKind::OpenAi,
        base_urls: vec![server.openai_base_url()],
        ..cfg.clone()
    }
}

/// Shows the installer's progress on stderr as `who: ...` lines: its own lines, and the build
/// every 5%; the rest goes to the debug log.
pub(crate) fn setup_progress(who: &'static str, quiet: bool) -> impl Fn(&str) + Send + Sync {
    let last_percent = AtomicU32::new(u32::MAX);
    move |line: &str| {
        if let Some(text) = line.strip_prefix("[reagent setup] ") {
            if !quiet {
                eprintln!("{who}: {text}");
            }
        } else if let Some(p) = build_percent(line) {
            // One line per 5% of the build is enough to show it moves.
            let shown = last_percent.load(Ordering::Relaxed);
            if !quiet
                && (shown == u32::MAX || p >= shown.saturating_add(5) || p == 100)
                && p != shown
            {
                last_percent.store(p, Ordering::Relaxed);
                eprintln!("{who}: building llama-server: {p}%");
            }
        } else {
            tracing::debug!(target: "reagent::setup", "{line}");
        }
    }
}

/// The percentage of a CMake build progress line (`[ 42%] Building CXX object ...`).
fn build_percent(line: &str) -> Option<u32> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (num, _) = rest.split_once("%]")?;
    num.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmake_progress_lines_are_read() {
        assert_eq!(
            build_percent("[ 42%] Building CXX object src/x.o"),
            Some(42)
        );
        assert_eq!(build_percent("[100%] Built target llama-server"), Some(100));
        assert_eq!(
            build_percent("-- The C compiler identification is GNU"),
            None
        );
        assert_eq!(build_percent("[reagent setup] building"), None);
    }

    #[test]
    fn catalog_names_choose_the_model_unless_a_file_is_given() {
        let plan = LocalPlan {
            model_file: None,
            ctx_size: 8192,
        };
        let entry = catalog_entry(&plan, "qwen2.5-coder:1.5b").unwrap();
        assert_eq!(entry.file, "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf");
        assert_eq!(
            catalog_entry(&plan, &local_model_name(None, reagent_local::DEFAULT_MODEL))
                .unwrap()
                .name,
            "qwen2.5-coder:1.5b"
        );
        assert_eq!(
            catalog_entry(&plan, &local_model_name(None, SMOLLM2))
                .unwrap()
                .name,
            "smollm2:135m"
        );
        assert!(catalog_entry(&plan, "my-model").is_none());
        let with_file = LocalPlan {
            model_file: Some(PathBuf::from("/m/x.gguf")),
            ..plan
        };
        assert!(catalog_entry(&with_file, "qwen2.5-coder:1.5b").is_none());
    }

    #[test]
    fn local_models_are_named_after_their_file() {
        assert_eq!(
            local_model_name(
                Some(Path::new("/m/qwen2.5-0.5b-instruct-q4_k_m.gguf")),
                SMOLLM2
            ),
            "qwen2.5-0.5b-instruct-q4_k_m"
        );
        assert_eq!(local_model_name(None, SMOLLM2), "SmolLM2-135M-Instruct");
    }
}
