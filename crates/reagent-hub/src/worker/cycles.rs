//! A `reagent cycles` task (`TaskSpec::experiment`): the experiment, created in the store by
//! `reagent cycles run --hub`, run on this worker's model server — or continued at its first
//! unfinished cycle, so a retried or re-claimed task never repeats a finished cycle. The lease is
//! renewed by the worker's heartbeat while the cycles run; the experiment itself is claimed by
//! the process running it (a second worker gets `Busy` and retries later).

use std::sync::Arc;

use reagent_cycles::operator::{Absent, Operator, Scripted};
use reagent_cycles::{runner, CyclesError, Experiment, OperatorMode, Status};
use reagent_protocol::{CancellationToken, Provider};
use reagent_providers::{Embedder, ProviderConfig};
use serde_json::json;

use super::Attempt;
use crate::queue::Queue;

/// The worker's model: its provider, and the server its embeddings come from (if any).
pub(super) struct WorkerModel<'a> {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) embeddings: Option<&'a ProviderConfig>,
}

/// Run (the rest of) experiment `id` on the worker's model.
pub(super) async fn run_experiment(
    worker: WorkerModel<'_>,
    id: &str,
    queue: &Queue,
    cancel: CancellationToken,
) -> Attempt {
    let store = queue.store().clone();
    let (record, config, log) = match runner::stored(&store, id).await {
        Ok(found) => found,
        Err(e @ CyclesError::NotFound(_)) => return Attempt::failed(e.to_string(), false),
        Err(e) => return Attempt::failed(e.to_string(), true),
    };
    if record.status == Status::Completed.as_str() {
        return Attempt::Completed(done(id, record.cycles_done));
    }
    let operator: Arc<dyn Operator> = match config.operator.mode {
        OperatorMode::None => Arc::new(Absent),
        OperatorMode::Script => {
            let used = match store.cycles(id).await {
                Ok(cycles) => runner::operator_messages(&cycles),
                Err(e) => return Attempt::failed(e.to_string(), true),
            };
            let Some(path) = &config.operator.replies else {
                return Attempt::failed("operator.mode is script but no replies file", false);
            };
            match Scripted::from_file(path, used) {
                Ok(s) => Arc::new(s),
                // Another worker's machine may have the file.
                Err(e) => return Attempt::failed(e.to_string(), true),
            }
        }
        OperatorMode::Terminal | OperatorMode::Dashboard => {
            return Attempt::failed(
                "a worker has no terminal or dashboard for the operator: use script or none",
                false,
            )
        }
    };
    // The server's embeddings when it serves them (else the monitor falls back to TF-IDF).
    let embedder = worker.embeddings.and_then(|server| {
        let model = config
            .model
            .embedding_model
            .clone()
            .unwrap_or_else(|| config.model.name.clone());
        Embedder::new(server, &model).ok()
    });
    let experiment = Experiment {
        workspace: std::env::temp_dir().join("reagent-cycles").join(id),
        store,
        config,
        provider: worker.provider,
        embedder,
        operator,
        log_file: log,
        watcher: None,
    };
    match experiment.run(&cancel).await {
        Ok(summary) => match summary.status {
            Status::Completed => Attempt::Completed(done(id, i64::from(summary.cycles_done))),
            Status::Stopped | Status::Running => Attempt::Stopped,
            Status::Failed => Attempt::failed(
                format!(
                    "experiment {id} failed after {} cycles: {}",
                    summary.cycles_done,
                    summary.error.as_deref().unwrap_or("unknown error")
                ),
                true,
            ),
        },
        Err(e) => Attempt::failed(format!("experiment {id}: {e}"), true),
    }
}

fn done(id: &str, cycles_done: i64) -> serde_json::Value {
    json!({"experiment": id, "status": Status::Completed.as_str(), "cycles_done": cycles_done})
}
