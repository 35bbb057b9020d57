//! Choosing and building a backend from configuration: [`ProviderKind`], [`ProviderConfig`]
//! and [`build_provider`], the one constructor the CLI calls.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reagent_protocol::{Provider, ProviderError};

use crate::anthropic::AnthropicProvider;
use crate::gemini::GeminiProvider;
use crate::ollama::{default_ollama_host, OllamaProvider};
use crate::openai::OpenAiProvider;
use crate::pool::{EndpointPool, PoolConfig, PoolMember};
use crate::{ClientOptions, RetryPolicy};

/// Which API a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// Ollama's native API.
    Ollama,
    /// OpenAI-compatible chat completions (OpenAI, llama-server, vLLM...).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini.
    Gemini,
}

impl ProviderKind {
    /// Every kind, in the order of `--provider`'s help.
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Ollama,
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
    ];

    /// The name used by `--provider`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
        }
    }

    /// The environment variable the CLI reads the API key from, if the kind uses one.
    pub fn api_key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::Ollama => None,
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
        }
    }

    /// The base URL used when none is given: `$OLLAMA_HOST` or `http://127.0.0.1:11434`
    /// for Ollama, a local llama-server (`http://127.0.0.1:8080/v1`) for OpenAI-compatible,
    /// the public APIs for Anthropic and Gemini.
    pub fn default_base_url(self) -> String {
        match self {
            ProviderKind::Ollama => default_ollama_host(),
            ProviderKind::OpenAi => "http://127.0.0.1:8080/v1".to_owned(),
            ProviderKind::Anthropic => "https://api.anthropic.com".to_owned(),
            ProviderKind::Gemini => "https://generativelanguage.googleapis.com".to_owned(),
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = ProviderError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                ProviderError::Config(format!(
                    "unknown provider '{s}': expected one of ollama, openai, anthropic, gemini"
                ))
            })
    }
}

/// Everything needed to build a backend.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// Which API.
    pub kind: ProviderKind,
    /// Base URLs: none = the kind's default, one = a plain provider, several = a pool.
    pub base_urls: Vec<String>,
    /// API key (the CLI reads it from [`ProviderKind::api_key_env`]); local servers need none.
    pub api_key: Option<String>,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Retries after the first attempt (for a pool: rounds over all endpoints).
    pub max_retries: u32,
    /// First retry delay (doubles per retry, with jitter).
    pub retry_base_delay: Duration,
    /// The largest reply accepted, in bytes (see [`ClientOptions::max_reply_bytes`]).
    pub max_reply_bytes: usize,
    /// Pool settings (used with several base URLs); its `retry` is replaced by
    /// `max_retries` / `retry_base_delay`.
    pub pool: PoolConfig,
}

impl ProviderConfig {
    /// Defaults for `kind`: its default URL, 120 s timeout, 3 retries from 500 ms.
    pub fn new(kind: ProviderKind) -> Self {
        ProviderConfig {
            kind,
            base_urls: Vec::new(),
            api_key: None,
            timeout: Duration::from_secs(120),
            max_retries: 3,
            retry_base_delay: Duration::from_millis(500),
            max_reply_bytes: crate::DEFAULT_MAX_REPLY_BYTES,
            pool: PoolConfig::default(),
        }
    }

    fn retry(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base_delay: self.retry_base_delay,
            ..RetryPolicy::default()
        }
    }
}

macro_rules! pool_member {
    ($t:ty) => {
        #[async_trait]
        impl PoolMember for $t {
            fn endpoint_url(&self) -> &str {
                self.base_url()
            }

            async fn check_health(&self) -> Result<(), ProviderError> {
                self.health().await
            }
        }
    };
}

pool_member!(OllamaProvider);
pool_member!(OpenAiProvider);
pool_member!(AnthropicProvider);
pool_member!(GeminiProvider);

fn member(
    cfg: &ProviderConfig,
    url: &str,
    opts: ClientOptions,
) -> Result<Arc<dyn PoolMember>, ProviderError> {
    let key = cfg.api_key.clone();
    Ok(match cfg.kind {
        ProviderKind::Ollama => Arc::new(OllamaProvider::new(url, opts)?),
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(url, key, opts)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(url, key, opts)?),
        ProviderKind::Gemini => Arc::new(GeminiProvider::new(url, key, opts)?),
    })
}

/// Builds the backend `cfg` describes: a plain provider for zero or one base URL, an
/// [`EndpointPool`] for several (call it inside a tokio runtime so the pool's health checks
/// run). Fails with [`ProviderError::Config`] on a malformed URL.
pub fn build_provider(cfg: &ProviderConfig) -> Result<Arc<dyn Provider>, ProviderError> {
    let urls: Vec<String> = if cfg.base_urls.is_empty() {
        vec![cfg.kind.default_base_url()]
    } else {
        cfg.base_urls.clone()
    };
    if cfg.api_key.is_none() {
        if let Some(var) = cfg.kind.api_key_env() {
            let hosted = match cfg.kind {
                ProviderKind::OpenAi => "api.openai.com",
                ProviderKind::Anthropic => "api.anthropic.com",
                ProviderKind::Gemini => "generativelanguage.googleapis.com",
                ProviderKind::Ollama => "",
            };
            if !hosted.is_empty() && urls.iter().any(|u| u.contains(hosted)) {
                return Err(ProviderError::Config(format!(
                    "{hosted} needs an API key: set {var} (local servers need none; point --base-url at one)"
                )));
            }
        }
    }
    if let [url] = urls.as_slice() {
        let opts = ClientOptions {
            timeout: cfg.timeout,
            retry: cfg.retry(),
            max_reply_bytes: cfg.max_reply_bytes,
        };
        let m: Arc<dyn Provider> = match cfg.kind {
            ProviderKind::Ollama => Arc::new(OllamaProvider::new(url, opts)?),
            ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(url, cfg.api_key.clone(), opts)?),
            ProviderKind::Anthropic => {
                Arc::new(AnthropicProvider::new(url, cfg.api_key.clone(), opts)?)
            }
            ProviderKind::Gemini => Arc::new(GeminiProvider::new(url, cfg.api_key.clone(), opts)?),
        };
        return Ok(m);
    }
    // Pool members do not retry on their own: the pool fails over, then retries rounds.
    let opts = ClientOptions {
        timeout: cfg.timeout,
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        max_reply_bytes: cfg.max_reply_bytes,
    };
    let members = urls
        .iter()
        .map(|u| member(cfg, u, opts.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let pool_cfg = PoolConfig {
        retry: cfg.retry(),
        ..cfg.pool.clone()
    };
    Ok(Arc::new(EndpointPool::new(members, pool_cfg)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_print() {
        for k in ProviderKind::ALL {
            assert_eq!(k.as_str().parse::<ProviderKind>().ok(), Some(k));
            assert_eq!(k.to_string(), k.as_str());
        }
        assert_eq!(
            " OpenAI ".parse::<ProviderKind>().ok(),
            Some(ProviderKind::OpenAi)
        );
        let err = "claude".parse::<ProviderKind>().unwrap_err();
        assert!(
            err.to_string()
                .contains("ollama, openai, anthropic, gemini"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn one_url_gives_a_provider_several_a_pool_bad_ones_an_error() {
        let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
        cfg.base_urls = vec!["http://127.0.0.1:1/v1".into()];
        assert_eq!(build_provider(&cfg).unwrap().name(), "openai");
        cfg.base_urls.push("http://127.0.0.1:2/v1".into());
        assert_eq!(build_provider(&cfg).unwrap().name(), "openai");
        cfg.base_urls.push("127.0.0.1:3".into());
        assert!(matches!(
            build_provider(&cfg),
            Err(ProviderError::Config(_))
        ));
    }

    #[test]
    fn hosted_apis_without_a_key_are_refused_up_front() {
        let cfg = ProviderConfig::new(ProviderKind::Anthropic);
        let err = build_provider(&cfg)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("set ANTHROPIC_API_KEY"), "{err}");
        let mut cfg = ProviderConfig::new(ProviderKind::Gemini);
        cfg.api_key = Some("k".into());
        assert!(build_provider(&cfg).is_ok());
    }
}
