//! One iteration of the loop — checks, context, model turn, calls, repetition — and the
//! pieces it is made of.

use std::ops::ControlFlow::{self, Break, Continue};
use std::time::Instant;

use reagent_protocol::{
    CancellationToken, EventKind, Guardrail, GuardrailAction, Message, Outcome, ProviderError,
    ToolCall, UserMessageReason,
};
use reagent_tools::ToolResult;
use serde_json::Value;
use tracing::Instrument;

use super::{Ending, RunState, Session};
use crate::config::ToolMode;
use crate::events::EventSink;
use crate::guardrails::{exhausted_budget, is_narration, Repetition};
use crate::prompts;
use crate::spans;
use crate::turn::Turn;
use crate::weak_model::Policy;

impl Session {
    /// One iteration: limits, context, one model turn, its tool calls, repetition. `Break`
    /// ends the run.
    pub(super) async fn iterate(
        &mut self,
        run: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        self.check_limits(run, events, cancel).await?;
        if let Break(ending) = self.preload_named_files(run, events, cancel).await {
            return self.verify_ending(run, ending, events, cancel).await;
        }
        self.keep_context_in_bounds(events);
        run.iterations += 1;
        let mut turn = match self.request_turn(run, events, cancel).await {
            Ok(turn) => turn,
            Err(error) => return self.after_failed_turn(run, &error, events),
        };
        self.read_text_calls(run, &mut turn);
        if !turn.calls.is_empty() && turn.layer.as_deref() != Some("text_edit") {
            // An edit turn answered with calls of the tools: the tool loop from now on.
            if let Some(edit) = run.edit_turns.as_mut() {
                edit.active = false;
            }
        }
        let repeated = turn.drop_repeated_calls();
        if repeated > 0 {
            tracing::debug!(repeated, "calls repeated within one reply run once");
        }
        // Edits written as text are the model's whole answer, not a run of stray calls.
        if self.policy().runs_first_tool_only() && turn.layer.as_deref() != Some("text_edit") {
            let later = turn.keep_first_tool_calls();
            if later > 0 {
                tracing::debug!(later, "a small model's calls after its first tool left out");
            }
        }
        let flow = match self.record_reply(run, turn, events) {
            Break(ending) => Break(ending),
            Continue(reply) if reply.calls.is_empty() => self.answer_or_nudge(run, reply, events),
            Continue(Reply { calls, .. }) => match self.run_calls(run, calls, events, cancel).await
            {
                Continue(Some(repetition)) => {
                    // Its ending (if any) is already the final one: it is only verified.
                    match self.on_repetition(run, repetition, events, cancel).await {
                        Break(ending) => {
                            return self.verify_ending(run, ending, events, cancel).await
                        }
                        Continue(()) => return Continue(()),
                    }
                }
                other => other.map_continue(|_| ()),
            },
        };
        match flow {
            Break(ending) => match self.answered_plainly(run, ending, events, cancel).await {
                Break(ending) => self.verify_ending(run, ending, events, cancel).await,
                Continue(()) => Continue(()),
            },
            Continue(()) => Continue(()),
        }
    }

    /// For a very small model whose profile has `plain_final_question`, a constrained run that
    /// completes (an answer the model wrote inside the JSON shape, `{"final_answer": …}`,
    /// `task_complete`, or a reply that was not JSON) ends with the plain question instead:
    /// such models write nonsense into a JSON string and answer a plain question from the
    /// restated results (BENCHMARKS.md). Other models keep their own answer.
    async fn answered_plainly(
        &mut self,
        run: &mut RunState,
        ending: Ending,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        let wanted = self
            .settled
            .as_ref()
            .is_some_and(|s| s.settings.plain_final_question);
        if !wanted || ending.outcome != Outcome::Completed {
            return Break(ending);
        }
        let answer = self.final_answer(run, events, cancel).await;
        Break(Ending::new(Outcome::Completed, answer))
    }

    /// The weak-model policy in force.
    pub(super) fn policy(&self) -> Policy {
        self.settled
            .as_ref()
            .map_or(Policy::Standard, |s| s.settings.policy)
    }

    /// The tool mode in force.
    pub(super) fn mode(&self) -> ToolMode {
        self.settled
            .as_ref()
            .map_or(ToolMode::Prompt, |s| s.settings.mode)
    }

    /// Cancellation, budgets (which end with a final answer) and the iteration limit.
    async fn check_limits(
        &mut self,
        run: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        if cancel.is_cancelled() {
            return Break(Ending::failed(
                &ProviderError::Cancelled,
                run.last_text.clone(),
            ));
        }
        let used = run.prompt_tokens + run.completion_tokens;
        let config = &self.agent.config;
        if let Some((kind, detail)) =
            exhausted_budget(&config.budgets, run.elapsed(), used, run.tool_calls)
        {
            events.guardrail(kind.guardrail(), GuardrailAction::FinalAnswer, detail);
            let answer = self.final_answer(run, events, cancel).await;
            return Break(Ending::new(Outcome::BudgetExhausted, answer));
        }
        if run.iterations >= config.max_iterations {
            events.guardrail(
                Guardrail::MaxIterations,
                GuardrailAction::Stop,
                format!("{} iterations reached", run.iterations),
            );
            return Break(Ending::new(Outcome::MaxIterations, run.last_text.clone()));
        }
        Continue(())
    }

    /// Send the history and get the model's turn; calibrate the token estimate with its usage.
    async fn request_turn(
        &mut self,
        run: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Turn, ProviderError> {
        let sent_bytes = self.history.text_bytes();
        let sent_messages = self.history.messages().len();
        // A small model's turn may send its results as plain text; an edit turn sends the
        // files after the task, and no tools.
        let rewritten = self.turn_messages(run);
        let turn = {
            let mut setup = self.turn_setup(events, cancel)?;
            setup.offer_tools = !run.edit_turns.as_ref().is_some_and(|e| e.active);
            let messages = rewritten.as_deref().unwrap_or(self.history.messages());
            setup
                .run(run.iterations, messages, self.history.estimate_tokens())
                .await?
        };
        run.account(&turn);
        run.overflow_retried = false;
        if run.edit_turns.is_none() {
            // The estimate is calibrated on what the history holds, as sent (results in plain
            // text are about as long as their JSON; shown files are not in the history).
            self.history
                .calibrate(sent_bytes, sent_messages, turn.usage.prompt_tokens);
        }
        Ok(turn)
    }

    /// A refused prompt that was too long is retried once after compaction; any other error
    /// ends the run.
    fn after_failed_turn(
        &mut self,
        run: &mut RunState,
        error: &ProviderError,
        events: &EventSink,
    ) -> ControlFlow<Ending> {
        if !run.overflow_retried
            && error.is_context_overflow()
            && self.shrink_after_overflow(error, events)
        {
            // The refused request is not an iteration: the retry takes its place.
            run.iterations -= 1;
            run.overflow_retried = true;
            return Continue(());
        }
        run.keep_partial(error, events);
        Break(Ending::failed(error, run.last_text.clone()))
    }

    /// Append the model's message; a final answer in the constrained shape ends the run.
    fn record_reply(
        &mut self,
        run: &mut RunState,
        turn: Turn,
        events: &EventSink,
    ) -> ControlFlow<Ending, Reply> {
        let Turn {
            message,
            text,
            calls,
            final_answer,
            layer,
            unread_call,
            copied_preload,
            raw,
            ..
        } = turn;
        self.record_assistant(run.iterations, message, &calls, layer, raw, events);
        if !text.trim().is_empty() {
            run.last_text = text.clone();
        }
        match final_answer {
            Some(answer) => Break(Ending::new(Outcome::Completed, answer)),
            None => Continue(Reply {
                calls,
                text,
                unread_call,
                copied_preload,
            }),
        }
    }

    /// Append an assistant message to the history and record it in the events.
    pub(super) fn record_assistant(
        &mut self,
        iteration: u32,
        message: Message,
        calls: &[ToolCall],
        parse_layer: Option<String>,
        raw: Option<String>,
        events: &EventSink,
    ) {
        events.emit(EventKind::AssistantMessage {
            iteration,
            content: message.content.clone(),
            reasoning: message.reasoning.clone(),
            calls: calls.to_vec(),
            tool_calls: message.tool_calls.clone(),
            parse_layer,
            raw,
        });
        self.history.push_assistant(message);
    }

    /// A reply without calls: nudged when it attempted a call that could not be read, when
    /// empty or only narrating (a few times), else the answer.
    fn answer_or_nudge(
        &mut self,
        run: &mut RunState,
        reply: Reply,
        events: &EventSink,
    ) -> ControlFlow<Ending> {
        let Reply {
            text,
            unread_call,
            copied_preload,
            ..
        } = reply;
        if let Some(ask) = run.edit_turns.as_mut().and_then(|e| e.missed()) {
            run.nudges += 1;
            events.emit(EventKind::Nudge {
                reason: "no_edit".to_owned(),
                count: run.nudges,
            });
            self.push_loop_message(UserMessageReason::Nudge, ask, events);
            return Continue(());
        }
        let reason = if copied_preload {
            "preload_copy"
        } else if unread_call.is_some() {
            "unread_call"
        } else if text.trim().is_empty() {
            "empty_reply"
        } else if prompts::is_result_echo(&text) {
            "result_echo"
        } else if is_narration(&text) {
            "narration"
        } else {
            return Break(Ending::new(Outcome::Completed, text));
        };
        if run.nudges >= self.agent.config.max_nudges {
            // A reply that is still a call the loop cannot run is no answer.
            if let Some(why) = &unread_call {
                events.guardrail(
                    Guardrail::NoProgress,
                    GuardrailAction::Stop,
                    format!("the reply is still a tool call that cannot be run ({why})"),
                );
                return Break(Ending::new(Outcome::NoProgress, text));
            }
            // Still echoing: after changes it has nothing to add (the ending is judged as
            // any other, `unchecked` when nothing checked them); without, no progress.
            if reason == "result_echo" && run.files_changed.is_empty() {
                events.guardrail(
                    Guardrail::NoProgress,
                    GuardrailAction::Stop,
                    "the reply still echoes a tool's result instead of answering".to_owned(),
                );
                return Break(Ending::new(Outcome::NoProgress, text));
            }
            return Break(Ending::new(Outcome::Completed, text));
        }
        run.nudges += 1;
        events.emit(EventKind::Nudge {
            reason: reason.to_owned(),
            count: run.nudges,
        });
        let nudge = match &unread_call {
            Some(why) => prompts::unread_call_nudge(why, self.mode()),
            None => prompts::nudge(reason, self.mode()),
        };
        self.push_loop_message(UserMessageReason::Nudge, nudge, events);
        Continue(())
    }

    /// Run the calls in order and append their results; `task_complete` ends the run. Returns
    /// the repetition the calls completed, if any.
    pub(super) async fn run_calls(
        &mut self,
        run: &mut RunState,
        calls: Vec<ToolCall>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending, Option<Repetition>> {
        let ctx = self.tool_context(events, cancel);
        let mode = self.mode();
        let mut repeated = None;
        let mut all_ok = true;
        // The commands an edit turn ran name its ending (collected only in one).
        let in_edit_turn = run.edit_turns.as_ref().is_some_and(|e| e.active);
        let commands: Vec<String> = calls
            .iter()
            .filter(|c| in_edit_turn && c.name == "run_command")
            .filter_map(|c| c.arguments.get("command")?.as_str().map(str::to_owned))
            .collect();
        for call in calls {
            self.checkpoint_before(run, &call, events).await;
            let started = Instant::now();
            let span = spans::tool_span(&call.name, &call.id);
            let (args, result) = self
                .execute(&call, &ctx, run.iterations, events)
                .instrument(span.clone())
                .await;
            run.tool_calls += 1;
            run.tally.record(&call.name, result.is_ok());
            all_ok &= result.is_ok();
            Self::note_result(run, &call, &result);
            if let ToolResult::Ok { changed, .. } = &result {
                run.files_changed.extend(changed.iter().cloned());
                if !changed.is_empty() {
                    let text = |key: &str| args.get(key).and_then(Value::as_str);
                    let written = text("path").zip(text("new_string").or(text("content")));
                    self.follow_workspace(&run.task, written);
                }
            }
            let result_json = prompts::tool_result_json(&result);
            spans::finish_tool(&span, &args, &result, &result_json);
            drop(span);
            self.record_tool_result(
                run.iterations,
                &call,
                &args,
                &result,
                &result_json,
                started,
                events,
            );
            let completes = result.run_answer().map(str::to_owned);
            if completes.is_none() {
                if let Some(r) = self.repetition.record(&call.name, &args, &result_json) {
                    repeated = Some(r);
                }
            }
            // The history takes the result's text itself, not a copy.
            self.history.push_tool_result(prompts::tool_result_message(
                mode,
                &call,
                &args,
                &result,
                result_json,
            ));
            if let Some(answer) = completes {
                return Break(Ending::new(Outcome::Completed, answer));
            }
        }
        // An edit turn whose edits all succeeded ends the run; its checks judge it.
        if all_ok && (!run.files_changed.is_empty() || !commands.is_empty()) {
            if let Some(answer) = run
                .edit_turns
                .as_ref()
                .and_then(|e| e.ended(run, &commands))
            {
                return Break(Ending::new(Outcome::Completed, answer));
            }
        }
        // A weak model does not stop once the change is made (it repeats or undoes it): with
        // every file the task names changed, the run asks for the answer.
        if self.named_files_changed(run) {
            tracing::debug!("every file the task names was changed; asking for the answer");
            return Break(Ending::new(Outcome::Completed, run.last_text.clone()));
        }
        Continue(repeated)
    }

    /// A repetition: for a very small model (it ignores hints) the plain question for the
    /// answer; otherwise a hint the first time and a stop the next.
    async fn on_repetition(
        &mut self,
        run: &mut RunState,
        repetition: Repetition,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        let detail = repetition.describe();
        if self.policy().answers_at_repetition() {
            events.guardrail(Guardrail::Repetition, GuardrailAction::FinalAnswer, detail);
            let answer = self.final_answer(run, events, cancel).await;
            return Break(Ending::new(Outcome::Completed, answer));
        }
        if run.repetition_hinted {
            events.guardrail(Guardrail::Repetition, GuardrailAction::Stop, detail);
            return Break(Ending::new(Outcome::GuardrailStop, run.last_text.clone()));
        }
        run.repetition_hinted = true;
        events.guardrail(Guardrail::Repetition, GuardrailAction::Hint, detail.clone());
        let hint = prompts::repetition_hint(&detail);
        self.push_loop_message(UserMessageReason::RepetitionHint, hint, events);
        Continue(())
    }
}

impl RunState {
    /// A reply that broke off mid-stream: what it said so far becomes the last assistant text
    /// (and so the run's answer), and a `stream_cut` guardrail event says so.
    fn keep_partial(&mut self, error: &ProviderError, events: &EventSink) {
        let Some(partial) = error.partial_text().filter(|p| !p.trim().is_empty()) else {
            return;
        };
        events.guardrail(
            Guardrail::StreamCut,
            GuardrailAction::PartialResult,
            format!(
                "the reply broke off after {} characters; they are kept as the partial result",
                partial.chars().count()
            ),
        );
        self.last_text = partial.to_owned();
    }

    fn account(&mut self, turn: &Turn) {
        self.prompt_tokens += turn.usage.prompt_tokens;
        self.completion_tokens += turn.usage.completion_tokens;
        self.model_time += turn.model_time;
    }
}

/// A recorded reply the run goes on from.
struct Reply {
    calls: Vec<ToolCall>,
    text: String,
    /// Why a call the reply attempted could not be read.
    unread_call: Option<String>,
    /// Its calls only repeated the calls made before the first turn, and were dropped.
    copied_preload: bool,
}
