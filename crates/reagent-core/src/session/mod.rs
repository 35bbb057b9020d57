//! A [`Session`]: one conversation of an [`Agent`] over a workspace, as a value.
//!
//! A session owns everything that changes while the agent works: the history (with its
//! compaction state and token calibration), the repetition detector, the settled tool mode and
//! context window, the provider's wire cache, and the run in progress. Each user message starts
//! a *run* (the first one is the task, later ones are follow-ups given with
//! [`Session::push_user`]); a run is stepped one loop iteration at a time with
//! [`Session::step`], or to its end with [`Session::run_to_end`]. Cancelling ends the run, not the
//! session: a follow-up can be given afterwards. [`Session::snapshot`] captures the whole state
//! as a serializable value and [`Session::resume`] continues from it, in this process or another.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_parse::ParseOptions;
use reagent_protocol::{
    CancellationToken, ErrorKind, EventKind, Guardrail, GuardrailAction, Message, ModelOptions,
    Outcome, ProviderError, ToolCall, UserMessageReason, WireCache,
};
use reagent_tools::{Workspace, WorkspaceFiles};
use serde::{Deserialize, Serialize};
use tracing::{Instrument, Span};

use crate::agent::Agent;
use crate::config::ToolMode;
use crate::events::EventSink;
use crate::guardrails::{CallTally, RepetitionDetector};
use crate::history::History;
use crate::result::{RunError, RunResult};
use crate::spans;
use crate::tool_mode;
use crate::turn::TurnSetup;
use crate::weak_model::schema_narrowing::Narrowing;
use crate::weak_model::Policy;

mod edit_turn;
pub(crate) mod edits;
mod follow;
mod iteration;
mod preload;
mod snapshot;
mod steps;
mod verifying;

pub use snapshot::{SessionSnapshot, SNAPSHOT_VERSION};

/// What stays fixed for a session once the server has been asked about the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSettings {
    /// The tool mode in force (never `auto`).
    pub mode: ToolMode,
    /// Generation options sent with every request.
    pub options: ModelOptions,
    /// The context window the loop keeps the prompt within (smaller than asked for after the
    /// server refused a prompt as too long).
    pub num_ctx: u32,
    /// The parser format hint, if any.
    pub format: Option<String>,
    /// The system prompt the conversation opened with.
    pub system_prompt: String,
    /// The workspace's files listed to the model (constrained mode; for a small workspace the
    /// schema allows only these paths).
    #[serde(default)]
    pub files: Option<WorkspaceFiles>,
    /// Whether a constrained run that would complete ends with the plain question instead of
    /// the model's own answer (the profile's [`crate::ModelProfile::plain_final_question`]).
    #[serde(default)]
    pub plain_final_question: bool,
    /// What the constrained schema narrows to the task and workspace (the profile's
    /// [`crate::ModelProfile::narrow_schema`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrowing: Option<Narrowing>,
    /// The weak-model policy in force (chosen by the model's profile, see `crate::weak_model`).
    #[serde(default)]
    pub(crate) policy: Policy,
    /// Whether a run whose task changes files in place gets edit turns (the profile's
    /// [`crate::ModelProfile::edits_as_text`]; see `session::edit_turn`).
    #[serde(default)]
    pub edit_turns: bool,
}

/// [`SessionSettings`] plus what is derived from them for every request.
struct Settled {
    settings: SessionSettings,
    parse: ParseOptions,
    constrained_schema: Option<serde_json::Value>,
}

impl Settled {
    fn new(agent: &Agent, settings: SessionSettings) -> Self {
        let format = settings.format.as_deref().and_then(|f| f.parse().ok());
        Settled {
            parse: TurnSetup::parse_options(&agent.specs, format),
            constrained_schema: (settings.mode == ToolMode::Constrained).then(|| {
                tool_mode::constrained_schema(
                    &agent.read_first_specs,
                    settings.files.as_ref(),
                    settings.narrowing.as_ref(),
                )
            }),
            settings,
        }
    }
}

/// Counters and state of the run in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RunState {
    /// The run's id (its events carry it).
    pub(crate) run_id: String,
    /// The user message that started the run (the task, or a follow-up).
    pub(crate) task: String,
    /// Wall time spent before the session was last resumed.
    pub(crate) elapsed_before: Duration,
    #[serde(skip, default = "Instant::now")]
    pub(crate) resumed_at: Instant,
    pub(crate) iterations: u32,
    pub(crate) tool_calls: u32,
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) model_time: Duration,
    pub(crate) files_changed: BTreeSet<String>,
    pub(crate) last_text: String,
    pub(crate) nudges: u32,
    pub(crate) repetition_hinted: bool,
    /// The last request was refused as longer than the server's context and the history was
    /// compacted for a retry (reset by the next reply, so each overflow gets one retry).
    pub(crate) overflow_retried: bool,
    /// Work calls made and how many succeeded (an answer on failures only is no progress).
    pub(crate) tally: CallTally,
    /// The checks the run is verified by (`auto` resolved against the task).
    #[serde(default)]
    pub(crate) checks: Vec<crate::verify::Check>,
    /// Rounds of checks run so far.
    #[serde(default)]
    pub(crate) verify_rounds: u32,
    /// What the last round of checks found.
    #[serde(default)]
    pub(crate) last_checks: Vec<crate::verify::CheckResult>,
    /// A file changed after the last command that succeeded (an edit nothing checked).
    #[serde(default)]
    pub(crate) unchecked_change: bool,
    /// The errors of the run's failed tool calls (the last few, cut), to tell an answer that
    /// only repeats one.
    #[serde(default)]
    pub(crate) errors: Vec<String>,
    /// The workspace as it was before the run's first change, once taken.
    #[serde(default)]
    pub(crate) checkpoint: Option<crate::checkpoint::Checkpoint>,
    /// Taking the checkpoint failed (said once; not tried again in this run).
    #[serde(default)]
    pub(crate) checkpoint_failed: bool,
    /// A command of the run succeeded.
    #[serde(default)]
    pub(crate) ran_command: bool,
    /// A small model that ended its run without doing what the task asks was asked once to
    /// do it (see `weak_model::Policy::work_not_done`).
    #[serde(default)]
    pub(crate) work_asked: bool,
    /// A small model's edit turns (see `session::edit_turn`), when the run has them.
    #[serde(default)]
    pub(crate) edit_turns: Option<edit_turn::EditTurns>,
    /// What the last command that succeeded printed, when it printed only to stdout.
    #[serde(default)]
    pub(crate) last_stdout: Option<String>,
    /// The searches and commands made for a small model before its first turn
    /// (`session::preload`): a reply that only copies them is not run.
    #[serde(default)]
    pub(crate) preloaded: Vec<ToolCall>,
    /// What the last search that matched found (`grep_search`'s lines).
    #[serde(default)]
    pub(crate) last_found: Option<String>,
    /// The run's tracing span (see [`crate::spans`]); a resumed run gets a new one.
    #[serde(skip, default = "Span::none")]
    pub(crate) span: Span,
}

impl RunState {
    fn new(run_id: &str, task: &str) -> Self {
        RunState {
            run_id: run_id.to_owned(),
            task: task.to_owned(),
            elapsed_before: Duration::ZERO,
            resumed_at: Instant::now(),
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
            checks: Vec::new(),
            verify_rounds: 0,
            last_checks: Vec::new(),
            unchecked_change: false,
            errors: Vec::new(),
            checkpoint: None,
            checkpoint_failed: false,
            ran_command: false,
            work_asked: false,
            edit_turns: None,
            last_stdout: None,
            last_found: None,
            preloaded: Vec::new(),
            span: Span::none(),
        }
    }

    /// Wall time of the run so far.
    pub(crate) fn elapsed(&self) -> Duration {
        self.elapsed_before + self.resumed_at.elapsed()
    }
}

/// How a run ended, before it is wrapped up into a [`RunResult`].
pub(crate) struct Ending {
    pub(crate) outcome: Outcome,
    pub(crate) answer: String,
    pub(crate) error: Option<RunError>,
}

impl Ending {
    pub(crate) fn new(outcome: Outcome, answer: impl Into<String>) -> Self {
        Ending {
            outcome,
            answer: answer.into(),
            error: None,
        }
    }

    /// A run ended by a provider error (a cancellation is its own outcome).
    pub(crate) fn failed(error: &ProviderError, answer: String) -> Self {
        let kind = error.kind();
        Ending {
            outcome: if kind == ErrorKind::Cancelled {
                Outcome::Cancelled
            } else {
                Outcome::ProviderError
            },
            answer,
            error: Some(RunError {
                kind,
                message: error.to_string(),
            }),
        }
    }
}

/// What one [`Session::step`] did.
#[derive(Debug)]
pub enum Step {
    /// The run goes on: call `step` again.
    Continue,
    /// The run ended; the session waits for a follow-up.
    Finished(Box<RunResult>),
    /// No run in progress and no user message waiting: nothing to do.
    Idle,
}

/// One conversation of an [`Agent`] over a workspace. `Send + 'static`: a server or worker may
/// own thousands.
pub struct Session {
    id: String,
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
    history: History,
    settled: Option<Settled>,
    repetition: RepetitionDetector,
    /// The session's encoded messages, shared by its requests.
    wire: WireCache,
    pending: VecDeque<String>,
    run: Option<RunState>,
    /// See [`SessionSnapshot`]'s field of the same name.
    events_whole: bool,
    /// The `attempt` event the next run emits after `run_started` (see [`crate::Attempts`]).
    attempt: Option<EventKind>,
}

impl Session {
    /// A new, empty session of `agent` over `workspace`.
    pub fn new(agent: Arc<Agent>, workspace: Arc<Workspace>) -> Self {
        let repetition = RepetitionDetector::new(agent.config.repetition_threshold);
        Session {
            id: crate::new_run_id(),
            agent,
            workspace,
            history: History::default(),
            settled: None,
            repetition,
            wire: WireCache::default(),
            pending: VecDeque::new(),
            run: None,
            events_whole: true,
            attempt: None,
        }
    }

    /// The `attempt` event the next run emits after `run_started`.
    pub(crate) fn set_attempt(&mut self, attempt: EventKind) {
        self.attempt = Some(attempt);
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Arc<Message>] {
        self.history.messages()
    }

    /// The workspace the session works in.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// Whether a run is in progress.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Give the session a user message: the task of a new session, or a follow-up after a run
    /// ended. It starts the next run at the next [`Session::step`] (a message given while a run
    /// is in progress waits for that run to end).
    pub fn push_user(&mut self, message: impl Into<String>) {
        self.pending.push_back(message.into());
    }

    /// Give `message` and run to the end of the run it starts.
    pub async fn run(
        &mut self,
        message: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        self.push_user(message);
        self.run_to_end(events, cancel).await
    }

    /// Step until the run in progress (or the one a waiting message starts) ends. With nothing
    /// to run, the result carries an `internal` error and no event is emitted.
    pub async fn run_to_end(
        &mut self,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        loop {
            match self.step(events, cancel).await {
                Step::Continue => {}
                Step::Finished(result) => return *result,
                Step::Idle => return self.idle_result(events),
            }
        }
    }

    /// One iteration of the loop (starting a run first when a user message waits).
    pub async fn step(&mut self, events: &EventSink, cancel: &CancellationToken) -> Step {
        let mut run = match self.run.take() {
            Some(run) => run,
            None => match self.pending.pop_front() {
                Some(message) => {
                    let span = self.run_span(events.run_id());
                    let begun = self
                        .begin_run(&message, events, cancel)
                        .instrument(span.clone())
                        .await;
                    match begun {
                        Ok(run) => RunState { span, ..run },
                        Err(ending) => {
                            let run = RunState {
                                span,
                                ..RunState::new(events.run_id(), &message)
                            };
                            return Step::Finished(Box::new(self.finish(run, ending, events)));
                        }
                    }
                }
                None => return Step::Idle,
            },
        };
        let span = run.span.clone();
        match self
            .iterate(&mut run, events, cancel)
            .instrument(span)
            .await
        {
            std::ops::ControlFlow::Continue(()) => {
                self.run = Some(run);
                Step::Continue
            }
            std::ops::ControlFlow::Break(ending) => {
                self.checkpoint_end(&run, events).await;
                Step::Finished(Box::new(self.finish(run, ending, events)))
            }
        }
    }

    /// The tracing span of run `run_id` of this session.
    fn run_span(&self, run_id: &str) -> Span {
        spans::run_span(
            run_id,
            &self.id,
            &self.agent.config.model,
            self.agent.provider_name(),
        )
    }

    /// Start a run with `message`: settle the session on its first run, open or continue the
    /// conversation, and emit `run_started`.
    async fn begin_run(
        &mut self,
        message: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<RunState, Ending> {
        let settled = match self.settled.take() {
            Some(settled) => settled,
            None => {
                let settings = self
                    .agent
                    .settle(&self.workspace, message, cancel)
                    .await
                    .map_err(|e| Ending::failed(&e, String::new()))?;
                Settled::new(&self.agent, settings)
            }
        };
        let settings = self.settled.insert(settled).settings.clone();
        // Each run watches its own calls (for a very small model the plain question comes at
        // the first identical repeat).
        self.repetition = settings
            .policy
            .repetition_detector(self.agent.config.repetition_threshold);
        let follow_up = !self.history.is_empty();
        if !follow_up {
            self.history = History::new(
                vec![
                    Message::system(settings.system_prompt.clone()),
                    Message::user(message),
                ],
                self.agent.schema_bytes(settings.mode),
            );
        }
        events.emit(EventKind::RunStarted {
            task: message.to_owned(),
            model: self.agent.config.model.clone(),
            provider: self.agent.provider.name().to_owned(),
            tool_mode: settings.mode.as_str().to_owned(),
            workspace: self.workspace.root().display().to_string(),
            num_ctx: settings.num_ctx,
            tools: self.agent.specs.iter().map(|s| s.name.clone()).collect(),
            session_id: self.id.clone(),
            system_prompt: settings.system_prompt.clone(),
            follow_up,
        });
        if let Some(attempt) = self.attempt.take() {
            events.emit(attempt);
        }
        if follow_up {
            self.push_loop_message(UserMessageReason::FollowUp, message.to_owned(), events);
        }
        let (estimate, num_ctx) = (self.history.estimate_tokens(), settings.num_ctx);
        if estimate > u64::from(num_ctx) {
            events.guardrail(
                reagent_protocol::Guardrail::ContextWindow,
                reagent_protocol::GuardrailAction::Warn,
                format!("the prompt (~{estimate} tokens) will not fit num_ctx={num_ctx}; raise --num-ctx"),
            );
        }
        let asked = &self.agent.config.verify.checks;
        if asked.contains(&crate::verify::Check::Auto)
            && crate::verify::auto_checks(message).is_empty()
        {
            events.guardrail(
                Guardrail::Unchecked,
                GuardrailAction::Warn,
                "verify auto: the task quotes no command it says must pass (as in \"so that \
                 `pytest` passes\"), so auto checks nothing"
                    .to_owned(),
            );
        }
        Ok(RunState {
            checks: crate::verify::resolve(asked, message),
            ..RunState::new(events.run_id(), message)
        })
    }

    /// Append a user message of the loop's own (nudge, hint, final-answer request, follow-up)
    /// and record it in the events.
    pub(crate) fn push_loop_message(
        &mut self,
        reason: UserMessageReason,
        content: String,
        events: &EventSink,
    ) {
        events.emit(EventKind::UserMessage {
            reason,
            content: content.clone(),
        });
        self.history.push_other(Message::user(content));
    }

    /// Wrap up a run: emit `run_finished` and build its result.
    fn finish(&mut self, run: RunState, mut ending: Ending, events: &EventSink) -> RunResult {
        if ending.outcome == Outcome::Completed {
            if let Some((guardrail, outcome, detail)) = verifying::dishonest_ending(&run, &ending) {
                events.guardrail(guardrail, GuardrailAction::Stop, detail);
                ending.outcome = outcome;
            }
        }
        let span = run.span.clone();
        let result = self.result(run, ending);
        spans::finish_run(
            &span,
            &spans::RunTotals {
                outcome: result.outcome,
                iterations: result.iterations,
                tool_calls: result.tool_calls,
                input_tokens: result.prompt_tokens,
                output_tokens: result.completion_tokens,
                error: result.error.as_ref().map(|e| (e.kind, e.message.as_str())),
            },
        );
        events.emit(EventKind::RunFinished {
            outcome: result.outcome,
            iterations: result.iterations,
            tool_calls: result.tool_calls,
            prompt_tokens: result.prompt_tokens,
            completion_tokens: result.completion_tokens,
            wall_ms: result.wall_time.as_millis() as u64,
            model_ms: result.model_time.as_millis() as u64,
            files_changed: result.files_changed.clone(),
            error: result.error.as_ref().map(|e| e.message.clone()),
            error_kind: result.error.as_ref().map(|e| e.kind),
            answer: result.answer.clone(),
        });
        result
    }

    fn result(&self, run: RunState, ending: Ending) -> RunResult {
        let wall_time = run.elapsed();
        RunResult {
            run_id: run.run_id,
            session_id: self.id.clone(),
            outcome: ending.outcome,
            answer: ending.answer,
            iterations: run.iterations,
            tool_calls: run.tool_calls,
            prompt_tokens: run.prompt_tokens,
            completion_tokens: run.completion_tokens,
            files_changed: run.files_changed.into_iter().collect(),
            last_assistant_text: run.last_text,
            transcript: self
                .history
                .messages()
                .iter()
                .map(|m| (**m).clone())
                .collect(),
            error: ending.error,
            tool_mode: self
                .settled
                .as_ref()
                .map_or(self.agent.config.tool_mode, |s| s.settings.mode),
            wall_time,
            model_time: run.model_time,
            checks: run.last_checks,
            checkpoint: run.checkpoint,
        }
    }

    /// The result of `run_to_end` when there was nothing to run (no events: no run happened).
    fn idle_result(&self, events: &EventSink) -> RunResult {
        let ending = Ending {
            outcome: Outcome::Completed,
            answer: String::new(),
            error: Some(RunError {
                kind: ErrorKind::Internal,
                message: "nothing to run: give the session a user message first".to_owned(),
            }),
        };
        self.result(RunState::new(events.run_id(), ""), ending)
    }
}
