//! reagent's workspace tools as an MCP server ([`WorkspaceServer`]): the same tools, argument
//! checks and confinement as inside a run, for other agents.

use std::sync::Arc;

use reagent_core::ArgumentChecker;
use reagent_tools::{ToolContext, ToolRegistry, ToolResult};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;

/// An MCP server offering a registry's tools over one workspace.
#[derive(Clone)]
pub struct WorkspaceServer {
    tools: Arc<ToolRegistry>,
    checker: Arc<ArgumentChecker>,
    ctx: ToolContext,
}

impl WorkspaceServer {
    /// A server for `tools`, each call made with `ctx` (its workspace, approver, cancellation).
    pub fn new(tools: ToolRegistry, ctx: ToolContext) -> Self {
        let checker = ArgumentChecker::new(&tools.specs());
        WorkspaceServer {
            tools: Arc::new(tools),
            checker: Arc::new(checker),
            ctx,
        }
    }

    /// Serve on this process's stdin and stdout until the client disconnects.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        let running = self.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    }

    /// The result of one call: arguments checked and coerced as in a run, then the tool.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolResult {
        match self.checker.check(name, &arguments) {
            Err(message) => ToolResult::err(message),
            Ok(args) => self.tools.call_async(name, args, self.ctx.clone()).await,
        }
    }
}

impl ServerHandler for WorkspaceServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("reagent", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "reagent's workspace tools: file reads, writes and edits confined to one \
                 directory, and sandboxed commands.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .names()
            .iter()
            .filter_map(|name| self.tools.get(name))
            .filter_map(|tool| {
                let spec = tool.spec();
                let Value::Object(schema) = spec.parameters else {
                    return None;
                };
                let mut t = Tool::new(spec.name, spec.description, schema);
                t.annotations = Some(ToolAnnotations::new().read_only(!tool.mutates()));
                Some(t)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.tools.get(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; valid tools: {}",
                    request.name,
                    self.tools.names().join(", ")
                ),
                None,
            ));
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or_default();
        let arguments = if arguments.is_null() {
            Value::Object(Default::default())
        } else {
            arguments
        };
        let result = self.call(&request.name, arguments).await;
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let reply = match &result {
            ToolResult::Ok { output, .. } => {
                CallToolResult::success(vec![ContentBlock::text(text(output))])
            }
            ToolResult::Err { error } => CallToolResult::error(vec![ContentBlock::text(error)]),
        };
        Ok(reply.into())
    }
}
