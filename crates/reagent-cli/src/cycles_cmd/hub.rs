//! `reagent cycles run --hub URL`: each run (of a batch) is created in the hub's store and
//! queued as a hub task (`TaskSpec::experiment`), so the runs spread over the workers; a worker
//! runs it on its model server, and a retried task continues the experiment where it stopped.

use anyhow::Context;
use reagent_cycles::config::{ExperimentConfig, OperatorMode};
use reagent_cycles::runner;
use reagent_hub::queue::{NewTask, Queue, TaskSpec};
use reagent_store::Store;

use super::usage_of;
use crate::exit::ExitCode;

/// The store to open: the hub's with `--hub` (a `--store` must then name the same one).
pub(super) fn store_url<'a>(
    store: Option<&'a str>,
    hub: Option<&'a str>,
) -> anyhow::Result<Option<&'a str>> {
    match (store, hub) {
        (Some(s), Some(h)) if s != h => Err(crate::usage(anyhow::anyhow!(
            "--hub is the store the experiments are queued in: give --store the same URL, or leave it out"
        ))),
        (_, Some(h)) => Ok(Some(h)),
        (s, None) => Ok(s),
    }
}

/// Create each experiment and queue it as a task; the workers run them.
pub(super) async fn queue(
    store: &Store,
    configs: Vec<ExperimentConfig>,
) -> anyhow::Result<ExitCode> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let queue = Queue::new(store);
    for mut c in configs {
        if matches!(
            c.operator.mode,
            OperatorMode::Terminal | OperatorMode::Dashboard
        ) {
            anyhow::bail!(crate::usage(anyhow::anyhow!(
                "operator.mode: a worker has no terminal or dashboard for the operator; with --hub use script or none"
            )));
        }
        if c.model.provider == "local" {
            anyhow::bail!(crate::usage(anyhow::anyhow!(
                "model.provider `local`: with --hub each worker runs the experiment on its own model server"
            )));
        }
        // Paths as the workers on this machine see them.
        c.operator.replies = c.operator.replies.map(|p| here.join(p));
        let log = here.join(reagent_cycles::log::default_path(&c.run_id));
        runner::create(store, &c, Some(log.clone()))
            .await
            .map_err(usage_of)?;
        let mut task = NewTask::new(format!("reagent cycles experiment {}", c.run_id));
        task.spec = TaskSpec {
            experiment: Some(c.run_id.clone()),
            ..TaskSpec::default()
        };
        task.model = Some(c.model.name.clone());
        let id = queue.add(task).await?;
        println!("{}\t{id}", c.run_id);
        eprintln!(
            "reagent cycles: experiment {} queued as task {id} (model {}; log {} on the worker)",
            c.run_id,
            c.model.name,
            log.display()
        );
    }
    Ok(ExitCode::Completed)
}
