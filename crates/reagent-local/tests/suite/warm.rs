//! The kept (warm) llama-server: reused between runs, replaced when started differently,
//! stopped after its idle time or on request. Real llama-server + SmolLM2.

use std::time::{Duration, Instant};

use reagent_local::{stop_warm, ServerConfig, WarmConfig, WarmServer};

use super::cached_files;

/// Whether `pid` runs: exists and is no zombie (pid 1 may be slow to reap an orphan).
fn runs(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

fn config(run_dir: &std::path::Path, ctx_size: u32, idle: Duration) -> WarmConfig {
    WarmConfig {
        server: ServerConfig {
            ctx_size,
            threads: Some(1),
            startup_timeout: Duration::from_secs(180),
            ..ServerConfig::new(cached_files())
        },
        run_dir: run_dir.to_path_buf(),
        idle,
    }
}

async fn healthy(base_url: &str) -> bool {
    let client = reqwest::Client::new();
    match client.get(format!("{base_url}/health")).send().await {
        Ok(resp) => resp.status().is_success(),
        Err(_) => false,
    }
}

/// Waits up to `limit` for `done`.
async fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    done()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_server_is_reused_then_stops_when_idle() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), 2048, Duration::from_secs(3));
    let first = WarmServer::acquire(&cfg).await.unwrap();
    assert!(!first.reused());
    let (url, keeper) = (first.base_url(), first.keeper_pid());
    assert!(healthy(&url).await);
    assert_eq!(first.model(), "SmolLM2-135M-Instruct");
    // While a run holds it, the server is never idle, however long the run.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(healthy(&url).await, "stopped while in use");
    drop(first);
    let second = WarmServer::acquire(&cfg).await.unwrap();
    assert!(second.reused());
    assert_eq!(
        (second.base_url(), second.keeper_pid()),
        (url.clone(), keeper)
    );
    drop(second);
    // Idle for 3 s: the keeper stops the server, removes its state and ends.
    assert!(
        eventually(Duration::from_secs(30), || !runs(keeper)).await,
        "the keeper outlived its idle time"
    );
    assert!(!healthy(&url).await);
    assert!(!dir.path().join("llama-server.json").exists());
    assert!(
        !stop_warm(dir.path()).await.unwrap(),
        "nothing left to stop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_differently_is_replaced_and_stop_warm_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let idle = Duration::from_secs(600);
    let small = WarmServer::acquire(&config(dir.path(), 2048, idle))
        .await
        .unwrap();
    let old = small.keeper_pid();
    drop(small);
    let bigger = WarmServer::acquire(&config(dir.path(), 3072, idle))
        .await
        .unwrap();
    assert!(!bigger.reused());
    assert_ne!(bigger.keeper_pid(), old);
    assert!(!runs(old), "the replaced server's keeper still runs");
    let (url, keeper) = (bigger.base_url(), bigger.keeper_pid());
    let props: serde_json::Value = reqwest::get(format!("{url}/props"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(props["default_generation_settings"]["n_ctx"], 3072);
    drop(bigger);
    assert!(stop_warm(dir.path()).await.unwrap());
    assert!(!runs(keeper));
    assert!(!healthy(&url).await);
    assert!(!dir.path().join("llama-server.json").exists());
}

#[tokio::test]
async fn a_kept_server_that_crashes_while_starting_names_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let server = super::script(
        dir.path(),
        "llama-server",
        "echo 'loading model' >&2; kill -SEGV $$",
    );
    let cfg = WarmConfig {
        server: ServerConfig::new(reagent_local::ServerFiles {
            server,
            model: dir.path().join("m.gguf"),
        }),
        run_dir: dir.path().join("run"),
        idle: Duration::from_secs(60),
    };
    let err = WarmServer::acquire(&cfg).await.unwrap_err();
    let reagent_local::LocalError::Exited { status, tail } = &err else {
        panic!("expected Exited, got {err:?}");
    };
    assert_eq!(status, "killed by signal 11");
    assert!(tail.contains("loading model"), "{tail}");
}
