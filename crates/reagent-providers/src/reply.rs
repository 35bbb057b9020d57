//! Building the provider-neutral reply: the assistant message, tool-call arguments, streamed
//! text signals, and short excerpts of bad input for error messages.

use std::time::Instant;

use reagent_protocol::{
    ChatResponse, ChatSignal, FinishReason, Message, ProviderError, Role, SignalSink, ToolCall,
    Usage,
};
use serde_json::Value;

/// The response of one attempt that began at `started`, answered by `endpoint`.
pub(crate) fn response(
    (message, finish, usage): (Message, FinishReason, Usage),
    started: Instant,
    endpoint: &str,
) -> ChatResponse {
    ChatResponse {
        message,
        finish,
        usage,
        latency: started.elapsed(),
        endpoint: endpoint.to_owned(),
    }
}

/// An assistant message from its parts.
pub(crate) fn assistant(content: String, reasoning: String, calls: Vec<ToolCall>) -> Message {
    Message {
        role: Role::Assistant,
        content,
        reasoning: (!reasoning.is_empty()).then_some(reasoning),
        tool_calls: calls,
        tool_name: None,
        tool_call_id: None,
    }
}

/// Emits streamed text to the sink, skipping empty pieces.
pub(crate) fn emit(sink: SignalSink<'_>, piece: &str, reasoning: bool) {
    if piece.is_empty() {
        return;
    }
    sink(if reasoning {
        ChatSignal::Reasoning(piece.to_owned())
    } else {
        ChatSignal::Content(piece.to_owned())
    });
}

/// Parses a tool call's arguments: objects as they are, strings parsed as JSON when they are
/// JSON (an empty string is an empty object), anything else kept as sent.
pub(crate) fn parse_arguments(v: Value) -> Value {
    match v {
        Value::String(s) if s.trim().is_empty() => Value::Object(Default::default()),
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Value::Null => Value::Object(Default::default()),
        other => other,
    }
}

/// Fails with the error a server reported in the `error` field of a reply or a stream
/// chunk, worded with its own message (`"error": "..."` or `"error": {"message": "..."}`). Some servers
/// send `"error": null` in chunks that are fine: that is no error.
pub(crate) fn check_reported_error(v: &Value, url: &str) -> Result<(), ProviderError> {
    let Some(err) = v.get("error").filter(|e| !e.is_null()) else {
        return Ok(());
    };
    let message = err
        .as_str()
        .or_else(|| err.get("message").and_then(Value::as_str))
        .map_or_else(|| short(err), str::to_owned);
    Err(error_mid_reply(url, &message))
}

/// The error a server reported inside a reply or a stream chunk (an `error` field).
pub(crate) fn error_mid_reply(url: &str, message: &str) -> ProviderError {
    ProviderError::Protocol {
        url: url.to_owned(),
        detail: format!("the server reported an error mid-reply: {message}"),
    }
}

/// The first 200 characters of a JSON value, for error messages.
pub(crate) fn short(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_error_field_is_no_error() {
        let worded = |v: Value| check_reported_error(&v, "u").map_err(|e| e.to_string());
        assert_eq!(worded(serde_json::json!({"error": null})), Ok(()));
        assert_eq!(worded(serde_json::json!({"done": true})), Ok(()));
        let boom = Err(error_mid_reply("u", "boom").to_string());
        assert_eq!(worded(serde_json::json!({"error": "boom"})), boom);
        assert_eq!(
            worded(serde_json::json!({"error": {"message": "boom"}})),
            boom
        );
    }

    #[test]
    fn arguments_are_parsed_when_json() {
        assert_eq!(
            parse_arguments(Value::String("{\"a\":1}".into())),
            serde_json::json!({"a":1})
        );
        assert_eq!(
            parse_arguments(Value::String(String::new())),
            serde_json::json!({})
        );
        assert_eq!(
            parse_arguments(Value::String("{oops".into())),
            Value::String("{oops".into())
        );
        assert_eq!(
            parse_arguments(serde_json::json!({"b":2})),
            serde_json::json!({"b":2})
        );
    }
}
