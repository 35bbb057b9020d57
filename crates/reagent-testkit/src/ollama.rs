//! Ollama's wire format, as documented in `docs/api.md` of ollama/ollama:
//! `POST /api/chat` (JSON, or NDJSON when `stream` is true or absent), `POST /api/show`,
//! `GET /api/tags`, `GET /api/version`, `GET /`; errors as `{"error": "..."}`.

use serde_json::{json, Map, Value};

use crate::script::{pieces, ModelSpec, Turn};
use crate::server::{override_answer, Answer, RecordedRequest, Routed, State, EXHAUSTED_STATUS};

const CREATED_AT: &str = "2026-01-01T00:00:00.000000Z";

fn error_body(_status: u16, message: &str) -> Value {
    json!({ "error": message })
}

fn not_found(model: &str) -> Answer {
    Answer::json(404, &error_body(404, &format!("model '{model}' not found")))
}

pub(crate) fn route(state: &State, req: &RecordedRequest) -> Routed {
    let model = req
        .body
        .get("model")
        .or_else(|| req.body.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/api/chat") => chat(state, req, &model),
        ("POST", "/api/embed") => Routed::plain(crate::embed::ollama(state, req)),
        ("POST", "/api/show") => Routed::plain(match state.find_model(&model) {
            Some(spec) => Answer::json(200, &show(&spec)),
            None => not_found(&model),
        }),
        ("GET", "/api/tags") => Routed::plain(Answer::json(200, &tags(state))),
        ("GET", "/api/version") => Routed::plain(Answer::json(200, &json!({"version": "0.12.6"}))),
        ("GET" | "HEAD", "/") => Routed::plain(Answer::Body {
            status: 200,
            content_type: "text/plain; charset=utf-8".to_owned(),
            body: "Ollama is running".to_owned(),
            headers: Vec::new(),
        }),
        _ => Routed::plain(Answer::Body {
            status: 404,
            content_type: "text/plain".to_owned(),
            body: "404 page not found".to_owned(),
            headers: Vec::new(),
        }),
    }
}

fn chat(state: &State, req: &RecordedRequest, model: &str) -> Routed {
    let routed = |answer, delay| Routed {
        answer,
        is_chat: true,
        delay,
    };
    if model.is_empty() {
        return routed(
            Answer::json(400, &error_body(400, "model is required")),
            Default::default(),
        );
    }
    if state.find_model(model).is_none() {
        return routed(not_found(model), Default::default());
    }
    if let Some(refusal) = refused_format(state, req) {
        return routed(refusal, Default::default());
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
    // Ollama streams unless told not to.
    let stream = req.body.get("stream").and_then(Value::as_bool) != Some(false);
    let answer = if stream {
        Answer::Stream {
            content_type: "application/x-ndjson".to_owned(),
            chunks: stream_chunks(&turn, model),
            cut_after: turn.cut_after_chunks,
            chunk_delay: turn.chunk_delay,
            headers: turn.headers.clone(),
        }
    } else {
        let mut msg = message("", None);
        msg.insert("content".to_owned(), json!(turn.content));
        if let Some(t) = &turn.thinking {
            msg.insert("thinking".to_owned(), json!(t));
        }
        if !turn.tool_calls.is_empty() {
            msg.insert("tool_calls".to_owned(), calls(&turn));
        }
        let mut a = Answer::json(200, &final_chunk(&turn, model, msg));
        if let Answer::Body { headers, .. } = &mut a {
            headers.clone_from(&turn.headers);
        }
        a
    };
    routed(answer, turn.delay)
}

/// With [`crate::ScriptBuilder::only_json_format`], a `format` other than `"json"` refused
/// the way `ollama-openai-proxy` 0.7.0 refuses it: FastAPI's `{"detail": ...}` wording
/// pydantic's `literal_error`, the input quoted as Python's `repr`, shortened as pydantic does.
fn refused_format(state: &State, req: &RecordedRequest) -> Option<Answer> {
    let format = req.body.get("format")?;
    if !state.script.only_json_format || format.is_null() || format.as_str() == Some("json") {
        return None;
    }
    let input = python_repr(format);
    let chars: Vec<char> = input.chars().collect();
    let input = if chars.len() > 50 {
        let head: String = chars[..25].iter().collect();
        let tail: String = chars[chars.len() - 24..].iter().collect();
        format!("{head}...{tail}")
    } else {
        input
    };
    let input_type = match format {
        Value::Object(_) => "dict",
        Value::Array(_) => "list",
        Value::String(_) => "str",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        _ => "int",
    };
    let detail = format!(
        "Invalid request body: 1 validation error for OllamaChatRequest\nformat\n  Input should be \
         'json' [type=literal_error, input_value={input}, input_type={input_type}]\n    For further \
         information visit https://errors.pydantic.dev/2.14/v/literal_error"
    );
    Some(Answer::json(400, &json!({ "detail": detail })))
}

/// A JSON value as Python's `repr` of its `json.loads` form.
fn python_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", python_repr(&json!(k)), python_repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

fn message(content: &str, thinking: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("role".to_owned(), json!("assistant"));
    m.insert("content".to_owned(), json!(content));
    if let Some(t) = thinking {
        m.insert("thinking".to_owned(), json!(t));
    }
    m
}

fn calls(turn: &Turn) -> Value {
    turn.tool_calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut call = Map::new();
            if let Some(id) = &c.id {
                call.insert("id".to_owned(), json!(id));
            }
            call.insert(
                "function".to_owned(),
                json!({"index": i, "name": c.name, "arguments": c.arguments}),
            );
            Value::Object(call)
        })
        .collect()
}

fn done_reason(turn: &Turn) -> &str {
    match turn.finish_reason() {
        // Ollama reports "stop" when the model stopped to call tools.
        "tool_calls" => "stop",
        other => other,
    }
}

fn final_chunk(turn: &Turn, model: &str, msg: Map<String, Value>) -> Value {
    json!({
        "model": model,
        "created_at": CREATED_AT,
        "message": msg,
        "done": true,
        "done_reason": done_reason(turn),
        "total_duration": 1_234_567_u64,
        "load_duration": 12_345_u64,
        "prompt_eval_count": turn.prompt_tokens,
        "prompt_eval_duration": 234_567_u64,
        "eval_count": turn.completion_tokens,
        "eval_duration": 987_654_u64,
    })
}

fn line(v: &Value) -> String {
    format!("{v}\n")
}

fn stream_chunks(turn: &Turn, model: &str) -> Vec<String> {
    let partial = |msg: Map<String, Value>| {
        line(&json!({"model": model, "created_at": CREATED_AT, "message": msg, "done": false}))
    };
    let mut out = Vec::new();
    if let Some(t) = &turn.thinking {
        for p in pieces(t, turn.chunk_chars) {
            out.push(partial(message("", Some(&p))));
        }
    }
    for p in pieces(&turn.content, turn.chunk_chars) {
        out.push(partial(message(&p, None)));
    }
    let mut last = message("", None);
    if !turn.tool_calls.is_empty() {
        if turn.calls_in_final_chunk {
            last.insert("tool_calls".to_owned(), calls(turn));
        } else {
            let mut m = message("", None);
            m.insert("tool_calls".to_owned(), calls(turn));
            out.push(partial(m));
        }
    }
    out.push(line(&final_chunk(turn, model, last)));
    out
}

fn show(spec: &ModelSpec) -> Value {
    let mut info = Map::new();
    info.insert("general.architecture".to_owned(), json!(spec.arch));
    info.insert("general.parameter_count".to_owned(), json!(135_000_000_u64));
    info.insert(
        format!("{}.context_length", spec.arch),
        json!(spec.context_length),
    );
    info.insert(format!("{}.embedding_length", spec.arch), json!(576));
    json!({
        "license": "",
        "modelfile": format!("FROM {}\n", spec.name),
        "parameters": "temperature 0",
        "template": "{{ .Prompt }}",
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": spec.arch,
            "families": [spec.arch],
            "parameter_size": "135M",
            "quantization_level": "Q4_K_M"
        },
        "model_info": info,
        "capabilities": spec.capabilities,
        "modified_at": CREATED_AT,
    })
}

fn tags(state: &State) -> Value {
    let models: Vec<Value> = state
        .script
        .models
        .iter()
        .map(|m| {
            let name = if m.name.contains(':') {
                m.name.clone()
            } else {
                format!("{}:latest", m.name)
            };
            json!({
                "name": name,
                "model": name,
                "modified_at": CREATED_AT,
                "size": 100_000_000_u64,
                "digest": "0000000000000000000000000000000000000000000000000000000000000000",
                "details": {
                    "parent_model": "",
                    "format": "gguf",
                    "family": m.arch,
                    "families": [m.arch],
                    "parameter_size": "135M",
                    "quantization_level": "Q4_K_M"
                }
            })
        })
        .collect();
    json!({ "models": models })
}
