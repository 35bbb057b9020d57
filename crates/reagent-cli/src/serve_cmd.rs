//! `reagent serve`: flags and config file (the run settings, and `[serve]`: the base URLs a
//! request may name, the cap on concurrent runs) → [`reagent_server::ServerConfig`]; print
//! where the token is and the dashboard link; serve until Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use reagent_protocol::CancellationToken;
use reagent_server::{RunDefaults, Server, ServerConfig};
use tokio::task::JoinHandle;

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::hub_cmd::HubRunArgs;

/// Flags of `reagent serve`.
#[derive(Debug, Args, Clone)]
pub(crate) struct ServeArgs {
    /// Address to listen on. Anything but loopback needs an existing token file.
    #[arg(long, default_value = reagent_server::DEFAULT_BIND)]
    pub(crate) bind: SocketAddr,
    /// Run store: a SQLite file or postgres://… (default: $REAGENT_STORE, the config file's
    /// `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// A directory runs' workspaces must lie under (repeatable; default: the current directory).
    #[arg(long = "workspace-root", value_name = "DIR")]
    pub(crate) workspace_roots: Vec<PathBuf>,
    /// The bearer token file (created with mode 0600 on first start; default
    /// $XDG_CONFIG_HOME/reagent/serve-token, else ~/.config/reagent/serve-token).
    #[arg(long, value_name = "FILE")]
    pub(crate) token_file: Option<PathBuf>,
    /// Largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = reagent_server::DEFAULT_MAX_BODY_BYTES)]
    pub(crate) max_body_bytes: usize,
    /// Also run a hub in this process, on the same store (it leads its group, or stands by
    /// while another hub leads); the flags below configure it as they do `reagent hub`.
    #[arg(long)]
    pub(crate) hub: bool,
    /// With --hub: the hub group (hubs of one group elect one leader).
    #[arg(long, default_value = "hub", requires = "hub")]
    pub(crate) hub_name: String,
    #[command(
        flatten,
        next_help_heading = "The hub, with --hub (its own model, endpoints, timings)"
    )]
    pub(crate) hub_run: HubRunArgs,
}

/// The server's run defaults from the config file (provider, tools and sandbox, guardrails,
/// model options), as `reagent run` would resolve them.
fn run_defaults(file: &FileConfig) -> anyhow::Result<RunDefaults> {
    if file.provider.as_deref() == Some("local") {
        bail!("reagent serve does not start the embedded model server: set `provider` to ollama, openai, anthropic or gemini");
    }
    let args = RunArgs {
        // Placeholders: each request names its task and model.
        task: "serve".into(),
        model: Some("serve".into()),
        ..RunArgs::default()
    };
    let plan = crate::run_cmd::plan(&args, file)?;
    Ok(RunDefaults {
        provider: plan.provider,
        tools: plan.tools,
        agent: plan.agent,
    })
}

/// `reagent serve`.
pub(crate) async fn run(args: &ServeArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let location = crate::store::location(args.store.as_deref(), file)?;
    let mut config = ServerConfig::new(args.bind, location);
    config.workspace_roots = args.workspace_roots.clone();
    config.token_file = args.token_file.clone();
    config.max_body_bytes = args.max_body_bytes;
    config.defaults = run_defaults(file).map_err(crate::usage)?;
    config.base_urls = file.serve.base_urls.clone();
    if let Some(n) = file.serve.max_concurrent_runs {
        config.max_concurrent_runs = n;
    }
    let server = Server::bind(config).await.map_err(|e| match e {
        reagent_server::ServerError::Token(_)
        | reagent_server::ServerError::Config(_)
        | reagent_server::ServerError::WorkspaceRoot { .. } => crate::usage(e.into()),
        other => other.into(),
    })?;
    let created = if server.token_created() {
        " (created)"
    } else {
        ""
    };
    eprintln!("reagent serve: listening on http://{}", server.local_addr());
    eprintln!(
        "reagent serve: token file {}{created}",
        server.token_file().display()
    );
    eprintln!("reagent serve: dashboard {}", server.dashboard_url());
    let hub = match args.hub {
        true => Some(start_hub(args, file).await?),
        false => None,
    };
    let served = server
        .serve(crate::signals::stop_requested())
        .await
        .context("reagent serve");
    if let Some((stop, task)) = hub {
        stop.cancel();
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("reagent serve: the hub stopped with an error: {e:#}"),
            Err(e) => eprintln!("reagent serve: the hub's task failed: {e}"),
        }
    }
    served?;
    eprintln!("reagent serve: stopped");
    Ok(ExitCode::Completed)
}

/// `--hub`: the hub the flags describe, running on its own task over the same store until the
/// returned token is cancelled.
async fn start_hub(
    args: &ServeArgs,
    file: &FileConfig,
) -> anyhow::Result<(CancellationToken, JoinHandle<anyhow::Result<()>>)> {
    let store = crate::store::open(args.store.as_deref(), file).await?;
    let hub = crate::hub_cmd::build(&store, &args.hub_name, &args.hub_run).await?;
    eprintln!(
        "reagent serve: hub {} of group `{}` (waits for the lease if another hub leads)",
        hub.id(),
        args.hub_name
    );
    let stop = CancellationToken::new();
    let token = stop.clone();
    let task = tokio::spawn(async move {
        hub.run(token).await?;
        drop(store);
        Ok(())
    });
    Ok((stop, task))
}
