//! One reagent run against the scripted server, measured from inside: CPU time at every model
//! request (so the cost of each iteration can be set against the history it sends), peak RSS,
//! the chat requests and bytes the server received, and whether the run did exactly what the
//! plan said. A one-file warm-up run comes first, as in the Python peers, so the measured run
//! is the steady state (the whole process, start-up included, is what the driver's `wait4`
//! measures). With a store, both runs are recorded into it as `reagent run` records them, and
//! the measured run's CPU includes waiting for its last events to be written and saving its
//! session.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_core::{EventSink, Session, ToolMode};
use reagent_protocol::{CancellationToken, EventKind, Outcome};
use reagent_store::{Location, Store};
use serde_json::{json, Value};

use crate::runner::{self, AgentSetup};
use crate::usage::{self, CpuTime};
use crate::workload::{final_answer, Plan, TASK};
use crate::BenchError;

/// What to run.
#[derive(Debug, Clone)]
pub struct SingleConfig {
    /// Scripted server base URL.
    pub base_url: String,
    /// Workspace holding the files of [`crate::workload::prepare_workspace`].
    pub workspace: PathBuf,
    /// Files to read.
    pub iterations: u32,
    /// Context window (`None`: reagent's default, so long runs compact).
    pub num_ctx: Option<u32>,
    /// Record the runs into this SQLite store (created when missing), as `reagent run` does.
    pub store: Option<PathBuf>,
}

/// One model request of the run, as seen at the moment it was about to be sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestMark {
    /// 1-based iteration.
    pub iteration: u32,
    /// Process CPU time used so far.
    pub cpu: CpuTime,
    /// reagent's estimate of the prompt (tokens, about 4 bytes each here).
    pub estimated_tokens: u64,
}

/// The measurements of one run.
#[derive(Debug, Clone)]
pub struct SingleReport {
    /// How the run ended.
    pub outcome: Outcome,
    /// Model calls made.
    pub iterations: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Of which failed (e.g. a missing file).
    pub failed_tool_calls: u32,
    /// The final answer.
    pub answer: String,
    /// Context compactions.
    pub compactions: u32,
    /// Wall time of `Agent::run`.
    pub wall: Duration,
    /// CPU time of the whole process, from start to the end of the run.
    pub cpu: CpuTime,
    /// CPU time spent inside `Agent::run`.
    pub run_cpu: CpuTime,
    /// Peak RSS of the process, KiB.
    pub peak_rss_kib: u64,
    /// Every model request.
    pub requests: Vec<RequestMark>,
    /// Chat requests and their body bytes the server received during the run (`None` when
    /// the server does not count them).
    pub sent: Option<(u64, u64)>,
}

impl SingleReport {
    /// Whether the run read every file and then gave the scripted answer.
    pub fn is_complete(&self, iterations: u32) -> bool {
        self.outcome == Outcome::Completed
            && self.tool_calls == iterations
            && self.failed_tool_calls == 0
            && self.iterations == iterations + 1
            && self.answer.contains(&final_answer(iterations))
    }

    /// The report as one JSON object (what `reagent-bench run-once` prints).
    pub fn to_json(&self) -> Value {
        let requests: Vec<Value> = self
            .requests
            .iter()
            .map(|m| {
                json!({"iteration": m.iteration, "cpu_us": m.cpu.total().as_micros() as u64,
                       "estimated_tokens": m.estimated_tokens})
            })
            .collect();
        json!({
            "agent": "reagent",
            "outcome": self.outcome.as_str(),
            "iterations": self.iterations,
            "tool_calls": self.tool_calls,
            "failed_tool_calls": self.failed_tool_calls,
            "answer": self.answer,
            "compactions": self.compactions,
            "wall_ms": self.wall.as_secs_f64() * 1e3,
            "cpu_ms": self.cpu.total().as_secs_f64() * 1e3,
            "run_cpu_ms": self.run_cpu.total().as_secs_f64() * 1e3,
            "peak_rss_kib": self.peak_rss_kib,
            "chat_requests": self.sent.map(|s| s.0),
            "chat_bytes": self.sent.map(|s| s.1),
            "requests": requests,
        })
    }
}

#[derive(Default)]
struct Seen {
    compactions: u32,
    failed_tools: u32,
    requests: Vec<RequestMark>,
}

/// The scripted server's counters (`GET /bench/stats`): chat requests and body bytes.
async fn server_counts(http: &reqwest::Client, base_url: &str) -> Option<(u64, u64)> {
    let url = format!("{}/bench/stats", base_url.trim_end_matches('/'));
    let v: Value = http.get(url).send().await.ok()?.json().await.ok()?;
    Some((v["chat_requests"].as_u64()?, v["chat_bytes"].as_u64()?))
}

/// Run once after a one-file warm-up. Errors when the run could not be set up or the warm-up
/// failed; a measured run that ended early is reported as such (see
/// [`SingleReport::is_complete`]).
pub async fn run_single(config: &SingleConfig) -> Result<SingleReport, BenchError> {
    let setup = |iterations: u32| AgentSetup {
        model: Plan::simple(iterations).model_name(),
        iterations,
        num_ctx: config.num_ctx,
        tool_mode: ToolMode::Native,
    };
    let provider = runner::ollama(&config.base_url)?;
    let store = match &config.store {
        Some(path) => Some(
            Store::open(&Location::Sqlite(path.clone()))
                .await
                .map_err(|e| BenchError::Setup(format!("store: {e}")))?,
        ),
        None => None,
    };
    let recorder = store.as_ref().map(Store::recorder);
    let warm = runner::agent(provider.clone(), &config.workspace, &setup(1))?;
    let warm_recorder = recorder.clone();
    let quiet = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| {
            if let Some(r) = &warm_recorder {
                r.record(e);
            }
        }),
    );
    let mut warm_session = warm.session();
    let warmed = warm_session
        .run(TASK, &quiet, &CancellationToken::new())
        .await;
    if warmed.outcome != Outcome::Completed || warmed.tool_calls != 1 {
        return Err(BenchError::Incomplete(format!(
            "the warm-up run ended {} after {} tool calls: {}",
            warmed.outcome.as_str(),
            warmed.tool_calls,
            warmed.error.map(|e| e.message).unwrap_or_default()
        )));
    }
    save(store.as_ref(), &mut warm_session).await?;
    let agent = runner::agent(provider, &config.workspace, &setup(config.iterations))?;
    let http = reqwest::Client::new();
    let counts_before = server_counts(&http, &config.base_url).await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink_seen = seen.clone();
    let events = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| {
            let compaction = runner::is_compaction(&e);
            let failed = matches!(e.kind, EventKind::ToolCall { ok: false, .. });
            let mark = match e.kind {
                EventKind::LlmRequest {
                    iteration,
                    estimated_tokens,
                    ..
                } => Some(RequestMark {
                    iteration,
                    cpu: usage::self_cpu(),
                    estimated_tokens,
                }),
                _ => None,
            };
            if let Ok(mut s) = sink_seen.lock() {
                s.compactions += u32::from(compaction);
                s.failed_tools += u32::from(failed);
                s.requests.extend(mark);
            }
            if let Some(r) = &recorder {
                r.record(e);
            }
        }),
    );
    let mut session = agent.session();
    let cpu_before = usage::self_cpu();
    let started = Instant::now();
    let result = session.run(TASK, &events, &CancellationToken::new()).await;
    save(store.as_ref(), &mut session).await?;
    let wall = started.elapsed();
    let cpu = usage::self_cpu();
    let counts_after = server_counts(&http, &config.base_url).await;
    let sent = counts_before
        .zip(counts_after)
        .map(|(b, a)| (a.0.saturating_sub(b.0), a.1.saturating_sub(b.1)));
    let seen = std::mem::take(
        &mut *seen
            .lock()
            .map_err(|_| BenchError::Setup("event lock poisoned".into()))?,
    );
    Ok(SingleReport {
        outcome: result.outcome,
        iterations: result.iterations,
        tool_calls: result.tool_calls,
        failed_tool_calls: seen.failed_tools,
        answer: result.answer,
        compactions: seen.compactions,
        wall,
        cpu,
        run_cpu: cpu.since(&cpu_before),
        peak_rss_kib: usage::peak_rss_kib(),
        requests: seen.requests,
        sent,
    })
}

/// What `reagent run` does with the store after a run: wait for the last events to be written
/// and save the session (nothing without a store). A store error fails the benchmark.
async fn save(store: Option<&Store>, session: &mut Session) -> Result<(), BenchError> {
    let Some(store) = store else {
        return Ok(());
    };
    let id = session.id().to_owned();
    store
        .save_session_after_events(&id, |complete| session.snapshot_over_events(complete))
        .await
        .map_err(|e| BenchError::Setup(format!("store: {e}")))?;
    match store.error() {
        Some(e) => Err(BenchError::Setup(format!("store: {e}"))),
        None => Ok(()),
    }
}
