//! # reagent-server
//!
//! `reagent serve` as a library: an HTTP API (axum) that starts runs in-process — each a
//! [`reagent_core::Session`] of its own [`reagent_core::Agent`], the same loop as `reagent
//! run` — records them in a [`reagent_store::Store`], streams their events live (Server-Sent
//! Events with `Last-Event-ID` resume, or a WebSocket) through [`reagent_core::EventBus`],
//! with the reply's text and reasoning as they stream for clients that ask (`?deltas=true`),
//! lets a person answer approvals, and exports Prometheus metrics. It also serves the
//! dashboard's static files, embedded from `assets/`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), reagent_server::ServerError> {
//! use reagent_server::{Server, ServerConfig};
//! let config = ServerConfig::new(
//!     "127.0.0.1:7878".parse().unwrap(),
//!     reagent_store::Location::parse("/tmp/reagent.db")?,
//! );
//! let server = Server::bind(config).await?;
//! println!("dashboard: {}", server.dashboard_url());
//! server.serve(async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(()) }
//! ```
//!
//! Security: every route but `GET /v1/health`, `GET /` and `GET /assets/*` needs the bearer
//! token in the `Authorization` header (compared in constant time; never taken from a query
//! string), kept in a file created on first start with mode 0600; a non-loopback address
//! refuses to start without an existing token file; no CORS headers are sent (browsers refuse
//! other origins); every response carries a Content-Security-Policy that lets a page run only
//! the dashboard's own scripts and styles and be framed by no one (`frame-ancestors 'none'`),
//! `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` and `Referrer-Policy:
//! no-referrer`; bodies are capped; a request's `base_url` must be the configured provider's or
//! one of [`ServerConfig::base_urls`] (403 otherwise), and a provider key is only ever sent to
//! the URL it was configured for (`egress.rs`); at most
//! [`ServerConfig::max_concurrent_runs`] runs are in progress at once (429 past it); a run's
//! workspace must lie under a workspace root after resolving symlinks and `..`, and a path that
//! is missing gets the same 403 as one outside the roots. The token is never logged or put in
//! an error.
//!
//! Architecture invariant: a thin HTTP edge over reagent-core and reagent-store; never prints.
#![deny(missing_docs)]

mod api;
mod approvals;
mod assets;
mod config;
mod egress;
mod error;
mod experiment_api;
mod experiment_routes;
mod experiments;
mod extract;
mod follow;
mod live;
mod metrics;
mod openapi;
mod roots;
mod routes;
mod runs;
mod stream;
mod token;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use reagent_store::Store;
use tokio::net::TcpListener;

pub use api::*;
pub use config::{
    RunDefaults, ServerConfig, DEFAULT_BIND, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT_RUNS,
};
pub use error::{ApiError, ErrorBody, ErrorDetail, ServerError};
pub use experiment_api::*;
pub use openapi::openapi;
pub use token::{default_token_path, Token, TOKEN_FILE_NAME};

use approvals::Approvals;
use experiments::Experiments;
use metrics::Metrics;
use runs::Runs;

/// How long open connections (event streams) get to finish after the runs were interrupted.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

struct Shared {
    runs: Runs,
    experiments: Experiments,
    store: Store,
    approvals: Approvals,
    metrics: Arc<Metrics>,
    token: Token,
    max_body_bytes: usize,
}

/// What every handler sees. Cheap to clone.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

impl AppState {
    pub(crate) fn runs(&self) -> &Runs {
        &self.0.runs
    }
    pub(crate) fn experiments(&self) -> &Experiments {
        &self.0.experiments
    }
    pub(crate) fn store(&self) -> &Store {
        &self.0.store
    }
    pub(crate) fn approvals(&self) -> &Approvals {
        &self.0.approvals
    }
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }
    pub(crate) fn token(&self) -> &Token {
        &self.0.token
    }
    pub(crate) fn max_body_bytes(&self) -> usize {
        self.0.max_body_bytes
    }
}

/// A bound server, ready to [`serve`](Server::serve).
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    state: AppState,
    token_file: PathBuf,
    token_created: bool,
}

impl Server {
    /// Check the configuration, read (or, on a loopback address, create) the token file, open
    /// the store and bind the address.
    pub async fn bind(config: ServerConfig) -> Result<Server, ServerError> {
        let token_file = match &config.token_file {
            Some(p) => p.clone(),
            None => default_token_path()?,
        };
        let (token, token_created) =
            token::load_or_create(&token_file, config.bind.ip().is_loopback())?;
        let roots = roots::WorkspaceRoots::new(&config.workspace_roots)?;
        let egress = egress::Egress::new(&config.defaults.provider, &config.base_urls)?;
        if config.max_concurrent_runs == 0 {
            return Err(ServerError::Config(
                "[serve] max_concurrent_runs must be at least 1".into(),
            ));
        }
        let store = Store::open(&config.store).await?;
        let listener =
            TcpListener::bind(config.bind)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: config.bind,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: config.bind,
            source,
        })?;
        let approvals = Approvals::default();
        let metrics = Arc::new(Metrics::new());
        let experiments = Experiments::new(
            store.clone(),
            egress.clone(),
            config.defaults.provider.clone(),
            config.max_concurrent_runs,
        );
        let runs = Runs::new(
            &config,
            store.clone(),
            roots,
            egress,
            approvals.clone(),
            metrics.clone(),
        );
        Ok(Server {
            listener,
            addr,
            state: AppState(Arc::new(Shared {
                runs,
                experiments,
                store,
                approvals,
                metrics,
                token,
                max_body_bytes: config.max_body_bytes,
            })),
            token_file,
            token_created,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token file.
    pub fn token_file(&self) -> &Path {
        &self.token_file
    }

    /// Whether the token file was created by this start.
    pub fn token_created(&self) -> bool {
        self.token_created
    }

    /// The token (to hand to a client; never logged).
    pub fn token(&self) -> &Token {
        self.state.token()
    }

    /// The dashboard's address with the token in the fragment (`http://ADDR/#token=...`; a
    /// fragment never reaches a server or a log).
    pub fn dashboard_url(&self) -> String {
        format!(
            "http://{}/#token={}",
            self.addr,
            self.state.token().reveal()
        )
    }

    /// Serve until `shutdown` completes; then every live run ends as `interrupted` (recorded
    /// in the store), open streams get a grace of 2 s to end, and this returns.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let app = routes::router(self.state.clone());
        let (stopped_tx, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        let runs = self.state.runs().clone();
        let experiments = self.state.experiments().clone();
        let signal = async move {
            shutdown.await;
            tokio::join!(runs.interrupt_all(), experiments.interrupt_all());
            let _ = stopped_tx.send(());
        };
        // Events are small writes: without TCP_NODELAY, Nagle and delayed ACKs hold them ~40 ms.
        let listener = self.listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY: {e}");
            }
        });
        let server = axum::serve(listener, app).with_graceful_shutdown(signal);
        let grace = async move {
            if stopped_rx.await.is_ok() {
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            served = server => served.map_err(ServerError::Serve),
            () = grace => Ok(()),
        }
    }
}
