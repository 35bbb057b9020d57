//! Putting an Anthropic Messages event stream back together.
//!
//! Events: `message_start` (input usage), `content_block_start` (a `text`, `thinking` or
//! `tool_use` block at an index), `content_block_delta` (`text_delta`, `thinking_delta`,
//! `input_json_delta` with `partial_json` fragments, `signature_delta`), `content_block_stop`,
//! `message_delta` (`stop_reason`, output usage), `message_stop`, `ping`, and `error`. A stream
//! that ends before `message_stop` is a [`ProviderError::Protocol`] error, so is an `error` event.

use reagent_protocol::{FinishReason, Message, ProviderError, SignalSink, ToolCall, Usage};
use serde_json::Value;

use crate::anthropic::{finish_reason, usage};
use crate::reply::{self, assistant, short};
use crate::sse::SseReader;

/// One content block being put together.
enum Block {
    Text(String),
    Thinking(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    Other,
}

/// Accumulated stream state.
#[derive(Default)]
pub(crate) struct State {
    blocks: Vec<(u64, Block)>,
    start_usage: Value,
    output_tokens: Option<u64>,
    stop_reason: Option<String>,
    stopped: bool,
}

impl State {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    pub(crate) fn event(
        &mut self,
        v: &Value,
        url: &str,
        sink: SignalSink<'_>,
    ) -> Result<(), ProviderError> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.start_usage = u.clone();
                }
            }
            "content_block_start" => {
                let b = v.get("content_block").unwrap_or(&Value::Null);
                let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                let block = match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        reply::emit(sink, &s("text"), false);
                        Block::Text(s("text"))
                    }
                    Some("thinking") => {
                        reply::emit(sink, &s("thinking"), true);
                        Block::Thinking(s("thinking"))
                    }
                    Some("tool_use") => Block::ToolUse {
                        id: s("id"),
                        name: s("name"),
                        json: String::new(),
                        initial: b.get("input").cloned().unwrap_or(Value::Null),
                    },
                    _ => Block::Other,
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let d = v.get("delta").unwrap_or(&Value::Null);
                let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
                match (d.get("type").and_then(Value::as_str), self.block(index)) {
                    (Some("text_delta"), Some(Block::Text(t))) => {
                        t.push_str(s("text"));
                        reply::emit(sink, s("text"), false);
                    }
                    (Some("thinking_delta"), Some(Block::Thinking(t))) => {
                        t.push_str(s("thinking"));
                        reply::emit(sink, s("thinking"), true);
                    }
                    (Some("input_json_delta"), Some(Block::ToolUse { json, .. })) => {
                        json.push_str(s("partial_json"));
                    }
                    (Some("signature_delta"), _) => {}
                    (_, None) => {
                        return Err(ProviderError::Protocol {
                            url: url.to_owned(),
                            detail: format!("a delta for block {index}, which was never started"),
                        })
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_owned());
                }
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.output_tokens = Some(n);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let msg = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(|| short(v), str::to_owned);
                return Err(reply::error_mid_reply(url, &msg));
            }
            // ping, content_block_stop and event types added later
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn finish(self) -> (Message, FinishReason, Usage) {
        let mut content = String::new();
        let mut reasoning = String::new();
        let mut calls = Vec::new();
        for (_, b) in self.blocks {
            match b {
                Block::Text(t) => content.push_str(&t),
                Block::Thinking(t) => reasoning.push_str(&t),
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let arguments = if json.trim().is_empty() {
                        reply::parse_arguments(initial)
                    } else {
                        reply::parse_arguments(Value::String(json))
                    };
                    let id = if id.is_empty() {
                        format!("call_{}", calls.len())
                    } else {
                        id
                    };
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Other => {}
            }
        }
        let finish = finish_reason(self.stop_reason.as_deref(), !calls.is_empty());
        let usage = usage(&self.start_usage, self.output_tokens);
        (assistant(content, reasoning, calls), finish, usage)
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
    let mut state = State::default();
    while let Some(ev) = reader.next().await? {
        let data = ev.data.trim();
        if data.is_empty() {
            continue;
        }
        let mut v: Value = serde_json::from_str(data).map_err(|e| ProviderError::Protocol {
            url: url.to_owned(),
            detail: format!(
                "malformed event data ({e}): {}",
                data.chars().take(200).collect::<String>()
            ),
        })?;
        // The `event:` line and the data's `type` agree on the real API; trust `type` and fall
        // back to the event name.
        if v.get("type").is_none() {
            if let (Some(name), Some(obj)) = (ev.event, v.as_object_mut()) {
                obj.insert("type".into(), Value::String(name));
            }
        }
        state.event(&v, url, sink)?;
        if state.stopped {
            return Ok(state.finish());
        }
    }
    Err(ProviderError::Protocol {
        url: url.to_owned(),
        detail: "the stream ended before `message_stop` (connection cut?)".to_owned(),
    })
}
