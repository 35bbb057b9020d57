//! `tracing` spans of a run, its model calls and its tool calls, named and attributed after the
//! OpenTelemetry GenAI semantic conventions, so a `tracing-opentelemetry` layer exports them as
//! they are (the `reagent-telemetry` crate does). This crate knows nothing of OpenTelemetry: the
//! spans are ordinary `tracing` spans, disabled (and free) when no subscriber wants them.
//!
//! - a run: `invoke_agent reagent`, parent of
//!   - each model call: `chat MODEL` (`gen_ai.operation.name = chat`), and
//!   - each tool call: `execute_tool NAME` (`gen_ai.operation.name = execute_tool`).
//!
//! Prompts, completions, tool arguments and tool results are never span attributes. They are
//! `tracing` events of target [`CONTENT_TARGET`] inside the span, which a subscriber enables
//! only when the user asked for content to be recorded.

use std::borrow::Borrow;

use reagent_protocol::{ChatRequest, ChatResponse, ErrorKind, Message, Outcome, ProviderError};
use reagent_tools::ToolResult;
use serde_json::Value;
use tracing::field::Empty;
use tracing::Span;

/// The target of every span this module creates.
pub const SPAN_TARGET: &str = "reagent::genai";

/// The target of the events that carry content (prompts, completions, tool arguments and
/// results). Enable it only when the user opted in.
pub const CONTENT_TARGET: &str = "reagent::genai::content";

/// The agent's name in `gen_ai.agent.name` and in the run span's name.
const AGENT_NAME: &str = "reagent";

/// The span of one run. `model` and `provider` as configured; `session_id` is the conversation.
pub(crate) fn run_span(run_id: &str, session_id: &str, model: &str, provider: &str) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {AGENT_NAME}"),
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = AGENT_NAME,
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.conversation.id = session_id,
        reagent.run.id = run_id,
        reagent.run.outcome = Empty,
        reagent.run.iterations = Empty,
        reagent.run.tool_calls = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// What a finished run records on its span.
pub(crate) struct RunTotals<'a> {
    pub(crate) outcome: Outcome,
    pub(crate) iterations: u32,
    pub(crate) tool_calls: u32,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    pub(crate) error: Option<(ErrorKind, &'a str)>,
}

/// Record how a run ended on its span. A run that ended by an error (a provider error or an
/// internal one) is an error span; every other outcome, a cancellation included, is not.
pub(crate) fn finish_run(span: &Span, totals: &RunTotals<'_>) {
    span.record("reagent.run.outcome", totals.outcome.as_str());
    span.record("reagent.run.iterations", i64::from(totals.iterations));
    span.record("reagent.run.tool_calls", i64::from(totals.tool_calls));
    span.record("gen_ai.usage.input_tokens", int(totals.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(totals.output_tokens));
    if let Some((kind, message)) = totals.error {
        if kind != ErrorKind::Cancelled {
            mark_error(span, &error_kind_name(kind), message);
        }
    }
}

/// The span of one model call (a chat request to `provider`).
pub(crate) fn chat_span(provider: &str, request: &ChatRequest) -> Span {
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "chat",
        otel.name = %format_args!("chat {}", request.model),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = request.model.as_str(),
        gen_ai.request.max_tokens = Empty,
        gen_ai.request.temperature = Empty,
        gen_ai.request.seed = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        reagent.endpoint = Empty,
        reagent.latency_ms = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    );
    if let Some(n) = request.options.num_predict {
        span.record("gen_ai.request.max_tokens", i64::from(n));
    }
    if let Some(t) = request.options.temperature {
        span.record("gen_ai.request.temperature", f64::from(t));
    }
    if let Some(seed) = request.options.seed {
        span.record("gen_ai.request.seed", seed);
    }
    tracing::event!(
        target: CONTENT_TARGET,
        parent: &span,
        tracing::Level::TRACE,
        gen_ai.input.messages = %messages_json(&request.messages),
        "gen_ai.client.inference.input",
    );
    span
}

/// Record a model call's reply (usage, finish reason; the completion as content) or its error.
pub(crate) fn finish_chat(span: &Span, reply: &Result<ChatResponse, ProviderError>) {
    match reply {
        Ok(response) => {
            span.record(
                "gen_ai.usage.input_tokens",
                int(response.usage.prompt_tokens),
            );
            span.record(
                "gen_ai.usage.output_tokens",
                int(response.usage.completion_tokens),
            );
            span.record(
                "gen_ai.response.finish_reasons",
                crate::turn::finish_name(&response.finish).as_str(),
            );
            span.record("reagent.endpoint", response.endpoint.as_str());
            span.record(
                "reagent.latency_ms",
                int(response.latency.as_millis().try_into().unwrap_or(u64::MAX)),
            );
            tracing::event!(
                target: CONTENT_TARGET,
                parent: span,
                tracing::Level::TRACE,
                gen_ai.output.messages = %messages_json(std::slice::from_ref(&response.message)),
                "gen_ai.client.inference.output",
            );
        }
        Err(error) => mark_error(span, &error_kind_name(error.kind()), &error.to_string()),
    }
}

/// The span of one tool call.
pub(crate) fn tool_span(name: &str, call_id: &str) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        error.type = Empty,
        otel.status_code = Empty,
        otel.status_description = Empty,
    )
}

/// Record a tool call's result on its span (arguments and result as content); a tool error
/// makes it an error span, whose description does not quote the error (it may quote the
/// arguments or the files: it is content, in the result).
pub(crate) fn finish_tool(span: &Span, arguments: &Value, result: &ToolResult, result_json: &str) {
    if !result.is_ok() {
        mark_error(span, "tool_error", "the tool returned an error");
    }
    tracing::event!(
        target: CONTENT_TARGET,
        parent: span,
        tracing::Level::TRACE,
        gen_ai.tool.call.arguments = %arguments,
        gen_ai.tool.call.result = result_json,
        "gen_ai.tool.call.content",
    );
}

/// A count as an OpenTelemetry integer (exporters turn a `u64` field into text).
fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn mark_error(span: &Span, error_type: &str, message: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message);
}

/// The snake_case name events use for an error kind.
fn error_kind_name(kind: ErrorKind) -> String {
    match serde_json::to_value(kind) {
        Ok(Value::String(name)) => name,
        _ => format!("{kind:?}"),
    }
}

/// Messages as a JSON array (`[]` if they cannot be serialized, which they always can).
fn messages_json<M: Borrow<Message>>(messages: &[M]) -> String {
    let plain: Vec<&Message> = messages.iter().map(Borrow::borrow).collect();
    serde_json::to_string(&plain).unwrap_or_else(|_| "[]".to_owned())
}
