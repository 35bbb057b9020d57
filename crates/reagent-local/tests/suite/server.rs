//! Starting and stopping llama-server: the real one, and fake ones for each failure.

use std::time::Duration;

use reagent_local::{LocalError, LocalServer, ServerConfig, ServerFiles};
use serde_json::{json, Value};

use super::{cached_files, process_exists, script};

fn small(files: ServerFiles) -> ServerConfig {
    ServerConfig {
        ctx_size: 2048,
        ..ServerConfig::new(files)
    }
}

#[tokio::test]
async fn the_cached_server_starts_answers_and_dies_with_its_guard() {
    let mut server = LocalServer::start(&small(cached_files())).await.unwrap();
    assert!(server.is_running());
    let port = server.port();
    assert_eq!(server.base_url(), format!("http://127.0.0.1:{port}"));
    assert_eq!(
        server.openai_base_url(),
        format!("http://127.0.0.1:{port}/v1")
    );

    let client = reqwest::Client::new();
    let health: Value = client
        .get(format!("{}/health", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");

    // The alias is the model name the API reports.
    let models: Value = client
        .get(format!("{}/models", server.openai_base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], server.model());

    // Fixed seed, temperature 0: a chat completion is reproducible.
    let ask = || async {
        let reply: Value = client
            .post(format!("{}/chat/completions", server.openai_base_url()))
            .json(&json!({
                "model": server.model(),
                "messages": [{"role": "user", "content": "What is the capital of France?"}],
                "max_tokens": 12,
                "temperature": 0,
            }))
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        reply["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = ask().await;
    assert!(!first.trim().is_empty());
    assert_eq!(first, ask().await);

    let pid = server.pid();
    assert!(process_exists(pid));
    drop(server);
    assert!(
        !process_exists(pid),
        "llama-server {pid} outlived its guard"
    );
    assert!(
        reqwest::get(format!("http://127.0.0.1:{port}/health"))
            .await
            .is_err(),
        "something still answers on the port"
    );
}

#[tokio::test]
async fn two_servers_get_different_ports() {
    let a = LocalServer::start(&small(cached_files())).await.unwrap();
    let b = LocalServer::start(&small(cached_files())).await.unwrap();
    assert_ne!(a.port(), b.port());
    assert_ne!(a.pid(), b.pid());
}

#[tokio::test]
async fn a_broken_model_file_fails_with_the_servers_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("broken.gguf");
    std::fs::write(&model, b"this is not a gguf file").unwrap();
    let files = ServerFiles {
        model,
        ..cached_files()
    };
    let err = LocalServer::start(&small(files)).await.unwrap_err();
    let LocalError::Exited { tail, .. } = &err else {
        panic!("expected Exited, got {err:?}");
    };
    assert!(tail.contains("broken.gguf"), "{tail}");
    let text = err.to_string();
    assert!(
        text.contains("llama-server exited before it was ready"),
        "{text}"
    );
    assert!(
        text.contains("--- llama-server stderr (last lines) ---"),
        "{text}"
    );
}

#[tokio::test]
async fn a_server_that_exits_early_reports_status_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let server = script(dir.path(), "srv", "echo 'error: no GPU here' >&2; exit 3");
    let files = ServerFiles {
        server,
        model: dir.path().join("m.gguf"),
    };
    let err = LocalServer::start(&small(files)).await.unwrap_err();
    match err {
        LocalError::Exited { status, tail } => {
            assert!(status.contains('3'), "{status}");
            assert_eq!(tail, "error: no GPU here");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_never_gets_ready_times_out_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let server = script(
        dir.path(),
        "srv",
        &format!(
            "echo $$ > {}; echo 'loading model' >&2; exec sleep 600",
            pid_file.display()
        ),
    );
    let config = ServerConfig {
        startup_timeout: Duration::from_millis(1500),
        ..small(ServerFiles {
            server,
            model: dir.path().join("m.gguf"),
        })
    };
    let started = std::time::Instant::now();
    let err = LocalServer::start(&config).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    match &err {
        LocalError::StartTimeout { after, tail } => {
            assert_eq!(*after, Duration::from_millis(1500));
            assert_eq!(tail, "loading model");
        }
        other => panic!("expected StartTimeout, got {other:?}"),
    }
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !process_exists(pid),
        "the stuck server {pid} was not killed"
    );
}

#[tokio::test]
async fn a_missing_binary_is_a_spawn_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = ServerFiles {
        server: dir.path().join("no-such-llama-server"),
        model: dir.path().join("m.gguf"),
    };
    let err = LocalServer::start(&small(files)).await.unwrap_err();
    assert!(matches!(err, LocalError::Spawn { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-llama-server"), "{err}");
}

#[tokio::test]
async fn arguments_reach_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let args_file = dir.path().join("args");
    let server = script(
        dir.path(),
        "srv",
        &format!("echo \"$@\" > {}; exit 1", args_file.display()),
    );
    let config = ServerConfig {
        seed: 7,
        threads: Some(2),
        extra_args: vec!["--metrics".into()],
        ..small(ServerFiles {
            server,
            model: dir.path().join("m.gguf"),
        })
    };
    let err = LocalServer::start(&config).await.unwrap_err();
    assert!(matches!(err, LocalError::Exited { .. }), "{err:?}");
    let args = std::fs::read_to_string(&args_file).unwrap();
    let model = dir.path().join("m.gguf");
    let expected_prefix = format!("-m {} --host 127.0.0.1 --port ", model.display());
    assert!(args.starts_with(&expected_prefix), "{args}");
    assert!(
        args.trim_end().ends_with(
            "--jinja --seed 7 -c 2048 --parallel 1 --alias SmolLM2-135M-Instruct --no-webui \
             --cache-reuse 256 --threads 2 --metrics"
        ),
        "{args}"
    );
}
