//! `reagent run --provider local` end to end with the real embedded model (llama-server +
//! SmolLM2-135M, installed by `scripts/install-model-server.sh`; these tests fail, never skip,
//! without it): the server is started on demand, reused by the next run, replaced for another
//! `--model-file`, and stopped after its idle time. And the error of a run with no server
//! running names `--provider local`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use reagent_local::Locations;
use serde_json::Value;
use support::*;

/// A cache directory holding links to the installed llama-server and model, so the test has
/// its own run directory (state, lock, log) and still installs nothing.
fn linked_cache() -> tempfile::TempDir {
    let files = Locations::from_env()
        .expect("a cache directory (REAGENT_CACHE or HOME)")
        .files();
    assert!(
        files.is_complete(),
        "the local model server is not installed ({:?} missing): run scripts/install-model-server.sh",
        files.missing()
    );
    let cache = tempfile::tempdir().unwrap();
    for (dir, file) in [("bin", &files.server), ("models", &files.model)] {
        std::fs::create_dir_all(cache.path().join(dir)).unwrap();
        let link = cache.path().join(dir).join(file.file_name().unwrap());
        std::os::unix::fs::symlink(file, link).unwrap();
    }
    cache
}

/// The shared run flags (an empty config file, no streaming, a small context and short
/// replies), `--provider local`, the model (`--model NAME`, or `--model-file FILE`) and the
/// task.
fn flags(
    home: &Path,
    workspace: &Path,
    events: &Path,
    model: [&str; 2],
    max_iterations: &str,
) -> Vec<String> {
    let config = config_file(home, "");
    let mut args = run_flags(workspace, &config, events);
    args.extend(model.map(str::to_owned));
    args.extend(
        [
            "--provider",
            "local",
            "--max-iterations",
            max_iterations,
            TASK,
        ]
        .map(str::to_owned),
    );
    args
}

/// The fastest real model by its catalog alias (the default, Qwen2.5-Coder-1.5B, would take
/// minutes here and is not installed for the tests).
const SMOLLM2: [&str; 2] = ["--model", "SmolLM2-135M-Instruct"];

/// The kept server's keeper pid and port, from its state file.
fn kept(cache: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(cache.join("run/llama-server.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    Some((v["keeper"].as_u64()?, v["port"].as_u64()?))
}

/// The outcome of a `--json` run, checked against its exit code; fails on a provider error.
fn outcome(out: &std::process::Output) -> Value {
    let result = stdout_json(out);
    let name = result["outcome"].as_str().unwrap_or_default();
    assert_eq!(out.status.code(), Some(exit_code_of(name)), "{result}");
    assert_ne!(
        name,
        "provider_error",
        "{result}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        result["tokens"]["completion"].as_u64() > Some(0),
        "{result}"
    );
    result
}

fn run_model(events: &Path) -> String {
    let events = read_events(events);
    of_type(&events, "run_started")[0]["model"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_local_starts_reuses_replaces_and_stops_the_embedded_server() {
    let cache = linked_cache();
    let workspace = demo_workspace();
    let home = tempfile::tempdir().unwrap();
    let env = [
        ("REAGENT_CACHE", cache.path().to_str().unwrap()),
        ("REAGENT_LOCAL_IDLE_SECS", "4"),
    ];
    let events = home.path().join("events.jsonl");

    // Nothing runs: the first run starts the server and does the whole task.
    assert_eq!(kept(cache.path()), None);
    let out = reagent_with_env(
        &flags(home.path(), workspace.path(), &events, SMOLLM2, "6"),
        home.path(),
        &env,
    )
    .await;
    let result = outcome(&out);
    assert_eq!(result["outcome"], "completed", "{result}");
    assert!(
        result["answer"].as_str().unwrap().contains(KEEPER_FACT),
        "{result}"
    );
    assert_eq!(run_model(&events), "SmolLM2-135M-Instruct");
    let (keeper, port) = kept(cache.path()).expect("the server is kept after the run");

    // The next run reuses it.
    let out = reagent_with_env(
        &flags(home.path(), workspace.path(), &events, SMOLLM2, "1"),
        home.path(),
        &env,
    )
    .await;
    outcome(&out);
    assert_eq!(kept(cache.path()), Some((keeper, port)));

    // Another model file: the kept server is replaced by one serving it, under its name.
    let other = home.path().join("tiny-smol.gguf");
    std::os::unix::fs::symlink(
        cache.path().join("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
        &other,
    )
    .unwrap();
    let other_file = other.display().to_string();
    let args = flags(
        home.path(),
        workspace.path(),
        &events,
        ["--model-file", &other_file],
        "1",
    );
    let out = reagent_with_env(&args, home.path(), &env).await;
    outcome(&out);
    assert_eq!(run_model(&events), "tiny-smol");
    let (new_keeper, new_port) = kept(cache.path()).expect("the new server is kept");
    assert_ne!(new_keeper, keeper);

    // Idle for 4 s: it stops by itself and clears its state; nothing answers on its port.
    let start = Instant::now();
    while kept(cache.path()).is_some() && start.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(
        kept(cache.path()),
        None,
        "the kept server outlived its idle time"
    );
    assert!(std::net::TcpStream::connect(("127.0.0.1", new_port as u16)).is_err());
}

#[tokio::test]
async fn with_no_server_running_the_error_names_provider_local() {
    let home = tempfile::tempdir().unwrap();
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let args: Vec<String> = [
        "run",
        "--model",
        "qwen3:8b",
        "--host",
        &format!("http://127.0.0.1:{port}"),
        "--workspace",
        &home.path().display().to_string(),
        "say hi",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = reagent(&args, home.path()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains("Is Ollama running?"), "{stderr}");
    assert!(stderr.contains("reagent run --provider local"), "{stderr}");
}
