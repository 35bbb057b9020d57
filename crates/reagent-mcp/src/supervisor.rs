//! One configured server kept running: connect (spawn or dial), list its tools, watch the
//! connection, restart with backoff when it ends; calls with a deadline that fail with a clear
//! error, never stall, and restart a server that stopped answering.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_protocol::CancellationToken;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool as McpToolInfo};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use tokio::sync::watch;

use crate::config::ServerSpec;
use crate::confine::Confinement;
use crate::connect::{connect, Connection};

/// The first wait before a restart; it doubles up to [`BACKOFF_MAX`].
pub(crate) const BACKOFF_START: Duration = Duration::from_millis(250);
/// The longest wait before a restart.
pub(crate) const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Where a server stands.
#[derive(Clone)]
pub(crate) enum State {
    /// The first connection attempt has not finished.
    Starting,
    /// Connected; its tools as listed at connection.
    Up {
        peer: Peer<RoleClient>,
        tools: Arc<Vec<McpToolInfo>>,
        /// Fired to drop the connection (and kill the process) of a server that hung.
        kill: CancellationToken,
    },
    /// Not connected: why, and when the next attempt is due.
    Down { error: String, retry_at: Instant },
}

/// A supervised server: its spec and state; the supervisor task updates the state.
pub(crate) struct Supervised {
    pub(crate) spec: ServerSpec,
    state: watch::Receiver<State>,
}

impl Supervised {
    /// Start supervising `spec` on the current tokio runtime until `shutdown` fires.
    pub(crate) fn start(
        spec: ServerSpec,
        confinement: Option<Confinement>,
        shutdown: CancellationToken,
    ) -> Arc<Self> {
        let (tx, rx) = watch::channel(State::Starting);
        tokio::spawn(supervise(spec.clone(), confinement, tx, shutdown));
        Arc::new(Supervised { spec, state: rx })
    }

    /// The current state.
    pub(crate) fn state(&self) -> State {
        self.state.borrow().clone()
    }

    /// Wait until the first connection attempt has finished (up or down).
    pub(crate) async fn started(&self) {
        let mut rx = self.state.clone();
        // An error means the supervisor ended (shutdown): nothing more to wait for.
        let _ = rx.wait_for(|s| !matches!(s, State::Starting)).await;
    }

    /// Call the server's tool `tool` (its own name) with `args`; an error names the server
    /// and what went wrong. A call that outlives the server's timeout fails and restarts it.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, String> {
        let name = &self.spec.name;
        let (peer, kill) = match self.state() {
            State::Up { peer, kill, .. } => (peer, kill),
            State::Starting => return Err(format!("the MCP server `{name}` is still starting")),
            State::Down { error, retry_at } => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                return Err(format!(
                    "the MCP server `{name}` is down ({error}); it is restarted in {:.1} s",
                    wait.as_secs_f64()
                ));
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return Err(format!(
                    "arguments of an MCP tool are an object, not {other}"
                ))
            }
        };
        let timeout = self.spec.call_timeout;
        tokio::select! {
            result = tokio::time::timeout(timeout, peer.call_tool(params)) => match result {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(ServiceError::TransportClosed)) | Ok(Err(ServiceError::TransportSend(_))) => {
                    Err(format!("the MCP server `{name}` closed the connection during the call (it exited or crashed); it is restarted"))
                }
                Ok(Err(ServiceError::McpError(e))) => Err(format!("the MCP server `{name}` refused the call: {}", e.message)),
                Ok(Err(e)) => Err(format!("the MCP server `{name}` failed the call: {e}")),
                Err(_) => {
                    kill.cancel();
                    Err(format!("the MCP server `{name}` did not answer within {:.1} s; it is restarted", timeout.as_secs_f64()))
                }
            },
            () = cancel.cancelled() => Err("the run was cancelled during the call".to_owned()),
        }
    }
}

/// Connect, serve until the connection ends, wait, reconnect; until `shutdown`.
async fn supervise(
    spec: ServerSpec,
    confinement: Option<Confinement>,
    state: watch::Sender<State>,
    shutdown: CancellationToken,
) {
    let mut backoff = BACKOFF_START;
    loop {
        let attempt = tokio::select! {
            r = connect(&spec, confinement.as_ref()) => r,
            () = shutdown.cancelled() => return,
        };
        let error = match attempt {
            Ok(connection) => {
                let up_since = Instant::now();
                let error = serve_until_closed(&spec, connection, &state, &shutdown).await;
                if shutdown.is_cancelled() {
                    return;
                }
                // A connection that stayed up a while starts the backoff afresh.
                if up_since.elapsed() >= BACKOFF_MAX {
                    backoff = BACKOFF_START;
                }
                error
            }
            Err(error) => error,
        };
        tracing::warn!(server = %spec.name, "MCP server down: {error}; restart in {backoff:?}");
        state.send_replace(State::Down {
            error,
            retry_at: Instant::now() + backoff,
        });
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.cancelled() => return,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Publish the connection as up and wait for its end; returns why it ended.
async fn serve_until_closed(
    spec: &ServerSpec,
    connection: Connection,
    state: &watch::Sender<State>,
    shutdown: &CancellationToken,
) -> String {
    let Connection {
        service,
        tools,
        mut process,
    } = connection;
    let kill = CancellationToken::new();
    tracing::info!(server = %spec.name, tools = tools.len(), "MCP server up");
    state.send_replace(State::Up {
        peer: service.peer().clone(),
        tools: Arc::new(tools),
        kill: kill.clone(),
    });
    let closer = service.cancellation_token();
    let exited = async {
        match process.as_mut() {
            Some(child) => child.wait().await.ok(),
            None => std::future::pending().await,
        }
    };
    let why = tokio::select! {
        r = service.waiting() => match r {
            Ok(reason) => format!("the connection ended ({reason:?})"),
            Err(e) => format!("the connection failed: {e}"),
        },
        status = exited => match status {
            Some(s) => format!("the process exited ({s})"),
            None => "the process could not be waited for".to_owned(),
        },
        () = kill.cancelled() => {
            "it stopped answering".to_owned()
        }
        () = shutdown.cancelled() => "reagent is shutting down".to_owned(),
    };
    closer.cancel();
    if let Some(child) = process.as_mut() {
        // Killing an exited process fails harmlessly.
        let _ = child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    }
    why
}
