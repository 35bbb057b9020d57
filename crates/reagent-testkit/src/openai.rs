//! The OpenAI chat completions wire, with llama-server's extras: `POST /v1/chat/completions`
//! (JSON, or SSE `data: {chunk}\n\n` … `data: [DONE]\n\n` when `stream` is true), `GET /props`,
//! `GET /health`, `GET /v1/models`; errors as `{"error": {"message", "type", "code"}}`.

use serde_json::{json, Value};

use crate::script::{pieces, ModelSpec, Turn};
use crate::server::{override_answer, Answer, RecordedRequest, Routed, State, EXHAUSTED_STATUS};

const CREATED: u64 = 1_767_225_600;

fn error_body(status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    };
    json!({"error": {"code": status, "message": message, "type": kind, "param": null}})
}

pub(crate) fn route(state: &State, req: &RecordedRequest) -> Routed {
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/chat/completions" | "/chat/completions") => chat(state, req),
        ("POST", "/v1/embeddings" | "/embeddings") => {
            Routed::plain(crate::embed::openai(state, req, error_body))
        }
        ("GET", "/props") => {
            let spec = state
                .script
                .models
                .first()
                .cloned()
                .unwrap_or_else(|| ModelSpec::new("model"));
            Routed::plain(Answer::json(200, &props(&spec)))
        }
        ("GET", "/health" | "/v1/health") => {
            Routed::plain(Answer::json(200, &json!({"status": "ok"})))
        }
        ("GET", "/v1/models" | "/models") => {
            let data: Vec<Value> = state
                .script
                .models
                .iter()
                .map(|m| json!({"id": m.name, "object": "model", "created": CREATED, "owned_by": "llamacpp"}))
                .collect();
            Routed::plain(Answer::json(200, &json!({"object": "list", "data": data})))
        }
        _ => Routed::plain(Answer::json(404, &error_body(404, "File Not Found"))),
    }
}

fn props(spec: &ModelSpec) -> Value {
    json!({
        "default_generation_settings": {"n_ctx": spec.context_length, "params": {"temperature": 0.8}},
        "total_slots": 1,
        "model_path": format!("/models/{}.gguf", spec.name),
        "chat_template": "{{ messages }}",
        "chat_template_caps": {
            "supports_tools": spec.capabilities.iter().any(|c| c == "tools"),
            "supports_tool_calls": spec.capabilities.iter().any(|c| c == "tools"),
            "supports_system_role": true,
            "supports_parallel_tool_calls": true
        },
        "build_info": "b0000-scripted"
    })
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
    if state.find_model(&model).is_none() {
        let mut body = error_body(
            404,
            &format!("The model `{model}` does not exist or you do not have access to it."),
        );
        body["error"]["code"] = json!("model_not_found");
        return routed(Answer::json(404, &body), Default::default());
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
        let include_usage = req.body.pointer("/stream_options/include_usage") == Some(&json!(true));
        Answer::Stream {
            content_type: "text/event-stream".to_owned(),
            chunks: stream_chunks(&turn, &model, include_usage),
            cut_after: turn.cut_after_chunks,
            chunk_delay: turn.chunk_delay,
            headers: turn.headers.clone(),
        }
    } else {
        let mut a = Answer::json(200, &completion(&turn, &model));
        if let Answer::Body { headers, .. } = &mut a {
            headers.clone_from(&turn.headers);
        }
        a
    };
    routed(answer, turn.delay)
}

fn call_id(turn: &Turn, i: usize) -> String {
    turn.tool_calls
        .get(i)
        .and_then(|c| c.id.clone())
        .unwrap_or_else(|| format!("call_{i}"))
}

fn usage(turn: &Turn) -> Value {
    json!({
        "prompt_tokens": turn.prompt_tokens,
        "completion_tokens": turn.completion_tokens,
        "total_tokens": turn.prompt_tokens + turn.completion_tokens,
    })
}

fn timings(turn: &Turn) -> Option<Value> {
    let cached = turn.cached_tokens?;
    Some(json!({
        "cache_n": cached,
        "prompt_n": turn.prompt_tokens.saturating_sub(cached),
        "prompt_ms": 12.5,
        "predicted_n": turn.completion_tokens,
        "predicted_ms": 40.0,
    }))
}

fn completion(turn: &Turn, model: &str) -> Value {
    let mut msg = json!({"role": "assistant"});
    msg["content"] = if turn.content.is_empty() && !turn.tool_calls.is_empty() {
        Value::Null
    } else {
        json!(turn.content)
    };
    if let Some(t) = &turn.thinking {
        msg["reasoning_content"] = json!(t);
    }
    if !turn.tool_calls.is_empty() {
        msg["tool_calls"] = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({"id": call_id(turn, i), "type": "function",
                       "function": {"name": c.name, "arguments": c.arguments.to_string()}})
            })
            .collect();
    }
    let mut out = json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [{"index": 0, "message": msg, "logprobs": null,
                     "finish_reason": turn.finish_reason()}],
        "usage": usage(turn),
    });
    if let Some(t) = timings(turn) {
        out["timings"] = t;
    }
    out
}

fn stream_chunks(turn: &Turn, model: &str, include_usage: bool) -> Vec<String> {
    let chunk = |choices: Value| {
        json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": CREATED,
               "model": model, "system_fingerprint": "fp_scripted", "choices": choices})
    };
    let delta = |d: Value| {
        chunk(json!([{"index": 0, "delta": d, "logprobs": null, "finish_reason": null}]))
    };
    let empty = delta(json!({}));
    let mut events = vec![delta(json!({"role": "assistant", "content": ""}))];
    let push = |events: &mut Vec<Value>, v: Value| {
        events.push(v);
        if turn.empty_deltas {
            events.push(empty.clone());
        }
    };
    if let Some(t) = &turn.thinking {
        for p in pieces(t, turn.chunk_chars) {
            push(&mut events, delta(json!({"reasoning_content": p})));
        }
    }
    for p in pieces(&turn.content, turn.chunk_chars) {
        push(&mut events, delta(json!({"content": p})));
    }
    for (i, c) in turn.tool_calls.iter().enumerate() {
        let mut function = json!({"name": c.name, "arguments": ""});
        if turn.args_as_object {
            function["arguments"] = c.arguments.clone();
        }
        push(
            &mut events,
            delta(
                json!({"tool_calls": [{"index": i, "id": call_id(turn, i), "type": "function", "function": function}]}),
            ),
        );
        if !turn.args_as_object {
            for p in pieces(&c.arguments.to_string(), turn.chunk_chars) {
                push(
                    &mut events,
                    delta(json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]})),
                );
            }
        }
    }
    let mut last = chunk(json!([{"index": 0, "delta": {}, "logprobs": null,
                                  "finish_reason": turn.finish_reason()}]));
    if let Some(t) = timings(turn) {
        last["timings"] = t;
    }
    events.push(last);
    if include_usage {
        let mut u = chunk(json!([]));
        u["usage"] = usage(turn);
        events.push(u);
    }
    let mut out: Vec<String> = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push("data: [DONE]\n\n".to_owned());
    out
}
