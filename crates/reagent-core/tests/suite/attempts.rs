//! Best of N attempts: the workspace is restored from each failed attempt's checkpoint, each
//! attempt samples with a new seed, and the best attempt's files are kept.

use std::sync::Arc;
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, Attempts, RunResult};
use reagent_protocol::{CancellationToken, Event, EventKind, Outcome};
use reagent_providers::ollama::OllamaProvider;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
use serde_json::json;

use super::harness::{check_event_invariants, client, files, recording_sink, MODEL, TASK};

fn write(path: &str, content: &str) -> Turn {
    Turn::tool_call("write_file", json!({"path": path, "content": content}))
}

struct Ran {
    summary: reagent_core::AttemptSummary,
    events: Vec<Vec<Event>>,
    requests: Vec<serde_json::Value>,
    dir: tempfile::TempDir,
}

async fn attempts(script: ScriptBuilder, max: u32, prepare: impl FnOnce(&std::path::Path)) -> Ran {
    let server = ScriptedOllama::start(script).await.unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let mut config = AgentConfig::new(MODEL);
    config.verify.checks = vec![
        "file_contains:a.txt:alpha".parse().unwrap(),
        "file_contains:a.txt:beta".parse().unwrap(),
    ];
    config.verify.retries = 0;
    config.verify.checkpoints = true;
    config.options.seed = Some(7);
    let tools = Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default()));
    let agent = Arc::new(Agent::new(Arc::new(provider), tools, config));
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    let mut runs = Attempts::new(agent, workspace, max);
    let mut events = Vec::new();
    while let Some(mut session) = runs.next_session() {
        let (sink, seen) = recording_sink();
        let result: RunResult = session.run(TASK, &sink, &CancellationToken::new()).await;
        let seen = seen.lock().unwrap().clone();
        check_event_invariants(&seen, &result);
        events.push(seen);
        runs.finished(result).unwrap();
    }
    Ran {
        summary: runs.finish(),
        events,
        requests: server.requests(),
        dir,
    }
}

/// (number, parent_run_id, seed) of each run's `attempt` event, which follows `run_started`.
fn attempt_events(ran: &Ran) -> Vec<(u32, Option<String>, Option<i64>)> {
    ran.events
        .iter()
        .map(|events| match &events[1].kind {
            EventKind::Attempt {
                number,
                of,
                parent_run_id,
                seed,
            } => {
                assert_eq!(*of, 3);
                (*number, parent_run_id.clone(), *seed)
            }
            other => panic!("second event is not the attempt: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn failed_attempts_are_undone_and_the_best_one_s_files_are_kept() {
    let ran = attempts(
        ScriptBuilder::new()
            // 1: one check of two passes.
            .turn(write("a.txt", "alpha\n"))
            .turn(Turn::text("Attempt one."))
            // 2: none passes, and a stray file.
            .turn(write("a.txt", "nothing\n"))
            .turn(write("junk.txt", "junk\n"))
            .turn(Turn::text("Attempt two."))
            // 3: none passes.
            .turn(write("a.txt", "gamma\n"))
            .turn(Turn::text("Attempt three.")),
        3,
        |d| files(d, &[("a.txt", "start\n"), ("other.txt", "untouched\n")]),
    )
    .await;
    let outcomes: Vec<Outcome> = ran.summary.results.iter().map(|r| r.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Outcome::PartialPass,
            Outcome::VerificationFailed,
            Outcome::VerificationFailed
        ]
    );
    assert_eq!(ran.summary.best, 0);
    let read = |p: &str| std::fs::read_to_string(ran.dir.path().join(p)).unwrap();
    assert_eq!(read("a.txt"), "alpha\n");
    assert_eq!(read("other.txt"), "untouched\n");
    assert!(!ran.dir.path().join("junk.txt").exists());
    let restored = ran
        .summary
        .restored
        .as_ref()
        .expect("the best was not the last");
    assert_eq!(restored.restored, ["a.txt"]);

    let first = ran.summary.results[0].run_id.clone();
    assert_eq!(
        attempt_events(&ran),
        vec![
            (1, None, Some(7)),
            (2, Some(first.clone()), Some(8)),
            (3, Some(first), Some(9)),
        ]
    );
    // Each attempt's requests carry its seed; each attempt started from the start's files.
    let seeds: Vec<i64> = ran
        .requests
        .iter()
        .map(|r| r["options"]["seed"].as_i64().unwrap())
        .collect();
    assert_eq!(seeds, [7, 7, 8, 8, 8, 9, 9]);
    assert_eq!(
        ran.events.iter().map(Vec::len).filter(|n| *n > 0).count(),
        3
    );
}

#[tokio::test]
async fn a_verified_attempt_ends_the_attempts_and_keeps_its_files() {
    let ran = attempts(
        ScriptBuilder::new()
            .turn(write("a.txt", "nothing\n"))
            .turn(Turn::text("Attempt one."))
            .turn(write("a.txt", "alpha beta\n"))
            .turn(Turn::text("Attempt two."))
            .turn(Turn::text("never asked")),
        3,
        |d| files(d, &[("a.txt", "start\n")]),
    )
    .await;
    let outcomes: Vec<Outcome> = ran.summary.results.iter().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::VerificationFailed, Outcome::Verified]);
    assert!(ran.summary.error.is_none());
    assert_eq!(ran.summary.best, 1);
    assert!(ran.summary.restored.is_none());
    assert_eq!(
        std::fs::read_to_string(ran.dir.path().join("a.txt")).unwrap(),
        "alpha beta\n"
    );
    assert_eq!(ran.requests.len(), 4);
}
