//! [`McpPool`]: the configured servers for runs in more than one workspace (`reagent serve`,
//! `reagent worker`). Servers that are not confined (HTTP, `sandbox = false`) are shared by
//! every run; sandboxed stdio servers are started once per workspace, confined to it, and kept
//! for the next run there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use reagent_tools::{AsyncTool, ToolSource};

use crate::config::{ServerSpec, Transport};
use crate::confine::Confinement;
use crate::McpClients;

/// The servers of every workspace; as a [`ToolSource`] it offers those of its default
/// workspace (the one its confinement names), and [`ToolSource::for_workspace`] those of
/// another, started on first use.
pub struct McpPool {
    /// Servers every workspace shares.
    shared: Arc<McpClients>,
    /// The sandboxed stdio servers, started per workspace.
    confined_specs: Vec<ServerSpec>,
    /// The policy they run under (its workspace is the default one).
    confinement: Option<Confinement>,
    /// The confined servers of each workspace started so far, by canonical root.
    by_root: Mutex<HashMap<PathBuf, Arc<McpClients>>>,
}

impl McpPool {
    /// Start the shared servers and those of `confinement`'s workspace (on the current tokio
    /// runtime). Without a confinement every server is shared and unconfined.
    pub fn start(servers: Vec<ServerSpec>, confinement: Option<Confinement>) -> Self {
        let (confined_specs, shared): (Vec<_>, Vec<_>) = servers.into_iter().partition(|s| {
            confinement.is_some() && matches!(s.transport, Transport::Stdio { sandbox: true, .. })
        });
        let pool = McpPool {
            shared: Arc::new(McpClients::start(shared, None)),
            confined_specs,
            confinement,
            by_root: Mutex::new(HashMap::new()),
        };
        if let Some(c) = &pool.confinement {
            let root = c.workspace.clone();
            pool.bound(&root);
        }
        pool
    }

    /// The servers of a run in `root`: the shared ones and `root`'s confined ones (started now
    /// if this is the first run there).
    fn bound(&self, root: &Path) -> Arc<Bound> {
        let mut parts = vec![self.shared.clone()];
        if let Some(c) = &self.confinement {
            if !self.confined_specs.is_empty() {
                let key = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
                let mut by_root = self
                    .by_root
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                let clients = by_root.entry(key.clone()).or_insert_with(|| {
                    let confinement = Confinement {
                        policy: c.policy.clone(),
                        workspace: key,
                    };
                    Arc::new(McpClients::start(
                        self.confined_specs.clone(),
                        Some(confinement),
                    ))
                });
                parts.push(clients.clone());
            }
        }
        Arc::new(Bound { parts })
    }

    /// The number of workspaces whose confined servers have been started.
    pub fn workspaces(&self) -> usize {
        self.by_root
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    fn default_bound(&self) -> Arc<Bound> {
        match &self.confinement {
            Some(c) => self.bound(&c.workspace.clone()),
            None => Arc::new(Bound {
                parts: vec![self.shared.clone()],
            }),
        }
    }
}

#[async_trait::async_trait]
impl ToolSource for McpPool {
    fn name(&self) -> &str {
        "mcp"
    }

    /// The tools of the default workspace's servers that are up.
    fn tools(&self) -> Vec<Arc<dyn AsyncTool>> {
        self.default_bound().tools()
    }

    async fn started(&self) {
        self.default_bound().started().await;
    }

    fn for_workspace(&self, root: &Path) -> Option<Arc<dyn ToolSource>> {
        Some(self.bound(root))
    }
}

/// The servers one run uses.
struct Bound {
    parts: Vec<Arc<McpClients>>,
}

#[async_trait::async_trait]
impl ToolSource for Bound {
    fn name(&self) -> &str {
        "mcp"
    }

    fn tools(&self) -> Vec<Arc<dyn AsyncTool>> {
        self.parts.iter().flat_map(|p| p.tools()).collect()
    }

    async fn started(&self) {
        for part in &self.parts {
            part.started().await;
        }
    }
}
