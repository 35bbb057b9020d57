//! The Gemini wire: `POST /v1beta/models/{model}:generateContent` (JSON) and
//! `:streamGenerateContent` (SSE `data: {GenerateContentResponse}\r\n\r\n` with `?alt=sse`, a JSON
//! array otherwise), `GET /v1beta/models/{model}`, `GET /v1beta/models`; errors as
//! `{"error": {"code", "message", "status"}}`.

use serde_json::{json, Value};

use crate::script::{pieces, Turn};
use crate::server::{override_answer, Answer, RecordedRequest, Routed, State, EXHAUSTED_STATUS};

fn error_body(status: u16, message: &str) -> Value {
    let s = match status {
        400 => "INVALID_ARGUMENT",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        500..=599 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    };
    json!({"error": {"code": status, "message": message, "status": s}})
}

fn not_found(model: &str) -> Answer {
    Answer::json(
        404,
        &error_body(
            404,
            &format!("models/{model} is not found for API version v1beta, or is not supported for generateContent."),
        ),
    )
}

pub(crate) fn route(state: &State, req: &RecordedRequest) -> Routed {
    let Some(rest) = req.path.strip_prefix("/v1beta/models") else {
        return Routed::plain(Answer::json(404, &error_body(404, "Not Found")));
    };
    if rest.is_empty() && req.method == "GET" {
        let models: Vec<Value> = state
            .script
            .models
            .iter()
            .map(|m| model_json(&m.name, m.context_length))
            .collect();
        return Routed::plain(Answer::json(200, &json!({ "models": models })));
    }
    let rest = rest.trim_start_matches('/');
    match (req.method.as_str(), rest.split_once(':')) {
        ("POST", Some((model, "generateContent"))) => chat(state, req, model, false),
        ("POST", Some((model, "streamGenerateContent"))) => chat(state, req, model, true),
        ("GET", None) => Routed::plain(match state.find_model(rest) {
            Some(spec) => Answer::json(200, &model_json(&spec.name, spec.context_length)),
            None => not_found(rest),
        }),
        _ => Routed::plain(Answer::json(404, &error_body(404, "Not Found"))),
    }
}

fn model_json(name: &str, context: u32) -> Value {
    json!({
        "name": format!("models/{name}"),
        "version": "001",
        "displayName": name,
        "inputTokenLimit": context,
        "outputTokenLimit": 8192,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
        "thinking": true
    })
}

fn chat(state: &State, req: &RecordedRequest, model: &str, stream: bool) -> Routed {
    let routed = |answer, delay| Routed {
        answer,
        is_chat: true,
        delay,
    };
    if state.find_model(model).is_none() {
        return routed(not_found(model), Default::default());
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
    let sse = req
        .query
        .as_deref()
        .is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
    let answer = if stream && sse {
        Answer::Stream {
            content_type: "text/event-stream".to_owned(),
            chunks: stream_chunks(&turn, model)
                .iter()
                .map(|c| format!("data: {c}\r\n\r\n"))
                .collect(),
            cut_after: turn.cut_after_chunks,
            chunk_delay: turn.chunk_delay,
            headers: turn.headers.clone(),
        }
    } else {
        let body = if stream {
            Value::Array(stream_chunks(&turn, model))
        } else {
            response(&turn, model, all_parts(&turn), true)
        };
        let mut a = Answer::json(200, &body);
        if let Answer::Body { headers, .. } = &mut a {
            headers.clone_from(&turn.headers);
        }
        a
    };
    routed(answer, turn.delay)
}

fn finish_reason(turn: &Turn) -> &str {
    match turn.finish_reason() {
        "stop" | "tool_calls" => "STOP",
        "length" => "MAX_TOKENS",
        other => other,
    }
}

fn call_parts(turn: &Turn) -> Vec<Value> {
    turn.tool_calls
        .iter()
        .map(|c| {
            let mut fc = json!({"name": c.name, "args": c.arguments});
            if let Some(id) = &c.id {
                fc["id"] = json!(id);
            }
            json!({ "functionCall": fc })
        })
        .collect()
}

fn all_parts(turn: &Turn) -> Vec<Value> {
    let mut parts = Vec::new();
    if let Some(t) = &turn.thinking {
        parts.push(json!({"text": t, "thought": true}));
    }
    if !turn.content.is_empty() {
        parts.push(json!({ "text": turn.content }));
    }
    parts.extend(call_parts(turn));
    parts
}

fn response(turn: &Turn, model: &str, parts: Vec<Value>, last: bool) -> Value {
    let mut cand = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let mut usage = json!({
        "promptTokenCount": turn.prompt_tokens,
        "totalTokenCount": turn.prompt_tokens,
    });
    if last {
        cand["finishReason"] = json!(finish_reason(turn));
        usage["candidatesTokenCount"] = json!(turn.completion_tokens);
        usage["totalTokenCount"] = json!(turn.prompt_tokens + turn.completion_tokens);
        if let Some(c) = turn.cached_tokens {
            usage["cachedContentTokenCount"] = json!(c);
        }
    }
    json!({"candidates": [cand], "usageMetadata": usage, "modelVersion": model, "responseId": "scripted"})
}

fn stream_chunks(turn: &Turn, model: &str) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(t) = &turn.thinking {
        for p in pieces(t, turn.chunk_chars) {
            out.push(response(
                turn,
                model,
                vec![json!({"text": p, "thought": true})],
                false,
            ));
        }
    }
    for p in pieces(&turn.content, turn.chunk_chars) {
        out.push(response(turn, model, vec![json!({ "text": p })], false));
    }
    let calls = call_parts(turn);
    if !calls.is_empty() {
        out.push(response(turn, model, calls, false));
    }
    out.push(response(turn, model, vec![json!({"text": ""})], true));
    out
}
