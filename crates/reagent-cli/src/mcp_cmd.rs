//! `reagent mcp list|call|serve`, and the config file's `[mcp.servers.*]` attached to the
//! tools of `reagent run`, `reagent serve` and `reagent worker`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};
use reagent_mcp::confine::Confinement;
use reagent_mcp::{McpClients, McpPool, WorkspaceServer};
use reagent_protocol::CancellationToken;
use reagent_tools::{ToolContext, ToolRegistry, ToolSource, ToolsConfig, Workspace};
use serde_json::Value;

use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::{setup, usage};

/// Flags of `reagent mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// The configured MCP servers: status and tools.
    List {
        /// Print JSON: [{"name", "transport", "status", "error", "tools": [...]}].
        #[arg(long)]
        json: bool,
        /// The workspace stdio servers are sandboxed to (default: current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Call one tool of one configured server and print its JSON result.
    Call {
        /// The server's name in the config file.
        server: String,
        /// The tool's name on that server (not namespaced).
        tool: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// The workspace stdio servers are sandboxed to (default: current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
    /// Offer reagent's workspace tools, with their confinement, as an MCP server on stdio, or
    /// over streamable HTTP at http://ADDR/mcp with --bind.
    Serve {
        /// Serve streamable HTTP on this address instead of stdio; every request needs
        /// `Authorization: Bearer TOKEN` with the token of --token-file.
        #[arg(long)]
        bind: Option<std::net::SocketAddr>,
        /// With --bind: the bearer token file (mode 0600), default `reagent serve`'s own
        /// ($XDG_CONFIG_HOME/reagent/serve-token, else ~/.config/reagent/serve-token).
        #[arg(long, requires = "bind")]
        token_file: Option<PathBuf>,
        /// The workspace the tools work in (default: current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Offer only the tools that do not write files or run commands.
        #[arg(long)]
        read_only: bool,
        /// Command sandbox: read-only, workspace-write or full.
        #[arg(long)]
        sandbox: Option<String>,
        /// Let commands use the network.
        #[arg(long)]
        allow_network: bool,
    },
}

/// Run the command.
pub(crate) async fn run(args: &McpArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    match &args.command {
        McpCommand::List { json, workspace } => {
            let clients = start_for(file, workspace.as_deref())?;
            clients.started().await;
            let statuses = clients.statuses();
            if *json {
                println!("{}", serde_json::to_string_pretty(&statuses)?);
            } else if statuses.is_empty() {
                println!("no MCP servers configured ([mcp.servers.NAME] in the config file)");
            }
            for s in statuses.iter().filter(|_| !*json) {
                println!("{} ({}): {}", s.name, s.transport, s.status);
                if let Some(e) = &s.error {
                    println!("  error: {e}");
                }
                for t in &s.tools {
                    println!("  {} — {}", t.name, first_line(&t.description));
                }
            }
            Ok(ExitCode::Completed)
        }
        McpCommand::Call {
            server,
            tool,
            args,
            workspace,
        } => {
            let arguments: Value = serde_json::from_str(args)
                .with_context(|| format!("--args is not valid JSON: {args}"))
                .map_err(usage)?;
            let clients = start_for(file, workspace.as_deref())?;
            clients.started().await;
            let result = clients
                .call(server, tool, arguments, &CancellationToken::new())
                .await;
            println!("{}", result.to_json());
            Ok(if result.is_ok() {
                ExitCode::Completed
            } else {
                ExitCode::Internal
            })
        }
        McpCommand::Serve {
            bind,
            token_file,
            workspace,
            read_only,
            sandbox,
            allow_network,
        } => {
            let dir = workspace.clone().unwrap_or_else(|| PathBuf::from("."));
            let opened = Workspace::open(&dir).map_err(|e| {
                usage(anyhow::anyhow!(
                    "cannot open workspace {}: {e}",
                    dir.display()
                ))
            })?;
            // task_complete ends a run; a client of the server has no run to end.
            let config = setup::tools_config(
                *read_only,
                vec!["task_complete".into()],
                sandbox.as_deref(),
                *allow_network,
                file,
            )
            .map_err(usage)?;
            let tools = ToolRegistry::workspace_tools(&config);
            // No terminal to ask: commands matching an `ask` rule are refused.
            let ctx = ToolContext::new(Arc::new(opened));
            let server = WorkspaceServer::new(tools, ctx);
            match bind {
                None => server.serve_stdio().await?,
                Some(addr) => {
                    let token = read_token(token_file.as_deref()).map_err(usage)?;
                    let listener = tokio::net::TcpListener::bind(addr)
                        .await
                        .with_context(|| format!("cannot listen on {addr}"))?;
                    eprintln!(
                        "reagent mcp serve: listening on http://{}/mcp",
                        listener.local_addr()?
                    );
                    let shutdown = CancellationToken::new();
                    let _stop =
                        crate::signals::cancel_on_stop(shutdown.clone(), "reagent mcp serve");
                    server.serve_http(listener, token, shutdown).await?;
                }
            }
            Ok(ExitCode::Completed)
        }
    }
}

/// Add the config file's MCP servers, started now, to `tools` (their stdio processes
/// sandboxed by `tools`' policy to `workspace`). Nothing when none are configured.
pub(crate) fn attach(
    tools: &mut ToolsConfig,
    file: &FileConfig,
    workspace: &Path,
) -> anyhow::Result<()> {
    if file.mcp.servers.is_empty() {
        return Ok(());
    }
    let (specs, confinement) = specs(file, &tools.command.policy, workspace)?;
    tools
        .sources
        .push(Arc::new(McpPool::start(specs, Some(confinement))));
    Ok(())
}

fn start_for(file: &FileConfig, workspace: Option<&Path>) -> anyhow::Result<McpClients> {
    let tools = setup::tools_config(false, Vec::new(), None, false, file).map_err(usage)?;
    start(
        file,
        &tools.command.policy,
        workspace.unwrap_or(Path::new(".")),
    )
}

fn start(
    file: &FileConfig,
    policy: &reagent_sandbox::SandboxPolicy,
    workspace: &Path,
) -> anyhow::Result<McpClients> {
    let (specs, confinement) = specs(file, policy, workspace)?;
    Ok(McpClients::start(specs, Some(confinement)))
}

/// The config file's servers, checked, and the confinement of `workspace` by `policy`.
fn specs(
    file: &FileConfig,
    policy: &reagent_sandbox::SandboxPolicy,
    workspace: &Path,
) -> anyhow::Result<(Vec<reagent_mcp::ServerSpec>, Confinement)> {
    let specs = file
        .mcp
        .specs(&|var| std::env::var(var).ok())
        .map_err(|e| usage(e.into()))?;
    let workspace = std::path::absolute(workspace)
        .with_context(|| format!("cannot resolve workspace {}", workspace.display()))?;
    let confinement = Confinement {
        policy: policy.clone(),
        workspace,
    };
    Ok((specs, confinement))
}

/// The bearer token of `path` (default: `reagent serve`'s token file), which must exist, be
/// private to its owner and hold one token of at least 16 characters.
fn read_token(path: Option<&Path>) -> anyhow::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let path = match path {
        Some(p) => p.to_path_buf(),
        None => reagent_server::default_token_path()?,
    };
    let meta = std::fs::metadata(&path).with_context(|| {
        format!(
            "the token file {} cannot be read: start `reagent serve` once on 127.0.0.1 to \
             create it, or write one (mode 0600)",
            path.display()
        )
    })?;
    if meta.permissions().mode() & 0o077 != 0 {
        anyhow::bail!(
            "the token file {} can be read by other users; run `chmod 600 {}`",
            path.display(),
            path.display()
        );
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim();
    if token.len() < 16 || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        anyhow::bail!(
            "the token file {} must hold one token of at least 16 characters without spaces",
            path.display()
        );
    }
    Ok(token.to_owned())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}
