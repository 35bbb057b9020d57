//! A run against a third-party implementation of the Ollama API that refuses a JSON Schema in
//! `format`: `ollama-openai-proxy` 0.7.0 (PyPI, installed by `scripts/install-test-deps.sh`)
//! over the real llama-server + SmolLM2 (`scripts/install-model-server.sh`). The constrained
//! request is refused with HTTP 400; reagent falls back to JSON mode with the schema in the
//! prompt, says so once on stderr and in a `feature_fallback` event, and the run finishes.
//! Fails, never skips, when the proxy or the model server is not installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use reagent_local::Locations;
use support::*;

/// The proxy's venv, as `scripts/install-test-deps.sh` makes it.
fn proxy_dir() -> PathBuf {
    let dir = Locations::from_env()
        .expect("a cache directory (REAGENT_CACHE or HOME)")
        .cache_dir
        .join("ollama-proxy");
    assert!(
        dir.join("shim/src/main.py").exists(),
        "ollama-openai-proxy is not installed in {}: run scripts/install-test-deps.sh",
        dir.display()
    );
    dir
}

/// Starts the proxy on a free port in front of `openai_base_url`; killed when dropped.
async fn start_proxy(openai_base_url: &str) -> (tokio::process::Child, u16) {
    let dir = proxy_dir();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = tokio::process::Command::new(dir.join("bin/python"))
        .args([
            "-m",
            "uvicorn",
            "src.main:app",
            "--host",
            "127.0.0.1",
            "--port",
        ])
        .arg(port.to_string())
        .env("PYTHONPATH", dir.join("shim"))
        .env("OPENAI_API_BASE_URL", openai_base_url)
        .env("OPENAI_API_KEY", "none")
        .current_dir(dir.join("shim"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "ollama-openai-proxy did not listen on {port} within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    (child, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_the_schema_gets_json_mode_and_the_run_finishes() {
    let server = start_server().await;
    let (_proxy, port) = start_proxy(&server.openai_base_url()).await;
    let workspace = demo_workspace();
    let home = tempfile::tempdir().unwrap();
    let events = home.path().join("events.jsonl");
    let config = config_file(home.path(), "");
    let args: Vec<String> = [
        "run",
        "--config",
        &config.display().to_string(),
        "--provider",
        "ollama",
        "--host",
        &format!("http://127.0.0.1:{port}"),
        "--model",
        server.model(),
        "--tool-mode",
        "constrained",
        "--workspace",
        &workspace.path().display().to_string(),
        "--events",
        &events.display().to_string(),
        "--read-only",
        "--num-ctx",
        "4096",
        "--num-predict",
        "128",
        "--max-iterations",
        "3",
        "--temperature",
        "0",
        "--seed",
        "1",
        TASK,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = reagent(&args, home.path()).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events = read_events(&events);
    let finished = of_type(&events, "run_finished");
    let outcome = finished[0]["outcome"].as_str().unwrap();
    assert_ne!(outcome, "provider_error", "{stderr}");
    assert_eq!(out.status.code(), Some(exit_code_of(outcome)), "{stderr}");
    // The refusal is recognised once and said once, on stderr and as an event.
    let fallbacks: Vec<_> = of_type(&events, "guardrail")
        .into_iter()
        .filter(|e| e["guardrail"] == "feature_fallback")
        .collect();
    assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
    let detail = fallbacks[0]["detail"].as_str().unwrap();
    assert!(detail.contains("Input should be 'json'"), "{detail}");
    assert!(
        detail.contains("JSON mode with the schema stated in the prompt"),
        "{detail}"
    );
    assert_eq!(
        stderr.matches("guardrail feature_fallback").count(),
        1,
        "{stderr}"
    );
    // The model answered every request after the fallback.
    let responses = of_type(&events, "llm_response");
    assert!(!responses.is_empty());
    assert_eq!(responses.len(), of_type(&events, "llm_request").len());
    assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty());
}
