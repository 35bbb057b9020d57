//! MCP servers in the runs of `reagent serve` and `reagent worker`: a run uses a tool of a
//! configured stdio server (the npm reference filesystem server, sandboxed: the default) and
//! its result is in the run's events; the server is confined to each run's own workspace,
//! not to the directory serve or the worker started in: reading a file of another workspace
//! is refused by the sandbox (Landlock), reading one of its own works. Nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod hub_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use hub_support::{cli_ok, hub, wait_for, worker, Backend};
use reagent_hub::queue::TaskState;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const REAGENT: &str = env!("CARGO_BIN_EXE_reagent");

/// Two workspaces `a` and `b` under `root`, each with a `secret.txt` naming it.
fn workspaces(root: &Path) {
    for name in ["a", "b"] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(
            root.join(name).join("secret.txt"),
            format!("{name} secret\n"),
        )
        .unwrap();
    }
}

/// The npm reference filesystem server, installed by scripts/install-test-deps.sh.
fn filesystem_server() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../reagent-mcp/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs the npm reference server)",
        path.display()
    );
    path.canonicalize().unwrap()
}

/// The `[mcp.servers.fs]` table: the reference filesystem server, itself told both
/// workspaces (sandboxed: the default, so the run's workspace is all it may read).
fn server_table(root: &Path) -> String {
    let server = filesystem_server();
    let modules = server.ancestors().nth(4).unwrap().display().to_string();
    format!(
        // Node reads OpenSSL's config, in /etc/ssl, which the sandbox withholds.
        "[sandbox]\nreadable_roots = [{modules:?}, \"/etc/ssl/openssl.cnf\"]\n\
         [mcp.servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}, {:?}]\n",
        server.display().to_string(),
        root.join("a").display().to_string(),
        root.join("b").display().to_string(),
    )
}

/// The model's turns for a run in workspace `own` of `root`, which also holds `other`: read
/// its own secret and the other's, then finish.
fn turns(script: ScriptBuilder, root: &Path, own: &str, other: &str) -> ScriptBuilder {
    let read = |name: &str| {
        Turn::tool_call(
            "fs__read_text_file",
            json!({"path": root.join(name).join("secret.txt")}),
        )
    };
    script
        .turn(read(own))
        .turn(read(other))
        .turn(Turn::text("done"))
}

/// Two runs: in `a`, then in `b`.
fn script(root: &Path) -> ScriptBuilder {
    turns(turns(ScriptBuilder::new(), root, "a", "b"), root, "b", "a")
}

/// Its own secret was read; the other workspace's was refused by the sandbox.
fn assert_confined(events: &[Value], own: &str, other: &str) {
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["name"] == "fs__read_text_file")
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    let output = results[0]["output"].to_string();
    assert!(output.contains(&format!("{own} secret")), "{output}");
    assert_eq!(results[1]["ok"], false, "{}", results[1]);
    let refused = results[1]["output"].to_string();
    assert!(
        refused.contains("EACCES") || refused.contains("permission denied"),
        "not refused by the sandbox: {refused}"
    );
    assert!(!refused.contains(&format!("{other} secret")));
}

/// A `reagent serve` child on 127.0.0.1, killed when dropped.
struct Serve {
    child: Child,
    base: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_serve(dir: &Path, config: &Path) -> Serve {
    let mut child = Command::new(REAGENT)
        .args(["--config", &config.display().to_string()])
        .args(["serve", "--bind", "127.0.0.1:0", "--store"])
        .arg(dir.join("reagent.db"))
        .arg("--workspace-root")
        .arg(dir.join("root"))
        .arg("--token-file")
        .arg(dir.join("token"))
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("REAGENT_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.lines().map_while(Result::ok) {
            if let Some(a) = line.strip_prefix("reagent serve: listening on ") {
                let _ = tx.send(a.to_owned());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("reagent serve did not start");
    Serve { child, base }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_use_stdio_servers_confined_to_each_runs_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    workspaces(&root);
    let model = ScriptedOllama::start(script(&root)).await.unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "{}[serve]\nbase_urls = [\"{}\"]\n",
            server_table(&root),
            model.base_url()
        ),
    )
    .unwrap();
    let serve = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || start_serve(&dir, &config)
    })
    .await
    .unwrap();
    let token = std::fs::read_to_string(dir.path().join("token"))
        .unwrap()
        .trim()
        .to_owned();
    let http = reqwest::Client::new();
    for (own, other) in [("a", "b"), ("b", "a")] {
        let created = http
            .post(format!("{}/v1/runs", serve.base))
            .bearer_auth(&token)
            .json(&json!({
                "task": "read the secret",
                "model": "m",
                "provider": "ollama",
                "base_url": model.base_url(),
                "workspace": root.join(own),
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
        let id = created.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        // The SSE stream closes after run_finished.
        let stream = http
            .get(format!("{}/v1/runs/{id}/events", serve.base))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let events: Vec<Value> = stream
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect();
        let finished = events.iter().find(|e| e["type"] == "run_finished");
        assert!(finished.is_some(), "the run did not finish: {events:?}");
        assert_confined(&events, own, other);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_runs_use_stdio_servers_confined_to_each_tasks_workspace() {
    let h = hub(Backend::Sqlite).await;
    // The worker's own workspace is `h.ws`; each task names one of two others beside it.
    let root = h.dir.path().join("root");
    workspaces(&root);
    let config = h.dir.path().join("worker.toml");
    std::fs::write(&config, server_table(&root)).unwrap();
    let model = ScriptedOllama::start(script(&root)).await.unwrap();
    let w = worker(
        &h,
        "w",
        &model,
        &["--config", &config.display().to_string()],
    );
    for (own, other) in [("a", "b"), ("b", "a")] {
        let ws = root.join(own).display().to_string();
        let id = cli_ok(&h, &["task", "add", "read the secret", "--workspace", &ws])
            .trim()
            .to_owned();
        let done = wait_for(90, "the task to be done", || async {
            let task = h.queue.get(&id).await.ok()?;
            assert!(
                !matches!(task.state, TaskState::Failed | TaskState::Cancelled),
                "{task:?}\nworker log:\n{}",
                w.log()
            );
            (task.state == TaskState::Done).then_some(task)
        })
        .await;
        let run_id = done.run_id.clone().expect("the task's run id");
        let events: Vec<Value> = cli_ok(&h, &["runs", "events", &run_id])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_confined(&events, own, other);
    }
    assert!(w.stop(Duration::from_secs(20)).await.success());
}
