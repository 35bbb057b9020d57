//! The queue's speed: tasks per second through claim → no-op run → complete with 1, 8 and 64
//! workers on SQLite and PostgreSQL, side by side with a bare `SKIP LOCKED` claim-and-update
//! loop on the same tables (the engine's own limit); and dispatch latency (task added → claimed)
//! with LISTEN/NOTIFY and with polling.
//! `cargo bench -p reagent-hub --bench queue [-- throughput|latency]` (starts its own
//! PostgreSQL 15 cluster).
//!
//! Every worker is in this process but has a store (a connection pool) of its own, as separate
//! worker processes would. Throughput: `TASKS` tasks are queued first, then the workers start
//! and the clock runs until the last is done. Latency: one idle worker; a task is added, the
//! time from `add` returning to the worker's runner starting is taken, then the next task is
//! added after a pseudo-random pause (within the polling interval, so additions fall at every
//! point of the worker's polling cycle).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_hub::queue::{Lease, NewTask, Queue, TaskState};
use reagent_hub::worker::{run_worker, worker_info, Attempt, TaskRunner, WorkerSettings};
use reagent_protocol::CancellationToken;
use reagent_store::{Location, Store};
use reagent_testkit::PostgresCluster;
use sqlx::Row;

const TASKS: usize = 2_000;
const WORKER_COUNTS: [usize; 3] = [1, 8, 64];

/// Completes at once; notes when each task started, and says when `expected` tasks did.
#[derive(Default)]
struct NoOp {
    started: Mutex<Vec<(String, Instant)>>,
    expected: usize,
    all_started: tokio::sync::Notify,
}

#[async_trait::async_trait]
impl TaskRunner for NoOp {
    async fn run(&self, lease: &Lease, _queue: &Queue, _cancel: CancellationToken) -> Attempt {
        let mut started = self.started.lock().unwrap();
        started.push((lease.task.id.clone(), Instant::now()));
        if started.len() == self.expected {
            self.all_started.notify_one();
        }
        Attempt::Completed(serde_json::Value::Null)
    }
}

enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres(Arc<PostgresCluster>),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite(_) => "SQLite",
            Backend::Postgres(_) => "PostgreSQL",
        }
    }

    /// A fresh empty store location.
    fn fresh(&self, n: usize) -> Location {
        match self {
            Backend::Sqlite(dir) => Location::Sqlite(dir.path().join(format!("bench-{n}.db"))),
            Backend::Postgres(pg) => Location::Postgres(pg.new_database().unwrap()),
        }
    }
}

async fn fill(queue: &Queue, n: usize) {
    for i in 0..n {
        queue.add(NewTask::new(format!("task {i}"))).await.unwrap();
    }
}

async fn stores(location: &Location, n: usize) -> Vec<Store> {
    let mut stores = Vec::new();
    for _ in 0..n {
        stores.push(Store::open(location).await.unwrap());
    }
    stores
}

/// Tasks/s through the worker loop with `workers` workers.
async fn through_workers(location: &Location, workers: usize) -> f64 {
    let main = Store::open(location).await.unwrap();
    let queue = Queue::new(&main);
    fill(&queue, TASKS).await;
    let stores = stores(location, workers).await;
    let shutdown = CancellationToken::new();
    let runner = Arc::new(NoOp {
        expected: TASKS,
        ..NoOp::default()
    });
    let start = Instant::now();
    let mut handles = Vec::new();
    for store in stores {
        let settings = WorkerSettings {
            poll: Duration::from_millis(50),
            ..WorkerSettings::default()
        };
        let (shutdown, runner) = (shutdown.clone(), runner.clone());
        handles.push(tokio::spawn(async move {
            let queue = Queue::new(&store);
            let info = worker_info(&settings);
            run_worker(&queue, &info, &settings, runner, shutdown).await
        }));
    }
    // Not polling the database meanwhile (that would slow the workers): the runner says when
    // the last task started; its completion follows within a few statements.
    runner.all_started.notified().await;
    while queue.counts().await.unwrap().done as usize != TASKS {
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    let elapsed = start.elapsed();
    shutdown.cancel();
    for h in handles {
        h.await.unwrap().unwrap();
    }
    TASKS as f64 / elapsed.as_secs_f64()
}

/// Tasks/s through a bare claim-and-update loop: claim one queued task (PostgreSQL: `FOR
/// UPDATE SKIP LOCKED`; SQLite: `BEGIN IMMEDIATE`), then mark it done. No lease token, no
/// history, no matching.
async fn bare_loop(location: &Location, workers: usize, postgres: bool) -> f64 {
    let main = Store::open(location).await.unwrap();
    fill(&Queue::new(&main), TASKS).await;
    let stores = stores(location, workers).await;
    let start = Instant::now();
    let mut handles = Vec::new();
    for store in stores {
        handles.push(tokio::spawn(async move {
            let pool = store.pool();
            let claim = format!(
                "UPDATE tasks SET state = 'running', attempt = attempt + 1 WHERE id = \
                 (SELECT id FROM tasks WHERE state = 'queued' ORDER BY priority DESC, created_ms \
                 LIMIT 1 {}) RETURNING id",
                if postgres {
                    "FOR UPDATE SKIP LOCKED"
                } else {
                    ""
                }
            );
            loop {
                let mut tx = if postgres {
                    pool.begin().await.unwrap()
                } else {
                    pool.begin_with("BEGIN IMMEDIATE").await.unwrap()
                };
                let row = sqlx::query(&claim).fetch_optional(&mut *tx).await.unwrap();
                tx.commit().await.unwrap();
                let Some(row) = row else { break };
                let id: String = row.try_get(0).unwrap();
                sqlx::query("UPDATE tasks SET state = 'done' WHERE id = $1")
                    .bind(&id)
                    .execute(pool)
                    .await
                    .unwrap();
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    TASKS as f64 / start.elapsed().as_secs_f64()
}

/// Dispatch latency percentiles (p50, p99) in ms over `samples` tasks.
async fn dispatch_latency(
    location: &Location,
    settings: WorkerSettings,
    samples: usize,
) -> (f64, f64) {
    let (listen, poll) = (settings.listen && !location.is_sqlite(), settings.poll);
    let store = Store::open(location).await.unwrap();
    let queue = Queue::new(&store);
    let runner = Arc::new(NoOp::default());
    let shutdown = CancellationToken::new();
    let worker = {
        let worker_store = Store::open(location).await.unwrap();
        let (runner, shutdown) = (runner.clone(), shutdown.clone());
        tokio::spawn(async move {
            let queue = Queue::new(&worker_store);
            let info = worker_info(&settings);
            run_worker(&queue, &info, &settings, runner, shutdown).await
        })
    };
    // Let the worker start (and its listener connect).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut latencies = Vec::new();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    // Polling: a pause anywhere within the polling interval, so additions fall at every point
    // of the worker's cycle. Notifications: a short pause.
    let pause_ms = if listen {
        150
    } else {
        u64::try_from(poll.as_millis()).unwrap_or(1000).max(1)
    };
    for i in 0..samples {
        let id = queue
            .add(NewTask::new(format!("latency {i}")))
            .await
            .unwrap();
        let added = Instant::now();
        let started = loop {
            let found = runner
                .started
                .lock()
                .unwrap()
                .iter()
                .find(|(t, _)| *t == id)
                .map(|(_, at)| *at);
            if let Some(at) = found {
                break at;
            }
            tokio::time::sleep(Duration::from_micros(200)).await;
        };
        latencies.push(started.saturating_duration_since(added).as_secs_f64() * 1000.0);
        while queue.get(&id).await.unwrap().state != TaskState::Done {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        tokio::time::sleep(Duration::from_millis(seed % pause_ms)).await;
    }
    shutdown.cancel();
    worker.await.unwrap().unwrap();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let pg = Arc::new(PostgresCluster::start().expect("PostgreSQL 15 for the benchmark"));
    let backends = [
        Backend::Sqlite(tempfile::tempdir().unwrap()),
        Backend::Postgres(pg),
    ];
    // `-- throughput` or `-- latency` runs one part only.
    let args: Vec<String> = std::env::args().collect();
    let parts = ["throughput", "latency"];
    let chosen = |part: &str| {
        !args.iter().any(|a| parts.contains(&a.as_str())) || args.iter().any(|a| a == part)
    };
    let mut n = 0;
    if chosen("throughput") {
        throughput(&backends, &mut n).await;
    }
    if chosen("latency") {
        latency(&backends, &mut n).await;
    }
}

async fn throughput(backends: &[Backend], n: &mut usize) {
    println!("## Throughput: {TASKS} tasks, claim → no-op run → complete\n");
    println!(
        "| backend | workers | reagent worker loop (tasks/s) | bare claim-and-update loop (tasks/s) |"
    );
    println!("|---|---:|---:|---:|");
    for backend in backends {
        for workers in WORKER_COUNTS {
            *n += 1;
            let queue = through_workers(&backend.fresh(*n), workers).await;
            *n += 1;
            let postgres = matches!(backend, Backend::Postgres(_));
            let bare = bare_loop(&backend.fresh(*n), workers, postgres).await;
            println!(
                "| {} | {workers} | {queue:.0} | {bare:.0} |",
                backend.name()
            );
        }
    }
}

async fn latency(backends: &[Backend], n: &mut usize) {
    println!("\n## Dispatch latency: task added → claimed by an idle worker\n");
    println!("| backend | wake-up | samples | p50 (ms) | p99 (ms) |");
    println!("|---|---|---:|---:|---:|");
    let second = Duration::from_secs(1);
    let modes = [
        ("LISTEN/NOTIFY (polling 1 s as fallback)", true, second, 200),
        ("polling every 100 ms", false, second / 10, 200),
        ("polling every 1 s (the default)", false, second, 60),
    ];
    for backend in backends {
        for (name, listen, poll, samples) in modes {
            if listen && matches!(backend, Backend::Sqlite(_)) {
                continue;
            }
            *n += 1;
            let settings = WorkerSettings {
                poll,
                listen,
                ..WorkerSettings::default()
            };
            let (p50, p99) = dispatch_latency(&backend.fresh(*n), settings, samples).await;
            println!(
                "| {} | {name} | {samples} | {p50:.1} | {p99:.1} |",
                backend.name()
            );
        }
    }
}
