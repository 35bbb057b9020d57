//! The Anthropic Messages wire: `POST /v1/messages` (JSON, or the SSE events `message_start`,
//! `content_block_start` / `_delta` / `_stop`, `ping`, `message_delta`, `message_stop` when
//! `stream` is true), `GET /v1/models`, `GET /v1/models/{id}`; errors as
//! `{"type": "error", "error": {"type", "message"}}`. Requests without the `anthropic-version`
//! header are refused with 400, as the real API does.

use serde_json::{json, Value};

use crate::script::{pieces, Turn};
use crate::server::{override_answer, Answer, RecordedRequest, Routed, State, EXHAUSTED_STATUS};

fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

pub(crate) fn route(state: &State, req: &RecordedRequest) -> Routed {
    if req.header("anthropic-version").is_none() {
        return Routed::plain(Answer::json(
            400,
            &error_body(400, "anthropic-version: header is required"),
        ));
    }
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/messages") => chat(state, req),
        ("GET", "/v1/models") => {
            let data: Vec<Value> = state
                .script
                .models
                .iter()
                .map(|m| model_json(&m.name))
                .collect();
            Routed::plain(Answer::json(
                200,
                &json!({"data": data, "has_more": false, "first_id": null, "last_id": null}),
            ))
        }
        ("GET", path) if path.starts_with("/v1/models/") => {
            let name = &path["/v1/models/".len()..];
            Routed::plain(match state.find_model(name) {
                Some(_) => Answer::json(200, &model_json(name)),
                None => Answer::json(404, &error_body(404, &format!("model: {name}"))),
            })
        }
        _ => Routed::plain(Answer::json(404, &error_body(404, "Not found"))),
    }
}

fn model_json(name: &str) -> Value {
    json!({"type": "model", "id": name, "display_name": name, "created_at": "2026-01-01T00:00:00Z"})
}

fn chat(state: &State, req: &RecordedRequest) -> Routed {
    let routed = |answer, delay| Routed {
        answer,
        is_chat: true,
        delay,
    };
    let model = req
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if req.body.get("max_tokens").and_then(Value::as_u64).is_none() {
        return routed(
            Answer::json(400, &error_body(400, "max_tokens: Field required")),
            Default::default(),
        );
    }
    if state.find_model(&model).is_none() {
        return routed(
            Answer::json(404, &error_body(404, &format!("model: {model}"))),
            Default::default(),
        );
    }
    let turn = match state.next_turn() {
        Ok(t) => t,
        Err(msg) => {
            return routed(
                Answer::json(EXHAUSTED_STATUS, &error_body(EXHAUSTED_STATUS, &msg)),
                Default::default(),
            )
        }
    };
    if let Some(answer) = override_answer(&turn, error_body) {
        return routed(answer, turn.delay);
    }
    let answer = if req.body.get("stream").and_then(Value::as_bool) == Some(true) {
        Answer::Stream {
            content_type: "text/event-stream; charset=utf-8".to_owned(),
            chunks: stream_events(&turn, &model),
            cut_after: turn.cut_after_chunks,
            chunk_delay: turn.chunk_delay,
            headers: turn.headers.clone(),
        }
    } else {
        let mut a = Answer::json(200, &message(&turn, &model));
        if let Answer::Body { headers, .. } = &mut a {
            headers.clone_from(&turn.headers);
        }
        a
    };
    routed(answer, turn.delay)
}

fn stop_reason(turn: &Turn) -> &str {
    match turn.finish_reason() {
        "stop" => "end_turn",
        "length" => "max_tokens",
        "tool_calls" => "tool_use",
        other => other,
    }
}

fn call_id(turn: &Turn, i: usize) -> String {
    turn.tool_calls
        .get(i)
        .and_then(|c| c.id.clone())
        .unwrap_or_else(|| format!("toolu_{i:02}"))
}

fn input_usage(turn: &Turn) -> Value {
    let cached = turn.cached_tokens.unwrap_or(0);
    json!({
        "input_tokens": turn.prompt_tokens.saturating_sub(cached),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
    })
}

fn message(turn: &Turn, model: &str) -> Value {
    let mut content = Vec::new();
    if let Some(t) = &turn.thinking {
        content.push(json!({"type": "thinking", "thinking": t, "signature": "c2lnbmF0dXJl"}));
    }
    if !turn.content.is_empty() {
        content.push(json!({"type": "text", "text": turn.content}));
    }
    for (i, c) in turn.tool_calls.iter().enumerate() {
        content.push(json!({"type": "tool_use", "id": call_id(turn, i), "name": c.name, "input": c.arguments}));
    }
    let mut usage = input_usage(turn);
    usage["output_tokens"] = json!(turn.completion_tokens);
    json!({
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason(turn),
        "stop_sequence": null,
        "usage": usage,
    })
}

fn event(v: &Value) -> String {
    let name = v.get("type").and_then(Value::as_str).unwrap_or("message");
    format!("event: {name}\ndata: {v}\n\n")
}

fn stream_events(turn: &Turn, model: &str) -> Vec<String> {
    let mut usage = input_usage(turn);
    usage["output_tokens"] = json!(1);
    let mut evs = vec![
        json!({"type": "message_start", "message": {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage}}),
        json!({"type": "ping"}),
    ];
    let mut index = 0;
    let mut block = |evs: &mut Vec<Value>, start: Value, deltas: Vec<Value>| {
        evs.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for d in deltas {
            evs.push(json!({"type": "content_block_delta", "index": index, "delta": d}));
        }
        evs.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    };
    if let Some(t) = &turn.thinking {
        let mut deltas: Vec<Value> = pieces(t, turn.chunk_chars)
            .into_iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "c2lnbmF0dXJl"}));
        block(
            &mut evs,
            json!({"type": "thinking", "thinking": ""}),
            deltas,
        );
    }
    if !turn.content.is_empty() {
        let deltas = pieces(&turn.content, turn.chunk_chars)
            .into_iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut evs, json!({"type": "text", "text": ""}), deltas);
    }
    for (i, c) in turn.tool_calls.iter().enumerate() {
        let mut deltas = Vec::new();
        if turn.empty_deltas {
            deltas.push(json!({"type": "input_json_delta", "partial_json": ""}));
        }
        deltas.extend(
            pieces(&c.arguments.to_string(), turn.chunk_chars)
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
        );
        block(
            &mut evs,
            json!({"type": "tool_use", "id": call_id(turn, i), "name": c.name, "input": {}}),
            deltas,
        );
    }
    evs.push(json!({"type": "message_delta",
                    "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null},
                    "usage": {"output_tokens": turn.completion_tokens}}));
    evs.push(json!({"type": "message_stop"}));
    evs.iter().map(event).collect()
}
