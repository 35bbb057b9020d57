//! The run driver: set up the run, then iterate model turn → tool calls → guardrails until the
//! model answers, calls `task_complete`, or a guardrail or budget ends the run.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reagent_protocol::{
    CancellationToken, EventKind, Message, ModelInfo, ModelOptions, Outcome, Provider,
    ProviderError, ToolSpec, WireCache,
};
use reagent_tools::{
    workspace_files, Approver, ToolContext, ToolRegistry, ToolResult, Workspace, WorkspaceFiles,
};

use crate::arguments::ArgumentChecker;
use crate::config::{AgentConfig, ToolMode};
use crate::events::EventSink;
use crate::guardrails::{exhausted_budget, is_narration, CallTally, RepetitionDetector};
use crate::history::History;
use crate::profiles::profile_for;
use crate::result::RunResult;
use crate::turn::{Turn, TurnSetup};
use crate::{prompts, tool_mode};

mod steps;

use steps::summarize;

/// The tool that ends a run.
const TASK_COMPLETE: &str = "task_complete";

/// An agent: a provider, the tools, a workspace and a configuration. Runs are independent; one
/// agent may run many tasks, concurrently.
pub struct Agent {
    provider: Arc<dyn Provider>,
    tools: Arc<ToolRegistry>,
    workspace: Arc<Workspace>,
    config: AgentConfig,
    approver: Option<Arc<dyn Approver>>,
    /// The tools' specs, in registry order (stable across iterations and runs), shared with
    /// every request (so a provider encodes them once).
    specs: Arc<[ToolSpec]>,
    /// Compiled argument schemas, shared by every run of this agent.
    checker: ArgumentChecker,
    /// What the server said about the model, asked by the first run that got an answer and
    /// reused by the others (one model per agent: no `/api/show` round trip per run).
    model_info: OnceLock<ModelInfo>,
}

/// Mutable state of one run.
struct RunState {
    started: Instant,
    iterations: u32,
    tool_calls: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    model_time: Duration,
    files_changed: BTreeSet<String>,
    last_text: String,
    nudges: u32,
    repetition_hinted: bool,
    /// The last request was refused as longer than the server's context and the history was
    /// compacted for a retry (reset by the next reply, so each overflow gets one retry).
    overflow_retried: bool,
    /// Work calls made and how many succeeded (an answer on failures only is no progress).
    tally: CallTally,
}

/// How the loop ended, before the run is wrapped up.
struct Ending {
    outcome: Outcome,
    answer: String,
    error: Option<String>,
}

impl Ending {
    fn new(outcome: Outcome, answer: impl Into<String>) -> Self {
        Ending {
            outcome,
            answer: answer.into(),
            error: None,
        }
    }

    fn failed(outcome: Outcome, error: &ProviderError) -> Self {
        Ending {
            outcome,
            answer: String::new(),
            error: Some(error.to_string()),
        }
    }

    /// A completed run whose every work call failed ends as `no_progress` instead.
    fn unless_no_progress(mut self, tally: &CallTally, events: &EventSink) -> Self {
        if self.outcome == Outcome::Completed {
            if let Some(detail) = tally.only_failures() {
                events.guardrail("no_progress", "stop", detail);
                self.outcome = Outcome::NoProgress;
            }
        }
        self
    }
}

impl Agent {
    /// An agent over `workspace`, calling `tools`, talking to `provider`.
    pub fn new(
        provider: Arc<dyn Provider>,
        tools: Arc<ToolRegistry>,
        workspace: Arc<Workspace>,
        config: AgentConfig,
    ) -> Self {
        let specs: Arc<[ToolSpec]> = tools.specs().into();
        let checker = ArgumentChecker::new(&specs);
        Agent {
            provider,
            tools,
            workspace,
            config,
            approver: None,
            specs,
            checker,
            model_info: OnceLock::new(),
        }
    }

    /// Commands matching an `ask` rule go to `approver` (without one they are refused).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Run `task` to the end. Events go to `events`; `cancel` stops the run cleanly (the result
    /// and the `run_finished` event are still produced). Never panics on model output.
    pub async fn run(
        &self,
        task: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        let mut state = RunState {
            started: Instant::now(),
            iterations: 0,
            tool_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            model_time: Duration::ZERO,
            files_changed: BTreeSet::new(),
            last_text: String::new(),
            nudges: 0,
            repetition_hinted: false,
            overflow_retried: false,
            tally: CallTally::default(),
        };
        let (ending, history, mode) = match self.prepare(task, events, cancel).await {
            Ok((setup_parts, history)) => {
                let mode = setup_parts.mode;
                let (ending, history) = self
                    .drive(task, setup_parts, history, &mut state, events, cancel)
                    .await;
                (ending, history.into_messages(), mode)
            }
            Err(e) => {
                let outcome = if matches!(e, ProviderError::Cancelled) {
                    Outcome::Cancelled
                } else {
                    Outcome::ProviderError
                };
                (
                    Ending::failed(outcome, &e),
                    Vec::new(),
                    self.config.tool_mode,
                )
            }
        };
        let ending = ending.unless_no_progress(&state.tally, events);
        let files_changed: Vec<String> = state.files_changed.into_iter().collect();
        events.emit(EventKind::RunFinished {
            outcome: ending.outcome,
            iterations: state.iterations,
            tool_calls: state.tool_calls,
            prompt_tokens: state.prompt_tokens,
            completion_tokens: state.completion_tokens,
            wall_ms: state.started.elapsed().as_millis() as u64,
            model_ms: state.model_time.as_millis() as u64,
            files_changed: files_changed.clone(),
            error: ending.error.clone(),
        });
        RunResult {
            run_id: events.run_id().to_owned(),
            outcome: ending.outcome,
            answer: ending.answer,
            iterations: state.iterations,
            tool_calls: state.tool_calls,
            prompt_tokens: state.prompt_tokens,
            completion_tokens: state.completion_tokens,
            files_changed,
            last_assistant_text: state.last_text,
            transcript: history,
            error: ending.error,
            tool_mode: mode,
            wall_time: state.started.elapsed(),
            model_time: state.model_time,
        }
    }

    /// Ask the server about the model, pick the tool mode and context size, and build the
    /// opening history.
    async fn prepare(
        &self,
        task: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(Prepared, History), ProviderError> {
        let info = match self.model_info.get() {
            Some(known) => Ok(known.clone()),
            None => tokio::select! {
                info = self.provider.model_info(&self.config.model) => info,
                () = cancel.cancelled() => Err(ProviderError::Cancelled),
            },
        };
        let info = match info {
            Ok(info) => self.model_info.get_or_init(|| info).clone(),
            Err(
                e @ (ProviderError::Unreachable { .. }
                | ProviderError::ModelNotFound { .. }
                | ProviderError::Cancelled),
            ) => return Err(e),
            Err(e) => {
                tracing::warn!("could not read model info, using defaults: {e}");
                ModelInfo::default()
            }
        };
        let profile = profile_for(&self.config.model, &self.config.profiles);
        let mode = tool_mode::resolve(self.config.tool_mode, &info.capabilities);
        let cap = self.config.default_ctx_cap;
        let num_ctx = self
            .config
            .options
            .num_ctx
            .unwrap_or_else(|| info.context_length.map_or(cap, |c| c.min(cap)));
        let options = ModelOptions {
            num_ctx: Some(num_ctx),
            temperature: self.config.options.temperature.or(profile.temperature),
            think: self
                .config
                .options
                .think
                .or(if info.capabilities.thinking == Some(true) {
                    profile.think
                } else {
                    None
                }),
            ..self.config.options.clone()
        };
        let specs = &self.specs;
        let files = (mode == ToolMode::Constrained)
            .then(|| workspace_files(&self.workspace, tool_mode::LISTED_FILES_MAX));
        let system = prompts::system_prompt(
            self.config.system_prompt.as_deref(),
            mode,
            specs,
            profile.system_hint.as_deref(),
            files.as_ref(),
        );
        let schema_bytes: usize = if mode == ToolMode::Native {
            specs
                .iter()
                .map(|s| s.to_function_json().to_string().len())
                .sum()
        } else {
            0
        };
        let history = History::new(
            vec![Message::system(system), Message::user(task)],
            schema_bytes,
        );
        events.emit(EventKind::RunStarted {
            task: task.to_owned(),
            model: self.config.model.clone(),
            provider: self.provider.name().to_owned(),
            tool_mode: mode.as_str().to_owned(),
            workspace: self.workspace.root().display().to_string(),
            num_ctx,
            tools: specs.iter().map(|s| s.name.clone()).collect(),
        });
        let estimate = history.estimate_tokens();
        if estimate > u64::from(num_ctx) {
            events.guardrail(
                "context_window",
                "warn",
                format!("the opening prompt (~{estimate} tokens) will not fit num_ctx={num_ctx}; raise --num-ctx"),
            );
        }
        let format = self
            .config
            .parse_format
            .as_deref()
            .or(profile.parse_format.as_deref())
            .and_then(|f| f.parse().ok());
        Ok((
            Prepared {
                mode,
                options,
                format,
                files,
            },
            history,
        ))
    }

    /// The loop proper.
    async fn drive(
        &self,
        task: &str,
        prepared: Prepared,
        mut history: History,
        state: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> (Ending, History) {
        let Prepared {
            mode,
            options,
            format,
            files,
        } = prepared;
        let specs = &self.specs;
        let mut num_ctx = options.num_ctx.unwrap_or(self.config.default_ctx_cap);
        let setup = TurnSetup {
            provider: self.provider.as_ref(),
            model: &self.config.model,
            mode,
            specs,
            options,
            stream: self.config.stream,
            retry_truncated: self.config.retry_truncated,
            parse: TurnSetup::parse_options(specs, format),
            constrained_schema: (mode == ToolMode::Constrained)
                .then(|| tool_mode::constrained_schema(specs, files.as_ref())),
            wire: WireCache::default(),
            events,
            cancel,
        };
        let ctx = ToolContext {
            workspace: self.workspace.clone(),
            cancel: cancel.clone(),
            approver: self.approver.clone(),
        };
        let mut repetition = RepetitionDetector::for_mode(self.config.repetition_threshold, mode);
        loop {
            if cancel.is_cancelled() {
                return (
                    Ending::new(Outcome::Cancelled, state.last_text.clone()),
                    history,
                );
            }
            let used = state.prompt_tokens + state.completion_tokens;
            if let Some((kind, detail)) =
                exhausted_budget(&self.config.budgets, state.started, used, state.tool_calls)
            {
                events.guardrail(kind.guardrail_name(), "final_answer", detail);
                let answer = self.final_answer(&setup, task, &mut history, state).await;
                return (Ending::new(Outcome::BudgetExhausted, answer), history);
            }
            if state.iterations >= self.config.max_iterations {
                events.guardrail(
                    "max_iterations",
                    "stop",
                    format!("{} iterations reached", state.iterations),
                );
                return (
                    Ending::new(Outcome::MaxIterations, state.last_text.clone()),
                    history,
                );
            }
            self.keep_context_in_bounds(&mut history, num_ctx, events);
            state.iterations += 1;
            let (sent_bytes, sent_messages) = (history.text_bytes(), history.messages().len());
            let turn = match setup
                .run(
                    state.iterations,
                    history.messages(),
                    history.estimate_tokens(),
                )
                .await
            {
                Ok(turn) => turn,
                Err(e) => {
                    if !state.overflow_retried
                        && e.is_context_overflow()
                        && self.shrink_after_overflow(&mut history, &mut num_ctx, &e, events)
                    {
                        // The refused request is not an iteration: the retry takes its place.
                        state.iterations -= 1;
                        state.overflow_retried = true;
                        continue;
                    }
                    let outcome = if matches!(e, ProviderError::Cancelled) {
                        Outcome::Cancelled
                    } else {
                        Outcome::ProviderError
                    };
                    return (
                        Ending {
                            outcome,
                            answer: state.last_text.clone(),
                            error: Some(e.to_string()),
                        },
                        history,
                    );
                }
            };
            state.account(&turn);
            state.overflow_retried = false;
            history.calibrate(sent_bytes, sent_messages, turn.usage.prompt_tokens);
            let Turn {
                message,
                text,
                calls,
                final_answer,
                ..
            } = turn;
            history.push_assistant(message);
            if !text.trim().is_empty() {
                state.last_text = text.clone();
            }
            if let Some(answer) = final_answer {
                return (Ending::new(Outcome::Completed, answer), history);
            }
            if calls.is_empty() {
                let reason = if text.trim().is_empty() {
                    Some("empty_reply")
                } else if is_narration(&text) {
                    Some("narration")
                } else {
                    None
                };
                match reason {
                    Some(reason) if state.nudges < self.config.max_nudges => {
                        state.nudges += 1;
                        events.emit(EventKind::Nudge {
                            reason: reason.to_owned(),
                            count: state.nudges,
                        });
                        history.push_other(Message::user(prompts::nudge(reason, mode)));
                        continue;
                    }
                    _ => return (Ending::new(Outcome::Completed, text), history),
                }
            }
            let mut repeated = None;
            for call in calls {
                let call_started = Instant::now();
                let (args, result) = self.execute(&self.checker, &call, &ctx).await;
                let duration_ms = call_started.elapsed().as_millis() as u64;
                state.tool_calls += 1;
                state.tally.record(&call.name, result.is_ok());
                if let ToolResult::Ok { changed, .. } = &result {
                    state.files_changed.extend(changed.iter().cloned());
                }
                let result_json = result.to_json().to_string();
                events.emit(EventKind::ToolCall {
                    iteration: state.iterations,
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: args.clone(),
                    ok: result.is_ok(),
                    duration_ms,
                    summary: summarize(&result),
                });
                history.push_tool_result(prompts::tool_result_message(
                    mode,
                    &call,
                    &args,
                    &result,
                    &result_json,
                ));
                if call.name == TASK_COMPLETE && result.is_ok() {
                    let summary = args
                        .get("summary")
                        .and_then(|s| s.as_str())
                        .unwrap_or_default();
                    return (Ending::new(Outcome::Completed, summary), history);
                }
                if let Some(r) = repetition.record(&call.name, &args, &result_json) {
                    repeated = Some(r);
                }
            }
            if let Some(rep) = repeated {
                let detail = rep.describe();
                if mode == ToolMode::Constrained {
                    // A weak model under a schema repeats its last call forever and ignores
                    // hints; the results are in: ask for the answer in plain text.
                    events.guardrail("repetition", "final_answer", detail);
                    let answer = self.final_answer(&setup, task, &mut history, state).await;
                    return (Ending::new(Outcome::Completed, answer), history);
                }
                if !state.repetition_hinted {
                    state.repetition_hinted = true;
                    events.guardrail("repetition", "hint", detail.clone());
                    history.push_other(Message::user(prompts::repetition_hint(&detail)));
                } else {
                    events.guardrail("repetition", "stop", detail);
                    return (
                        Ending::new(Outcome::GuardrailStop, state.last_text.clone()),
                        history,
                    );
                }
            }
        }
    }
}

/// Fixed per-run choices made by [`Agent::prepare`].
struct Prepared {
    mode: ToolMode,
    options: ModelOptions,
    format: Option<reagent_parse::Family>,
    /// The workspace's first files, listed to the model in the constrained mode.
    files: Option<WorkspaceFiles>,
}

impl RunState {
    fn account(&mut self, turn: &Turn) {
        self.prompt_tokens += turn.usage.prompt_tokens;
        self.completion_tokens += turn.usage.completion_tokens;
        self.model_time += turn.model_time;
    }
}
