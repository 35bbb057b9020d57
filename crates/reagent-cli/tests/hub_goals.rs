//! A goal end to end through real processes: `reagent goal add`, a `reagent hub` whose model
//! (a scripted Ollama server) decomposes it into two dependent tasks, a `reagent worker` that
//! runs them with the agent loop against its own model server (writing a real file), and the
//! hub verifying the result — on SQLite and PostgreSQL 15.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod hub_support;

use std::process::{Child, Stdio};

use hub_support::{cli_ok, hub, reagent, wait_for, worker, Backend};
use reagent_hub::queue::TaskState;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const MODEL: &str = "qwen3:8b";

/// A `reagent hub` process, killed on drop.
struct HubProcess(Child);

impl Drop for HubProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn script(turns: Vec<Turn>) -> ScriptBuilder {
    ScriptBuilder::new()
        .model(ModelSpec::new(MODEL))
        .turns(turns)
}

async fn a_goal_runs_through_hub_and_worker(backend: Backend) {
    let h = hub(backend).await;
    let graph = json!({
        "tasks": [
            {"id": "write", "task": "Write hello.txt containing hello", "depends_on": [], "tools": ["write_file"]},
            {"id": "check", "task": "Read hello.txt and say what it holds", "depends_on": ["write"], "tools": ["read_file"]}
        ],
        "acceptance": ["hello.txt holds hello"]
    });
    let verdict = json!({"checks": [{"check": "hello.txt holds hello", "passed": true, "note": "the check task read it"}]});
    let planner = ScriptedOllama::start(script(vec![
        Turn::text(graph.to_string()),
        Turn::text(verdict.to_string()),
    ]))
    .await
    .unwrap();
    let agent = ScriptedOllama::start(script(vec![
        Turn::tool_call(
            "write_file",
            json!({"path": "hello.txt", "content": "hello\n"}),
        ),
        Turn::text("I wrote hello.txt."),
        Turn::tool_call("read_file", json!({"path": "hello.txt"})),
        Turn::text("hello.txt holds: hello"),
    ]))
    .await
    .unwrap();

    let ws = h.ws.display().to_string();
    let id = cli_ok(
        &h,
        &[
            "goal",
            "add",
            "Greet in hello.txt",
            "--model",
            MODEL,
            "--workspace",
            &ws,
        ],
    );
    let id = id.trim().to_owned();
    let _hub = HubProcess(
        reagent()
            .args([
                "hub",
                "--store",
                &h.store_url,
                "--tick",
                "100ms",
                "--lease",
                "2s",
            ])
            .args([
                "--check-every",
                "500ms",
                "--model",
                MODEL,
                "--host",
                &planner.base_url(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let _worker = worker(&h, "w1", &agent, &[]);

    let goal: Value = wait_for(60, "the goal verified", || async {
        let g: Value = serde_json::from_str(&cli_ok(&h, &["goal", "show", &id, "--json"])).unwrap();
        assert_ne!(g["state"], "failed", "{g}");
        (g["state"] == "verified").then_some(g)
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(h.ws.join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(goal["verdict"]["checks"][0]["passed"], true);

    // Both tasks ran once each, in order, as recorded runs of the agent loop.
    let write = h
        .queue
        .get(goal["tasks"]["write"].as_str().unwrap())
        .await
        .unwrap();
    let check = h
        .queue
        .get(goal["tasks"]["check"].as_str().unwrap())
        .await
        .unwrap();
    for t in [&write, &check] {
        assert_eq!((t.state, t.attempt), (TaskState::Done, 1), "{t:?}");
        assert!(t.run_id.is_some(), "{t:?}");
    }
    assert!(write.updated_ms <= check.updated_ms);
    let runs: Value = serde_json::from_str(&cli_ok(&h, &["runs", "list", "--json"])).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");

    // The verification saw what the agents answered.
    let asked = planner.requests()[1]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(asked.contains("hello.txt holds: hello"), "{asked}");
    let status: Value = serde_json::from_str(&cli_ok(&h, &["hub", "status", "--json"])).unwrap();
    assert!(
        status["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["url"] == agent.base_url().as_str() && e["healthy"] == true),
        "the worker's endpoint is watched: {status}"
    );
    let text = cli_ok(&h, &["goal", "show", &id[..8]]);
    assert!(
        text.contains("verdict: verified") && text.contains("write  done"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_runs_through_hub_and_worker_sqlite() {
    a_goal_runs_through_hub_and_worker(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_runs_through_hub_and_worker_postgres() {
    a_goal_runs_through_hub_and_worker(Backend::Postgres).await;
}
