//! Property tests: the stream parsers and request builders never panic, whatever they are fed,
//! and the SSE parser gives the same events however the bytes are split.

use proptest::prelude::*;
use std::sync::Arc;

use reagent_protocol::{
    ChatRequest, Message, ModelOptions, Role, ToolCall, ToolChoice, ToolSpec, WireCache,
};
use serde_json::{json, Value};

use crate::sse::SseParser;

const KEYS: &[&str] = &[
    "choices",
    "delta",
    "tool_calls",
    "index",
    "id",
    "function",
    "name",
    "arguments",
    "content",
    "message",
    "done",
    "done_reason",
    "type",
    "content_block",
    "partial_json",
    "candidates",
    "parts",
    "functionCall",
    "args",
    "finishReason",
    "finish_reason",
    "usage",
    "timings",
    "error",
    "thinking",
    "text",
    "thought",
    "stop_reason",
    "input",
    "usageMetadata",
    "0",
];

const WORDS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "message_delta",
    "message_stop",
    "tool_use",
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "error",
    "text",
    "thinking",
    "STOP",
    "MAX_TOKENS",
    "length",
    "stop",
    "tool_calls",
    "{\"a\":",
    "",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..5).prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop::sample::select(WORDS).prop_map(|w| json!(w)),
        ".{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..6).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// `right`, or sometimes any JSON value (a field of the wrong type), or absent (`None`).
fn field(right: impl Strategy<Value = Value> + 'static) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => right.prop_map(Some),
        1 => json_value().prop_map(Some),
        1 => Just(None),
    ]
}

/// An Ollama chat chunk: mostly the usual shape, with fields missing or of other types.
fn ollama_chunk() -> impl Strategy<Value = Value> {
    let text = || ".{0,8}".prop_map(Value::String);
    let function = (field(text()), field(json_value())).prop_map(|(name, arguments)| {
        let mut f = serde_json::Map::new();
        f.extend(name.map(|v| ("name".to_owned(), v)));
        f.extend(arguments.map(|v| ("arguments".to_owned(), v)));
        Value::Object(f)
    });
    let call = (field(function), field(text())).prop_map(|(function, id)| {
        let mut c = serde_json::Map::new();
        c.extend(function.map(|v| ("function".to_owned(), v)));
        c.extend(id.map(|v| ("id".to_owned(), v)));
        Value::Object(c)
    });
    let calls = prop::collection::vec(call, 0..3).prop_map(Value::Array);
    let message =
        (field(text()), field(text()), field(calls)).prop_map(|(content, thinking, calls)| {
            let mut m = serde_json::Map::new();
            m.extend(content.map(|v| ("content".to_owned(), v)));
            m.extend(thinking.map(|v| ("thinking".to_owned(), v)));
            m.extend(calls.map(|v| ("tool_calls".to_owned(), v)));
            Value::Object(m)
        });
    let count = || (0u64..1000).prop_map(|n| json!(n));
    (
        field(message),
        field(any::<bool>().prop_map(Value::Bool)),
        field(prop::sample::select(vec!["stop", "length", "other"]).prop_map(|r| json!(r))),
        (field(count()), field(count())),
        prop::option::weighted(0.1, json_value()),
    )
        .prop_map(|(message, done, reason, (prompt, eval), error)| {
            let mut c = serde_json::Map::new();
            let fields = [
                ("message", message),
                ("done", done),
                ("done_reason", reason),
                ("prompt_eval_count", prompt),
                ("eval_count", eval),
                ("error", error),
            ];
            c.extend(
                fields
                    .into_iter()
                    .filter_map(|(k, v)| Some((k.to_owned(), v?))),
            );
            Value::Object(c)
        })
}

fn message() -> impl Strategy<Value = Message> {
    let role = prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]);
    let call = (".{0,4}", ".{0,6}", json_value()).prop_map(|(id, name, arguments)| ToolCall {
        id,
        name,
        arguments,
    });
    (
        role,
        ".{0,8}",
        prop::option::of(".{0,4}"),
        prop::collection::vec(call, 0..3),
        prop::option::of(".{0,4}"),
    )
        .prop_map(
            |(role, content, reasoning, tool_calls, tool_call_id)| Message {
                role,
                content,
                reasoning,
                tool_calls,
                tool_name: tool_call_id.clone(),
                tool_call_id,
            },
        )
}

fn request() -> impl Strategy<Value = ChatRequest> {
    (
        prop::collection::vec(message(), 0..8),
        prop::option::of(json_value()),
        any::<bool>(),
        prop::option::of(any::<bool>()),
        prop::option::of(any::<u32>()),
        prop::option::of(any::<f32>()),
    )
        .prop_map(
            |(messages, schema, stream, think, num_predict, temperature)| ChatRequest {
                tools: vec![ToolSpec {
                    name: "t".into(),
                    description: "d".into(),
                    parameters: json!({"type": "object"}),
                }]
                .into(),
                tool_choice: ToolChoice::Required,
                options: ModelOptions {
                    num_predict,
                    temperature,
                    think,
                    keep_alive: Some("5m".into()),
                    ..ModelOptions::default()
                },
                response_schema: schema,
                stream,
                ..ChatRequest::new("m", messages)
            },
        )
}

fn no_two_roles_in_a_row(msgs: &Value, role_key: &str) -> bool {
    let roles: Vec<&str> = msgs
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.get(role_key).and_then(Value::as_str))
        .collect();
    roles.windows(2).all(|w| w[0] != w[1])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn sse_events_do_not_depend_on_how_bytes_are_split(
        pieces in prop::collection::vec(
            prop::sample::select(vec!["data: ", "data:", "event: x", ": c", "\n", "\r", "\r\n", "{}", "[DONE]", "é", "id: 1"]),
            0..40,
        ),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let bytes: Vec<u8> = pieces.concat().into_bytes();
        let whole = SseParser::default().push(&bytes);
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut p = SseParser::default();
        let mut got = Vec::new();
        let mut last = 0;
        for at in points.into_iter().chain([bytes.len()]) {
            got.extend(p.push(&bytes[last..at]));
            last = at;
        }
        prop_assert_eq!(got, whole);
    }

    #[test]
    fn stream_accumulators_never_panic(chunks in prop::collection::vec(json_value(), 0..12)) {
        let sink = &|_| {};
        let mut openai = crate::openai_stream::StreamState::default();
        let mut anthropic = crate::anthropic_stream::State::default();
        let mut ollama = crate::ollama_reply::Accumulator::default();
        let mut gemini = crate::gemini::Accumulator::default();
        for c in &chunks {
            let _ = openai.chunk(c, "u", sink);
            let _ = anthropic.event(c, "u", sink);
            let _ = ollama.chunk(c, "u", Some(sink));
            let _ = gemini.chunk(c, "u", Some(sink));
        }
        let _ = openai.finish();
        let _ = anthropic.finish();
        let _ = ollama.finish("u", std::time::Instant::now(), "e");
        let _ = gemini.finish("u");
    }

    /// Reading an Ollama chunk straight from its bytes, when that is taken, means exactly what
    /// the lenient `Value` reading means.
    #[test]
    fn ollama_raw_chunks_read_like_values(chunks in prop::collection::vec(ollama_chunk(), 1..4)) {
        let mut raw = crate::ollama_reply::Accumulator::default();
        let mut lenient = crate::ollama_reply::Accumulator::default();
        let (mut raw_err, mut lenient_err) = (None, None);
        for c in &chunks {
            let bytes = serde_json::to_vec(c).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if raw_err.is_none() && !raw.chunk_raw(&bytes, None) {
                raw_err = raw.chunk(c, "u", None).err().map(|e| e.to_string());
            }
            if lenient_err.is_none() {
                lenient_err = lenient.chunk(c, "u", None).err().map(|e| e.to_string());
            }
        }
        prop_assert_eq!(&raw_err, &lenient_err);
        let now = std::time::Instant::now();
        let summary = |r: Result<reagent_protocol::ChatResponse, _>| {
            r.map(|r| (r.message, r.finish, r.usage)).map_err(|e: reagent_protocol::ProviderError| e.to_string())
        };
        prop_assert_eq!(summary(raw.finish("u", now, "e")), summary(lenient.finish("u", now, "e")));
    }

    #[test]
    fn cached_bodies_equal_fresh_ones(req in request(), next in message(), changed in message()) {
        let builders: [fn(&ChatRequest) -> bytes::Bytes; 2] =
            [crate::ollama::request_body, crate::openai::request_body];
        for body in builders {
            // The first body fills the request's cache; the next request shares it, with one
            // message appended and, when there is one, the first message changed.
            let first: Value = serde_json::from_slice(&body(&req)).map_err(|e| {
                TestCaseError::fail(format!("body is not JSON: {e}"))
            })?;
            prop_assert_eq!(first["messages"].as_array().map(Vec::len), Some(req.messages.len()));
            let mut later = req.clone();
            later.messages.push(Arc::new(next.clone()));
            if let Some(m) = later.messages.first_mut() {
                *Arc::make_mut(m) = changed.clone();
            }
            let cached = body(&later);
            let fresh = body(&ChatRequest { wire: WireCache::new(), ..later.clone() });
            prop_assert_eq!(cached, fresh);
        }
    }

    #[test]
    fn request_bodies_never_panic_and_keep_roles_alternating(req in request()) {
        let a = crate::anthropic::request_body(&req);
        prop_assert!(no_two_roles_in_a_row(&a["messages"], "role"));
        prop_assert!(a["max_tokens"].as_u64().is_some());
        let g = crate::gemini::request_body(&req);
        prop_assert!(no_two_roles_in_a_row(&g["contents"], "role"));
    }
}
