//! Putting an OpenAI-compatible SSE stream back together.
//!
//! Each `data:` event is a `chat.completion.chunk`; `data: [DONE]` ends the stream. Tool-call
//! deltas are accumulated by `index`: the first delta of a call carries its `id` and name,
//! later ones carry `arguments` as string fragments to concatenate, or (from some servers)
//! as a whole JSON object. Empty deltas are fine. A stream that breaks off before `[DONE]` or a
//! `finish_reason` is a [`ProviderError::Protocol`] error, as is a `data:` line that is not JSON.

use reagent_protocol::{FinishReason, Message, ProviderError, SignalSink, ToolCall, Usage};
use serde_json::Value;

use crate::openai::{finish_reason, usage};
use crate::reply::{self, assistant, short};
use crate::sse::SseReader;

/// One tool call being put together.
#[derive(Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    args_text: String,
    args_object: Option<Value>,
}

/// Accumulates chunks.
#[derive(Default)]
pub(crate) struct StreamState {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish: Option<String>,
    usage: Option<Value>,
    timings: Option<Value>,
}

impl StreamState {
    /// Takes one chunk.
    pub(crate) fn chunk(
        &mut self,
        v: &Value,
        url: &str,
        sink: SignalSink<'_>,
    ) -> Result<(), ProviderError> {
        reply::check_reported_error(v, url)?;
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        if let Some(t) = v.get("timings").filter(|t| t.is_object()) {
            self.timings = Some(t.clone());
        }
        let Some(choice) = v.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(r.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(r) = delta.get("reasoning_content").and_then(Value::as_str) {
            self.reasoning.push_str(r);
            reply::emit(sink, r, true);
        }
        if let Some(c) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(c);
            reply::emit(sink, c, false);
        }
        for d in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.call_delta(d);
        }
        Ok(())
    }

    fn call_delta(&mut self, d: &Value) {
        let id = d
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let index = d.get("index").and_then(Value::as_u64);
        let pos = match index {
            Some(i) => self.calls.iter().position(|c| c.index == i),
            // No index: a new id starts a call, anything else continues the last one.
            None => match id {
                Some(id) => self.calls.iter().position(|c| c.id == id),
                None => self.calls.len().checked_sub(1),
            },
        };
        let pos = match pos {
            Some(p) => p,
            None => {
                let index = index.unwrap_or(self.calls.len() as u64);
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let Some(call) = self.calls.get_mut(pos) else {
            return;
        };
        if let Some(id) = id {
            if call.id.is_empty() {
                call.id = id.to_owned();
            }
        }
        let f = d.get("function").unwrap_or(d);
        if let Some(name) = f.get("name").and_then(Value::as_str) {
            if call.name.is_empty() {
                call.name = name.to_owned();
            } else if call.name != name {
                call.name.push_str(name);
            }
        }
        match f.get("arguments") {
            Some(Value::String(s)) => call.args_text.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => call.args_object = Some(other.clone()),
        }
    }

    /// The final message, finish reason and usage.
    pub(crate) fn finish(self) -> (Message, FinishReason, Usage) {
        let calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(i, c)| ToolCall {
                id: if c.id.is_empty() {
                    format!("call_{i}")
                } else {
                    c.id
                },
                name: c.name,
                arguments: match c.args_object {
                    Some(obj) if c.args_text.trim().is_empty() => obj,
                    _ => reply::parse_arguments(Value::String(c.args_text)),
                },
            })
            .collect();
        let finish = finish_reason(self.finish.as_deref(), !calls.is_empty());
        let usage = usage(self.usage.as_ref(), self.timings.as_ref());
        (
            assistant(self.content, self.reasoning, calls),
            finish,
            usage,
        )
    }
}

/// Reads the whole stream.
pub(crate) async fn read_stream(
    resp: reqwest::Response,
    url: &str,
    opts: &crate::http::ClientOptions,
    sink: SignalSink<'_>,
) -> Result<(Message, FinishReason, Usage), ProviderError> {
    let mut reader = SseReader::new(resp, url, opts);
    let mut state = StreamState::default();
    let mut done = false;
    while let Some(ev) = reader.next().await? {
        let data = ev.data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(data).map_err(|e| ProviderError::Protocol {
            url: url.to_owned(),
            detail: format!(
                "malformed SSE data ({e}): {}",
                data.chars().take(200).collect::<String>()
            ),
        })?;
        if ev.event.as_deref() == Some("error") {
            return Err(reply::error_mid_reply(url, &short(&v)));
        }
        state.chunk(&v, url, sink)?;
    }
    if !done && state.finish.is_none() {
        return Err(ProviderError::Protocol {
            url: url.to_owned(),
            detail: "the stream ended before `data: [DONE]` (connection cut?)".to_owned(),
        });
    }
    Ok(state.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(chunks: &[Value]) -> (Message, FinishReason, Usage) {
        let mut s = StreamState::default();
        for c in chunks {
            s.chunk(c, "u", &|_| {}).unwrap();
        }
        s.finish()
    }

    fn delta(d: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    #[test]
    fn calls_accumulate_by_index_and_interleave() {
        let (m, finish, _) = feed(&[
            delta(json!({"role": "assistant", "content": ""})),
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                                          "function": {"name": "read_file", "arguments": ""}}]}),
            ),
            delta(
                json!({"tool_calls": [{"index": 1, "id": "b", "type": "function",
                                          "function": {"name": "list_dir", "arguments": "{\"pa"}}]}),
            ),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]})),
            delta(json!({})),
            delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "th\":\".\"}"}}]})),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a\"}"}}]})),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        assert_eq!(finish, FinishReason::ToolCalls);
        assert_eq!(
            m.tool_calls,
            vec![
                ToolCall {
                    id: "a".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a"})
                },
                ToolCall {
                    id: "b".into(),
                    name: "list_dir".into(),
                    arguments: json!({"path": "."})
                },
            ]
        );
    }

    #[test]
    fn object_arguments_and_missing_index_are_accepted() {
        let (m, _, _) = feed(&[
            delta(
                json!({"tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"k": 1}}}]}),
            ),
            delta(json!({"tool_calls": [{"function": {"arguments": {"k": 2}}}]})),
        ]);
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].arguments, json!({"k": 2}));
    }
}
