//! Where a run may send its model requests, and where a provider key may go.
//!
//! A request's `base_url` is the client's choice. Left open, any holder of the token could make
//! the server request any address it can reach (a loopback service, the cloud metadata address
//! `169.254.169.254`) and, by pointing a run at a server of its own, read the provider key off
//! the `Authorization` header. So:
//!
//! - a client's `base_url` must be on the allowed list: the configured provider's URLs (its
//!   kind's default when none is configured) plus [`ServerConfig::base_urls`](crate::ServerConfig)
//!   (`[serve] base_urls` in reagent's config file); anything else is a 403 naming that setting.
//!   URLs are compared after parsing (scheme, host, port and path; the same parser reqwest
//!   uses), so `http://127.0.0.1:11434/` and `HTTP://127.0.0.1:11434` are one URL, and a URL
//!   with a user name, a password, a query or a fragment is refused. The run is then sent to the
//!   allowed URL as configured, not to the client's spelling of it;
//! - a provider key goes only to a URL it was configured with: the configured provider's key to
//!   the configured provider's URLs, the key a request's other `provider` reads from its
//!   environment variable to that provider's default URL. A run sent to another allowed URL
//!   goes without a key.

use reagent_providers::{ProviderConfig, ProviderKind};
use url::Url;

use crate::api::CreateRun;
use crate::error::{ApiError, ServerError};

/// The setting a refused base URL names.
pub(crate) const SETTING: &str = "[serve] base_urls";

/// One allowed URL: its comparable form and its text as configured.
#[derive(Debug, Clone)]
struct Allowed {
    canonical: String,
    configured: String,
}

/// The base URLs runs may use.
#[derive(Debug, Clone)]
pub(crate) struct Egress {
    allowed: Vec<Allowed>,
    /// Reads an environment variable (the key of a provider a request names).
    env: fn(&str) -> Option<String>,
}

fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl Egress {
    /// The configured provider's URLs plus `extra`; an `extra` URL that cannot be read is an
    /// error naming [`SETTING`].
    pub(crate) fn new(provider: &ProviderConfig, extra: &[String]) -> Result<Self, ServerError> {
        let mut allowed: Vec<Allowed> = urls_of(provider)
            .into_iter()
            // A configured URL the parser cannot read matches no client URL; building the
            // provider reports it.
            .filter_map(|url| entry(url).ok())
            .collect();
        for url in extra {
            let extra = entry(url.clone())
                .map_err(|message| ServerError::Config(format!("{SETTING}: `{url}`: {message}")))?;
            allowed.push(extra);
        }
        Ok(Egress {
            allowed,
            env: from_env,
        })
    }

    /// The provider configuration of a run asked for by `request`, over `defaults`: its
    /// `provider` and `base_url` applied under the rules of this module.
    pub(crate) fn provider_config(
        &self,
        defaults: &ProviderConfig,
        request: &CreateRun,
    ) -> Result<ProviderConfig, ApiError> {
        let mut cfg = defaults.clone();
        if let Some(name) = &request.provider {
            let kind: ProviderKind = name
                .parse()
                .map_err(|e| ApiError::bad_request(format!("`provider`: {e}")))?;
            if kind != cfg.kind {
                // Another API: its own default URL, and the key of its environment variable.
                cfg = ProviderConfig {
                    kind,
                    base_urls: Vec::new(),
                    api_key: kind
                        .api_key_env()
                        .and_then(self.env)
                        .filter(|k| !k.is_empty()),
                    ..cfg
                };
            }
        }
        if let Some(url) = &request.base_url {
            let chosen = self.check(url)?;
            // The key's own URLs: the ones it was configured (or, for another kind, defaulted)
            // with.
            let keyed = urls_of(&cfg)
                .into_iter()
                .filter_map(|u| canonical(&u).ok())
                .any(|u| u == chosen.canonical);
            if !keyed {
                cfg.api_key = None;
            }
            cfg.base_urls = vec![chosen.configured.clone()];
        }
        Ok(cfg)
    }

    /// The allowed entry `url` is: 400 when it is not a plain http(s) URL, 403 (naming
    /// [`SETTING`]) when it is not allowed.
    fn check(&self, url: &str) -> Result<&Allowed, ApiError> {
        let wanted = canonical(url)
            .map_err(|message| ApiError::bad_request(format!("`base_url` `{url}`: {message}")))?;
        self.allowed
            .iter()
            .find(|a| a.canonical == wanted)
            .ok_or_else(|| {
                ApiError::forbidden(format!(
                    "`base_url` `{url}` is not allowed: this server sends runs only to its \
                     configured model server and to the URLs listed in `{SETTING}` of its config \
                     file"
                ))
            })
    }
}

/// The URLs `cfg` sends to: its base URLs, or its kind's default.
fn urls_of(cfg: &ProviderConfig) -> Vec<String> {
    if cfg.base_urls.is_empty() {
        vec![cfg.kind.default_base_url()]
    } else {
        cfg.base_urls.clone()
    }
}

fn entry(configured: String) -> Result<Allowed, String> {
    Ok(Allowed {
        canonical: canonical(&configured)?,
        configured,
    })
}

/// `scheme://host:port/path` (no trailing `/`) of a plain http(s) URL, as the URL parser reads
/// it (lower-case host, IPv4 in dotted decimal, IPv6 bracketed, `.` and `..` resolved, the
/// default port written out).
fn canonical(text: &str) -> Result<String, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must start with http:// or https://".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("must not carry a query or a fragment".into());
    }
    let host = url.host_str().ok_or("has no host")?;
    let port = url.port_or_known_default().ok_or("has no port")?;
    Ok(format!(
        "{}://{host}:{port}{}",
        url.scheme(),
        url.path().trim_end_matches('/')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(provider: Option<&str>, base_url: Option<&str>) -> CreateRun {
        CreateRun {
            task: "t".into(),
            model: "m".into(),
            provider: provider.map(str::to_owned),
            base_url: base_url.map(str::to_owned),
            tool_mode: None,
            max_iterations: None,
            budgets: None,
            workspace: "/w".into(),
            approval: None,
        }
    }

    fn openai_with_key() -> ProviderConfig {
        let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
        cfg.base_urls = vec!["https://api.example.com/v1".into()];
        cfg.api_key = Some("sk-secret".into());
        cfg
    }

    #[test]
    fn spellings_of_one_url_compare_equal_and_tricks_do_not() {
        let c = |s: &str| canonical(s);
        assert_eq!(c("http://127.0.0.1:11434/"), c("HTTP://127.0.0.1:11434"));
        assert_eq!(c("http://0x7f.1:11434"), c("http://127.0.0.1:11434"));
        assert_eq!(
            c("https://Api.Example.com:443/v1/"),
            c("https://api.example.com/v1")
        );
        assert_eq!(
            c("https://api.example.com/x/../v1"),
            c("https://api.example.com/v1")
        );
        assert_ne!(c("http://127.0.0.1:11434"), c("http://127.0.0.1:11435"));
        assert_ne!(
            c("https://api.example.com/v1"),
            c("http://api.example.com/v1")
        );
        for bad in [
            "http://api.example.com@127.0.0.1:11434",
            "http://user:pw@api.example.com",
            "https://api.example.com/v1?x=1",
            "https://api.example.com/v1#f",
            "ftp://api.example.com",
            "file:///etc/passwd",
            "api.example.com",
        ] {
            assert!(c(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_key_goes_only_to_its_own_url() {
        let egress = Egress::new(&openai_with_key(), &["http://127.0.0.1:8000/v1".into()]).unwrap();
        let defaults = openai_with_key();
        // No base_url: the configured URL, with the key.
        let cfg = egress
            .provider_config(&defaults, &request(None, None))
            .unwrap();
        assert_eq!(cfg.api_key.as_deref(), Some("sk-secret"));
        // The configured URL spelled otherwise: allowed, keyed, sent as configured.
        let cfg = egress
            .provider_config(
                &defaults,
                &request(None, Some("HTTPS://api.example.com:443/v1/")),
            )
            .unwrap();
        assert_eq!(cfg.base_urls, ["https://api.example.com/v1"]);
        assert_eq!(cfg.api_key.as_deref(), Some("sk-secret"));
        // Another allowed URL: no key.
        let cfg = egress
            .provider_config(&defaults, &request(None, Some("http://127.0.0.1:8000/v1")))
            .unwrap();
        assert_eq!(cfg.base_urls, ["http://127.0.0.1:8000/v1"]);
        assert_eq!(cfg.api_key, None);
        // Not allowed: 403 naming the setting.
        let err = egress
            .provider_config(&defaults, &request(None, Some("http://169.254.169.254/")))
            .unwrap_err();
        assert_eq!(err.status(), 403);
        // Malformed: 400.
        let err = egress
            .provider_config(&defaults, &request(None, Some("ftp://x")))
            .unwrap_err();
        assert_eq!(err.status(), 400);
    }

    #[test]
    fn another_kind_keeps_its_own_key_to_its_own_url() {
        let defaults = openai_with_key();
        let mut egress = Egress::new(&defaults, &[]).unwrap();
        egress.env = |name| (name == "ANTHROPIC_API_KEY").then(|| "sk-ant".to_owned());
        // Its default URL: its key.
        let cfg = egress
            .provider_config(&defaults, &request(Some("anthropic"), None))
            .unwrap();
        assert_eq!(cfg.kind, ProviderKind::Anthropic);
        assert_eq!(cfg.api_key.as_deref(), Some("sk-ant"));
        // The configured provider's URL, allowed: neither key goes there.
        let cfg = egress
            .provider_config(
                &defaults,
                &request(Some("anthropic"), Some("https://api.example.com/v1")),
            )
            .unwrap();
        assert_eq!(cfg.base_urls, ["https://api.example.com/v1"]);
        assert_eq!(cfg.api_key, None);
    }

    #[test]
    fn a_bad_allowed_url_names_the_setting() {
        let err = Egress::new(&openai_with_key(), &["http://x/?q".into()]).unwrap_err();
        assert!(err.to_string().contains(SETTING), "{err}");
    }
}
