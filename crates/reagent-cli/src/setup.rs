//! Turning flags and config into library configurations: which provider, which tools, which
//! sandbox. Shared by `run`, `tool` and `demo`, so a tool runs under exactly the confinement it
//! has inside a run.

use std::time::Duration;

use anyhow::{bail, Context};
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
