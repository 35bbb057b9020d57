//! `reagent hub` and `reagent goal` as processes, on SQLite and a real PostgreSQL 15: status,
//! history, pause and resume; goals added, decomposed by a scripted Ollama server and shown;
//! `kill -9` of the active hub: the standby takes over within the lease, nothing dispatched twice.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[path = "store_support/mod.rs"]
mod store_support;

use std::process::{Child, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_testkit::{ModelSpec, PostgresCluster, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use store_support::{json_out, reagent, stderr};

const LIMIT: Duration = Duration::from_secs(30);

/// A store location: a SQLite file in `dir`, or a fresh PostgreSQL database (with the cluster,
/// which stops when the last holder drops it).
fn store(postgres: bool, dir: &tempfile::TempDir) -> (String, Option<Arc<PostgresCluster>>) {
    if postgres {
        let pg = PostgresCluster::shared().expect("PostgreSQL for the hub tests");
        (pg.new_database().unwrap(), Some(pg))
    } else {
        (dir.path().join("hub.db").display().to_string(), None)
    }
}

fn cmd(store: &str, args: &[&str]) -> Output {
    let out = reagent()
        .args(args)
        .args(["--store", store])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    out
}

async fn open_store(store: &str) -> reagent_store::Store {
    let location = reagent_store::Location::parse(store).unwrap();
    reagent_store::Store::open(&location).await.unwrap()
}

fn status(store: &str) -> Value {
    json_out(&cmd(store, &["hub", "status", "--json"]))
}

/// A `reagent hub` process killed on drop.
struct HubProcess(Child);

impl Drop for HubProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_hub(store: &str, model_host: &str) -> HubProcess {
    let child = reagent()
        .args(["hub", "--store", store, "--tick", "100ms", "--lease", "2s"])
        .args([
            "--check-every",
            "200ms",
            "--model",
            "qwen3:8b",
            "--host",
            model_host,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    HubProcess(child)
}

fn wait_for<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(start.elapsed() < LIMIT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn graph() -> Value {
    json!({
        "tasks": [
            {"id": "write", "task": "Write hello.txt saying hello", "depends_on": [], "tools": ["write_file"]},
            {"id": "check", "task": "Check hello.txt", "depends_on": ["write"], "tools": ["read_file"]}
        ],
        "acceptance": ["hello.txt says hello"]
    })
}

async fn model_server() -> ScriptedOllama {
    let script = ScriptBuilder::new()
        .model(ModelSpec::new("qwen3:8b"))
        .turn(Turn::text(graph().to_string()));
    ScriptedOllama::start(script).await.unwrap()
}

async fn commands_show_and_steer_the_hub(postgres: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (store, _pg) = store(postgres, &dir);
    let server = model_server().await;
    let s = status(&store);
    assert_eq!(s["leader"], Value::Null);
    assert_eq!(s["leading"], false);

    let goal = cmd(
        &store,
        &[
            "goal",
            "add",
            "Say hello in hello.txt",
            "--model",
            "qwen3:8b",
        ],
    );
    let id = String::from_utf8(goal.stdout).unwrap().trim().to_owned();
    assert_eq!(id.len(), 36, "{id}");
    let listed = json_out(&cmd(&store, &["goal", "list", "--json"]));
    assert_eq!(listed[0]["state"], "pending");

    let _hub = spawn_hub(&store, &server.base_url());
    let shown = wait_for("the goal dispatched", || {
        let g = json_out(&cmd(&store, &["goal", "show", &id[..8], "--json"]));
        (g["state"] == "running" && g["tasks"].as_object().unwrap().len() == 2).then_some(g)
    });
    assert_eq!(shown["graph"]["tasks"][1]["depends_on"], json!(["write"]));
    let text = String::from_utf8(cmd(&store, &["goal", "show", &id]).stdout).unwrap();
    assert!(
        text.contains("check  waiting") && text.contains("(after write)"),
        "{text}"
    );

    let s = status(&store);
    assert_eq!(s["leading"], true);
    assert_eq!(s["leader"]["epoch"], 1);
    assert_eq!(s["queue"]["queued"], 1);
    assert_eq!(s["queue"]["waiting"], 1);
    let text = String::from_utf8(cmd(&store, &["hub", "status"]).stdout).unwrap();
    assert!(
        text.contains("led by") && text.contains("1 waiting, 1 queued"),
        "{text}"
    );

    // The hub enters `executing` on the tick after the dispatch: wait for that tick.
    let steps = wait_for("the hub to enter executing", || {
        let history = json_out(&cmd(&store, &["hub", "history", "--json"]));
        let steps: Vec<(String, String)> = history
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["from"].as_str().unwrap().into(),
                    t["to"].as_str().unwrap().into(),
                )
            })
            .collect();
        let entered = ("contemplating".to_owned(), "executing".to_owned());
        steps.contains(&entered).then_some(steps)
    });
    assert_eq!(
        steps[0],
        ("resting".into(), "contemplating".into()),
        "{steps:?}"
    );
    assert!(
        steps.contains(&("contemplating".into(), "executing".into())),
        "{steps:?}"
    );

    cmd(&store, &["hub", "pause"]);
    let paused = status(&store)["state"].clone();
    assert_eq!(paused["paused"], true);
    // Paused: no state change however long it waits (the queue still holds work).
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(status(&store)["state"], paused);
    cmd(&store, &["hub", "resume"]);
    assert_eq!(status(&store)["state"]["paused"], false);

    let bad = reagent()
        .args(["goal", "show", "nonexistent", "--store", &store])
        .output()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        stderr(&bad).contains("no goal `nonexistent`"),
        "{}",
        stderr(&bad)
    );
    let bad = reagent()
        .args(["hub", "--store", &store, "--tick", "2s", "--lease", "1s"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
}

async fn kill_9_of_the_active_hub_hands_over_to_the_standby(postgres: bool) {
    let dir = tempfile::tempdir().unwrap();
    let (store, _pg) = store(postgres, &dir);
    let server = model_server().await;
    let mut first = spawn_hub(&store, &server.base_url());
    let leader = wait_for("a leader", || {
        let s = status(&store);
        (s["leading"] == true).then_some(s["leader"].clone())
    });
    let second = spawn_hub(&store, &server.base_url());
    let first_pid = first.0.id().to_string();
    assert!(leader["holder"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{first_pid}-")));
    let goal = cmd(&store, &["goal", "add", "Say hello in hello.txt"]);
    let id = String::from_utf8(goal.stdout).unwrap().trim().to_owned();
    wait_for("the goal dispatched", || {
        let g = json_out(&cmd(&store, &["goal", "show", &id, "--json"]));
        (g["tasks"].as_object().unwrap().len() == 2).then_some(())
    });

    // kill -9: no release of the lease; the standby must wait for it to run out.
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let killed = Instant::now();
    // The dead leader's lease as it left it (read at once: the standby waits for its end).
    let lease = reagent_hub::leader::current_leader(open_store(&store).await.pool(), "hub")
        .await
        .unwrap()
        .unwrap();
    assert!(
        lease.holder.starts_with(&format!("{first_pid}-")),
        "{lease:?}"
    );
    let taken = wait_for("the standby to take over", || {
        let s = status(&store);
        let holder = s["leader"]["holder"].as_str().unwrap_or("").to_owned();
        (s["leading"] == true && !holder.starts_with(&format!("{first_pid}-")))
            .then_some(s["leader"].clone())
    });
    // Taken over once the lease ended, not before, and soon after (the standby tries every
    // 200 ms); both times on the database's clock.
    let acquired = taken["acquired_ms"].as_i64().unwrap();
    let late = acquired - lease.expires_ms;
    assert!(
        (0..=1000).contains(&late),
        "taken over {late} ms after the lease ended"
    );
    assert!(killed.elapsed() < Duration::from_secs(10));
    assert_eq!(taken["epoch"], 2);
    let second_pid = second.0.id().to_string();
    assert!(taken["holder"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{second_pid}-")));

    // The new leader runs on; nothing was dispatched or decomposed twice.
    std::thread::sleep(Duration::from_millis(1500));
    let s = status(&store);
    assert_eq!(
        s["queue"]["queued"].as_u64().unwrap() + s["queue"]["waiting"].as_u64().unwrap(),
        2
    );
    let g = json_out(&cmd(&store, &["goal", "show", &id, "--json"]));
    assert_eq!(g["state"], "running");
    assert_eq!(server.requests().len(), 1, "the goal was decomposed once");
    let epochs: Vec<i64> = json_out(&cmd(&store, &["hub", "history", "--json"]))
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["epoch"].as_i64().unwrap())
        .collect();
    assert!(epochs.windows(2).all(|w| w[0] <= w[1]), "{epochs:?}");
    let elected: Vec<Value> = s["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "elected")
        .cloned()
        .collect();
    assert_eq!(elected.len(), 2, "{elected:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_show_and_steer_the_hub_sqlite() {
    commands_show_and_steer_the_hub(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_show_and_steer_the_hub_postgres() {
    commands_show_and_steer_the_hub(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_active_hub_hands_over_to_the_standby_sqlite() {
    kill_9_of_the_active_hub_hands_over_to_the_standby(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_active_hub_hands_over_to_the_standby_postgres() {
    kill_9_of_the_active_hub_hands_over_to_the_standby(true).await;
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    out
}

fn actions_of(store: &str, kind: &str) -> Vec<Value> {
    status(store)["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == kind)
        .cloned()
        .collect()
}

/// The real embedded llama-server (scripts/install-model-server.sh), managed by the hub:
/// killed with SIGKILL, marked down after three failed checks, restarted, marked up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managed_llama_server_is_restarted_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _pg) = store(false, &dir);
    let hub = HubProcess(
        reagent()
            .args(["hub", "--store", &store, "--tick", "100ms", "--lease", "2s"])
            .args([
                "--check-every",
                "300ms",
                "--heal-cooldown",
                "2s",
                "--manage-local",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let slow = Duration::from_secs(180);
    let wait_long = |what: &str, check: &mut dyn FnMut() -> bool| {
        let start = Instant::now();
        while !check() {
            assert!(start.elapsed() < slow, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let up = |store: &str| {
        status(store)["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["healthy"] == true && e["models"] == json!(["SmolLM2-135M-Instruct"]))
    };
    wait_long("the managed server up", &mut || up(&store));
    let url = status(&store)["endpoints"][0]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/v1"),
        "{url}"
    );

    let servers = children(hub.0.id());
    assert_eq!(servers.len(), 1, "one llama-server child: {servers:?}");
    // SAFETY: kill(2) on the pid of our own child process.
    assert_eq!(unsafe { libc::kill(servers[0], libc::SIGKILL) }, 0);
    wait_long("the restart", &mut || {
        actions_of(&store, "restart_server")
            .iter()
            .any(|a| a["outcome"] == "done")
    });
    wait_long("the server up again", &mut || {
        !actions_of(&store, "endpoint_up").is_empty() && up(&store)
    });
    let down = actions_of(&store, "endpoint_down");
    assert_eq!(down.len(), 1, "{down:?}");
    assert!(down[0]["detail"]
        .as_str()
        .unwrap()
        .starts_with("3 failed checks in a row"));
    let s = status(&store);
    assert_eq!(
        s["endpoints"][0]["url"],
        url.as_str(),
        "the restarted server keeps its URL"
    );
    let restarted = children(hub.0.id());
    assert_eq!(restarted.len(), 1);
    assert_ne!(restarted, servers);
}
