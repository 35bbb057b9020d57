//! Benchmarks of `reagent serve` (a table on stdout; results in BENCHMARKS.md):
//!
//! - event fan-out latency, model reply written → `llm_response` received by SSE clients, at
//!   p50/p99 with 1 and 100 clients on one run (an upper bound of emit → client: it also
//!   counts reading and parsing the reply);
//! - `GET /v1/runs` requests per second on a store of 10,000 runs;
//! - the process's RSS with 50 live runs, each followed by one SSE client.
//!
//! `cargo bench -p reagent-server --bench serve` (`REAGENT_BENCH_QUICK=1` for a short run).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reagent_protocol::{Event, EventKind, Outcome};
use reagent_server::{Server, ServerConfig};
use reagent_store::{Location, Store};
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

struct Bench {
    base: String,
    token: String,
    workspace: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// A server over `dir` that lets runs use the model server at `model_url`.
async fn start(dir: tempfile::TempDir, model_url: Option<&str>) -> Bench {
    let root = dir.path().join("root");
    let workspace = root.join("project");
    std::fs::create_dir_all(&workspace).unwrap();
    let mut config = ServerConfig::new(
        "127.0.0.1:0".parse().unwrap(),
        Location::Sqlite(dir.path().join("reagent.db")),
    );
    config.workspace_roots = vec![root];
    config.token_file = Some(dir.path().join("token"));
    config.defaults.agent.stream = false;
    config.defaults.agent.max_iterations = 10_000;
    config.base_urls.extend(model_url.map(str::to_owned));
    config.max_concurrent_runs = 1_000;
    let server = Server::bind(config).await.unwrap();
    let base = format!("http://{}", server.local_addr());
    let token = server.token().reveal().to_owned();
    tokio::spawn(server.serve(std::future::pending()));
    Bench {
        base,
        token,
        workspace: workspace.display().to_string(),
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .build()
            .unwrap(),
        _dir: dir,
    }
}

impl Bench {
    async fn start_run(&self, model_url: &str) -> String {
        let res = self
            .http
            .post(format!("{}/v1/runs", self.base))
            .bearer_auth(&self.token)
            .json(&json!({"task": "bench", "model": "m", "provider": "ollama",
                "base_url": model_url, "workspace": self.workspace, "approval": "deny"}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        res.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    fn events(&self, id: &str) -> reqwest::RequestBuilder {
        self.http
            .get(format!("{}/v1/runs/{id}/events", self.base))
            .bearer_auth(&self.token)
    }
}

/// A minimal Ollama (`/api/show`, non-streamed `/api/chat`) that notes when each chat reply
/// was written: `steps` tool calls, then an answer.
struct TimedModel {
    url: String,
    written: Arc<Mutex<Vec<Instant>>>,
    /// The first chat reply waits for this (every client connected).
    gate: Arc<tokio::sync::Notify>,
}

async fn timed_model(steps: usize, pause: Duration) -> TimedModel {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let written = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(tokio::sync::Notify::new());
    let (log, opened) = (written.clone(), gate.clone());
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let (log, opened) = (log.clone(), opened.clone());
            tokio::spawn(async move {
                while let Some((path, _body)) = read_request(&mut sock).await {
                    let reply = if path == "/api/show" {
                        json!({"details": {"family": "llama"}, "model_info":
                            {"general.architecture": "llama", "llama.context_length": 32768},
                            "capabilities": ["completion", "tools"]})
                    } else {
                        let n = log.lock().unwrap().len();
                        if n == 0 {
                            opened.notified().await;
                        }
                        tokio::time::sleep(pause).await;
                        let message = if n < steps {
                            json!({"role": "assistant", "content": "", "tool_calls": [{"function":
                                {"name": "list_directory", "arguments": {"path": format!("d{n}")}}}]})
                        } else {
                            json!({"role": "assistant", "content": "done"})
                        };
                        json!({"model": "m", "created_at": "2026-01-01T00:00:00Z", "message": message,
                            "done": true, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5})
                    };
                    let body = reply.to_string();
                    let head = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", body.len());
                    if sock
                        .write_all(format!("{head}{body}").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                    if path == "/api/chat" {
                        log.lock().unwrap().push(Instant::now());
                    }
                }
            });
        }
    });
    TimedModel { url, written, gate }
}

/// One HTTP/1.1 request (path and body) from a keep-alive connection.
async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let path = head.split_whitespace().nth(1)?.to_owned();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some((path, buf[head_end..head_end + len].to_vec()))
}

/// When each `llm_response` (by iteration) reached this client.
async fn receipt_times(res: reqwest::Response) -> Vec<(u32, Instant)> {
    let mut out = Vec::new();
    let mut stream = res.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        buf.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let now = Instant::now();
            if !block.contains("event: llm_response") {
                continue;
            }
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            let v: Value = serde_json::from_str(data).unwrap();
            out.push((v["iteration"].as_u64().unwrap() as u32, now));
        }
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn fan_out(clients: usize, steps: usize) -> (Duration, Duration, usize) {
    let model = timed_model(steps, Duration::from_millis(2)).await;
    let bench = start(tempfile::tempdir().unwrap(), Some(&model.url)).await;
    let id = bench.start_run(&model.url).await;
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let res = bench.events(&id).send().await.unwrap();
        tasks.push(tokio::spawn(receipt_times(res)));
    }
    // Every client is connected: the first reply may go.
    model.gate.notify_one();
    let mut samples = Vec::new();
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    let written = model.written.lock().unwrap().clone();
    for times in results {
        for (iteration, at) in times {
            let sent = written[iteration as usize - 1];
            samples.push(at.saturating_duration_since(sent));
        }
    }
    samples.sort();
    (
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples.len(),
    )
}

async fn list_throughput(runs: usize, secs: u64, concurrency: usize) -> (f64, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(dir.path().join("reagent.db")))
        .await
        .unwrap();
    let recorder = store.recorder();
    for i in 0..runs {
        let id = format!("run{i:06}");
        let started = EventKind::RunStarted {
            task: format!("task {i}"),
            model: if i % 2 == 0 { "a" } else { "b" }.into(),
            provider: "ollama".into(),
            tool_mode: "native".into(),
            workspace: "/w".into(),
            num_ctx: 8192,
            tools: vec![],
            session_id: format!("s{i}"),
            system_prompt: String::new(),
            follow_up: false,
        };
        recorder.record(Event::new(&id, 1, started));
        recorder.record(Event::new(
            &id,
            2,
            EventKind::RunFinished {
                outcome: Outcome::Completed,
                iterations: 3,
                tool_calls: 2,
                prompt_tokens: 100,
                completion_tokens: 10,
                wall_ms: 5,
                model_ms: 3,
                files_changed: vec![],
                error: None,
                error_kind: None,
                answer: "ok".into(),
            },
        ));
        if i % 1000 == 999 {
            store.flush().await;
        }
    }
    store.flush().await;
    drop(store);
    let bench = start(dir, None).await;
    let check: Value = bench
        .http
        .get(format!("{}/v1/runs", bench.base))
        .bearer_auth(&bench.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(check["total"], runs);
    let until = Instant::now() + Duration::from_secs(secs);
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (http, url, token) = (
            bench.http.clone(),
            format!("{}/v1/runs?limit=50", bench.base),
            bench.token.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < until {
                let t = Instant::now();
                let res = http.get(&url).bearer_auth(&token).send().await.unwrap();
                assert_eq!(res.status(), 200);
                res.bytes().await.unwrap();
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.unwrap());
    }
    all.sort();
    (all.len() as f64 / secs as f64, percentile(&all, 0.5))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

async fn live_runs_rss(runs: usize) -> (u64, u64) {
    let mut script = ScriptBuilder::new();
    for _ in 0..runs {
        script = script.turn(Turn::text("done").with_delay(Duration::from_secs(5)));
    }
    let model = ScriptedOllama::start(script).await.unwrap();
    let bench = start(tempfile::tempdir().unwrap(), Some(&model.base_url())).await;
    let before = rss_kib();
    let mut clients = Vec::new();
    for _ in 0..runs {
        let id = bench.start_run(&model.base_url()).await;
        let res = bench.events(&id).send().await.unwrap();
        clients.push(tokio::spawn(receipt_times(res)));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib();
    for c in clients {
        c.await.unwrap();
    }
    (before, during)
}

#[tokio::main]
async fn main() {
    let quick = std::env::var_os("REAGENT_BENCH_QUICK").is_some();
    let (steps, secs) = if quick { (20, 2) } else { (200, 10) };
    println!("| measure | clients | result |");
    println!("|---|---|---|");
    for clients in [1, 100] {
        let (p50, p99, n) = fan_out(clients, steps).await;
        println!(
            "| fan-out latency, reply written → llm_response at SSE client | {clients} | p50 {:.3} ms, p99 {:.3} ms ({n} samples) |",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
    let (rps, p50) = list_throughput(10_000, secs, 8).await;
    println!(
        "| GET /v1/runs?limit=50, store of 10,000 runs | 8 | {rps:.0} req/s, p50 {:.2} ms |",
        p50.as_secs_f64() * 1e3
    );
    let (before, during) = live_runs_rss(50).await;
    println!(
        "| process RSS, 50 live runs + 50 SSE clients (server, clients and model in one process) | 50 | {} MiB (idle server {} MiB) |",
        during / 1024,
        before / 1024
    );
}
