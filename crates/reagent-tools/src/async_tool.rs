//! The asynchronous tool interface the agent loop calls ([`AsyncTool`]), the adapter that
//! keeps blocking tools as they are ([`BlockingTool`]), and sources of tools read when a run
//! starts ([`ToolSource`]).

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;

use futures_util::FutureExt;
use reagent_protocol::ToolSpec;
use serde_json::Value;

use crate::registry::{call_catching_panics, Tool, ToolContext, ToolResult};

/// One tool, called asynchronously: a tool that waits (for a server, a process, the network)
/// does so without holding a thread.
#[async_trait::async_trait]
pub trait AsyncTool: Send + Sync {
    /// Name, description and JSON Schema of the arguments.
    fn spec(&self) -> ToolSpec;
    /// Whether the tool writes files, runs commands or may change the world otherwise
    /// (disabled in read-only mode).
    fn mutates(&self) -> bool;
    /// Run the tool. Arguments have been coerced and validated against [`AsyncTool::spec`].
    async fn call(&self, args: Value, ctx: ToolContext) -> ToolResult;
    /// The blocking tool behind this one, when it is a [`BlockingTool`] (so synchronous
    /// callers can run it on their own thread).
    fn blocking(&self) -> Option<&Arc<dyn Tool>> {
        None
    }
}

/// A blocking [`Tool`] as an [`AsyncTool`]: quick calls ([`Tool::is_quick`]) run on the
/// caller's task, others on a blocking thread.
pub struct BlockingTool {
    tool: Arc<dyn Tool>,
}

impl BlockingTool {
    /// The adapter around `tool`.
    pub fn new(tool: Arc<dyn Tool>) -> Self {
        BlockingTool { tool }
    }
}

#[async_trait::async_trait]
impl AsyncTool for BlockingTool {
    fn spec(&self) -> ToolSpec {
        self.tool.spec()
    }

    fn mutates(&self) -> bool {
        self.tool.mutates()
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> ToolResult {
        let name = self.tool.spec().name;
        if self.tool.is_quick(&args) {
            return call_catching_panics(self.tool.as_ref(), &name, &args, &ctx);
        }
        let tool = self.tool.clone();
        tokio::task::spawn_blocking(move || call_catching_panics(tool.as_ref(), &name, &args, &ctx))
            .await
            .unwrap_or_else(|e| ToolResult::err(format!("the tool was stopped: {e}")))
    }

    fn blocking(&self) -> Option<&Arc<dyn Tool>> {
        Some(&self.tool)
    }
}

/// Run `tool` (registered as `name`); a panic becomes an error result instead of unwinding
/// into the caller.
pub async fn call_async_catching_panics(
    tool: &dyn AsyncTool,
    name: &str,
    args: Value,
    ctx: ToolContext,
) -> ToolResult {
    AssertUnwindSafe(tool.call(args, ctx))
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            ToolResult::err(format!("the tool `{name}` failed internally (it panicked)"))
        })
}

/// Tools that come from outside the built-ins (MCP servers), read each time a registry is
/// built — that is, when a run starts — so the tools offered may change between runs.
#[async_trait::async_trait]
pub trait ToolSource: Send + Sync {
    /// A name for the log (`mcp`).
    fn name(&self) -> &str;
    /// The tools available now (a server that is down offers none).
    fn tools(&self) -> Vec<Arc<dyn AsyncTool>>;
    /// Wait until the source knows its first tool list (servers started or failed), so the
    /// first run is offered the tools of servers that start. Default: at once.
    async fn started(&self) {}
    /// The source for a run in the workspace `root`: a source whose tools are confined to one
    /// workspace (sandboxed MCP server processes) answers one confined to `root`; `None`: this
    /// source serves every workspace (the default).
    fn for_workspace(&self, _root: &Path) -> Option<Arc<dyn ToolSource>> {
        None
    }
}

/// The tool sources of a [`ToolsConfig`](crate::ToolsConfig) (none by default).
#[derive(Clone, Default)]
pub struct ToolSources(Vec<Arc<dyn ToolSource>>);

impl ToolSources {
    /// Add a source.
    pub fn push(&mut self, source: Arc<dyn ToolSource>) {
        self.0.push(source);
    }

    /// The sources, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn ToolSource>> {
        self.0.iter()
    }

    /// The sources for a run in the workspace `root` ([`ToolSource::for_workspace`]).
    pub fn for_workspace(&self, root: &Path) -> ToolSources {
        ToolSources(
            self.0
                .iter()
                .map(|s| s.for_workspace(root).unwrap_or_else(|| s.clone()))
                .collect(),
        )
    }

    /// Wait until every source knows its first tool list ([`ToolSource::started`]).
    pub async fn started(&self) {
        for source in &self.0 {
            source.started().await;
        }
    }
}

impl fmt::Debug for ToolSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|s| s.name()))
            .finish()
    }
}
