//! Experiments (`reagent cycles`, reagent-cycles) run inside the server: started from a config
//! sent as text, each on a task of its own, with its operator's messages waiting in a
//! [`Mailbox`] that the dashboard answers (operator mode `dashboard`). What they do is in the
//! store (`cycle_events`, `cycle_records`, `cycle_memory`), read back by
//! `experiment_routes.rs`, so experiments run by `reagent cycles run` in another process
//! sharing the store are listed and followed the same way.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reagent_cycles::config::{self as cycles_config, ExperimentConfig, OperatorMode};
use reagent_cycles::operator::{Absent, Mailbox, Operator};
use reagent_cycles::{runner, CyclesError, Experiment, Status};
use reagent_protocol::{CancellationToken, Provider};
use reagent_providers::{Embedder, ProviderConfig};
use reagent_store::Store;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::api::CreateRun;
use crate::egress::Egress;
use crate::error::ApiError;

/// How long a shutdown waits for the experiments' tasks to record that they stopped.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// An experiment running in this server.
#[derive(Clone)]
pub(crate) struct LiveExperiment {
    /// Its operator's messages waiting for an answer (mode `dashboard`; empty otherwise).
    pub(crate) mailbox: Mailbox,
    /// Stops it after the cycle in progress (which is cut short).
    pub(crate) cancel: CancellationToken,
}

struct Inner {
    store: Store,
    egress: Egress,
    provider: ProviderConfig,
    live: Mutex<HashMap<String, LiveExperiment>>,
    /// At most this many experiments run at once (`[serve] max_concurrent_runs`, counted
    /// apart from the runs).
    slots: Arc<Semaphore>,
    cap: usize,
}

/// The experiments this server runs. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Experiments(Arc<Inner>);

/// What [`Experiments::start`] started.
pub(crate) struct Started {
    /// The experiment's id (its `run_id`).
    pub(crate) id: String,
    /// Keys of the config that are understood but not acted on.
    pub(crate) unsupported: Vec<String>,
}

impl Experiments {
    /// Experiments over `store`, reaching model servers as runs do (`egress`, `provider`), at
    /// most `cap` at once.
    pub(crate) fn new(store: Store, egress: Egress, provider: ProviderConfig, cap: usize) -> Self {
        Experiments(Arc::new(Inner {
            store,
            egress,
            provider,
            live: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(cap)),
            cap,
        }))
    }

    /// A slot for one more experiment, or 429.
    fn slot(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        self.0
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::too_many_runs(self.0.cap))
    }

    fn live_map(&self) -> MutexGuard<'_, HashMap<String, LiveExperiment>> {
        self.0
            .live
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Experiment `id`, when it runs here.
    pub(crate) fn live(&self, id: &str) -> Option<LiveExperiment> {
        self.live_map().get(id).cloned()
    }

    /// Start the experiment `text` describes (TOML or YAML, naming no file).
    pub(crate) async fn start(&self, text: &str) -> Result<Started, ApiError> {
        let loaded = cycles_config::parse_sent(text)
            .map_err(|e| ApiError::bad_request(format!("config: {e}")))?;
        let config = loaded.config;
        let (provider, embedder) = self.provider_for(&config)?;
        let slot = self.slot()?;
        runner::create(&self.0.store, &config, None)
            .await
            .map_err(api_error)?;
        let id = config.run_id.clone();
        self.launch(config, provider, embedder, slot);
        Ok(Started {
            id,
            unsupported: loaded.unsupported,
        })
    }

    /// Continue experiment `id` (stopped, failed or interrupted) here.
    pub(crate) async fn resume(&self, id: &str) -> Result<(), ApiError> {
        if self.live(id).is_some() {
            return Err(ApiError::conflict(format!(
                "experiment {id} is running in this server"
            )));
        }
        let (record, config, _log) = runner::stored(&self.0.store, id).await.map_err(api_error)?;
        if record.status == Status::Completed.as_str() {
            return Err(ApiError::conflict(format!(
                "experiment {id} is complete: nothing to resume"
            )));
        }
        if config.model.system_prompt_file.is_some() || config.operator.replies.is_some() {
            return Err(ApiError::bad_request(format!(
                "experiment {id} names files (a system prompt or a replies file): resume it with `reagent cycles resume {id}`"
            )));
        }
        let (provider, embedder) = self.provider_for(&config)?;
        let slot = self.slot()?;
        self.launch(config, provider, embedder, slot);
        Ok(())
    }

    /// Ask experiment `id` to stop; false when it does not run here.
    pub(crate) fn stop(&self, id: &str) -> bool {
        match self.live(id) {
            Some(live) => {
                live.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Stop every experiment and wait (a little) for them to record it.
    pub(crate) async fn interrupt_all(&self) {
        let all: Vec<LiveExperiment> = self.live_map().values().cloned().collect();
        for live in &all {
            live.cancel.cancel();
        }
        let deadline = Instant::now() + STOP_GRACE;
        while !self.live_map().is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The model server of `config`, under the rules runs follow (`[serve] base_urls`).
    fn provider_for(
        &self,
        config: &ExperimentConfig,
    ) -> Result<(Arc<dyn Provider>, Option<Embedder>), ApiError> {
        match config.operator.mode {
            OperatorMode::Dashboard | OperatorMode::None => {}
            OperatorMode::Terminal | OperatorMode::Script => {
                return Err(ApiError::bad_request(
                    "operator.mode: an experiment run by the server is answered in the dashboard \
                     (`dashboard`) or by nobody (`none`)",
                ))
            }
        }
        let m = &config.model;
        if m.provider == "local" {
            return Err(ApiError::bad_request(
                "model.provider `local` is not served by `reagent serve`: use ollama or openai with a base_url",
            ));
        }
        // Checked exactly as a run's provider and base_url are.
        let request: CreateRun = serde_json::from_value(serde_json::json!({
            "task": "",
            "model": m.name,
            "provider": m.provider,
            "base_url": m.base_url,
            "workspace": "",
        }))
        .map_err(|e| ApiError::internal(format!("experiment provider: {e}")))?;
        let cfg = self.0.egress.provider_config(&self.0.provider, &request)?;
        let provider = reagent_providers::build_provider(&cfg)
            .map_err(|e| ApiError::bad_request(format!("provider: {e}")))?;
        let embed_model = m.embedding_model.clone().unwrap_or_else(|| m.name.clone());
        Ok((provider, Embedder::new(&cfg, &embed_model).ok()))
    }

    fn launch(
        &self,
        config: ExperimentConfig,
        provider: Arc<dyn Provider>,
        embedder: Option<Embedder>,
        slot: OwnedSemaphorePermit,
    ) {
        let mailbox = Mailbox::new(Duration::from_secs_f64(config.operator.timeout_secs));
        let operator: Arc<dyn Operator> = match config.operator.mode {
            OperatorMode::Dashboard => Arc::new(mailbox.clone()),
            _ => Arc::new(Absent),
        };
        let live = LiveExperiment {
            mailbox,
            cancel: CancellationToken::new(),
        };
        let id = config.run_id.clone();
        self.live_map().insert(id.clone(), live.clone());
        let experiment = Experiment {
            store: self.0.store.clone(),
            workspace: workspace_of(&id),
            watcher: None,
            log_file: None,
            embedder,
            operator,
            provider,
            config,
        };
        let this = self.clone();
        tokio::spawn(async move {
            match experiment.run(&live.cancel).await {
                Ok(summary) => tracing::info!(
                    experiment = %id, status = summary.status.as_str(),
                    cycles_done = summary.cycles_done, "experiment ended"
                ),
                Err(e) => tracing::warn!(experiment = %id, "experiment could not run: {e}"),
            }
            this.0.store.flush().await;
            // The slot is free before the experiment stops being live (a client that saw it
            // end may start another at once).
            drop(slot);
            this.live_map().remove(&id);
        });
    }
}

/// The directory an experiment's sessions run over (their tools do not touch it), as
/// `reagent cycles run` uses.
fn workspace_of(id: &str) -> PathBuf {
    std::env::temp_dir().join("reagent-cycles").join(id)
}

/// The API's error for a reagent-cycles error.
pub(crate) fn api_error(e: CyclesError) -> ApiError {
    match e {
        CyclesError::Config(m) => ApiError::bad_request(m),
        CyclesError::Exists(_) | CyclesError::Busy(_) => ApiError::conflict(e.to_string()),
        CyclesError::NotFound(_) => ApiError::not_found(e.to_string()),
        CyclesError::Store(s) => s.into(),
        other => ApiError::internal(other.to_string()),
    }
}
