//! Runs the agent against a scripted Ollama and collects what happened.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, EventSink, RunResult, Session};
use reagent_protocol::{CancellationToken, Event, EventKind, Guardrail, GuardrailAction};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::{ClientOptions, RetryPolicy};
use reagent_testkit::{ScriptBuilder, ScriptedOllama};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
use serde_json::Value;
use tempfile::TempDir;

pub(crate) const MODEL: &str = "qwen3:8b";

/// Everything a test looks at after a run.
pub(crate) struct Outcome {
    pub(crate) result: RunResult,
    pub(crate) events: Vec<Event>,
    pub(crate) requests: Vec<Value>,
    pub(crate) dir: TempDir,
}

impl Outcome {
    /// Events of one kind, by `type` name.
    pub(crate) fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .filter(|v| v["type"] == kind)
            .collect()
    }

    /// The messages of chat request `n` (0-based).
    pub(crate) fn messages(&self, n: usize) -> Vec<Value> {
        self.requests[n]["messages"].as_array().unwrap().clone()
    }

    /// Content of a workspace file.
    pub(crate) fn file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
    }
}

/// Client options for tests: short timeout, no retries.
pub(crate) fn client(timeout: Duration) -> ClientOptions {
    ClientOptions {
        timeout,
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        ..ClientOptions::default()
    }
}

/// The task most tests give.
pub(crate) const TASK: &str = "do the task";

/// Run [`TASK`] with `script`, a workspace prepared by `prepare`, and a config adjusted by
/// `tune`.
pub(crate) async fn run(
    script: ScriptBuilder,
    prepare: impl FnOnce(&Path),
    tune: impl FnOnce(&mut AgentConfig),
) -> Outcome {
    run_task(script, TASK, prepare, tune).await
}

/// Run `task` with `script`, a workspace prepared by `prepare`, and a config adjusted by `tune`.
pub(crate) async fn run_task(
    script: ScriptBuilder,
    task: &str,
    prepare: impl FnOnce(&Path),
    tune: impl FnOnce(&mut AgentConfig),
) -> Outcome {
    let server = ScriptedOllama::start(script).await.unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
    let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
    let cancel = CancellationToken::new();
    run_with_tools(Arc::new(provider), tools, task, prepare, tune, &cancel)
        .await
        .with_requests(server.requests())
}

/// Run against any provider.
pub(crate) async fn run_with(
    provider: Arc<dyn reagent_protocol::Provider>,
    prepare: impl FnOnce(&Path),
    tune: impl FnOnce(&mut AgentConfig),
    cancel: &CancellationToken,
) -> Outcome {
    let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
    run_with_tools(provider, tools, TASK, prepare, tune, cancel).await
}

/// Run `task` against any provider with these tools.
pub(crate) async fn run_with_tools(
    provider: Arc<dyn reagent_protocol::Provider>,
    tools: ToolRegistry,
    task: &str,
    prepare: impl FnOnce(&Path),
    tune: impl FnOnce(&mut AgentConfig),
    cancel: &CancellationToken,
) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let mut config = AgentConfig::new(MODEL);
    tune(&mut config);
    let workspace = Workspace::open(dir.path()).unwrap();
    let agent = Arc::new(Agent::new(provider, Arc::new(tools), config));
    let mut session = Session::new(agent, Arc::new(workspace));
    let (sink, events) = recording_sink();
    let result = session.run(task, &sink, cancel).await;
    let events = events.lock().unwrap().clone();
    check_event_invariants(&events, &result);
    check_events_rebuild(&events, &session);
    Outcome {
        result,
        events,
        requests: Vec::new(),
        dir,
    }
}

impl Outcome {
    fn with_requests(mut self, requests: Vec<Value>) -> Self {
        self.requests = requests;
        self
    }
}

/// A sink for a new run that keeps every event it is given.
pub(crate) fn recording_sink() -> (EventSink, Arc<Mutex<Vec<Event>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let sink = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| seen.lock().unwrap().push(e)),
    );
    (sink, events)
}

/// The published event schema, compiled once.
fn schema() -> &'static jsonschema::Validator {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schema/events.schema.json"
        );
        let text = std::fs::read_to_string(path).unwrap();
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
    })
}

/// The session's conversation can be rebuilt from the events alone.
pub(crate) fn check_events_rebuild(events: &[Event], session: &Session) {
    let rebuilt = reagent_core::rebuild_transcript(events).unwrap();
    let held: Vec<reagent_protocol::Message> =
        session.messages().iter().map(|m| (**m).clone()).collect();
    assert_eq!(
        rebuilt.len(),
        held.len(),
        "rebuilt {rebuilt:#?}\nheld {held:#?}"
    );
    for (i, (r, h)) in rebuilt.iter().zip(&held).enumerate() {
        assert_eq!(r, h, "message {i} differs");
    }
}

/// Invariants every run keeps: each event valid against the published schema, `seq` gapless
/// from 1 (deltas repeat the seq before them), run_started first (unless setup failed),
/// run_finished last and agreeing with the result, one run_id throughout.
pub(crate) fn check_event_invariants(events: &[Event], result: &RunResult) {
    for e in events {
        let v = serde_json::to_value(e).unwrap();
        let errors: Vec<String> = schema().iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "event {v} breaks the schema: {errors:?}");
    }
    let numbered: Vec<u64> = events
        .iter()
        .filter(|e| !e.kind.is_delta())
        .map(|e| e.seq)
        .collect();
    assert_eq!(numbered, (1..=numbered.len() as u64).collect::<Vec<_>>());
    let last = events.last().expect("a run emits events");
    match &last.kind {
        EventKind::RunFinished {
            outcome,
            iterations,
            tool_calls,
            ..
        } => {
            assert_eq!(*outcome, result.outcome);
            assert_eq!(last.seq, numbered.len() as u64);
            assert_eq!(*iterations, result.iterations);
            assert_eq!(*tool_calls, result.tool_calls);
        }
        other => panic!("last event is not run_finished: {other:?}"),
    }
    assert!(events.iter().all(|e| e.run_id == result.run_id));
    let finished = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunFinished { .. }))
        .count();
    assert_eq!(finished, 1);
    // Every model call that returned has its response event (latency and tokens accounted);
    // one the server refused as too long is followed by a `context_overflow` retry instead.
    if result.error.is_none() {
        let count = |t: &str| {
            events
                .iter()
                .filter(|e| serde_json::to_value(e).unwrap()["type"] == t)
                .count()
        };
        let refused = events
            .iter()
            .filter(|e| {
                matches!(&e.kind, EventKind::Guardrail { guardrail, action, .. }
                    if *guardrail == Guardrail::ContextOverflow && *action == GuardrailAction::Retry)
            })
            .count();
        assert_eq!(count("llm_request"), count("llm_response") + refused);
    }
}

/// Write `files` (path, content) into `dir`.
pub(crate) fn files(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

/// `git ARGS` in `dir` with a fixed identity; its stdout. Fails the test when git is missing
/// or the command fails.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git runs (install git for these tests)");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}
