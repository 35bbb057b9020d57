//! Shared helpers of the run-store tests (`store.rs`, `store_faults.rs`): the `reagent` binary
//! with a clean environment, a workspace and a store path per test, and reading results back.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

pub(crate) fn reagent() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_reagent"));
    c.env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null());
    c
}

/// Arguments of a `reagent run` against `server` in `ws`.
pub(crate) fn run_args(server: &ScriptedOllama, ws: &Path, store: &str, task: &str) -> Vec<String> {
    vec![
        "run".into(),
        "--model".into(),
        "qwen3:8b".into(),
        "--host".into(),
        server.base_url(),
        "--workspace".into(),
        ws.display().to_string(),
        "--store".into(),
        store.into(),
        "--json".into(),
        task.into(),
    ]
}

pub(crate) async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

pub(crate) fn runs(store: &str, args: &[&str]) -> Output {
    let out = reagent()
        .arg("runs")
        .args(args)
        .args(["--store", store])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "runs {args:?}: {}",
        stderr(&out)
    );
    out
}

pub(crate) fn two_turns() -> ScriptBuilder {
    ScriptBuilder::new()
        .turn(Turn::tool_call("list_directory", json!({"path": "."})))
        .turn(Turn::text("There is <b>one</b> file & a \"quote\"."))
}

pub(crate) struct Setup {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) db: PathBuf,
}

pub(crate) fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    let db = dir.path().join("store/reagent.db");
    Setup { dir, ws, db }
}

pub(crate) async fn wait_for<T, F, Fut>(secs: u64, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out after {secs} s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
