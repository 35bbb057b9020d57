//! The steps of an iteration that are not the loop itself: checking and running one tool call,
//! keeping the context within the window, and asking for a final answer.

use std::sync::Arc;

use reagent_protocol::{ChatRequest, EventKind, Message, ProviderError, ToolCall, ToolChoice};
use reagent_tools::{call_catching_panics, ToolContext, ToolResult};

use super::{Agent, RunState};
use crate::arguments::ArgumentChecker;
use crate::config::ToolMode;
use crate::events::EventSink;
use crate::history::History;
use crate::prompts;
use crate::turn::TurnSetup;

impl Agent {
    /// Validate and run one call; returns the arguments as used and the result.
    pub(super) async fn execute(
        &self,
        checker: &ArgumentChecker,
        call: &ToolCall,
        ctx: &ToolContext,
    ) -> (serde_json::Value, ToolResult) {
        let args = match checker.check(&call.name, &call.arguments) {
            Ok(args) => args,
            Err(message) => return (call.arguments.clone(), ToolResult::err(message)),
        };
        let Some(tool) = self.tools.get(&call.name).cloned() else {
            return (
                args,
                ToolResult::err(format!("unknown tool `{}`", call.name)),
            );
        };
        let result = if tool.is_quick(&args) {
            call_catching_panics(tool.as_ref(), &call.name, &args, ctx)
        } else {
            let ctx = ctx.clone();
            let run_args = args.clone();
            let name = call.name.clone();
            tokio::task::spawn_blocking(move || {
                call_catching_panics(tool.as_ref(), &name, &run_args, &ctx)
            })
            .await
            .unwrap_or_else(|e| ToolResult::err(format!("the tool was stopped: {e}")))
        };
        (args, result)
    }

    /// Past the trigger share of the context window, compact old tool results in one step.
    pub(super) fn keep_context_in_bounds(
        &self,
        history: &mut History,
        num_ctx: u32,
        events: &EventSink,
    ) {
        let limit = (f64::from(num_ctx) * self.config.compaction.trigger_ratio) as u64;
        if history.estimate_tokens() <= limit {
            return;
        }
        let low_water = (f64::from(num_ctx) * self.config.compaction.low_water_ratio) as u64;
        if let Some(c) = history.compact(self.config.compaction.keep_recent_rounds, low_water) {
            events.guardrail(
                "context_window",
                "compact",
                format!(
                    "~{} tokens passed {}% of num_ctx={num_ctx}: the {} oldest messages folded \
                     into a digest, now ~{} tokens",
                    c.before_tokens,
                    (self.config.compaction.trigger_ratio * 100.0) as u32,
                    c.folded,
                    c.after_tokens
                ),
            );
        }
        let now = history.estimate_tokens();
        if now > limit {
            events.guardrail(
                "context_overflow",
                "warn",
                format!(
                    "~{now} tokens still exceed {limit} after compaction; the server may truncate"
                ),
            );
        }
    }

    /// After the server refused a request as longer than its context window: take the window
    /// to be smaller than that request (90% of it) for the rest of the run and compact to fit.
    /// True (and a `context_overflow` retry event) when the history shrank; false when nothing
    /// could be removed, so a retry would fail the same way.
    pub(super) fn shrink_after_overflow(
        &self,
        history: &mut History,
        num_ctx: &mut u32,
        error: &ProviderError,
        events: &EventSink,
    ) -> bool {
        let before = history.estimate_tokens();
        let smaller = u32::try_from(before.saturating_mul(9) / 10).unwrap_or(u32::MAX);
        *num_ctx = (*num_ctx).min(smaller.max(1));
        self.keep_context_in_bounds(history, *num_ctx, events);
        let after = history.estimate_tokens();
        if after >= before {
            return false;
        }
        events.guardrail(
            "context_overflow",
            "retry",
            format!(
                "the server refused ~{before} tokens as too long for its context ({error}); \
                 taking the window as {num_ctx} tokens, compacted to ~{after}, retrying",
                num_ctx = *num_ctx
            ),
        );
        true
    }

    /// Ask once, without tools, for the final answer. Weak (constrained-mode) models get a
    /// fresh, plain question with the tool results restated; others continue the conversation.
    pub(super) async fn final_answer(
        &self,
        setup: &TurnSetup<'_>,
        task: &str,
        history: &mut History,
        state: &mut RunState,
    ) -> String {
        let messages = if setup.mode == ToolMode::Constrained {
            prompts::restated_question(task, history.messages())
                .into_iter()
                .map(Arc::new)
                .collect()
        } else {
            history.push_other(Message::user(prompts::FINAL_ANSWER_REQUEST));
            history.messages().to_vec()
        };
        let request = ChatRequest {
            model: self.config.model.clone(),
            messages,
            tools: Arc::default(),
            tool_choice: ToolChoice::None,
            options: setup.options.clone(),
            response_schema: None,
            stream: setup.stream,
            wire: setup.wire.clone(),
        };
        state.iterations += 1;
        setup.events.emit(EventKind::LlmRequest {
            iteration: state.iterations,
            messages: request.messages.len(),
            estimated_tokens: history.estimate_tokens(),
        });
        match setup.send(&request, true).await {
            Ok(response) => {
                setup.events.emit(crate::turn::response_event(
                    state.iterations,
                    &response.usage,
                    response.latency,
                    &response.finish,
                    response.endpoint.clone(),
                    None,
                    0,
                ));
                state.prompt_tokens += response.usage.prompt_tokens;
                state.completion_tokens += response.usage.completion_tokens;
                state.model_time += response.latency;
                let parsed = reagent_parse::parse(&response.message.content, &setup.parse);
                let mut answer = parsed.content.unwrap_or_default().trim().to_owned();
                crate::degenerate::cut(&mut answer, setup.events);
                history.push_assistant(Message::assistant(answer.clone()));
                if answer.is_empty() {
                    state.last_text.clone()
                } else {
                    answer
                }
            }
            Err(e) => {
                setup
                    .events
                    .guardrail("final_answer", "failed", e.to_string());
                state.last_text.clone()
            }
        }
    }
}

/// One line for the `tool_call` event and the terminal.
pub(super) fn summarize(result: &ToolResult) -> String {
    let text: std::borrow::Cow<'_, str> = match result {
        ToolResult::Ok { output, .. } => match output {
            serde_json::Value::String(s) => s.into(),
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
