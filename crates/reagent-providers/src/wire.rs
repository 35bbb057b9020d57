//! Chat request bodies assembled from cached parts.
//!
//! A request carries the whole history; encoding it afresh on every call made the runtime's CPU
//! per iteration grow with the run (benches/FINDINGS.md). The OpenAI-style and Ollama bodies are
//! a list of independently encoded messages, a tool list and a few small fields, so each message
//! and the tool list are encoded once per run through the request's
//! [`reagent_protocol::WireCache`] and the body is a concatenation, written into the buffer of
//! the run's previous body.

use bytes::Bytes;
use reagent_protocol::{ChatRequest, Message, ToolSpec};
use serde::Serialize;
use serde_json::{Map, Value};

/// Appends `value` as JSON. Writing JSON into a `Vec` has no I/O to fail, and `Value` and the
/// plain types used here have no fallible `Serialize` (map keys are strings), so an error would
/// only drop that part of the body; it is ignored rather than unwrapped.
pub(crate) fn push_json(out: &mut Vec<u8>, value: &impl Serialize) {
    let _ = serde_json::to_writer(out, value);
}

fn encoded(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    push_json(&mut out, value);
    out
}

/// `{"messages":[..],"tools":[..],<fields>}`: messages encoded by `message` (once per run, in
/// the cache under `format`), the tool list in the OpenAI/Ollama function form when
/// `with_tools`, then `fields` in order.
pub(crate) fn chat_body(
    request: &ChatRequest,
    format: &'static str,
    message: fn(&Message, &mut Vec<u8>),
    with_tools: bool,
    fields: &Map<String, Value>,
) -> Bytes {
    let mut body = request.wire.body_buffer();
    body.extend_from_slice(b"{\"messages\":[");
    request.wire.write_messages(
        format,
        &request.messages,
        |m| {
            let mut out = Vec::new();
            message(m, &mut out);
            out
        },
        &mut body,
    );
    body.push(b']');
    if with_tools {
        body.extend_from_slice(b",\"tools\":");
        request.wire.write_tools(
            format,
            &request.tools,
            |tools| {
                encoded(&Value::Array(
                    tools.iter().map(ToolSpec::to_function_json).collect(),
                ))
            },
            &mut body,
        );
    }
    for (key, value) in fields {
        body.push(b',');
        push_json(&mut body, key);
        body.push(b':');
        push_json(&mut body, value);
    }
    body.push(b'}');
    request.wire.finish_body(body)
}
