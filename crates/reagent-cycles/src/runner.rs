//! Running an experiment: each cycle one [`Session`] of an [`Agent`] whose tools are the memory
//! and the operator; its reflection, metrics and the monitor's verdict saved in the store as the
//! cycle ends, so a stopped or killed experiment resumes at its first unfinished cycle.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use reagent_core::{Agent, AgentConfig, EventSink, Session};
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, Event, ModelInfo, Outcome, Provider,
    ProviderError, SignalSink,
};
use reagent_providers::Embedder;
use reagent_store::{CycleRecord, ExperimentRecord, NewExperiment, Store};
use reagent_tools::Workspace;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::config::{ExperimentConfig, HistoryMode};
use crate::log::{LogEvent, Logger, Watcher, CYCLE_END, CYCLE_START, LLM_INVOCATION};
use crate::memory::{self, Memory};
use crate::operator::Operator;
use crate::similarity::Monitor;
use crate::tally::Tally;
use crate::{prompts, think, CyclesError};

/// The metrics every `CYCLE_END` carries (the study's), besides reagent's own.
pub const REQUIRED_METRICS: [&str; 4] = [
    "memory_ops_total",
    "messages_to_operator",
    "response_chars",
    "memory_write_chars",
];

/// Where an experiment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Cycles are being run (or the process running them died: resume it).
    Running,
    /// Stopped on request before its last cycle.
    Stopped,
    /// Every cycle done.
    Completed,
    /// A cycle could not be run (the model server failed); resume retries it.
    Failed,
}

impl Status {
    /// The word stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Stopped => "stopped",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }
}

/// How a run of [`Experiment::run`] ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentSummary {
    /// The experiment.
    pub run_id: String,
    /// Where it stands now.
    pub status: Status,
    /// Cycles done (over every run of it).
    pub cycles_done: u32,
    /// Cycles planned.
    pub cycles: u32,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The first error writing the log or its events to the store, if any.
    pub log_error: Option<String>,
}

/// What the store keeps of an experiment's setup (the `config` column).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    config: ExperimentConfig,
    log: Option<PathBuf>,
}

/// Create experiment `config.run_id` in `store` (logging to `log`); an id that exists is
/// [`CyclesError::Exists`].
pub async fn create(
    store: &Store,
    config: &ExperimentConfig,
    log: Option<PathBuf>,
) -> Result<(), CyclesError> {
    let stored = Stored {
        config: config.clone(),
        log,
    };
    let new = NewExperiment {
        id: config.run_id.clone(),
        model: config.model.name.clone(),
        cycles: config.cycles,
        config: serde_json::to_string(&stored).map_err(|e| CyclesError::Other(e.to_string()))?,
    };
    if store.create_experiment(&new).await? {
        Ok(())
    } else {
        Err(CyclesError::Exists(config.run_id.clone()))
    }
}

/// Experiment `id` as stored: its row, config and log file.
pub async fn stored(
    store: &Store,
    id: &str,
) -> Result<(ExperimentRecord, ExperimentConfig, Option<PathBuf>), CyclesError> {
    let record = store
        .experiment(id)
        .await?
        .ok_or_else(|| CyclesError::NotFound(id.to_owned()))?;
    let stored: Stored = serde_json::from_str(&record.config).map_err(|e| {
        CyclesError::Other(format!(
            "experiment {id}: its stored config cannot be read: {e}"
        ))
    })?;
    Ok((record, stored.config, stored.log))
}

/// The operator messages sent in `cycles` (a script resumes after their replies).
pub fn operator_messages(cycles: &[CycleRecord]) -> usize {
    cycles
        .iter()
        .filter_map(|c| serde_json::from_str::<Value>(&c.metrics).ok())
        .filter_map(|m| m.get("messages_to_operator").and_then(Value::as_u64))
        .sum::<u64>() as usize
}

/// One experiment, ready to run.
pub struct Experiment {
    /// Where everything is kept.
    pub store: Store,
    /// Its config.
    pub config: ExperimentConfig,
    /// The model server.
    pub provider: Arc<dyn Provider>,
    /// Embeddings for the similarity monitor (lexical similarity without).
    pub embedder: Option<Embedder>,
    /// Who answers the agent's messages.
    pub operator: Arc<dyn Operator>,
    /// The JSONL log (appended to).
    pub log_file: Option<PathBuf>,
    /// Sees every log event as it is written.
    pub watcher: Option<Watcher>,
    /// The directory the sessions run over (their tools do not touch it).
    pub workspace: PathBuf,
}

impl Experiment {
    /// Run the cycles not done yet, until the last one or `cancel`. The experiment must have
    /// been [`create`]d.
    pub async fn run(&self, cancel: &CancellationToken) -> Result<ExperimentSummary, CyclesError> {
        let config = &self.config;
        let id = config.run_id.as_str();
        let done = self.store.cycles(id).await?;
        let mut reflections: Vec<(u32, String)> = done
            .iter()
            .map(|c| (u32::try_from(c.cycle).unwrap_or(0), c.reflection.clone()))
            .collect();
        let mut advisory: Option<String> = done
            .last()
            .and_then(|c| serde_json::from_str::<Value>(&c.metrics).ok())
            .and_then(|m| m.get("advisory").and_then(Value::as_str).map(str::to_owned));
        self.store
            .claim_experiment(id)
            .await?
            .map_err(CyclesError::Busy)?;
        let logger = Logger::start(
            self.store.clone(),
            self.log_file.as_deref(),
            self.watcher.clone(),
        )?;
        let cycle_now = Arc::new(AtomicU32::new(0));
        let provider = Arc::new(LoggedProvider {
            inner: self.provider.clone(),
            logger: logger.clone(),
            run_id: id.to_owned(),
            cycle: cycle_now.clone(),
        });
        let memory = Memory::new(self.store.clone(), id, tokio::runtime::Handle::current());
        let tools = memory::registry(&memory, self.operator.clone())
            .map_err(|e| CyclesError::Other(format!("the experiment's tools: {e}")))?;
        let agent = Arc::new(Agent::new(provider, Arc::new(tools), agent_config(config)));
        let workspace = std::fs::create_dir_all(&self.workspace)
            .and_then(|()| Workspace::open(&self.workspace))
            .map_err(|e| {
                CyclesError::Other(format!(
                    "cannot open the directory {} for the sessions: {e}",
                    self.workspace.display()
                ))
            })?;
        let mut cycles = Cycles {
            experiment: self,
            agent,
            workspace: Arc::new(workspace),
            logger: logger.clone(),
            monitor: Monitor::new(config.similarity, self.embedder.clone()),
            cycle_now,
            full_session: None,
        };
        let (status, error) = cycles
            .run_from(&mut reflections, &mut advisory, cancel)
            .await?;
        Ok(ExperimentSummary {
            run_id: id.to_owned(),
            status,
            cycles_done: u32::try_from(reflections.len()).unwrap_or(u32::MAX),
            cycles: config.cycles,
            error,
            log_error: logger.flush().await,
        })
    }
}

/// The state of a run over the cycles.
struct Cycles<'a> {
    experiment: &'a Experiment,
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
    logger: Logger,
    monitor: Monitor,
    cycle_now: Arc<AtomicU32>,
    /// `history = "full"`: the one session, between cycles.
    full_session: Option<Session>,
}

impl Cycles<'_> {
    /// Run the remaining cycles; the status reached and the error that stopped them, if any.
    async fn run_from(
        &mut self,
        reflections: &mut Vec<(u32, String)>,
        advisory: &mut Option<String>,
        cancel: &CancellationToken,
    ) -> Result<(Status, Option<String>), CyclesError> {
        let config = &self.experiment.config;
        let store = &self.experiment.store;
        let id = config.run_id.as_str();
        let first = u32::try_from(reflections.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let mut status = Status::Completed;
        let mut error = None;
        for cycle in first..=config.cycles {
            if cancel.is_cancelled() {
                status = Status::Stopped;
                break;
            }
            match self.cycle(cycle, reflections, advisory, cancel).await? {
                CycleEnd::Done(record) => {
                    store.save_cycle(id, &record).await?;
                }
                CycleEnd::Cancelled => {
                    status = Status::Stopped;
                    break;
                }
                CycleEnd::Failed(why) => {
                    status = Status::Failed;
                    error = Some(format!("cycle {cycle}: {why}"));
                    break;
                }
            }
        }
        store.set_experiment_status(id, status.as_str()).await?;
        Ok((status, error))
    }

    /// Run cycle `cycle`.
    async fn cycle(
        &mut self,
        cycle: u32,
        reflections: &mut Vec<(u32, String)>,
        advisory: &mut Option<String>,
        cancel: &CancellationToken,
    ) -> Result<CycleEnd, CyclesError> {
        let config = &self.experiment.config;
        let id = config.run_id.as_str();
        self.cycle_now.store(cycle, Ordering::Relaxed);
        self.logger.log(LogEvent::now(
            id,
            cycle,
            CYCLE_START,
            json!({"cycles": config.cycles, "previous_reflections": reflections.len(),
                   "advisory": advisory, "history": config.history}),
        ));
        let started = now();
        let (mut session, message) = match (config.history, self.full_session.take()) {
            (HistoryMode::Full, Some(session)) => (
                session,
                prompts::follow_up_message(cycle, config.cycles, advisory.as_deref()),
            ),
            _ => (
                Session::new(self.agent.clone(), self.workspace.clone()),
                prompts::cycle_message(cycle, config.cycles, reflections, advisory.as_deref()),
            ),
        };
        let tally = Arc::new(Mutex::new(Tally::default()));
        let sink = {
            let (tally, logger, recorder) = (
                tally.clone(),
                self.logger.clone(),
                self.experiment.store.recorder(),
            );
            let run_id = id.to_owned();
            EventSink::new(
                &reagent_core::new_run_id(),
                Arc::new(move |event: Event| {
                    if event.kind.is_delta() {
                        return;
                    }
                    if let Ok(mut t) = tally.lock() {
                        t.observe(&event, &logger, &run_id, cycle);
                    }
                    recorder.record(event);
                }),
            )
        };
        let result = session.run(&message, &sink, cancel).await;
        if result.outcome == Outcome::Cancelled || cancel.is_cancelled() {
            return Ok(CycleEnd::Cancelled);
        }
        if result.outcome == Outcome::ProviderError {
            let why = result
                .error
                .as_ref()
                .map_or("the model server failed", |e| e.message.as_str());
            return Ok(CycleEnd::Failed(why.to_owned()));
        }
        let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|p| p.into_inner()));
        let text = if result.answer.trim().is_empty() {
            &result.last_assistant_text
        } else {
            &result.answer
        };
        let (reflection, mut thinking) = think::split(text);
        if let Some(r) = tally
            .last_reasoning
            .as_ref()
            .filter(|r| !r.trim().is_empty())
        {
            thinking = if thinking.is_empty() {
                r.trim().to_owned()
            } else {
                format!("{}\n\n{thinking}", r.trim())
            };
        }
        reflections.push((cycle, reflection.clone()));
        let assessment = self.monitor.assess(reflections).await;
        let memory_keys = self.experiment.store.experiment_memory(id).await?.len();
        let cut_short = result.outcome != Outcome::Completed;
        let metrics = json!({
            "memory_ops_total": tally.memory_ops,
            "messages_to_operator": tally.operator_messages,
            "response_chars": tally.response_chars,
            "memory_write_chars": tally.memory_write_chars,
            "tool_calls_total": tally.tool_calls_total(),
            "tool_calls": tally.tool_calls,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.prompt_tokens + result.completion_tokens,
            "duration_ms": millis(result.wall_time),
            "model_ms": millis(result.model_time),
            "iterations": result.iterations,
            "reflection_chars": reflection.chars().count(),
            "memory_keys_end": memory_keys,
            "similarity_method": assessment.method,
            "similarity_fallback_reason": assessment.fallback_reason,
            "similarity_max": assessment.max,
            "similarity_scores": assessment.scores,
            "similarity_level": assessment.level,
            "advisory": assessment.advisory,
            "outcome": result.outcome.as_str(),
            "cut_short": cut_short,
            "guardrails": tally.guardrails,
            "compactions": tally.compactions,
            "session_run_id": result.run_id,
        });
        self.logger.log(LogEvent::now(
            id,
            cycle,
            CYCLE_END,
            json!({"final_reflection": reflection, "thinking": thinking, "cut_short": cut_short,
                   "outcome": result.outcome.as_str(), "metrics": metrics}),
        ));
        // The cycle's events are written before it counts as done.
        self.logger.flush().await;
        *advisory = assessment.advisory;
        if config.history == HistoryMode::Full {
            self.full_session = Some(session);
        }
        Ok(CycleEnd::Done(CycleRecord {
            cycle: i64::from(cycle),
            started,
            finished: now(),
            outcome: result.outcome.as_str().to_owned(),
            cut_short,
            reflection,
            thinking,
            metrics: metrics.to_string(),
        }))
    }
}

/// How a cycle ended.
enum CycleEnd {
    /// With a reflection: its record.
    Done(CycleRecord),
    /// Stopped on request (not recorded: it runs again on resume).
    Cancelled,
    /// The model server failed (not recorded).
    Failed(String),
}

/// The agent's settings for an experiment: its options, the per-cycle limits, its system
/// prompt, and no nudges (any reply without a tool call ends the cycle).
pub fn agent_config(config: &ExperimentConfig) -> AgentConfig {
    let mut agent = AgentConfig::new(config.model.name.clone());
    let mut options = config.model.options.clone();
    options.num_predict = options.num_predict.or(agent.options.num_predict);
    agent.options = options;
    agent.max_iterations = config.limits.max_iterations;
    agent.budgets.max_wall_time = Duration::try_from_secs_f64(config.limits.max_time_secs).ok();
    agent.max_nudges = 0;
    agent.stream = false;
    agent.system_prompt = Some(
        config
            .model
            .system_prompt
            .clone()
            .unwrap_or_else(|| prompts::SYSTEM_PROMPT.to_owned()),
    );
    agent
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The options as JSON, each `f32` as the decimal it was written as (`0.9`, not
/// `0.8999999761581421`).
fn options_json(options: &reagent_protocol::ModelOptions) -> Value {
    let mut v = json!(options);
    for (key, x) in [
        ("temperature", options.temperature),
        ("top_p", options.top_p),
        ("repeat_penalty", options.repeat_penalty),
    ] {
        if let Some(n) = x.and_then(|x| x.to_string().parse::<f64>().ok()) {
            v[key] = json!(n);
        }
    }
    v
}

/// The provider every cycle talks through: each model call is logged as an `LLM_INVOCATION`
/// (the messages sent, the reply, the options, tokens and latency).
struct LoggedProvider {
    inner: Arc<dyn Provider>,
    logger: Logger,
    run_id: String,
    cycle: Arc<AtomicU32>,
}

#[async_trait]
impl Provider for LoggedProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        self.inner.model_info(model).await
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        let result = self.inner.chat(request, sink, cancel).await;
        let mut payload = json!({
            "prompt_messages": request.messages,
            "response_message": Value::Null,
            "model_options": options_json(&request.options),
        });
        match &result {
            Ok(reply) => {
                payload["response_message"] = json!(reply.message);
                payload["prompt_tokens"] = json!(reply.usage.prompt_tokens);
                payload["completion_tokens"] = json!(reply.usage.completion_tokens);
                payload["latency_ms"] = json!(millis(reply.latency));
                payload["finish_reason"] = json!(format!("{:?}", reply.finish).to_lowercase());
            }
            Err(e) => payload["error"] = json!(e.to_string()),
        }
        self.logger.log(LogEvent::now(
            &self.run_id,
            self.cycle.load(Ordering::Relaxed),
            LLM_INVOCATION,
            payload,
        ));
        result
    }
}
