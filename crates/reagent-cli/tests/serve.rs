//! `reagent serve` as a real process: SIGTERM ends its live runs as `interrupted` and exits
//! within seconds; a restarted serve lists them; the token appears only in the dashboard link.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

/// A `reagent serve` child; its stderr collected by a thread; its address once it listens.
struct Serve {
    child: Child,
    stderr: Arc<Mutex<String>>,
    base: String,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        Serve::start_with(dir, &[])
    }

    /// `start` with more `reagent serve` flags.
    fn start_with(dir: &Path, extra: &[&str]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reagent"))
            .args(["--log", "debug", "serve", "--bind", "127.0.0.1:0"])
            .args(extra)
            .arg("--store")
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
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let collected = stderr.clone();
        std::thread::spawn(move || {
            let mut addr = String::new();
            for line in lines.lines().map_while(Result::ok) {
                {
                    let mut all = collected.lock().unwrap();
                    all.push_str(&line);
                    all.push('\n');
                }
                if let Some(a) = line.strip_prefix("reagent serve: listening on ") {
                    addr = a.to_owned();
                }
                // The dashboard link is the last line printed on start.
                if line.starts_with("reagent serve: dashboard ") {
                    let _ = tx.send(addr.clone());
                }
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("serve did not start: {}", stderr.lock().unwrap()));
        Serve {
            child,
            stderr,
            base,
        }
    }

    /// SIGTERM; returns how long it took to exit and its exit code.
    fn terminate(&mut self) -> (Duration, Option<i32>) {
        let pid = i32::try_from(self.child.id()).unwrap();
        let sent = Instant::now();
        // SAFETY: kill(2) with a pid this test spawned and has not reaped yet.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (sent.elapsed(), status.code());
            }
            if sent.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("serve did not exit within 20 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_interrupts_live_runs_and_a_restarted_serve_lists_them() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new().turn(Turn::text("never sent").with_delay(Duration::from_secs(120))),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("root/project");
    std::fs::create_dir_all(&workspace).unwrap();
    // `[serve] base_urls` lets requests name the scripted model server, and nothing else.
    std::fs::write(
        dir.path().join("reagent.toml"),
        format!("[serve]\nbase_urls = [\"{}\"]\n", model.base_url()),
    )
    .unwrap();
    let mut serve = Serve::start(dir.path());
    let token = std::fs::read_to_string(dir.path().join("token"))
        .unwrap()
        .trim()
        .to_owned();
    let http = reqwest::Client::new();

    let refused = http
        .get(format!("{}/v1/runs", serve.base))
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let run = |base_url: String| {
        http.post(format!("{}/v1/runs", serve.base))
            .bearer_auth(&token)
            .json(&json!({
                "task": "wait for me",
                "model": "m",
                "provider": "ollama",
                "base_url": base_url,
                "workspace": workspace,
            }))
            .send()
    };
    let forbidden = run("http://169.254.169.254".into()).await.unwrap();
    assert_eq!(forbidden.status(), 403);
    let message = forbidden.text().await.unwrap();
    assert!(message.contains("[serve] base_urls"), "{message}");
    let res = run(model.base_url()).await.unwrap();
    assert_eq!(res.status(), 201);
    let id = res.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let (took, code) = tokio::task::block_in_place(|| serve.terminate());
    assert!(took < Duration::from_secs(5), "exit took {took:?}");
    assert_eq!(code, Some(0));
    let log = serve.stderr.lock().unwrap().clone();
    assert!(log.contains("(created)"), "{log}");
    assert_eq!(
        log.matches(&token).count(),
        1,
        "the token is printed once, in the dashboard link:\n{log}"
    );
    assert!(log.contains(&format!("/#token={token}")));

    let again = Serve::start(dir.path());
    let start_log = again.stderr.lock().unwrap().clone();
    assert!(start_log.contains("token file"), "{start_log}");
    assert!(!start_log.contains("(created)"), "{start_log}");
    let list: Value = http
        .get(format!("{}/v1/runs", again.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["total"], 1);
    assert_eq!(list["runs"][0]["id"], id.as_str());
    assert_eq!(list["runs"][0]["outcome"], "interrupted");
}

/// `reagent serve --hub` runs a hub beside the API: it takes the group's lease on the same
/// store (seen by `reagent hub status`), and SIGTERM stops both.
#[test]
fn serve_with_hub_leads_the_hub_group() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("root")).unwrap();
    let mut serve = Serve::start_with(
        dir.path(),
        &[
            "--hub",
            "--hub-name",
            "grp",
            "--tick",
            "100ms",
            "--lease",
            "2s",
        ],
    );
    let status = || {
        let out = Command::new(env!("CARGO_BIN_EXE_reagent"))
            .args(["hub", "status", "--json", "--name", "grp", "--store"])
            .arg(dir.path().join("reagent.db"))
            .env("HOME", dir.path())
            .env_remove("REAGENT_STORE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let started = Instant::now();
    let led = loop {
        let s = status();
        // Leading, and its state machine has ticked once.
        if s["leading"] == json!(true) && s["state"]["state"].is_string() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the in-process hub never took the lease: {s}\n{}",
            serve.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(led["leader"]["epoch"], 1, "{led}");
    assert!(
        serve.stderr.lock().unwrap().contains("reagent serve: hub "),
        "{}",
        serve.stderr.lock().unwrap()
    );
    let (took, code) = serve.terminate();
    assert_eq!(code, Some(0), "{}", serve.stderr.lock().unwrap());
    assert!(took < Duration::from_secs(10), "took {took:?}");
}
