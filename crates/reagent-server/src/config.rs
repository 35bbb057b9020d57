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
    /// `base_url` replace the kind and the URLs.
    pub provider: ProviderConfig,
    /// The tools and the sandbox (`run_command`'s rules decide what needs approval).
    pub tools: ToolsConfig,
    /// The agent's settings; a request's model, tool mode, iterations and budgets replace
    /// those fields.
    pub agent: AgentConfig,
}

impl Default for RunDefaults {
    fn default() -> Self {
        RunDefaults {
            provider: ProviderConfig::new(ProviderKind::Ollama),
            tools: ToolsConfig::default(),
            agent: AgentConfig::new(""),
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
            subscriber_queue: 256,
            recent_events: 256,
            defaults: RunDefaults::default(),
        }
    }
}
