//! Reagent runs (single and concurrent) against the in-process scripted server, and the
//! server's answers to the HTTP calls the Python peers make.

use std::time::Duration;

use reagent_bench::many::{run_many, ManyConfig};
use reagent_bench::server::ScriptServer;
use reagent_bench::single::{run_single, SingleConfig};
use reagent_bench::workload::{prepare_workspace, FILE_BYTES};
use serde_json::{json, Value};

async fn server() -> ScriptServer {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    ScriptServer::start(listener).unwrap()
}

fn workspace(files: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    prepare_workspace(dir.path(), files, FILE_BYTES).unwrap();
    dir
}

#[tokio::test]
async fn a_run_reads_every_file_then_answers() {
    let server = server().await;
    let ws = workspace(6);
    let config = SingleConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        iterations: 6,
        num_ctx: Some(1 << 20),
        store: None,
    };
    let report = run_single(&config).await.unwrap();
    assert!(report.is_complete(6), "{:?}", report.to_json());
    assert_eq!(report.compactions, 0);
    assert_eq!(report.requests.len(), 7);
    // Every request carries the whole history: the estimate grows by about a file each time.
    let grow: Vec<i64> = report
        .requests
        .windows(2)
        .map(|w| w[1].estimated_tokens as i64 - w[0].estimated_tokens as i64)
        .collect();
    assert!(
        grow.iter().all(|&g| g > 500),
        "{grow:?} {:?}",
        report.requests
    );
    // The report counts the measured run only (the one-file warm-up made two requests).
    let (chats, bytes) = report.sent.unwrap();
    assert_eq!(chats, 7);
    assert!(bytes > 21 * FILE_BYTES as u64, "{bytes}");
    assert_eq!(server.stats().read().0, 9);
    assert!(report.peak_rss_kib > 0);
    server.shutdown().await;
}

#[tokio::test]
async fn with_a_store_both_runs_are_recorded_and_their_sessions_saved() {
    let server = server().await;
    let ws = workspace(5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.db");
    let config = SingleConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        iterations: 5,
        num_ctx: Some(1 << 20),
        store: Some(path.clone()),
    };
    let report = run_single(&config).await.unwrap();
    assert!(report.is_complete(5), "{:?}", report.to_json());
    let store = reagent_store::Store::open(&reagent_store::Location::Sqlite(path))
        .await
        .unwrap();
    let runs = store
        .list_runs(&reagent_store::RunFilter::default())
        .await
        .unwrap();
    let mut tool_calls: Vec<i64> = runs.iter().map(|r| r.tool_calls).collect();
    tool_calls.sort_unstable();
    assert_eq!(tool_calls, [1, 5], "the warm-up and the measured run");
    for run in &runs {
        assert_eq!(run.outcome, "completed");
        let events = store.events_after(&run.id, 0, 0).await.unwrap();
        let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
        let session = run.session_id.as_deref().unwrap();
        let saved = store.load_session(session).await.unwrap().unwrap();
        assert!(
            saved.snapshot.is_some(),
            "run {} has no saved session",
            run.id
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_small_context_compacts_and_still_completes() {
    let server = server().await;
    let ws = workspace(12);
    let config = SingleConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        iterations: 12,
        num_ctx: Some(8192),
        store: None,
    };
    let report = run_single(&config).await.unwrap();
    assert!(report.is_complete(12), "{:?}", report.to_json());
    assert!(report.compactions > 0, "{:?}", report.to_json());
    server.shutdown().await;
}

#[tokio::test]
async fn missing_files_make_an_incomplete_run() {
    let server = server().await;
    let ws = workspace(2);
    let config = SingleConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        iterations: 4,
        num_ctx: Some(1 << 20),
        store: None,
    };
    let report = run_single(&config).await.unwrap();
    assert!(!report.is_complete(4), "{:?}", report.to_json());
    assert_eq!(report.failed_tool_calls, 2, "{:?}", report.to_json());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_all_complete() {
    let server = server().await;
    let ws = workspace(3);
    let config = ManyConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        runs: 20,
        iterations: 3,
        hold: Duration::from_millis(1500),
        num_ctx: None,
    };
    let report = run_many(&config).await.unwrap();
    assert!(report.all_completed(), "{:?}", report.to_json());
    assert_eq!(report.idle.waiting, 20);
    assert_eq!(report.throughput.iterations, 20 * 4);
    assert!(report.idle.in_flight_rss_kib > 0);
    server.shutdown().await;
}

#[tokio::test]
async fn the_server_speaks_the_ollama_calls_peers_make() {
    let server = server().await;
    let url = server.base_url();
    let http = reqwest::Client::new();
    let tags: Value = http
        .get(format!("{url}/api/tags"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tags["models"][0]["name"], "bench-10");
    let show = http
        .post(format!("{url}/api/show"))
        .json(&json!({"model": "bench-3"}))
        .send()
        .await
        .unwrap();
    assert_eq!(show.status(), 200);
    let show: Value = show.json().await.unwrap();
    assert!(show["capabilities"]
        .as_array()
        .unwrap()
        .contains(&json!("tools")));
    let missing = http
        .post(format!("{url}/api/show"))
        .json(&json!({"model": "llama3"}))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // The official client's shape: no `stream` means NDJSON chunks.
    let text = http
        .post(format!("{url}/api/chat"))
        .json(
            &json!({"model": "bench-1", "messages": [{"role": "user", "content": "go"}],
                      "tools": [{"type": "function", "function": {"name": "read_file"}}]}),
        )
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let chunks: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        chunks[0]["message"]["tool_calls"][0]["function"],
        json!({"name": "read_file", "arguments": {"path": "f0000.txt"}})
    );
    assert_eq!(chunks[1]["done"], true);
    let stats: Value = http
        .get(format!("{url}/bench/stats"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(stats["chat_requests"], 1);
    assert!(stats["chat_bytes"].as_u64().unwrap() > 50);
    server.shutdown().await;
}

#[tokio::test]
async fn a_long_session_resumes_from_its_snapshot_and_answers_a_follow_up() {
    use reagent_bench::resume::{run_resume, ResumeConfig};
    let server = server().await;
    let ws = workspace(30);
    let config = ResumeConfig {
        base_url: server.base_url(),
        workspace: ws.path().to_path_buf(),
        steps: 30,
        repeats: 3,
        num_ctx: None,
    };
    let report = run_resume(&config).await.unwrap();
    // The session holds the task and 30 rounds (some folded into a digest by compaction); its
    // events hold every 4 KB result, and the snapshot leaves the messages to them.
    assert!(report.messages > 10, "{}", report.messages);
    assert!(report.event_bytes > 30 * 4096, "{}", report.event_bytes);
    assert!(
        report.snapshot_bytes * 4 < report.event_bytes,
        "{}",
        report.snapshot_bytes
    );
    assert_eq!(report.resume.len(), 3);
    for i in 0..3 {
        assert!(
            report.resume[i] <= report.to_request[i],
            "{:?}",
            report.to_json()
        );
        assert!(
            report.to_request[i] <= report.to_reply[i],
            "{:?}",
            report.to_json()
        );
    }
    // Each resume made exactly one chat request (building the session made 31 more, and the
    // one-file warm-up none: run_resume has none).
    assert_eq!(server.stats().read().0, 31 + 3);
    server.shutdown().await;
}
