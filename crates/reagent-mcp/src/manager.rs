//! [`McpClients`]: every configured server supervised, its tools offered as a
//! [`ToolSource`], its status listed, its tools callable by name.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_protocol::{CancellationToken, ToolSpec};
use reagent_tools::{AsyncTool, ToolResult, ToolSource};
use serde::Serialize;
use serde_json::Value;

use crate::config::{ServerSpec, Transport};
use crate::confine::Confinement;
use crate::supervisor::{State, Supervised};
use crate::tool::{convert, McpTool};

/// The configured MCP servers, each kept running by its own supervisor task; shut down when
/// dropped (stdio server processes are killed).
pub struct McpClients {
    servers: Vec<Arc<Supervised>>,
    shutdown: CancellationToken,
}

/// One server's status, as `reagent mcp list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    /// Its name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// `up`, `starting` or `down`.
    pub status: &'static str,
    /// Why it is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its tools as offered to the model (namespaced), when up.
    pub tools: Vec<ListedTool>,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, Serialize)]
pub struct ListedTool {
    /// The namespaced name (`server__tool`).
    pub name: String,
    /// The server's description.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
}

impl From<ToolSpec> for ListedTool {
    fn from(spec: ToolSpec) -> Self {
        ListedTool {
            name: spec.name,
            description: spec.description,
            parameters: spec.parameters,
        }
    }
}

impl McpClients {
    /// Start supervising `servers` (on the current tokio runtime); stdio servers with
    /// `sandbox = true` run under `confinement` (`None`: unconfined).
    pub fn start(servers: Vec<ServerSpec>, confinement: Option<Confinement>) -> Self {
        let shutdown = CancellationToken::new();
        let servers = servers
            .into_iter()
            .map(|spec| Supervised::start(spec, confinement.clone(), shutdown.clone()))
            .collect();
        McpClients { servers, shutdown }
    }

    /// No servers configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Wait until every server has finished its first connection attempt (up or down), or
    /// `deadline` has passed.
    pub async fn wait_started(&self, deadline: Duration) {
        let all = wait_each(self.servers.iter().map(|s| s.started()));
        let _ = tokio::time::timeout(deadline, all).await;
    }

    /// Every server's status, by name.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|server| {
                let transport = match server.spec.transport {
                    Transport::Stdio { .. } => "stdio",
                    Transport::Http { .. } => "http",
                };
                let (status, error, tools) = match server.state() {
                    State::Starting => ("starting", None, Vec::new()),
                    State::Down { error, retry_at } => {
                        let wait = retry_at.saturating_duration_since(Instant::now());
                        let error = format!("{error} (restart in {:.1} s)", wait.as_secs_f64());
                        ("down", Some(error), Vec::new())
                    }
                    State::Up { tools, .. } => (
                        "up",
                        None,
                        tools
                            .iter()
                            .map(|t| crate::tool::spec_of(&server.spec.name, t).into())
                            .collect(),
                    ),
                };
                ServerStatus {
                    name: server.spec.name.clone(),
                    transport,
                    status,
                    error,
                    tools,
                }
            })
            .collect()
    }

    /// Call `tool` (the server's own name for it) on `server`, as a tool result.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let Some(s) = self.servers.iter().find(|s| s.spec.name == server) else {
            let names: Vec<&str> = self.servers.iter().map(|s| s.spec.name.as_str()).collect();
            return ToolResult::err(format!(
                "no MCP server `{server}` is configured; configured: {}",
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            ));
        };
        match s.call(tool, args, cancel).await {
            Ok(result) => convert(&result),
            Err(e) => ToolResult::err(e),
        }
    }
}

#[async_trait::async_trait]
impl ToolSource for McpClients {
    fn name(&self) -> &str {
        "mcp"
    }

    /// The tools of every server that is up; a server that is down offers none.
    fn tools(&self) -> Vec<Arc<dyn AsyncTool>> {
        let mut out: Vec<Arc<dyn AsyncTool>> = Vec::new();
        for server in &self.servers {
            if let State::Up { tools, .. } = server.state() {
                for info in tools.iter() {
                    out.push(Arc::new(McpTool::new(server.clone(), info)));
                }
            }
        }
        out
    }

    /// Every server's first connection attempt finished (bounded by its start-up timeout).
    async fn started(&self) {
        let longest = self
            .servers
            .iter()
            .map(|s| s.spec.startup_timeout)
            .max()
            .unwrap_or_default();
        self.wait_started(longest + Duration::from_secs(1)).await;
    }
}

impl Drop for McpClients {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Await every future in turn (they wait on background tasks, so this takes the longest).
async fn wait_each<F: std::future::Future<Output = ()>>(futures: impl Iterator<Item = F>) {
    for f in futures {
        f.await;
    }
}
