//! Embeddings on both wires (see [`crate::ScriptBuilder::embeddings`]): Ollama's
//! `POST /api/embed` (`{"model", "input": string | [string]}` → `{"model", "embeddings": [[…]]}`)
//! and the OpenAI `POST /v1/embeddings` (→ `{"object": "list", "data": [{"object":
//! "embedding", "index", "embedding"}], "model", "usage"}`). Embedding requests use no turn.

use serde_json::{json, Value};

use crate::server::{Answer, RecordedRequest, State};

/// Buckets of the word-count vectors.
const DIMENSIONS: usize = 64;

/// The inputs of a request: a string or an array of strings.
fn inputs(body: &Value) -> Option<Vec<String>> {
    match body.get("input")? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    }
}

/// A text's words (lowercased, alphanumeric) counted into [`DIMENSIONS`] buckets by an FNV-1a
/// hash, normalized to length 1.
fn vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; DIMENSIONS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in word.to_lowercase().bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        v[(h % DIMENSIONS as u64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// Ollama `POST /api/embed`.
pub(crate) fn ollama(state: &State, req: &RecordedRequest) -> Answer {
    if !state.script.embeddings {
        return Answer::json(404, &json!({"error": "404 page not found"}));
    }
    let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
    match inputs(&req.body) {
        Some(texts) => {
            let embeddings: Vec<Vec<f64>> = texts.iter().map(|t| vector(t)).collect();
            Answer::json(
                200,
                &json!({"model": model, "embeddings": embeddings, "total_duration": 1000,
                        "load_duration": 100, "prompt_eval_count": texts.len()}),
            )
        }
        None => Answer::json(400, &json!({"error": "invalid input type"})),
    }
}

/// OpenAI `POST /v1/embeddings`; `error_body` is the wire's error JSON.
pub(crate) fn openai(
    state: &State,
    req: &RecordedRequest,
    error_body: fn(u16, &str) -> Value,
) -> Answer {
    if !state.script.embeddings {
        // llama-server's answer when it was started without --embeddings.
        return Answer::json(
            501,
            &error_body(
                501,
                "This server does not support embeddings. Start it with `--embeddings`",
            ),
        );
    }
    let model = req.body.get("model").and_then(Value::as_str).unwrap_or("");
    match inputs(&req.body) {
        Some(texts) => {
            let data: Vec<Value> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": vector(t)}))
                .collect();
            Answer::json(
                200,
                &json!({"object": "list", "data": data, "model": model,
                        "usage": {"prompt_tokens": texts.len(), "total_tokens": texts.len()}}),
            )
        }
        None => Answer::json(
            400,
            &error_body(400, "\"input\" must be a string or an array of strings"),
        ),
    }
}
