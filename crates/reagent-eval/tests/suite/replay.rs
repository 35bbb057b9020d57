//! Real replies of real models as a regression test: `evals/fixtures/coding-replies/<model>/`
//! holds the events of coding-suite runs recorded with `reagent eval --record DIR` (the model's
//! raw replies, the tool results, the run's ending). Each is fed through today's loop by
//! `reagent_core::replay`, which must make the same decisions: the same calls read from each
//! reply by the same parse layer, the same guardrails, the same ending.
//!
//! A deliberate change of the loop's decisions (a reply now read as a call, another ending)
//! shows here as a divergence naming the fixture, the iteration and both decisions. Then check
//! that the new decision is the better one and record the fixtures again (the command is in
//! evals/fixtures/coding-replies/README.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reagent_core::AgentConfig;
use reagent_eval::{Suite, Task};
use reagent_protocol::{Event, EventKind};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};

fn evals_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals")
}

/// The suite task a fixture recorded (`<task>.<mode>.seed<N>.jsonl`).
fn task_of<'a>(path: &Path, suites: &'a [Suite]) -> &'a Task {
    let name = path.file_name().unwrap().to_string_lossy();
    let id = name.split('.').next().unwrap();
    suites
        .iter()
        .flat_map(|s| &s.tasks)
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("{}: no coding-suite task `{id}`", path.display()))
}

fn fixtures() -> Vec<PathBuf> {
    let root = evals_dir().join("fixtures/coding-replies");
    let mut files = Vec::new();
    for model in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let model = model.unwrap().path();
        if !model.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&model).unwrap() {
            let file = file.unwrap().path();
            if file.extension().is_some_and(|x| x == "jsonl") {
                files.push(file);
            }
        }
    }
    files.sort();
    files
}

fn events(path: &Path) -> Vec<Event> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: not an event: {e}", path.display(), i + 1))
        })
        .collect()
}

#[tokio::test]
async fn recorded_coding_runs_of_real_models_replay_with_the_same_decisions() {
    let files = fixtures();
    assert!(files.len() >= 3, "too few fixtures: {files:?}");
    let specs = ToolRegistry::workspace_tools(&ToolsConfig::default()).specs();
    let suites: Vec<Suite> = ["coding-tasks.toml", "coding-tasks-heldout.toml"]
        .iter()
        .map(|f| Suite::load(&evals_dir().join(f)).unwrap())
        .collect();
    let mut replies = 0;
    let mut diverged = Vec::new();
    for path in &files {
        let events = events(path);
        let model = match events.first().map(|e| &e.kind) {
            Some(EventKind::RunStarted { model, .. }) => model.clone(),
            other => panic!(
                "{}: does not start with run_started: {other:?}",
                path.display()
            ),
        };
        assert!(
            matches!(
                events.last().map(|e| &e.kind),
                Some(EventKind::RunFinished { .. })
            ),
            "{}: the recording is cut short",
            path.display()
        );
        replies += events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::LlmResponse { .. }))
            .count();
        // The task's workspace as the recorded run started in it: what the loop reads of it
        // (files named, files to read up front) decides as it did then.
        let scratch = task_of(path, &suites).prepare_workspace().unwrap();
        let workspace = Arc::new(Workspace::open(scratch.path()).unwrap());
        let report = reagent_core::replay(&events, AgentConfig::new(model), &specs, workspace)
            .await
            .unwrap_or_else(|e| panic!("{}: cannot be replayed: {e}", path.display()));
        assert!(report.decisions > 0, "{}: nothing compared", path.display());
        if let Some(d) = report.divergence {
            diverged.push(format!(
                "{}: today's loop differs at iteration {} (after {} matching decisions)\n  \
                 recorded: {:?}\n  today:    {:?}",
                path.display(),
                d.iteration,
                report.decisions,
                d.recorded,
                d.replayed
            ));
        }
    }
    assert!(
        diverged.is_empty(),
        "{}\n(if the change is meant, re-record: see evals/fixtures/coding-replies/README.md)",
        diverged.join("\n")
    );
    assert!(replies >= files.len(), "every fixture holds a model reply");
}
