//! What a server is started with.

use std::net::SocketAddr;
use std::path::PathBuf;

use reagent_core::AgentConfig;
use reagent_providers::{ProviderConfig, ProviderKind};
use reagent_store::Location;
use reagent_tools::ToolsConfig;

/// The default address: loopback only.
pub const DEFAULT_BIND: &str = "127.0.0.1:7878";
/// The default cap on request bodies.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// The default cap on runs in progress at once.
pub const DEFAULT_MAX_CONCURRENT_RUNS: usize = 16;

/// A server's configuration. [`ServerConfig::new`] gives the defaults.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen (`127.0.0.1:0` picks a free port).
    pub bind: SocketAddr,
    /// The store runs are recorded in and listed from.
    pub store: Location,
    /// Directories a run's workspace must lie under (after resolving symlinks and `..`).
    /// Empty: the current directory.
    pub workspace_roots: Vec<PathBuf>,
    /// The token file; `None`: [`default_token_path`](crate::default_token_path).
    pub token_file: Option<PathBuf>,
    /// Request bodies larger than this get 413.
    pub max_body_bytes: usize,
    /// Base URLs a request's `base_url` may name besides the configured provider's
    /// (`[serve] base_urls` in reagent's config file); any other is refused with 403. A
    /// provider key is never sent to these (see the crate docs).
    pub base_urls: Vec<String>,
    /// Runs in progress at once (new runs and follow-ups); past it `POST` gets 429
    /// (`[serve] max_concurrent_runs`). At least 1.
    pub max_concurrent_runs: usize,
    /// Unread events each live subscriber may hold before it is caught up from the store.
    pub subscriber_queue: usize,
    /// Numbered events each live run keeps in memory for clients that reconnect.
    pub recent_events: usize,
    /// How runs are configured unless the request says otherwise.
    pub defaults: RunDefaults,
}

/// What a run gets when its request does not say.
#[derive(Debug, Clone)]
pub struct RunDefaults {
    /// The provider (its kind, base URLs, key, timeouts); a request's `provider` and
    /// `base_url` replace the kind and the URLs (a `base_url` only with one of the allowed
    /// URLs, [`ServerConfig::base_urls`]; the key goes only to its own URLs).
    pub provider: ProviderConfig,
    /// The tools and the sandbox (`run_command`'s rules decide what needs approval).
    pub tools: ToolsConfig,
    /// The agent's settings; a request's model, tool mode, iterations and budgets replace
    /// those fields. Replies are streamed by default, so clients that ask for deltas
    /// (`?deltas=true`) see the text as it comes.
    pub agent: AgentConfig,
}

impl Default for RunDefaults {
    fn default() -> Self {
        RunDefaults {
            provider: ProviderConfig::new(ProviderKind::Ollama),
            tools: ToolsConfig::default(),
            agent: AgentConfig {
                stream: true,
                ..AgentConfig::new("")
            },
        }
    }
}

impl ServerConfig {
    /// Listen on `bind`, record in `store`, and everything else as default.
    pub fn new(bind: SocketAddr, store: Location) -> Self {
        ServerConfig {
            bind,
            store,
            workspace_roots: Vec::new(),
            token_file: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            base_urls: Vec::new(),
            max_concurrent_runs: DEFAULT_MAX_CONCURRENT_RUNS,
            subscriber_queue: 256,
            recent_events: 256,
            defaults: RunDefaults::default(),
        }
    }
}
