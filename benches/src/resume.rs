//! Resuming a long session: the time from a stored snapshot (JSON) to the first request of a
//! follow-up run, for a session of `steps` tool-call steps (issue 12).
//!
//! The session is built for real against the scripted server (it reads `steps` files, compacting
//! on the way as a long run does); its events are kept as JSON, as the store keeps them, and it
//! is snapshotted as `reagent run` saves it (the messages left to the events). Each repeat then
//! reads the snapshot and the events back, continues the session from them
//! (`Session::from_stored`, which rebuilds the messages from the events), gives it a follow-up
//! and steps until the first reply: the three times are the resume itself (JSON parse and
//! rebuilding the session), the first
//! `llm_request` event (the loop is about to send), and the reply (the body encoded, sent over
//! loopback and answered at once by the stateless scripted server).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_core::{EventSink, SessionSnapshot, Step, ToolMode};
use reagent_protocol::{CancellationToken, Event, EventKind, Outcome};
use serde_json::json;

use crate::runner::{self, AgentSetup};
use crate::workload::{Plan, TASK};
use crate::BenchError;

/// What to measure.
pub struct ResumeConfig {
    /// Scripted server base URL.
    pub base_url: String,
    /// Workspace with at least `steps` files.
    pub workspace: std::path::PathBuf,
    /// Tool-call steps of the stored session.
    pub steps: u32,
    /// Measured resumes.
    pub repeats: u32,
    /// Context window (default: reagent's own, so the stored session has compacted).
    pub num_ctx: Option<u32>,
}

/// The measurements, each a list of durations, one per repeat.
pub struct ResumeReport {
    /// Messages in the stored session.
    pub messages: usize,
    /// Size of the snapshot's JSON.
    pub snapshot_bytes: usize,
    /// Size of the events' JSON.
    pub event_bytes: usize,
    /// JSON parse (snapshot and events) + `Session::from_stored`.
    pub resume: Vec<Duration>,
    /// From the start of the resume to the follow-up's `llm_request` event.
    pub to_request: Vec<Duration>,
    /// From the start of the resume to the follow-up's first reply.
    pub to_reply: Vec<Duration>,
}

/// Build the session, then resume it `repeats` times.
pub async fn run_resume(config: &ResumeConfig) -> Result<ResumeReport, BenchError> {
    let setup = AgentSetup {
        model: Plan::simple(config.steps).model_name(),
        iterations: config.steps,
        num_ctx: config.num_ctx,
        tool_mode: ToolMode::Native,
    };
    let bench = runner::agent(runner::ollama(&config.base_url)?, &config.workspace, &setup)?;
    let mut session = bench.session();
    let stored: Arc<Mutex<Vec<String>>> = Arc::default();
    let keep = stored.clone();
    let recording = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| {
            if let (Ok(json), Ok(mut all)) = (serde_json::to_string(&e), keep.lock()) {
                all.push(json);
            }
        }),
    );
    let built = session
        .run(TASK, &recording, &CancellationToken::new())
        .await;
    if built.outcome != Outcome::Completed || built.tool_calls != config.steps {
        return Err(BenchError::Incomplete(format!(
            "building the session ended {} after {} tool calls",
            built.outcome.as_str(),
            built.tool_calls
        )));
    }
    let json = serde_json::to_string(&session.snapshot_over_events(true))
        .map_err(|e| BenchError::Setup(format!("snapshot: {e}")))?;
    let stored = std::mem::take(
        &mut *stored
            .lock()
            .map_err(|_| BenchError::Setup("event lock poisoned".into()))?,
    );
    let mut report = ResumeReport {
        messages: session.messages().len(),
        snapshot_bytes: json.len(),
        event_bytes: stored.iter().map(String::len).sum(),
        resume: Vec::new(),
        to_request: Vec::new(),
        to_reply: Vec::new(),
    };
    for _ in 0..config.repeats {
        let requested: Arc<Mutex<Option<Instant>>> = Arc::default();
        let mark = requested.clone();
        let events = EventSink::new(
            &reagent_core::new_run_id(),
            Arc::new(move |e| {
                if matches!(e.kind, EventKind::LlmRequest { .. }) {
                    if let Ok(mut at) = mark.lock() {
                        at.get_or_insert_with(Instant::now);
                    }
                }
            }),
        );
        let started = Instant::now();
        let snapshot: SessionSnapshot = serde_json::from_str(&json)
            .map_err(|e| BenchError::Setup(format!("reading the snapshot back: {e}")))?;
        let recorded = stored
            .iter()
            .map(|e| serde_json::from_str::<Event>(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| BenchError::Setup(format!("reading the events back: {e}")))?;
        let mut resumed = bench.from_stored(snapshot, &recorded)?;
        report.resume.push(started.elapsed());
        resumed.push_user("How many files did you read?");
        // The server answers a session past its plan at once: the first step is the whole run.
        let first = resumed.step(&events, &CancellationToken::new()).await;
        report.to_reply.push(started.elapsed());
        match first {
            Step::Finished(result) if result.outcome == Outcome::Completed => {}
            Step::Finished(result) => {
                return Err(BenchError::Incomplete(format!(
                    "the follow-up ended {}",
                    result.outcome.as_str()
                )))
            }
            Step::Continue | Step::Idle => {
                return Err(BenchError::Incomplete(
                    "the follow-up did not end with its first reply".into(),
                ))
            }
        }
        let at = requested.lock().ok().and_then(|at| *at);
        report
            .to_request
            .push(at.map_or(Duration::ZERO, |at| at - started));
    }
    Ok(report)
}

impl ResumeReport {
    /// The report as JSON: sizes, and p50 / p99 / mean of each time in microseconds.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "messages": self.messages,
            "snapshot_bytes": self.snapshot_bytes,
            "event_bytes": self.event_bytes,
            "resume_us": summary(&self.resume),
            "to_first_request_us": summary(&self.to_request),
            "to_first_reply_us": summary(&self.to_reply),
        })
    }
}

fn summary(times: &[Duration]) -> serde_json::Value {
    let mut us: Vec<u128> = times.iter().map(Duration::as_micros).collect();
    us.sort_unstable();
    let at = |q: f64| {
        us.get(((us.len() as f64 - 1.0) * q).round() as usize)
            .copied()
    };
    let mean = (!us.is_empty()).then(|| us.iter().sum::<u128>() / us.len() as u128);
    json!({"p50": at(0.5), "p99": at(0.99), "mean": mean, "n": us.len()})
}
