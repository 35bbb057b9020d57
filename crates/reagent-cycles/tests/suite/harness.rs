//! Shared pieces: a store in a temporary directory, configs, and an experiment over a
//! scripted Ollama server.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reagent_cycles::config::{parse_toml, ExperimentConfig};
use reagent_cycles::operator::{Absent, Operator};
use reagent_cycles::{runner, Experiment, ExperimentSummary};
use reagent_protocol::CancellationToken;
use reagent_providers::{build_provider, Embedder, ProviderConfig, ProviderKind};
use reagent_store::{Location, Store};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::Value;

pub(crate) struct Fixture {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) store: Store,
}

pub(crate) async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(dir.path().join("store.db")))
        .await
        .unwrap();
    Fixture { dir, store }
}

/// A scripted Ollama server whose model supports native tools, serving `turns`.
pub(crate) async fn ollama(turns: Vec<Turn>, embeddings: bool) -> ScriptedServer {
    let mut script = ScriptBuilder::new()
        .model(ModelSpec::new("agent").with_capabilities(["completion", "tools"]))
        .turns(turns);
    if embeddings {
        script = script.embeddings();
    }
    ScriptedServer::start(Wire::Ollama, script).await.unwrap()
}

/// A reagent-shaped TOML config for `cycles` cycles against `base_url`, with `extra` TOML
/// appended (sections such as `[similarity]`).
pub(crate) fn config(
    dir: &Path,
    run_id: &str,
    cycles: u32,
    base_url: &str,
    extra: &str,
) -> ExperimentConfig {
    let text = format!(
        "run_id = \"{run_id}\"\ncycles = {cycles}\n\n[model]\nprovider = \"ollama\"\nbase_url = \"{base_url}\"\nname = \"agent\"\noptions = {{ temperature = 0.7, seed = 1, top_p = 0.9, num_ctx = 8192, num_predict = 512, repeat_penalty = 1.15 }}\n{extra}"
    );
    parse_toml(&text, dir).unwrap().config
}

pub(crate) fn provider_config(base_url: &str) -> ProviderConfig {
    let mut cfg = ProviderConfig::new(ProviderKind::Ollama);
    cfg.base_urls = vec![base_url.to_owned()];
    cfg.max_retries = 0;
    cfg
}

/// Create and run `config` on `store` with `operator`, logging to `log`; `embeddings` asks the
/// server for embeddings.
pub(crate) async fn run(
    f: &Fixture,
    config: &ExperimentConfig,
    operator: Arc<dyn Operator>,
    log: Option<PathBuf>,
    embeddings: bool,
    create: bool,
) -> ExperimentSummary {
    if create {
        runner::create(&f.store, config, log.clone()).await.unwrap();
    }
    let base = config.model.base_url.clone().unwrap();
    let pcfg = provider_config(&base);
    let experiment = Experiment {
        store: f.store.clone(),
        provider: build_provider(&pcfg).unwrap(),
        embedder: embeddings.then(|| Embedder::new(&pcfg, "agent").unwrap()),
        operator,
        log_file: log,
        watcher: None,
        workspace: f.dir.path().join("ws"),
        config: config.clone(),
    };
    experiment.run(&CancellationToken::new()).await.unwrap()
}

pub(crate) fn absent() -> Arc<dyn Operator> {
    Arc::new(Absent)
}

/// The text of every message of a chat request body.
pub(crate) fn texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The metrics of every finished cycle of `id`.
pub(crate) async fn metrics(store: &Store, id: &str) -> Vec<Value> {
    store
        .cycles(id)
        .await
        .unwrap()
        .iter()
        .map(|c| serde_json::from_str(&c.metrics).unwrap())
        .collect()
}
