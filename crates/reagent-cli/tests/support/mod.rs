//! Shared harness of the real-model end-to-end tests: the cached llama-server started per test,
//! a fresh copy of the demo workspace, the `reagent` binary run with a hard timeout, events
//! files read back, and a provider wrapper that records every request the loop sends.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use reagent_local::{LocalServer, Locations, ServerConfig};
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, ModelInfo, Provider, ProviderError, SignalSink,
};
use serde_json::Value;

/// The fact the model can only learn by reading `keeper.txt`.
pub(crate) const KEEPER_FACT: &str = "Ines Calloway";
/// The task every run gets.
pub(crate) const TASK: &str =
    "Read the file keeper.txt and tell me the name of the lighthouse keeper.";
/// Longest any single run may take before the test fails (never hangs).
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(240);

/// Start the cached llama-server + SmolLM2. Fails the test (never skips) when it is not
/// installed or cannot start: CI runs `scripts/install-model-server.sh` first.
pub(crate) async fn start_server() -> LocalServer {
    let locations = Locations::from_env().expect("a cache directory (REAGENT_CACHE or HOME)");
    let files = locations.files();
    assert!(
        files.is_complete(),
        "the local model server is not installed ({:?} missing): run scripts/install-model-server.sh",
        files.missing()
    );
    let config = ServerConfig {
        ctx_size: 4096,
        // One thread per server: tests run two at a time on a two-core machine, and a
        // llama.cpp thread pool larger than the free cores slows to a crawl under load.
        threads: Some(1),
        startup_timeout: Duration::from_secs(180),
        ..ServerConfig::new(files)
    };
    match LocalServer::start(&config).await {
        Ok(server) => server,
        Err(e) => panic!("the local llama-server did not start: {e}"),
    }
}

/// A fresh temporary copy of `examples/demo-workspace`.
pub(crate) fn demo_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-workspace");
    copy_dir(&src, dir.path());
    assert!(
        std::fs::read_to_string(dir.path().join("keeper.txt"))
            .unwrap()
            .contains(KEEPER_FACT),
        "the demo workspace changed: keeper.txt must name {KEEPER_FACT}"
    );
    dir
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let to = dst.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

/// A config file with the given TOML, so no user or repository config leaks in.
pub(crate) fn config_file(dir: &Path, toml: &str) -> PathBuf {
    let path = dir.join("reagent-test.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// Run the `reagent` binary with `args` in `cwd` (HOME pointed there too), killed and failed
/// after [`RUN_LIMIT`].
pub(crate) async fn reagent(args: &[String], cwd: &Path) -> Output {
    reagent_with_env(args, cwd, &[]).await
}

/// [`reagent`] with more environment variables.
pub(crate) async fn reagent_with_env(args: &[String], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        // A collector of the developer's own must not receive the tests' traces.
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .envs(env.iter().copied())
        .env_remove("OLLAMA_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    match tokio::time::timeout(RUN_LIMIT, child.wait_with_output()).await {
        Ok(out) => out.unwrap(),
        Err(_) => panic!("reagent {args:?} did not finish within {RUN_LIMIT:?}"),
    }
}

/// stdout parsed as the one JSON object of `--json`.
pub(crate) fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The events of a `--events` file, one JSON object per line.
pub(crate) fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The events of one `type`.
pub(crate) fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// Every outcome the README documents, with its exit code.
pub(crate) const OUTCOMES: &[(&str, i32)] = &[
    ("completed", 0),
    ("max_iterations", 3),
    ("budget_exhausted", 4),
    ("guardrail_stop", 5),
    ("provider_error", 6),
    ("cancelled", 7),
    ("no_progress", 8),
    ("verified", 0),
    ("verification_failed", 10),
    ("partial_pass", 11),
    ("unchecked", 12),
    ("copied_error", 13),
];

/// The exit code documented for `outcome`; fails on an undocumented outcome.
pub(crate) fn exit_code_of(outcome: &str) -> i32 {
    OUTCOMES
        .iter()
        .find(|(o, _)| *o == outcome)
        .map(|(_, c)| *c)
        .unwrap_or_else(|| panic!("undocumented outcome {outcome:?}"))
}

/// A provider that records every request before passing it on.
pub(crate) struct Recording {
    inner: Arc<dyn Provider>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Recording {
    /// Wrap `inner`.
    pub(crate) fn new(inner: Arc<dyn Provider>) -> Arc<Self> {
        Arc::new(Recording {
            inner,
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The requests so far, in order.
    pub(crate) fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait]
impl Provider for Recording {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        self.inner.model_info(model).await
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat(request, sink, cancel).await
    }
}

/// Flags shared by the binary runs.
pub(crate) fn run_flags(workspace: &Path, config: &Path, events: &Path) -> Vec<String> {
    [
        "run",
        "--config",
        &config.display().to_string(),
        "--workspace",
        &workspace.display().to_string(),
        "--events",
        &events.display().to_string(),
        "--json",
        "--read-only",
        "--no-stream",
        "--num-ctx",
        "4096",
        "--num-predict",
        "128",
        "--temperature",
        "0",
        "--seed",
        "1",
        "--timeout",
        "200",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
