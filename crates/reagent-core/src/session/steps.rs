//! The steps of an iteration that are not the loop itself: the request setup, checking and
//! running one tool call, keeping the context within the window, and asking for a final answer.

use std::sync::Arc;
use std::time::Instant;

use reagent_protocol::{
    CancellationToken, ChatRequest, EventKind, Guardrail, GuardrailAction, Message, ProviderError,
    ToolCall, ToolChoice, UserMessageReason,
};
use reagent_tools::{
    call_async_catching_panics, Approval, Approver, ToolContext, ToolEvents, ToolResult, Verdict,
};
use serde_json::Value;

use super::{RunState, Session};
use crate::events::EventSink;
use crate::prompts;
use crate::turn::TurnSetup;
use crate::weak_model::PlainQuestion;

impl Session {
    /// What a model turn needs, borrowed from the session and its agent.
    pub(super) fn turn_setup<'a>(
        &'a self,
        events: &'a EventSink,
        cancel: &'a CancellationToken,
    ) -> Result<TurnSetup<'a>, ProviderError> {
        let settled = self.settled.as_ref().ok_or_else(|| {
            ProviderError::Config("internal: a model turn before the session was set up".into())
        })?;
        let config = &self.agent.config;
        Ok(TurnSetup {
            provider: self.agent.provider.as_ref(),
            model: &config.model,
            mode: settled.settings.mode,
            specs: &self.agent.specs,
            offer_tools: true,
            options: settled.settings.options.clone(),
            stream: config.stream,
            retry_truncated: config.retry_truncated
                && settled.settings.policy.retries_truncated_replies(),
            parse: &settled.parse,
            constrained_schema: settled.constrained_schema.as_ref(),
            wire: self.wire.clone(),
            events,
            cancel,
        })
    }

    /// The context tools run with: the session's workspace, the run's cancellation, and the
    /// agent's approver, whose questions and answers become events.
    pub(super) fn tool_context(
        &self,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ToolContext {
        ToolContext {
            workspace: self.workspace.clone(),
            cancel: cancel.clone(),
            approver: self.agent.approver.clone().map(|inner| {
                Arc::new(RecordedApprover {
                    inner,
                    events: events.clone(),
                }) as Arc<dyn Approver>
            }),
            run_id: Arc::from(events.run_id()),
            events: Some(Arc::new(events.clone())),
        }
    }

    /// Validate and run one call (`tool_call_started` first); returns the arguments as used and
    /// the result.
    pub(super) async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        iteration: u32,
        events: &EventSink,
    ) -> (Value, ToolResult) {
        let checked = self.agent.checker.check(&call.name, &call.arguments);
        events.emit(EventKind::ToolCallStarted {
            iteration,
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: checked.as_ref().unwrap_or(&call.arguments).clone(),
        });
        let args = match checked {
            Ok(args) => args,
            Err(message) => {
                let message = self.not_a_tool(&call.name).unwrap_or(message);
                return (call.arguments.clone(), ToolResult::err(message));
            }
        };
        let Some(tool) = self.agent.tools.get(&call.name).cloned() else {
            return (
                args,
                ToolResult::err(format!("unknown tool `{}`", call.name)),
            );
        };
        let result =
            call_async_catching_panics(tool.as_ref(), &call.name, args.clone(), ctx.clone()).await;
        (args, result)
    }

    /// The `tool_call` and `tool_result` events of a finished call.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_tool_result(
        &mut self,
        iteration: u32,
        call: &ToolCall,
        args: &Value,
        result: &ToolResult,
        result_json: &str,
        started: Instant,
        events: &EventSink,
    ) {
        events.emit(EventKind::ToolCall {
            iteration,
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: args.clone(),
            ok: result.is_ok(),
            duration_ms: started.elapsed().as_millis() as u64,
            summary: summarize(result),
        });
        let cap = self.agent.config.event_output_cap;
        let truncated = result_json.len() > cap;
        // From now on the events alone cannot rebuild the conversation.
        self.events_whole &= !truncated;
        let output = floor_slice(result_json, cap).to_owned();
        events.emit(EventKind::ToolResult {
            iteration,
            call_id: call.id.clone(),
            name: call.name.clone(),
            ok: result.is_ok(),
            output,
            truncated,
        });
    }

    /// Past the trigger share of the context window, remove the oldest rounds in one step.
    pub(super) fn keep_context_in_bounds(&mut self, events: &EventSink) {
        let Some(num_ctx) = self.settled.as_ref().map(|s| s.settings.num_ctx) else {
            return;
        };
        let compaction = &self.agent.config.compaction;
        let limit = (f64::from(num_ctx) * compaction.trigger_ratio) as u64;
        if self.history.estimate_tokens() <= limit {
            return;
        }
        let low_water = (f64::from(num_ctx) * compaction.low_water_ratio) as u64;
        if let Some(c) = self
            .history
            .compact(compaction.keep_recent_rounds, low_water)
        {
            events.guardrail(
                Guardrail::ContextWindow,
                GuardrailAction::Compact,
                format!(
                    "~{} tokens passed {}% of num_ctx={num_ctx}: the {} oldest messages folded \
                     into a digest, now ~{} tokens",
                    c.before_tokens,
                    (compaction.trigger_ratio * 100.0) as u32,
                    c.folded,
                    c.after_tokens
                ),
            );
            events.emit(EventKind::Compaction {
                rounds_removed: c.rounds,
                messages_removed: c.folded,
                estimated_tokens_before: c.before_tokens,
                estimated_tokens_after: c.after_tokens,
                digest: self
                    .history
                    .messages()
                    .last()
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
            });
        }
        let now = self.history.estimate_tokens();
        if now > limit {
            events.guardrail(
                Guardrail::ContextOverflow,
                GuardrailAction::Warn,
                format!(
                    "~{now} tokens still exceed {limit} after compaction; the server may truncate"
                ),
            );
        }
    }

    /// After the server refused a request as longer than its context window: take the window
    /// to be smaller than that request (90% of it) for the rest of the session and compact to
    /// fit. True (and a `context_overflow` retry event) when the history shrank; false when
    /// nothing could be removed, so a retry would fail the same way.
    pub(super) fn shrink_after_overflow(
        &mut self,
        error: &ProviderError,
        events: &EventSink,
    ) -> bool {
        let before = self.history.estimate_tokens();
        let smaller = u32::try_from(before.saturating_mul(9) / 10).unwrap_or(u32::MAX);
        let Some(settled) = self.settled.as_mut() else {
            return false;
        };
        let num_ctx = settled.settings.num_ctx.min(smaller.max(1));
        settled.settings.num_ctx = num_ctx;
        self.keep_context_in_bounds(events);
        let after = self.history.estimate_tokens();
        if after >= before {
            return false;
        }
        events.guardrail(
            Guardrail::ContextOverflow,
            GuardrailAction::Retry,
            format!(
                "the server refused ~{before} tokens as too long for its context ({error}); \
                 taking the window as {num_ctx} tokens, compacted to ~{after}, retrying"
            ),
        );
        true
    }

    /// Ask, without tools, for the final answer: a very small model plainly
    /// ([`Self::plain_final_answer`]); others continue the conversation.
    pub(super) async fn final_answer(
        &mut self,
        run: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> String {
        let plain = self.policy().plain_question(
            &run.task,
            self.history.messages(),
            &self.agent.tools,
            &self.workspace,
        );
        let answer = match plain {
            Some(question) => self.plain_final_answer(run, question, events, cancel).await,
            None => {
                let request = prompts::FINAL_ANSWER_REQUEST.to_owned();
                self.push_loop_message(UserMessageReason::FinalAnswerRequest, request, events);
                let messages = self.history.messages().to_vec();
                self.ask_without_tools(run, messages, events, cancel).await
            }
        };
        match answer {
            Ok(answer) if answer.text.is_empty() => run.last_text.clone(),
            Ok(answer) => answer.text,
            Err(e) => self.final_answer_failed(run, &e, events),
        }
    }

    /// The final answer of a very small model (see [`PlainQuestion`]): the plain question;
    /// once more, narrowly, when the answer mostly copies what was restated.
    async fn plain_final_answer(
        &mut self,
        run: &mut RunState,
        plain: PlainQuestion,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<PlainAnswer, ProviderError> {
        let question = plain.first();
        match self
            .ask_without_tools(run, question.clone(), events, cancel)
            .await
        {
            Ok(answer) if PlainQuestion::is_echo(&answer.text, &question) => {
                events.guardrail(
                    Guardrail::EchoedAnswer,
                    GuardrailAction::Retry,
                    "the answer only copied the restated tool results; asking narrowly",
                );
                match self
                    .ask_without_tools(run, plain.narrow(), events, cancel)
                    .await
                {
                    // A narrow answer that degenerated says less than the copy did.
                    Ok(again) if !again.text.is_empty() && !again.degenerate => Ok(again),
                    _ => Ok(answer),
                }
            }
            other => other,
        }
        .map(|answer| PlainAnswer {
            text: plain.tidy(answer.text),
            degenerate: answer.degenerate,
        })
    }

    /// One request without tools or schema; the reply is recorded and its text returned.
    async fn ask_without_tools(
        &mut self,
        run: &mut RunState,
        messages: Vec<Arc<Message>>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<PlainAnswer, ProviderError> {
        run.iterations += 1;
        let (response, answer) = {
            let setup = self.turn_setup(events, cancel)?;
            let request = ChatRequest {
                model: setup.model.to_owned(),
                messages,
                tools: Arc::default(),
                tool_choice: ToolChoice::None,
                options: setup.options.clone(),
                response_schema: None,
                stream: setup.stream,
                wire: setup.wire.clone(),
            };
            events.emit(EventKind::LlmRequest {
                iteration: run.iterations,
                messages: request.messages.len(),
                estimated_tokens: self.history.estimate_tokens(),
            });
            let response = setup.send(&request, true).await?;
            let parsed = reagent_parse::parse(&response.message.content, setup.parse);
            let mut answer = parsed.content.unwrap_or_default().trim().to_owned();
            let degenerate = crate::degenerate::cut(&mut answer, events);
            (
                response,
                PlainAnswer {
                    text: answer,
                    degenerate,
                },
            )
        };
        events.emit(crate::turn::response_event(
            run.iterations,
            &response.usage,
            response.latency,
            &response.finish,
            response.endpoint.clone(),
            None,
            0,
        ));
        run.prompt_tokens += response.usage.prompt_tokens;
        run.completion_tokens += response.usage.completion_tokens;
        run.model_time += response.latency;
        let raw =
            (response.message.content != answer.text).then(|| response.message.content.clone());
        let message = Message::assistant(answer.text.clone());
        self.record_assistant(run.iterations, message, &[], None, raw, events);
        Ok(answer)
    }

    fn final_answer_failed(
        &self,
        run: &RunState,
        error: &ProviderError,
        events: &EventSink,
    ) -> String {
        events.guardrail(
            Guardrail::FinalAnswer,
            GuardrailAction::Failed,
            error.to_string(),
        );
        run.last_text.clone()
    }
}

/// The text of a reply asked for without tools.
struct PlainAnswer {
    text: String,
    /// It degenerated and was cut.
    degenerate: bool,
}

/// An approver whose questions and answers are recorded as `approval_requested` and
/// `approval_decided` events. An approval's id is the run's id and the `seq` of its
/// `approval_requested` event, so it is unique in the run (a context is made per iteration).
struct RecordedApprover {
    inner: Arc<dyn Approver>,
    events: EventSink,
}

impl Approver for RecordedApprover {
    fn approve(&self, request: &Approval) -> Verdict {
        // Tools run one at a time, so the next seq is this request's.
        let approval_id = format!("{}-{}", self.events.run_id(), self.events.last_seq() + 1);
        self.events.emit(EventKind::ApprovalRequested {
            approval_id: approval_id.clone(),
            command: request.summary(),
            diff: request.diff().map(str::to_owned),
        });
        let verdict = self.inner.approve(request);
        self.events.emit(EventKind::ApprovalDecided {
            approval_id,
            approved: verdict.allowed(),
            note: match &verdict {
                Verdict::Deny { note } => note.clone(),
                Verdict::Allow => None,
            },
        });
        verdict
    }
}

impl ToolEvents for EventSink {
    fn emit(&self, kind: EventKind) {
        EventSink::emit(self, kind);
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn floor_slice(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// One line for the `tool_call` event and the terminal.
pub(crate) fn summarize(result: &ToolResult) -> String {
    let text: std::borrow::Cow<'_, str> = match result {
        ToolResult::Ok { output, .. } => match output {
            Value::String(s) => s.into(),
            other => other.to_string().into(),
        },
        ToolResult::Err { error } => format!("error: {error}").into(),
    };
    let first: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect();
    if text.len() > first.len() {
        format!("{first}… ({} bytes)", text.len())
    } else {
        first
    }
}
