//! Many concurrent runs in one process through the library API, against the scripted server.
//!
//! Two phases, after one warm-up run:
//! - **idle**: `runs` runs are started with a model whose first reply the server holds; once
//!   every run has sent its request (all are waiting on the model), the process's RSS is read
//!   and set against the RSS before: the difference over `runs` is the memory one idle run
//!   costs (its task, history, pending HTTP request and connection);
//! - **throughput**: `runs` runs of `iterations` tool calls each, started together; iterations
//!   per second of wall time, CPU time per iteration and peak RSS.
//!
//! All runs share one provider (one HTTP connection pool) and one [`Agent`]: reagent agents
//! are meant to run many tasks concurrently.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_core::{ArgumentChecker, EventSink, RunResult, ToolMode};
use reagent_protocol::{CancellationToken, EventKind, Outcome, Provider};
use reagent_tools::{ToolRegistry, ToolsConfig};
use serde_json::{json, Value};
use tokio::task::JoinSet;

use crate::runner::{self, AgentSetup};
use crate::usage::{self, CpuTime};
use crate::workload::{final_answer, Plan, TASK};
use crate::BenchError;

/// What to run.
#[derive(Debug, Clone)]
pub struct ManyConfig {
    /// Scripted server base URL.
    pub base_url: String,
    /// Workspace with at least `iterations` files.
    pub workspace: PathBuf,
    /// Concurrent runs.
    pub runs: usize,
    /// Tool calls per run in the throughput phase.
    pub iterations: u32,
    /// How long the server holds the first reply in the idle phase.
    pub hold: Duration,
    /// Context window (`None`: reagent's default).
    pub num_ctx: Option<u32>,
}

/// Memory of idle runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IdlePhase {
    /// RSS before the runs started, KiB.
    pub baseline_rss_kib: u64,
    /// RSS while every run waited on the model, KiB.
    pub in_flight_rss_kib: u64,
    /// Heap in use (allocated, not freed) before and while the runs waited, bytes (glibc only).
    pub heap_bytes: Option<(u64, u64)>,
    /// Runs that were waiting when the RSS was read.
    pub waiting: usize,
    /// Runs that completed afterwards.
    pub completed: usize,
}

impl IdlePhase {
    /// RSS added per waiting run, in bytes.
    pub fn bytes_per_run(&self) -> f64 {
        let added = self.in_flight_rss_kib.saturating_sub(self.baseline_rss_kib) as f64 * 1024.0;
        added / self.waiting.max(1) as f64
    }

    /// Heap in use added per waiting run, in bytes: the live data of an idle run, without
    /// the allocator's overhead.
    pub fn heap_bytes_per_run(&self) -> Option<f64> {
        self.heap_bytes.map(|(before, during)| {
            during.saturating_sub(before) as f64 / self.waiting.max(1) as f64
        })
    }
}

/// Throughput of concurrent runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThroughputPhase {
    /// Runs started.
    pub runs: usize,
    /// Runs that read every file and answered.
    pub completed: usize,
    /// Model calls made over all runs.
    pub iterations: u64,
    /// Wall time from the first start to the last finish.
    pub wall: Duration,
    /// CPU time of this process over the phase.
    pub cpu: CpuTime,
    /// Peak RSS of the process so far, KiB.
    pub peak_rss_kib: u64,
}

impl ThroughputPhase {
    /// Model calls per second of wall time.
    pub fn iterations_per_sec(&self) -> f64 {
        self.iterations as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// CPU time per model call, microseconds.
    pub fn cpu_us_per_iteration(&self) -> f64 {
        self.cpu.total().as_secs_f64() * 1e6 / self.iterations.max(1) as f64
    }
}

/// Both phases.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ManyReport {
    /// The idle phase.
    pub idle: IdlePhase,
    /// The throughput phase.
    pub throughput: ThroughputPhase,
}

impl ManyReport {
    /// Whether every run of both phases completed.
    pub fn all_completed(&self) -> bool {
        self.idle.completed == self.idle.waiting
            && self.throughput.completed == self.throughput.runs
    }

    /// The report as JSON (what `reagent-bench many` prints).
    pub fn to_json(&self) -> Value {
        let i = &self.idle;
        let t = &self.throughput;
        json!({
            "idle": {"runs": i.waiting, "completed": i.completed,
                     "baseline_rss_kib": i.baseline_rss_kib, "in_flight_rss_kib": i.in_flight_rss_kib,
                     "bytes_per_run": i.bytes_per_run(),
                     "heap_bytes_per_run": i.heap_bytes_per_run(),
                     "tool_specs_heap_bytes": per_run_tool_heap().map(|h| h.0),
                     "argument_checker_heap_bytes": per_run_tool_heap().map(|h| h.1)},
            "throughput": {"runs": t.runs, "completed": t.completed, "iterations": t.iterations,
                           "wall_ms": t.wall.as_secs_f64() * 1e3,
                           "cpu_ms": t.cpu.total().as_secs_f64() * 1e3,
                           "iterations_per_sec": t.iterations_per_sec(),
                           "cpu_us_per_iteration": t.cpu_us_per_iteration(),
                           "peak_rss_kib": t.peak_rss_kib},
        })
    }
}

fn setup(config: &ManyConfig, plan: Plan) -> AgentSetup {
    AgentSetup {
        model: plan.model_name(),
        iterations: plan.iterations,
        num_ctx: config.num_ctx,
        tool_mode: ToolMode::Native,
    }
}

/// Start `runs` runs of `agent`; `started` counts the first model requests sent. Each run
/// yields its result and the number of its tool calls that failed.
fn spawn_runs(
    agent: &Arc<runner::BenchAgent>,
    runs: usize,
    started: &Arc<AtomicUsize>,
) -> JoinSet<(RunResult, usize)> {
    let mut set = JoinSet::new();
    for _ in 0..runs {
        let agent = agent.clone();
        let started = started.clone();
        set.spawn(async move {
            let failed = Arc::new(AtomicUsize::new(0));
            let failed_in_sink = failed.clone();
            let events = EventSink::new(
                &reagent_core::new_run_id(),
                Arc::new(move |e| match e.kind {
                    EventKind::LlmRequest { iteration: 1, .. } => {
                        started.fetch_add(1, Ordering::Relaxed);
                    }
                    EventKind::ToolCall { ok: false, .. } => {
                        failed_in_sink.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {}
                }),
            );
            let result = agent.run(TASK, &events, &CancellationToken::new()).await;
            (result, failed.load(Ordering::Relaxed))
        });
    }
    set
}

/// Wait for every run; count those that read `iterations` files and gave the scripted answer.
async fn join_all(mut set: JoinSet<(RunResult, usize)>, iterations: u32) -> (usize, u64) {
    let mut completed = 0;
    let mut calls = 0u64;
    let answer = final_answer(iterations);
    while let Some(joined) = set.join_next().await {
        if let Ok((r, failed)) = joined {
            calls += u64::from(r.iterations);
            if r.outcome == Outcome::Completed
                && r.tool_calls == iterations
                && failed == 0
                && r.answer.contains(&answer)
            {
                completed += 1;
            }
        }
    }
    (completed, calls)
}

/// Heap held by the per-run parts reagent builds from the tool catalogue before its first
/// request: `(the tool specs, the ArgumentChecker with its compiled JSON-Schema validators)`,
/// in bytes (glibc only). Explains most of an idle run's memory.
pub fn per_run_tool_heap() -> Option<(u64, u64)> {
    let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
    let before = usage::heap_in_use_bytes()?;
    let specs = tools.specs();
    let with_specs = usage::heap_in_use_bytes()?;
    let checker = ArgumentChecker::new(&specs);
    let with_checker = usage::heap_in_use_bytes()?;
    std::hint::black_box((&specs, &checker));
    Some((
        with_specs.saturating_sub(before),
        with_checker.saturating_sub(with_specs),
    ))
}

/// Run both phases.
pub async fn run_many(config: &ManyConfig) -> Result<ManyReport, BenchError> {
    let provider: Arc<dyn Provider> = runner::ollama(&config.base_url)?;
    let work = Plan::simple(config.iterations);
    let work_agent = Arc::new(runner::agent(
        provider.clone(),
        &config.workspace,
        &setup(config, work),
    )?);
    // Warm up: lazily built state, allocator arenas, the first pooled connection.
    let (warm, _) = join_all(
        spawn_runs(&work_agent, 1, &Arc::new(AtomicUsize::new(0))),
        config.iterations,
    )
    .await;
    if warm != 1 {
        return Err(BenchError::Incomplete(
            "the warm-up run did not complete".into(),
        ));
    }

    let held = Plan {
        iterations: 1,
        hold: config.hold,
        hold_at: 0,
    };
    let idle_agent = Arc::new(runner::agent(
        provider.clone(),
        &config.workspace,
        &setup(config, held),
    )?);
    let baseline_rss_kib = usage::current_rss_kib();
    let baseline_heap = usage::heap_in_use_bytes();
    let started = Arc::new(AtomicUsize::new(0));
    let set = spawn_runs(&idle_agent, config.runs, &started);
    let deadline = Instant::now() + config.hold;
    while started.load(Ordering::Relaxed) < config.runs && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Give the last requests time to leave (the event is emitted just before sending).
    tokio::time::sleep(config.hold / 10).await;
    let waiting = started.load(Ordering::Relaxed);
    let in_flight_rss_kib = usage::current_rss_kib();
    let in_flight_heap = usage::heap_in_use_bytes();
    let (idle_completed, _) = join_all(set, 1).await;
    if waiting < config.runs {
        return Err(BenchError::Incomplete(format!(
            "only {waiting} of {} runs were waiting on the model within the {:?} hold; raise --hold-ms",
            config.runs, config.hold
        )));
    }

    let cpu_before = usage::self_cpu();
    let t0 = Instant::now();
    let set = spawn_runs(&work_agent, config.runs, &Arc::new(AtomicUsize::new(0)));
    let (completed, iterations) = join_all(set, config.iterations).await;
    let wall = t0.elapsed();
    let cpu = usage::self_cpu().since(&cpu_before);
    Ok(ManyReport {
        idle: IdlePhase {
            baseline_rss_kib,
            in_flight_rss_kib,
            heap_bytes: baseline_heap.zip(in_flight_heap),
            waiting,
            completed: idle_completed,
        },
        throughput: ThroughputPhase {
            runs: config.runs,
            completed,
            iterations,
            wall,
            cpu,
            peak_rss_kib: usage::peak_rss_kib(),
        },
    })
}
