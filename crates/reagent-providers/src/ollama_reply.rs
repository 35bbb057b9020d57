//! Reading an Ollama `/api/chat` reply: one JSON object, or NDJSON chunks when streaming.
//!
//! A reply of the usual shape is read straight into borrowed fields ([`Chunk`]), without a
//! `serde_json::Value` tree; anything else (an `error`, a missing `message`, a field of an
//! unexpected type) is read leniently from a `Value` by [`Accumulator::chunk`]. Both feed the
//! same accumulator, so they cannot disagree about what a chunk means.

use std::borrow::Cow;
use std::time::Instant;

use reagent_protocol::{ChatResponse, FinishReason, ProviderError, SignalSink, ToolCall, Usage};
use serde::Deserialize;
use serde_json::Value;

use crate::http::{BodyStream, LineBuffer};
use crate::reply::{self, short};

/// Collects a reply from one JSON object or many NDJSON chunks.
#[derive(Default)]
pub(crate) struct Accumulator {
    content: String,
    thinking: String,
    calls: Vec<ToolCall>,
    done: Option<Done>,
}

/// What the final (`done`) chunk says about the reply.
struct Done {
    reason: Option<String>,
    usage: Usage,
}

impl Done {
    fn new(reason: Option<&str>, prompt_tokens: u64, completion_tokens: u64) -> Self {
        Done {
            reason: reason.map(str::to_owned),
            usage: Usage {
                prompt_tokens,
                completion_tokens,
                cached_prompt_tokens: None,
            },
        }
    }

    fn from_value(v: &Value) -> Self {
        let count = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let reason = v.get("done_reason").and_then(Value::as_str);
        Done::new(reason, count("prompt_eval_count"), count("eval_count"))
    }
}

/// The usual shape of a reply or chunk, borrowed from the raw bytes. Unknown fields are
/// ignored; a field of another type fails the read, and the chunk is then read leniently.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow)]
    message: Option<Object<ChunkMessage<'a>>>,
    done: Option<bool>,
    #[serde(borrow)]
    done_reason: Option<Cow<'a, str>>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    /// Only its presence matters: an error goes the lenient way, which reports it.
    error: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct ChunkMessage<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<Vec<Object<ChunkCall<'a>>>>,
}

#[derive(Deserialize)]
struct ChunkCall<'a> {
    #[serde(borrow)]
    function: Object<ChunkFunction<'a>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ChunkFunction<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    arguments: Option<Value>,
}

/// A struct read only from a JSON object. Derived `Deserialize` also reads a struct from an
/// array of its fields in order, which the lenient reading rightly treats as malformed.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OnlyMaps<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for OnlyMaps<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(OnlyMaps(std::marker::PhantomData))
            .map(Object)
    }
}

impl Accumulator {
    /// Takes one chunk (or the whole non-streamed reply) given as raw JSON: the usual shape
    /// straight from the bytes, anything else as the `Value` that `parse` makes of them
    /// (whose error, for bytes that are not JSON, is the caller's to word).
    pub(crate) fn take(
        &mut self,
        raw: &[u8],
        url: &str,
        sink: Option<SignalSink<'_>>,
        parse: impl FnOnce(&[u8]) -> Result<Value, ProviderError>,
    ) -> Result<(), ProviderError> {
        if self.chunk_raw(raw, sink) {
            return Ok(());
        }
        self.chunk(&parse(raw)?, url, sink)
    }

    /// Takes one chunk given as raw JSON when it has the usual shape; returns false (having
    /// taken nothing) when it must be read as a `Value` by [`Accumulator::chunk`].
    pub(crate) fn chunk_raw(&mut self, raw: &[u8], sink: Option<SignalSink<'_>>) -> bool {
        let Ok(Object(chunk)) = serde_json::from_slice::<Object<Chunk>>(raw) else {
            return false;
        };
        let Some(Object(msg)) = chunk.message.filter(|_| chunk.error.is_none()) else {
            return false;
        };
        self.text(msg.thinking.as_deref(), msg.content.as_deref(), sink);
        for Object(call) in msg.tool_calls.unwrap_or_default() {
            let Object(f) = call.function;
            self.call(
                call.id.as_deref(),
                &f.name,
                f.arguments.unwrap_or(Value::Null),
            );
        }
        if chunk.done != Some(false) {
            self.done = Some(Done::new(
                chunk.done_reason.as_deref(),
                chunk.prompt_eval_count.unwrap_or(0),
                chunk.eval_count.unwrap_or(0),
            ));
        }
        true
    }

    /// Takes one chunk (or the whole non-streamed reply) read leniently from a `Value`:
    /// fields of unexpected types are skipped, an `error` or a chunk without `message` (or
    /// `/api/generate`'s `response`) that is not the final one is a protocol error. Streamed
    /// text goes to `sink`.
    pub(crate) fn chunk(
        &mut self,
        v: &Value,
        url: &str,
        sink: Option<SignalSink<'_>>,
    ) -> Result<(), ProviderError> {
        reply::check_reported_error(v, url)?;
        let Some(msg) = v.get("message").filter(|m| m.is_object()) else {
            // Some implementations of the API (ollama-openai-proxy 0.7) stream `/api/chat` in
            // `/api/generate`'s shape: the text in `response` (null in the first chunk).
            if let Some(response) = v.get("response").filter(|r| r.is_string() || r.is_null()) {
                self.text(None, response.as_str(), sink);
            } else if v.get("done").and_then(Value::as_bool) != Some(true) {
                return Err(ProviderError::Protocol {
                    url: url.to_owned(),
                    detail: format!("a chunk without `message`: {}", short(v)),
                });
            }
            if v.get("done").and_then(Value::as_bool) == Some(true) {
                self.done = Some(Done::from_value(v));
            }
            return Ok(());
        };
        let text = |k: &str| msg.get(k).and_then(Value::as_str);
        self.text(text("thinking"), text("content"), sink);
        if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let f = call.get("function").unwrap_or(call);
                let Some(name) = f.get("name").and_then(Value::as_str) else {
                    return Err(ProviderError::Protocol {
                        url: url.to_owned(),
                        detail: format!("a tool call without a name: {}", short(call)),
                    });
                };
                let id = call.get("id").and_then(Value::as_str);
                let arguments = f.get("arguments").cloned().unwrap_or(Value::Null);
                self.call(id, name, arguments);
            }
        }
        if v.get("done").and_then(Value::as_bool) != Some(false) {
            self.done = Some(Done::from_value(v));
        }
        Ok(())
    }

    /// Appends a chunk's reasoning and content, streaming them to `sink`.
    fn text(
        &mut self,
        thinking: Option<&str>,
        content: Option<&str>,
        sink: Option<SignalSink<'_>>,
    ) {
        if let Some(t) = thinking {
            self.thinking.push_str(t);
            if let Some(sink) = sink {
                reply::emit(sink, t, true);
            }
        }
        if let Some(c) = content {
            self.content.push_str(c);
            if let Some(sink) = sink {
                reply::emit(sink, c, false);
            }
        }
    }

    /// Adds a tool call; a missing or empty id becomes `call_N`.
    fn call(&mut self, id: Option<&str>, name: &str, arguments: Value) {
        let id = id
            .filter(|s| !s.is_empty())
            .map_or_else(|| format!("call_{}", self.calls.len()), str::to_owned);
        self.calls.push(ToolCall {
            id,
            name: name.to_owned(),
            arguments: reply::parse_arguments(arguments),
        });
    }

    /// The reply, once the final chunk was seen.
    pub(crate) fn finish(
        self,
        url: &str,
        started: Instant,
        endpoint: &str,
    ) -> Result<ChatResponse, ProviderError> {
        let Some(done) = self.done else {
            return Err(ProviderError::Protocol {
                url: url.to_owned(),
                detail: "the stream ended before the final `done: true` chunk (connection cut?)"
                    .to_owned(),
            });
        };
        let finish = match done.reason.as_deref() {
            Some("length") => FinishReason::Length,
            None | Some("stop") if !self.calls.is_empty() => FinishReason::ToolCalls,
            None | Some("stop") => FinishReason::Stop,
            Some(other) => FinishReason::Other(other.to_owned()),
        };
        let message = reply::assistant(self.content, self.thinking, self.calls);
        Ok(reply::response(
            (message, finish, done.usage),
            started,
            endpoint,
        ))
    }
}

/// Reads a streamed (NDJSON) reply into `acc`, stopping at the final chunk.
pub(crate) async fn read_stream(
    resp: reqwest::Response,
    url: &str,
    opts: &crate::http::ClientOptions,
    sink: SignalSink<'_>,
    acc: &mut Accumulator,
) -> Result<(), ProviderError> {
    let mut body = BodyStream::new(resp, url, opts);
    let mut lines = LineBuffer::default();
    let handle = |line: &str, acc: &mut Accumulator| -> Result<(), ProviderError> {
        if line.trim().is_empty() {
            return Ok(());
        }
        acc.take(line.as_bytes(), url, Some(sink), |raw| {
            serde_json::from_slice(raw).map_err(|e| ProviderError::Protocol {
                url: url.to_owned(),
                detail: format!(
                    "malformed NDJSON line ({e}): {}",
                    line.chars().take(200).collect::<String>()
                ),
            })
        })
    };
    while let Some(bytes) = body.next().await? {
        for line in lines.push(&bytes) {
            handle(&line, acc)?;
        }
        if acc.done.is_some() {
            return Ok(());
        }
    }
    if let Some(rest) = lines.finish() {
        handle(&rest, acc)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the raw-versus-lenient proptest: both readings agree on these chunks.
    #[test]
    fn odd_chunks_read_the_same_both_ways() {
        let chunks = [
            // `"error": null` is no error.
            r#"{"message": {"content": "hi"}, "done": true, "error": null}"#,
            // A function given as an array is malformed, not a struct read field by field.
            r#"{"message": {"tool_calls": [{"function": ["f", null]}]}, "done": true}"#,
            r#"{"message": ["hi", null, null], "done": true}"#,
        ];
        for raw in chunks {
            let v: Value = serde_json::from_str(raw).unwrap_or_default();
            let mut fast = Accumulator::default();
            let mut lenient = Accumulator::default();
            let took = fast.chunk_raw(raw.as_bytes(), None);
            let fast_result = if took {
                Ok(())
            } else {
                fast.chunk(&v, "u", None)
            };
            let lenient_result = lenient.chunk(&v, "u", None);
            assert_eq!(
                fast_result.map_err(|e| e.to_string()),
                lenient_result.map_err(|e| e.to_string()),
                "{raw}"
            );
            assert_eq!(fast.content, lenient.content, "{raw}");
        }
    }

    /// ollama-openai-proxy 0.7.0 over llama-server, as it streamed `/api/chat` (verbatim).
    #[test]
    fn chat_streamed_in_the_generate_shape_is_read() {
        let lines = [
            r#"{"model": "smol", "created_at": "2026-11-23T20:36:04.686702Z", "response": null, "done": false}"#,
            r#"{"model": "smol", "created_at": "2026-11-23T20:36:04.686809Z", "response": "Sorry", "done": false}"#,
            r#"{"model": "smol", "created_at": "2026-11-23T20:36:05.007348Z", "response": " about", "done": false}"#,
            r#"{"model": "smol", "created_at": "2026-11-23T20:36:08.324042Z", "response": "", "done": true, "done_reason": "length"}"#,
        ];
        let mut acc = Accumulator::default();
        let streamed = std::sync::Mutex::new(String::new());
        let sink = |s: reagent_protocol::ChatSignal| {
            if let reagent_protocol::ChatSignal::Content(c) = s {
                streamed.lock().unwrap().push_str(&c);
            }
        };
        for line in lines {
            acc.take(line.as_bytes(), "u", Some(&sink), |raw| {
                serde_json::from_slice(raw).map_err(|e| ProviderError::Protocol {
                    url: "u".into(),
                    detail: e.to_string(),
                })
            })
            .unwrap();
        }
        assert_eq!(streamed.into_inner().unwrap(), "Sorry about");
        let r = acc.finish("u", Instant::now(), "e").unwrap();
        assert_eq!(r.message.content, "Sorry about");
        assert_eq!(r.finish, FinishReason::Length);
        // Neither `message` nor `response`, and not the last chunk: malformed.
        let mut acc = Accumulator::default();
        let v = serde_json::json!({"model": "m", "done": false});
        assert!(acc.chunk(&v, "u", None).is_err());
    }
}
