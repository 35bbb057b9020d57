//! `reagent worker`: run queued tasks from the store with the model flags of `reagent run`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use reagent_hub::queue::Queue;
use reagent_hub::worker::{run_worker, worker_info, SessionRunner, WorkerSettings};
use reagent_protocol::CancellationToken;
use reagent_store::Store;

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::{run_cmd, store, usage};

/// Flags of `reagent worker`: the model flags of `reagent run` (its task argument aside), and
/// how the worker takes tasks.
#[derive(Debug, Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// Tasks run at once.
    #[arg(long, default_value_t = 1)]
    pub(crate) capacity: u32,
    /// Capabilities (comma-separated or repeated): the worker takes only tasks whose tags are
    /// all among them.
    #[arg(long, value_delimiter = ',')]
    pub(crate) tags: Vec<String>,
    /// Other models the model server serves (comma-separated or repeated), besides --model:
    /// the worker also takes tasks asking for them.
    #[arg(long, value_delimiter = ',')]
    pub(crate) serves: Vec<String>,
    /// Lease length in seconds: a task whose worker stops renewing it for this long is given
    /// to another worker.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub(crate) lease: f64,
    /// How often leases are renewed, in seconds (less than --lease).
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub(crate) heartbeat: f64,
    /// How often an idle worker looks for tasks, in seconds (on PostgreSQL it is also woken at
    /// once by a notification).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub(crate) poll: f64,
    /// Do not listen for PostgreSQL notifications: poll only.
    #[arg(long)]
    pub(crate) no_listen: bool,
    /// On SIGTERM or Ctrl-C, how long running tasks may finish before they are stopped and
    /// given back to the queue, in seconds.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub(crate) drain: f64,
}

fn secs(flag: &str, v: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero())
        .with_context(|| format!("--{flag} {v}: give a positive number of seconds"))
}

/// The worker's settings from its flags, or a usage error.
fn settings(args: &WorkerArgs, model: &str) -> anyhow::Result<WorkerSettings> {
    let run = &args.run;
    if !run.task.is_empty() {
        bail!("reagent worker takes no task: it runs the queued ones (add them with reagent task add)");
    }
    for (set, flag) in [
        (run.resume.is_some(), "--resume"),
        (run.events.is_some(), "--events"),
        (run.json, "--json"),
        (run.no_store, "--no-store"),
    ] {
        if set {
            bail!("{flag} does not apply to reagent worker");
        }
    }
    if args.capacity == 0 {
        bail!("--capacity must be at least 1");
    }
    let (lease, heartbeat) = (
        secs("lease", args.lease)?,
        secs("heartbeat", args.heartbeat)?,
    );
    if heartbeat >= lease {
        bail!(
            "--heartbeat ({} s) must be shorter than --lease ({} s)",
            args.heartbeat,
            args.lease
        );
    }
    let mut models = vec![model.to_owned()];
    models.extend(args.serves.iter().filter(|m| m.as_str() != model).cloned());
    Ok(WorkerSettings {
        capacity: args.capacity,
        tags: args.tags.clone(),
        models,
        endpoint: None,
        lease,
        heartbeat,
        poll: secs("poll", args.poll)?,
        listen: !args.no_listen,
        drain: Duration::try_from_secs_f64(args.drain)
            .with_context(|| format!("--drain {}: give a number of seconds", args.drain))?,
        ..WorkerSettings::default()
    })
}

/// `reagent worker`.
pub(crate) async fn run(args: &WorkerArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let mut run_args = args.run.clone();
    // The plan wants a task; each queued task brings its own.
    run_args.task = "(queued tasks)".into();
    let mut plan = run_cmd::plan(&run_args, file).map_err(usage)?;
    plan.quiet = true;
    let mut settings = settings(args, &plan.agent.model).map_err(usage)?;
    settings.endpoint = Some(
        plan.provider
            .base_urls
            .first()
            .cloned()
            .unwrap_or_else(|| plan.provider.kind.default_base_url()),
    );
    let workspace = std::path::absolute(&plan.workspace)
        .with_context(|| format!("cannot resolve workspace {}", plan.workspace.display()))?;
    let location = store::location(run_args.store.as_deref(), file)?;
    let store = Store::open(&location).await?;
    // Kept while the worker runs (`--provider local`).
    let (provider, _warm) = run_cmd::provider_for(&plan).await?;
    let mut runner = SessionRunner::new(
        provider,
        plan.agent.clone(),
        plan.tools.clone(),
        workspace,
        store.recorder(),
    );
    // Experiments ask the worker's model server for embeddings (the embedded server serves
    // none: their monitor uses TF-IDF there).
    if plan.local.is_none() {
        runner = runner.with_embeddings(plan.provider.clone());
    }
    let queue = Queue::new(&store);
    let info = worker_info(&settings);
    let shutdown = CancellationToken::new();
    stop_on_signals(shutdown.clone())?;
    eprintln!(
        "reagent: worker {} (pid {}) taking tasks from {location}: models {}, capacity {}{}",
        info.id,
        info.pid,
        info.models.join(", "),
        info.capacity,
        if info.tags.is_empty() {
            String::new()
        } else {
            format!(", tags {}", info.tags.join(", "))
        }
    );
    let report = run_worker(&queue, &info, &settings, Arc::new(runner), shutdown).await?;
    store.flush().await;
    eprintln!(
        "reagent: worker stopped: {} completed, {} failed, {} given back, {} refused",
        report.completed, report.failed, report.released, report.refused
    );
    Ok(ExitCode::Completed)
}

/// SIGTERM or Ctrl-C: stop taking tasks and drain; a second one exits at once.
fn stop_on_signals(shutdown: CancellationToken) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).context("cannot watch for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch for SIGINT")?;
    tokio::spawn(async move {
        for round in 0..2 {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            if round == 0 {
                eprintln!("reagent: worker stopping: no new tasks; running ones may finish (signal again to quit at once)");
                shutdown.cancel();
            }
        }
        std::process::exit(ExitCode::Cancelled as i32);
    });
    Ok(())
}
