//! Running a suite: every task in every mode with every seed, each in a fresh workspace.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reagent_core::{Agent, AgentConfig, Attempts, EventSink, RunResult};
use reagent_protocol::{CancellationToken, Event, EventKind, Outcome, Provider};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};

use crate::check::{clip, evaluate, prepare};
use crate::mode::Mode;
use crate::result::{summarize, timestamp, EvalResult, TaskRun, RESULT_FORMAT};
use crate::seed::SeedParse;
use crate::suite::{Suite, Task};

/// Receives every event of every run (a run store's recorder, for one).
pub type EventHandler = Arc<dyn Fn(Event) + Send + Sync>;

/// How a suite is run.
#[derive(Clone)]
pub struct HarnessConfig {
    /// The base agent configuration (model, options, budgets...); each mode adjusts it.
    pub agent: AgentConfig,
    /// The tools and their sandbox.
    pub tools: ToolsConfig,
    /// Modes, run one after the other (default: `auto`).
    pub modes: Vec<Mode>,
    /// Each task runs with seeds `1..=seeds` (default 1).
    pub seeds: u32,
    /// Also gets each run's events, under the run id its [`TaskRun::run_id`] names (default:
    /// none). The store's recorder handler goes here, so each run can be read as any other.
    pub event_handler: Option<EventHandler>,
    /// Also write each run's events (deltas left out) as JSON lines to
    /// `<record_dir>/<task>.<mode>.seed<seed>.jsonl` (default: none): the model's raw replies
    /// and the tool results, which `reagent_core::replay` feeds through the loop again, so a
    /// recorded suite run serves as a regression fixture.
    pub record_dir: Option<PathBuf>,
    /// Attempts per task run (default 1): with more, a run whose verification fails (the
    /// agent's `verify` checks, after their retries) is undone and tried again with another
    /// seed, as `reagent run --attempts` does ([`reagent_core::Attempts`]), and the suite's
    /// checks judge the best attempt's files.
    pub attempts: u32,
}

impl std::fmt::Debug for HarnessConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HarnessConfig")
            .field("agent", &self.agent)
            .field("tools", &self.tools)
            .field("modes", &self.modes)
            .field("seeds", &self.seeds)
            .field("event_handler", &self.event_handler.as_ref().map(|_| "…"))
            .field("record_dir", &self.record_dir)
            .field("attempts", &self.attempts)
            .finish()
    }
}

impl HarnessConfig {
    /// Defaults around `agent`.
    pub fn new(agent: AgentConfig) -> Self {
        HarnessConfig {
            agent,
            tools: ToolsConfig::default(),
            modes: vec![Mode::Tool(reagent_core::ToolMode::Auto)],
            seeds: 1,
            event_handler: None,
            record_dir: None,
            attempts: 1,
        }
    }
}

/// Runs suites against one provider.
pub struct Harness {
    provider: Arc<dyn Provider>,
    config: HarnessConfig,
}

impl Harness {
    /// A harness for `provider`.
    pub fn new(provider: Arc<dyn Provider>, config: HarnessConfig) -> Self {
        Harness { provider, config }
    }

    /// Run every task of `suite` in every mode with every seed. After each run, `on_run` sees
    /// the result so far (the run just finished is the last of `runs`), so a caller can show
    /// progress and save partial results. A cancelled harness stops before the next run and
    /// returns the runs that finished, marked `interrupted` (a run the cancel cut short is
    /// left out: it measured nothing).
    pub async fn run(
        &self,
        suite: &Suite,
        on_run: &(dyn Fn(&EvalResult) + Sync),
        cancel: &CancellationToken,
    ) -> EvalResult {
        let modes: Vec<String> = self
            .config
            .modes
            .iter()
            .map(|m| m.as_str().to_owned())
            .collect();
        let mut result = EvalResult {
            format: RESULT_FORMAT,
            suite: suite.name.clone(),
            suite_file: suite.path.display().to_string(),
            tasks: u32::try_from(suite.tasks.len()).unwrap_or(u32::MAX),
            started: timestamp(SystemTime::now()),
            model: self.config.agent.model.clone(),
            provider: self.provider.name().to_owned(),
            modes,
            seeds: self.config.seeds.max(1),
            runs: Vec::new(),
            summary: Vec::new(),
            interrupted: false,
        };
        'all: for &mode in &self.config.modes {
            for task in &suite.tasks {
                for seed in 1..=i64::from(result.seeds) {
                    if cancel.is_cancelled() {
                        result.interrupted = true;
                        break 'all;
                    }
                    let run = self.run_one(task, mode, seed, cancel).await;
                    if cancel.is_cancelled() && run.outcome == Outcome::Cancelled.as_str() {
                        result.interrupted = true;
                        break 'all;
                    }
                    result.runs.push(run);
                    result.summary = summarize(&result.runs, &result.modes);
                    on_run(&result);
                }
            }
        }
        result
    }

    /// One run of `task`, in a fresh workspace that is removed afterwards.
    async fn run_one(
        &self,
        task: &Task,
        mode: Mode,
        seed: i64,
        cancel: &CancellationToken,
    ) -> TaskRun {
        let mut run = TaskRun {
            task: task.id.clone(),
            category: task.category.clone(),
            mode: mode.as_str().to_owned(),
            tool_mode: String::new(),
            seed,
            passed: false,
            outcome: "not_run".to_owned(),
            iterations: 0,
            tool_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            wall_ms: 0,
            answer: String::new(),
            parse_layers: Vec::new(),
            calls: Vec::new(),
            checks: Vec::new(),
            error: None,
            run_id: None,
            attempts: 1,
        };
        let dir = match prepare(task) {
            Ok(dir) => dir,
            Err(e) => {
                run.error = Some(format!("cannot prepare the workspace: {e}"));
                return run;
            }
        };
        let workspace = match Workspace::open(dir.path()) {
            Ok(w) => w,
            Err(e) => {
                run.error = Some(format!("cannot open the workspace: {e}"));
                return run;
            }
        };
        let mut config = mode.configure(&self.config.agent);
        config.options.seed = Some(seed);
        // Attempts restore the workspace from checkpoints, kept beside it (not in the user's
        // data folder) and removed with it.
        let checkpoints = match self.config.attempts {
            0 | 1 => None,
            _ => match tempfile::tempdir() {
                Ok(dir) => Some(dir),
                Err(e) => {
                    run.error = Some(format!("cannot create a checkpoint folder: {e}"));
                    return run;
                }
            },
        };
        if let Some(dir) = &checkpoints {
            config.verify.checkpoints = true;
            config.verify.checkpoint_dir = Some(dir.path().to_owned());
        }
        let provider: Arc<dyn Provider> = match mode {
            Mode::Seed => Arc::new(SeedParse::new(self.provider.clone())),
            Mode::Tool(_) => self.provider.clone(),
        };
        let tools = Arc::new(ToolRegistry::workspace_tools(&self.config.tools));
        let agent = Arc::new(Agent::new(provider, tools, config));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let recorder = seen.clone();
        let also = self.config.event_handler.clone();
        let record = match &self.config.record_dir {
            Some(dir) => match record_file(dir, task, mode, seed) {
                Ok(file) => Some(Mutex::new(file)),
                Err(e) => {
                    run.error = Some(e);
                    return run;
                }
            },
            None => None,
        };
        let handler: EventHandler = Arc::new(move |event: Event| {
            if let Ok(mut seen) = recorder.lock() {
                seen.record(&event.kind);
            }
            if let Some(file) = &record {
                write_event(file, &event);
            }
            if let Some(handler) = &also {
                handler(event);
            }
        });
        let workspace = Arc::new(workspace);
        let (result, attempts, trouble) = if checkpoints.is_some() {
            match best_of(
                agent,
                workspace,
                task,
                &handler,
                self.config.attempts,
                cancel,
            )
            .await
            {
                Ok(ran) => ran,
                Err(e) => {
                    run.error = Some(e.to_owned());
                    return run;
                }
            }
        } else {
            let sink = EventSink::new(&reagent_core::new_run_id(), handler);
            (
                agent.run(workspace, &task.prompt, &sink, cancel).await,
                1,
                None,
            )
        };
        run.run_id = Some(result.run_id.clone());
        run.attempts = attempts;
        run.tool_mode = result.tool_mode.as_str().to_owned();
        run.outcome = result.outcome.as_str().to_owned();
        run.iterations = result.iterations;
        run.tool_calls = result.tool_calls;
        run.prompt_tokens = result.prompt_tokens;
        run.completion_tokens = result.completion_tokens;
        run.wall_ms = millis(result.wall_time);
        run.error = result.error.as_ref().map(|e| e.message.clone()).or(trouble);
        if let Ok(mut seen) = seen.lock() {
            run.parse_layers = std::mem::take(&mut seen.layers);
            run.calls = std::mem::take(&mut seen.calls);
        }
        let checks = task.checks.clone();
        let answer = result.answer.clone();
        let path = dir.path().to_owned();
        // Command checks block; keep them off the async workers.
        run.checks = tokio::task::spawn_blocking(move || evaluate(&checks, &answer, &path))
            .await
            .unwrap_or_default();
        run.passed = !run.checks.is_empty() && run.checks.iter().all(|c| c.passed);
        run.answer = clip(&result.answer, 500);
        run
    }
}

/// Up to `max` attempts at `task` ([`reagent_core::Attempts`], each a run of its own with its
/// own run id): the best attempt's result with the model calls, tool calls, tokens and wall
/// time of all of them added up, the number of attempts, and why the workspace could not be
/// restored (between attempts, or to the best one's files at the end), if it could not.
async fn best_of(
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
    task: &Task,
    handler: &EventHandler,
    max: u32,
    cancel: &CancellationToken,
) -> Result<(RunResult, u32, Option<String>), &'static str> {
    let mut attempts = Attempts::new(agent, workspace, max);
    let mut trouble = None;
    while let Some(mut session) = attempts.next_session() {
        let sink = EventSink::new(&reagent_core::new_run_id(), handler.clone());
        let result = session.run(&task.prompt, &sink, cancel).await;
        if let Err(e) = attempts.finished(result) {
            trouble = Some(format!(
                "the workspace could not be restored after an attempt: {e}"
            ));
        }
    }
    let summary = attempts.finish();
    if let Some(e) = &summary.error {
        trouble = Some(format!(
            "the best attempt's files could not be put back: {e}"
        ));
    }
    let count = u32::try_from(summary.results.len()).unwrap_or(u32::MAX);
    let sum = |f: fn(&RunResult) -> u64| summary.results.iter().map(f).sum::<u64>();
    let (iterations, tool_calls) = (
        sum(|r| u64::from(r.iterations)),
        sum(|r| u64::from(r.tool_calls)),
    );
    let (prompt_tokens, completion_tokens) =
        (sum(|r| r.prompt_tokens), sum(|r| r.completion_tokens));
    let wall_time = summary.results.iter().map(|r| r.wall_time).sum();
    let best = summary
        .results
        .into_iter()
        .nth(summary.best)
        .ok_or("no attempt ran")?;
    let result = RunResult {
        iterations: u32::try_from(iterations).unwrap_or(u32::MAX),
        tool_calls: u32::try_from(tool_calls).unwrap_or(u32::MAX),
        prompt_tokens,
        completion_tokens,
        wall_time,
        ..best
    };
    Ok((result, count, trouble))
}

/// What a run's events tell beyond its result: the parse layer of each reply and each call.
#[derive(Default)]
struct Seen {
    layers: Vec<String>,
    calls: Vec<String>,
}

impl Seen {
    fn record(&mut self, kind: &EventKind) {
        match kind {
            EventKind::LlmResponse {
                parse_layer: Some(layer),
                ..
            } => self.layers.push(layer.clone()),
            EventKind::ToolCall {
                name,
                arguments,
                ok,
                summary,
                ..
            } => {
                let verdict = if *ok { "ok" } else { "failed" };
                let line = format!("{name} {arguments} -> {verdict}: {summary}");
                self.calls.push(clip(&line, 300));
            }
            _ => {}
        }
    }
}

/// The file a run's events are recorded in: `<dir>/<task>.<mode>.seed<seed>.jsonl` (created,
/// with `dir`, or truncated).
fn record_file(
    dir: &Path,
    task: &Task,
    mode: Mode,
    seed: i64,
) -> Result<std::io::BufWriter<std::fs::File>, String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the record directory {}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.{}.seed{seed}.jsonl", task.id, mode.as_str()));
    std::fs::File::create(&path)
        .map(std::io::BufWriter::new)
        .map_err(|e| format!("cannot create the record file {}: {e}", path.display()))
}

/// One event as a JSON line (deltas left out: the replies are in `llm_response`), flushed so a
/// stopped suite keeps what it recorded.
fn write_event(file: &Mutex<std::io::BufWriter<std::fs::File>>, event: &Event) {
    if event.kind.is_delta() {
        return;
    }
    if let (Ok(mut w), Ok(line)) = (file.lock(), serde_json::to_string(event)) {
        let _ = writeln!(w, "{line}").and_then(|()| w.flush());
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
