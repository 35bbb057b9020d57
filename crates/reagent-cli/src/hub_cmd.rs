//! `reagent hub`: run a hub (one leads a group, the others stand by), or look at and steer
//! one: `status`, `history`, `pause`, `resume`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};
use reagent_hub::actions::ActionPolicy;
use reagent_hub::machine::{self, TransitionRecord};
use reagent_hub::planner::Planner;
use reagent_hub::status::{status, HubStatus};
use reagent_hub::{Hub, HubConfig, ManagedServer};
use reagent_protocol::CancellationToken;
use reagent_providers::{ProviderConfig, ProviderKind};
use reagent_tools::{ToolRegistry, ToolsConfig};

use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::hub_local::ManagedLocal;

/// Flags of `reagent hub`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct HubArgs {
    /// The store: a SQLite file or postgres://… (default: $REAGENT_STORE, the config file's
    /// `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// The hub group: hubs of one group elect one leader.
    #[arg(long, global = true, default_value = "hub")]
    pub(crate) name: String,
    #[command(subcommand)]
    pub(crate) command: Option<HubCommand>,
    #[command(flatten)]
    pub(crate) run: HubRunArgs,
}

/// Flags of `reagent hub` when it runs a hub.
#[derive(Debug, Args, Clone)]
pub(crate) struct HubRunArgs {
    /// How often the hub ticks.
    #[arg(long, default_value = "1s", value_parser = humantime::parse_duration)]
    pub(crate) tick: Duration,
    /// How long the lease lasts unless renewed; a standby takes over once it ends.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    pub(crate) lease: Duration,
    /// A model server to watch besides the workers' own (repeatable): an Ollama host, or an
    /// OpenAI-compatible base URL ending in /v1.
    #[arg(long = "endpoint", value_name = "URL")]
    pub(crate) endpoints: Vec<String>,
    /// How often endpoints are checked.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub(crate) check_every: Duration,
    /// Failed checks in a row before an endpoint is marked down.
    #[arg(long, default_value_t = 3)]
    pub(crate) failures: u32,
    /// A worker silent this long is taken for dead (its tasks are routed elsewhere).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub(crate) worker_timeout: Duration,
    /// Least time between two healing attempts on one target.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub(crate) heal_cooldown: Duration,
    /// Most healing attempts per target and hour.
    #[arg(long, default_value_t = 5)]
    pub(crate) heal_max_per_hour: u32,
    /// The hub's own model (decomposes and verifies goals); without it, goals wait.
    #[arg(long)]
    pub(crate) model: Option<String>,
    #[command(flatten)]
    pub(crate) server: crate::cli::ServerFlags,
    /// The hub's model calls allowed per state and per hour.
    #[arg(long, default_value_t = 60)]
    pub(crate) calls_per_hour: u32,
    /// Corrective rounds a goal gets after failing its verification.
    #[arg(long, default_value_t = 1)]
    pub(crate) max_rounds: u32,
    /// Start the embedded llama-server, watch it and restart it when it is down; without
    /// --model/--host/--base-url it is also the hub's own model.
    #[arg(long)]
    pub(crate) manage_local: bool,
    /// With --manage-local: serve this GGUF file instead of the embedded SmolLM2.
    #[arg(long, value_name = "FILE", requires = "manage_local")]
    pub(crate) model_file: Option<PathBuf>,
    /// With --manage-local: the port it listens on (default: a free one).
    #[arg(long, requires = "manage_local")]
    pub(crate) local_port: Option<u16>,
}

/// `reagent hub …` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum HubCommand {
    /// The leader, the state, the queue, the endpoints, the model calls and the latest acts.
    Status {
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The state machine's transitions, oldest first.
    History {
        /// One JSON array instead of text.
        #[arg(long)]
        json: bool,
        /// At most the last N transitions.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Stop the hub's work (it keeps its lease) until `resume`.
    Pause,
    /// Let a paused hub work again.
    Resume,
}

/// `reagent hub …`.
pub(crate) async fn run(args: &HubArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(args.store.as_deref(), file).await?;
    let pool = store.pool();
    match &args.command {
        None => run_hub(&store, &args.name, &args.run).await?,
        Some(HubCommand::Status { json }) => {
            let s = status(&store, &args.name).await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print!("{}", status_text(&s));
            }
        }
        Some(HubCommand::History { json, limit }) => {
            let history = machine::history(pool, &args.name, *limit).await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&history)?);
            } else {
                print!("{}", history_text(&history));
            }
        }
        Some(HubCommand::Pause) => {
            machine::set_paused(pool, &args.name, true).await?;
            eprintln!("reagent: hub `{}` paused", args.name);
        }
        Some(HubCommand::Resume) => {
            machine::set_paused(pool, &args.name, false).await?;
            eprintln!("reagent: hub `{}` resumed", args.name);
        }
    }
    Ok(ExitCode::Completed)
}

/// Run a hub until Ctrl-C or SIGTERM, then give the lease up.
async fn run_hub(store: &reagent_store::Store, name: &str, a: &HubRunArgs) -> anyhow::Result<()> {
    let hub = build(store, name, a).await?;
    eprintln!(
        "reagent: hub {} of group `{name}` on {} (waits for the lease if another hub leads)",
        hub.id(),
        store.location()
    );
    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        crate::signals::stop_requested().await;
        on_signal.cancel();
    });
    hub.run(shutdown).await?;
    Ok(())
}

/// The hub the flags describe (starting the managed llama-server if asked), ready to
/// [`Hub::run`]; `reagent serve` can flatten [`HubRunArgs`] and run it in its own process.
pub(crate) async fn build(
    store: &reagent_store::Store,
    name: &str,
    a: &HubRunArgs,
) -> anyhow::Result<Hub> {
    if a.tick.is_zero() || a.lease <= a.tick {
        return Err(crate::usage(anyhow::anyhow!(
            "--lease ({:?}) must be longer than --tick ({:?}), which must not be zero",
            a.lease,
            a.tick
        )));
    }
    let managed = if a.manage_local {
        let local = ManagedLocal::start(a.model_file.as_ref(), a.local_port).await?;
        Some(Arc::new(local))
    } else {
        None
    };
    let own_server = a.server.host.is_none() && a.server.base_url.is_empty();
    let planner = match (&managed, &a.model) {
        (Some(local), model) if own_server => {
            let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
            cfg.base_urls = vec![local.url()];
            let provider = reagent_providers::build_provider(&cfg)?;
            let model = model.as_deref().unwrap_or(local.model());
            Some(Planner::new(provider, model, known_tools()))
        }
        (_, Some(model)) => {
            let cfg = crate::setup::provider_config(
                a.server.provider.as_deref(),
                a.server.host.as_deref(),
                &a.server.base_url,
                None,
                None,
                None,
            )
            .map_err(crate::usage)?;
            let provider = reagent_providers::build_provider(&cfg)?;
            Some(Planner::new(provider, model, known_tools()))
        }
        (_, None) => None,
    };
    let config = HubConfig {
        name: name.to_owned(),
        tick: a.tick,
        lease: a.lease,
        endpoints: a.endpoints.clone(),
        check_every: a.check_every,
        failure_threshold: a.failures,
        planner,
        calls_per_hour: a.calls_per_hour,
        max_rounds: a.max_rounds,
        worker_timeout: a.worker_timeout,
        healing: ActionPolicy {
            cooldown: a.heal_cooldown,
            max_per_hour: a.heal_max_per_hour,
        },
        managed: managed.map(|m| m as Arc<dyn ManagedServer>),
        ..HubConfig::default()
    };
    Ok(Hub::new(store, config))
}

/// The tools a goal's tasks may name: the built-in workspace tools.
fn known_tools() -> Vec<String> {
    ToolRegistry::workspace_tools(&ToolsConfig::default()).names()
}

/// Epoch milliseconds as RFC 3339 (seconds).
pub(crate) fn when(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(t).to_string()
}

fn seconds_since(ms: i64) -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    (now - ms) / 1000
}

fn status_text(s: &HubStatus) -> String {
    let mut out = String::new();
    match &s.leader {
        Some(l) if s.leading => out.push_str(&format!(
            "hub `{}`: led by {} (epoch {}, lease ends in {} s)\n",
            s.name,
            l.holder,
            l.epoch,
            -seconds_since(l.expires_ms)
        )),
        Some(l) => out.push_str(&format!(
            "hub `{}`: no leader (last: {} at epoch {}, lease ended {})\n",
            s.name,
            l.holder,
            l.epoch,
            when(l.expires_ms)
        )),
        None => out.push_str(&format!("hub `{}`: no hub has run\n", s.name)),
    }
    if let Some(st) = &s.state {
        out.push_str(&format!(
            "state: {} for {} s{}\n",
            st.state,
            seconds_since(st.since_ms),
            if st.paused { " (paused)" } else { "" }
        ));
    }
    let q = &s.queue;
    out.push_str(&format!(
        "queue: {} waiting, {} queued, {} running, {} done, {} failed, {} dead, {} cancelled\n",
        q.waiting, q.queued, q.running, q.done, q.failed, q.dead, q.cancelled
    ));
    if !s.endpoints.is_empty() {
        out.push_str("endpoints:\n");
        for e in &s.endpoints {
            let what = if e.healthy {
                e.models.join(", ")
            } else {
                format!(
                    "{} failed checks: {}",
                    e.consecutive_failures,
                    e.last_error.as_deref().unwrap_or("")
                )
            };
            let health = if e.healthy { "up" } else { "down" };
            out.push_str(&format!("  {:<40} {health:<4} {what}\n", e.url));
        }
    }
    if !s.model_calls.is_empty() {
        let calls: Vec<String> = s
            .model_calls
            .iter()
            .map(|c| format!("{} {}", c.state, c.calls))
            .collect();
        out.push_str(&format!("model calls this hour: {}\n", calls.join(", ")));
    }
    if !s.actions.is_empty() {
        out.push_str("recent actions:\n");
        for a in &s.actions {
            out.push_str(&format!(
                "  {}  {} {} {}{}\n",
                when(a.at_ms),
                a.kind,
                a.target,
                a.outcome,
                a.detail
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ));
        }
    }
    out
}

fn history_text(history: &[TransitionRecord]) -> String {
    history
        .iter()
        .map(|t| {
            format!(
                "{}  {} -> {}  (epoch {})  {}\n",
                when(t.at_ms),
                t.from,
                t.to,
                t.epoch,
                t.reason
            )
        })
        .collect()
}
