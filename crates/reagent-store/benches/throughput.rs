//! Events per second through the recorder into SQLite and PostgreSQL, with 1 and 100 concurrent
//! runs. `cargo bench -p reagent-store --bench throughput` (starts its own PostgreSQL cluster).
//!
//! Each measurement writes 10,000 events (under the channel's capacity, so none is dropped and
//! the figure is the writer's own speed): one run of 10,000 events, or 100 runs of 100 events
//! each, interleaved. Timed from the first event recorded until `flush` returns. Each
//! measurement runs 3 times on a fresh store; the median is printed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::time::{Duration, Instant};

use reagent_protocol::{Event, EventKind, Outcome};
use reagent_store::{Location, Store};
use reagent_testkit::PostgresCluster;

const EVENTS: usize = 10_000;

fn kind(i: usize) -> EventKind {
    let iteration = (i / 4) as u32 + 1;
    match i % 4 {
        0 => EventKind::LlmRequest {
            iteration,
            messages: i,
            estimated_tokens: 1_000,
        },
        1 => EventKind::LlmResponse {
            iteration,
            latency_ms: 300,
            prompt_tokens: 1_000,
            completion_tokens: 50,
            cached_prompt_tokens: Some(900),
            parse_layer: Some("native".into()),
            finish_reason: "tool_calls".into(),
            tool_calls: 1,
            endpoint: "http://127.0.0.1:11434".into(),
        },
        2 => EventKind::ToolCall {
            iteration,
            call_id: format!("call_{i}"),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": format!("src/file_{i}.rs")}),
            ok: true,
            duration_ms: 1,
            summary: "120 lines".into(),
        },
        _ => EventKind::ToolResult {
            iteration,
            call_id: format!("call_{i}"),
            name: "read_file".into(),
            ok: true,
            output: "x".repeat(1_000),
            truncated: false,
        },
    }
}

fn run_events(run: &str, n: usize) -> Vec<Event> {
    let mut kinds = vec![EventKind::RunStarted {
        task: "benchmark".into(),
        model: "m".into(),
        provider: "ollama".into(),
        tool_mode: "native".into(),
        workspace: "/ws".into(),
        num_ctx: 8192,
        tools: vec!["read_file".into()],
        session_id: String::new(),
        system_prompt: String::new(),
        follow_up: false,
    }];
    kinds.extend((0..n - 2).map(kind));
    kinds.push(EventKind::RunFinished {
        outcome: Outcome::Completed,
        iterations: 1,
        tool_calls: 1,
        prompt_tokens: 1,
        completion_tokens: 1,
        wall_ms: 1,
        model_ms: 1,
        files_changed: vec![],
        error: None,
        error_kind: None,
        answer: "done".into(),
    });
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| Event::new(run, i as u64 + 1, k))
        .collect()
}

async fn measure(location: &Location, runs: usize) -> Duration {
    let store = Store::open(location).await.unwrap();
    let per_run = EVENTS / runs;
    let all: Vec<Vec<Event>> = (0..runs)
        .map(|r| run_events(&format!("bench-{r}-{}", rand_suffix()), per_run))
        .collect();
    // Interleave the runs the way concurrent runs deliver their events.
    let mut ordered = Vec::with_capacity(EVENTS);
    for i in 0..per_run {
        for run in &all {
            ordered.push(run[i].clone());
        }
    }
    let rec = store.recorder();
    let start = Instant::now();
    for e in ordered {
        rec.record(e);
    }
    store.flush().await;
    let took = start.elapsed();
    assert_eq!(store.dropped_events(), 0);
    assert_eq!(store.error(), None);
    took
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let pg = PostgresCluster::start().expect("PostgreSQL for the benchmark");
    let dir = tempfile::tempdir().unwrap();
    println!("| backend | concurrent runs | events | median time | events/s |");
    println!("|---|---:|---:|---:|---:|");
    for backend in ["SQLite", "PostgreSQL"] {
        for runs in [1usize, 100] {
            let mut times = Vec::new();
            for rep in 0..3 {
                let location = match backend {
                    "SQLite" => Location::Sqlite(dir.path().join(format!("b-{runs}-{rep}.db"))),
                    _ => Location::Postgres(pg.new_database().unwrap()),
                };
                times.push(measure(&location, runs).await);
            }
            times.sort();
            let median = times[1];
            println!(
                "| {backend} | {runs} | {EVENTS} | {:.1} ms | {:.0} |",
                median.as_secs_f64() * 1e3,
                EVENTS as f64 / median.as_secs_f64()
            );
        }
    }
}
