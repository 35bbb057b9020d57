//! The scripted model server: a fast, stateless stand-in for Ollama (`/api/chat`, `/api/show`,
//! `/api/tags`, `/api/version`), so that what a benchmark measures is the agent runtime, not the
//! model.
//!
//! Every reply is decided from the request alone ([`decide`]): the model name carries the
//! [`Plan`] (how many files to read), and the number of assistant turns already in the
//! conversation (plus the rounds a reagent "earlier steps" digest stands for) says how far the
//! run has got. While fewer than `N` turns were made the reply is
//! a native tool call `read_file{"path": "f000K.txt"}`; then it is the final answer, as plain
//! text, or as a call of `final_answer` when the request offers such a tool (smolagents ends a
//! run that way). Consecutive assistant messages count as one turn, because some frameworks
//! split one turn into several (smolagents writes its tool calls as a second assistant message).
//!
//! Design decision: one accept loop of hyper HTTP/1 connections on whatever runtime the caller
//! gives it (the `serve` command uses a single-threaded one, so the server needs one core at
//! most and its CPU time is its own process's, not the agent's). Requests are parsed into a
//! struct that keeps only roles and tool names, so the server's cost per request is a single
//! scan of the body.
//!
//! The only state is a pair of counters ([`Stats`]: chat requests and their body bytes), read
//! by `GET /bench/stats`, so a driver can set each agent's CPU against the bytes it sent.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use reagent_protocol::CancellationToken;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::workload::{file_name, final_answer, Plan};

/// Context length the server claims for every model (large, so runs do not compact unless a
/// client asks for a smaller window).
pub const CONTEXT_LENGTH: u64 = 1 << 20;

/// A fixed timestamp for `created_at` (the reply must not depend on the clock).
const CREATED_AT: &str = "2026-01-01T00:00:00.000000000Z";

/// The parts of an `/api/chat` body the server looks at.
#[derive(Deserialize)]
struct ChatBody {
    model: String,
    #[serde(default)]
    messages: Vec<RoleOnly>,
    #[serde(default)]
    tools: Vec<ToolEntry>,
    stream: Option<bool>,
}

#[derive(Deserialize)]
struct RoleOnly {
    #[serde(default)]
    role: String,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct ToolEntry {
    function: Option<FunctionName>,
}

#[derive(Deserialize)]
struct FunctionName {
    #[serde(default)]
    name: String,
}

/// The reply [`decide`] chose for one chat request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Model name, echoed back.
    pub model: String,
    /// Answer as NDJSON chunks (Ollama's default) rather than one JSON object.
    pub stream: bool,
    /// Wait this long before answering.
    pub hold: Duration,
    /// Assistant turns already in the conversation.
    pub turns: u32,
    /// The assistant message (`{"role": "assistant", "content": .., "tool_calls": [..]}`).
    pub message: Value,
    /// Prompt size reported back (body bytes / 4).
    pub prompt_tokens: u64,
}

/// Decide the reply to an `/api/chat` body. `Err` carries the message of a 400 or 404 answer.
pub fn decide(body: &[u8]) -> Result<Decision, (StatusCode, String)> {
    let req: ChatBody = serde_json::from_slice(body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            format!("invalid chat request: {e}"),
        )
    })?;
    let plan = Plan::from_model(&req.model).ok_or_else(|| {
        (
            StatusCode::NOT_FOUND,
            format!(
                "model \"{}\" not found, try pulling it first (the scripted server serves bench-N)",
                req.model
            ),
        )
    })?;
    let mut turns = 0u32;
    let mut previous_was_assistant = false;
    for m in &req.messages {
        // reagent folds old rounds into one digest on long runs; it says how many.
        if let Some(folded) = reagent_core::digest_rounds(&m.content) {
            turns += u32::try_from(folded).unwrap_or(u32::MAX);
        }
        let assistant = m.role == "assistant";
        if assistant && !previous_was_assistant {
            turns += 1;
        }
        previous_was_assistant = assistant;
    }
    let message = if turns < plan.iterations {
        json!({
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": file_name(turns)}}}]
        })
    } else if req.tools.iter().any(|t| {
        t.function
            .as_ref()
            .is_some_and(|f| f.name == "final_answer")
    }) {
        json!({
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "final_answer",
                "arguments": {"answer": final_answer(turns)}}}]
        })
    } else {
        json!({"role": "assistant", "content": final_answer(turns)})
    };
    let hold = if turns == plan.hold_at {
        plan.hold
    } else {
        Duration::ZERO
    };
    Ok(Decision {
        model: req.model,
        stream: req.stream.unwrap_or(true),
        hold,
        turns,
        message,
        prompt_tokens: (body.len() / 4) as u64,
    })
}

/// The body of the answer to `d`: one JSON object, or two NDJSON lines (the message, then the
/// `done` chunk with the counts) when streaming.
pub fn render(d: &Decision) -> String {
    let done = |message: Value| {
        json!({
            "model": d.model,
            "created_at": CREATED_AT,
            "message": message,
            "done": true,
            "done_reason": "stop",
            "total_duration": 1000,
            "load_duration": 0,
            "prompt_eval_count": d.prompt_tokens,
            "prompt_eval_duration": 500,
            "eval_count": 12,
            "eval_duration": 500
        })
    };
    if d.stream {
        let first = json!({
            "model": d.model,
            "created_at": CREATED_AT,
            "message": d.message,
            "done": false
        });
        format!(
            "{first}\n{}\n",
            done(json!({"role": "assistant", "content": ""}))
        )
    } else {
        done(d.message.clone()).to_string()
    }
}

/// `/api/show`: a model with tool support and a large context.
fn show_reply(model: &str) -> Value {
    json!({
        "modelfile": "",
        "parameters": "",
        "template": "{{- if .Tools }}{{ .Tools }}{{ end }}{{ .Prompt }}",
        "details": {"format": "gguf", "family": "bench", "parameter_size": "0B",
                    "quantization_level": "none"},
        "model_info": {"general.architecture": "bench", "bench.context_length": CONTEXT_LENGTH,
                       "general.basename": model},
        "capabilities": ["completion", "tools"]
    })
}

/// `/api/tags`: one model, `bench-10`.
fn tags_reply() -> Value {
    json!({"models": [{"name": "bench-10", "model": "bench-10", "modified_at": CREATED_AT,
                        "size": 0, "digest": "0", "details": {"format": "gguf", "family": "bench"}}]})
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        resp.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    resp
}

fn error(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    respond(
        status,
        "application/json",
        json!({ "error": message }).to_string(),
    )
}

/// Counters of the chat requests served (the server's only state).
#[derive(Debug, Default)]
pub struct Stats {
    chats: AtomicU64,
    chat_bytes: AtomicU64,
}

impl Stats {
    /// `(chat requests, their body bytes)` so far.
    pub fn read(&self) -> (u64, u64) {
        (
            self.chats.load(Ordering::Relaxed),
            self.chat_bytes.load(Ordering::Relaxed),
        )
    }

    fn to_json(&self) -> Value {
        let (chats, bytes) = self.read();
        json!({"chat_requests": chats, "chat_bytes": bytes})
    }
}

async fn handle(
    req: Request<Incoming>,
    stats: Arc<Stats>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(error(StatusCode::BAD_REQUEST, &e.to_string())),
    };
    if (method.as_str(), path.as_str()) == ("POST", "/api/chat") {
        stats.chats.fetch_add(1, Ordering::Relaxed);
        stats
            .chat_bytes
            .fetch_add(body.len() as u64, Ordering::Relaxed);
    }
    let resp = match (method.as_str(), path.as_str()) {
        ("GET", "/bench/stats") => respond(
            StatusCode::OK,
            "application/json",
            stats.to_json().to_string(),
        ),
        ("POST", "/api/chat") => match decide(&body) {
            Ok(d) => {
                if !d.hold.is_zero() {
                    tokio::time::sleep(d.hold).await;
                }
                let content_type = if d.stream {
                    "application/x-ndjson"
                } else {
                    "application/json"
                };
                respond(StatusCode::OK, content_type, render(&d))
            }
            Err((status, message)) => error(status, &message),
        },
        ("POST", "/api/show") => {
            let model = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| {
                    v.get("model")
                        .or_else(|| v.get("name"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            if Plan::from_model(&model).is_some() {
                respond(
                    StatusCode::OK,
                    "application/json",
                    show_reply(&model).to_string(),
                )
            } else {
                error(StatusCode::NOT_FOUND, &format!("model '{model}' not found"))
            }
        }
        ("GET", "/api/tags") => {
            respond(StatusCode::OK, "application/json", tags_reply().to_string())
        }
        ("GET", "/api/version") => respond(
            StatusCode::OK,
            "application/json",
            json!({"version": "0.12.0"}).to_string(),
        ),
        ("GET" | "HEAD", "/") => respond(StatusCode::OK, "text/plain", "Ollama is running".into()),
        _ => error(StatusCode::NOT_FOUND, "not found"),
    };
    Ok(resp)
}

/// A running scripted server.
pub struct ScriptServer {
    addr: SocketAddr,
    stats: Arc<Stats>,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl ScriptServer {
    /// Serve on `listener` (on the current tokio runtime) until [`ScriptServer::shutdown`].
    pub fn start(listener: TcpListener) -> std::io::Result<ScriptServer> {
        let addr = listener.local_addr()?;
        let stop = CancellationToken::new();
        let stats = Arc::new(Stats::default());
        let task = tokio::spawn(accept_loop(listener, stats.clone(), stop.clone()));
        Ok(ScriptServer {
            addr,
            stats,
            stop,
            task,
        })
    }

    /// The request counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting and close every connection.
    pub async fn shutdown(self) {
        self.stop.cancel();
        // The accept loop ends at once; a join error would only mean it panicked, which it
        // cannot report anywhere useful now.
        let _ = self.task.await;
    }
}

async fn accept_loop(listener: TcpListener, stats: Arc<Stats>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = stop.cancelled() => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors or similar (transient): back off briefly rather
                // than spin.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // Small replies: do not wait for Nagle.
        let _ = stream.set_nodelay(true);
        let stop = stop.clone();
        let stats = stats.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(req, stats.clone()));
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                // A broken connection concerns only that client.
                _ = conn => {}
                () = stop.cancelled() => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Vec<u8> {
        v.to_string().into_bytes()
    }

    #[test]
    fn reads_files_in_order_then_answers() {
        let d = decide(&body(json!({"model": "bench-2", "stream": false,
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]})))
        .unwrap();
        assert_eq!(d.turns, 0);
        assert_eq!(
            d.message["tool_calls"][0]["function"],
            json!({"name": "read_file", "arguments": {"path": "f0000.txt"}})
        );
        let d = decide(&body(json!({"model": "bench-2", "messages": [
            {"role": "user", "content": "t"},
            {"role": "assistant", "content": ""}, {"role": "tool", "content": "r"}]})))
        .unwrap();
        assert!(d.stream, "Ollama streams unless told otherwise");
        assert_eq!(
            d.message["tool_calls"][0]["function"]["arguments"]["path"],
            "f0001.txt"
        );
        let d = decide(&body(json!({"model": "bench-2", "messages": [
            {"role": "user"}, {"role": "assistant"}, {"role": "tool"},
            {"role": "assistant"}, {"role": "assistant"}, {"role": "user"}]})))
        .unwrap();
        assert_eq!(d.turns, 2, "consecutive assistant messages are one turn");
        assert_eq!(
            d.message,
            json!({"role": "assistant", "content": "I read 2 files."})
        );
    }

    #[test]
    fn final_answer_tool_is_called_when_offered() {
        let d = decide(&body(json!({"model": "bench-0", "messages": [],
            "tools": [{"type": "function", "function": {"name": "final_answer"}}]})))
        .unwrap();
        assert_eq!(
            d.message["tool_calls"][0]["function"]["name"],
            "final_answer"
        );
    }

    #[test]
    fn holds_only_the_chosen_turn() {
        let req = |turns: usize| {
            let mut messages = vec![json!({"role": "user"})];
            for _ in 0..turns {
                messages.push(json!({"role": "assistant"}));
                messages.push(json!({"role": "tool"}));
            }
            body(json!({"model": "bench-5-h250-a1", "messages": messages}))
        };
        assert_eq!(decide(&req(0)).unwrap().hold, Duration::ZERO);
        assert_eq!(decide(&req(1)).unwrap().hold, Duration::from_millis(250));
        assert_eq!(decide(&req(2)).unwrap().hold, Duration::ZERO);
    }

    #[test]
    fn bad_requests_are_refused() {
        assert_eq!(decide(b"{").unwrap_err().0, StatusCode::BAD_REQUEST);
        assert_eq!(
            decide(&body(json!({"model": "llama3", "messages": []})))
                .unwrap_err()
                .0,
            StatusCode::NOT_FOUND
        );
    }

    #[test]
    fn streamed_replies_are_two_ndjson_lines() {
        let d = decide(&body(json!({"model": "bench-1", "messages": []}))).unwrap();
        let text = render(&d);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["done"], false);
        assert_eq!(lines[1]["done"], true);
        assert_eq!(lines[1]["prompt_eval_count"], d.prompt_tokens);
    }
}
