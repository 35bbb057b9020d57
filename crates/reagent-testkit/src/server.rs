//! The HTTP server behind every scripted wire: accept loop, request recording, script queue,
//! and turning a wire module's [`Answer`] into bytes (including cut connections).
//!
//! Design decision: a hand-written hyper accept loop rather than `axum::serve`, so that
//! [`ScriptedServer::shutdown`] really kills every open (keep-alive) connection: a pool test
//! needs an endpoint that is dead, not one that keeps answering on pooled connections.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::script::{ModelSpec, Reply, ScriptBuilder, Turn};
use crate::{anthropic, gemini, ollama, openai};

/// Which wire format a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Ollama's `/api/chat`, `/api/show`, `/api/tags`.
    Ollama,
    /// OpenAI-compatible `/v1/chat/completions` (plus llama-server's `/props`, `/health`).
    OpenAi,
    /// Anthropic Messages `/v1/messages`.
    Anthropic,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Path, without the query.
    pub path: String,
    /// Query string, when present.
    pub query: Option<String>,
    /// Headers (lowercase names).
    pub headers: Vec<(String, String)>,
    /// Body parsed as JSON (`Value::Null` when empty, a string when not JSON).
    pub body: Value,
    /// Whether this was a chat request (one that consumes a turn).
    pub is_chat: bool,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a wire module decided to send back.
pub(crate) enum Answer {
    /// A complete body.
    Body {
        status: u16,
        content_type: String,
        body: String,
        headers: Vec<(String, String)>,
    },
    /// A 200 stream of chunks.
    Stream {
        content_type: String,
        chunks: Vec<String>,
        cut_after: Option<usize>,
        chunk_delay: Duration,
        headers: Vec<(String, String)>,
    },
    /// Close the connection without answering.
    Cut,
}

impl Answer {
    /// A JSON body.
    pub(crate) fn json(status: u16, body: &Value) -> Answer {
        Answer::Body {
            status,
            content_type: "application/json; charset=utf-8".to_owned(),
            body: body.to_string(),
            headers: Vec::new(),
        }
    }
}

/// Shared state of one server.
pub(crate) struct State {
    pub(crate) wire: Wire,
    pub(crate) script: ScriptBuilder,
    turns: Mutex<VecDeque<Turn>>,
    recorded: Mutex<Vec<RecordedRequest>>,
    served: Mutex<usize>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    pub(crate) fn find_model(&self, name: &str) -> Option<ModelSpec> {
        self.script.find_model(name)
    }

    /// The next turn, or an error text when the script is used up.
    pub(crate) fn next_turn(&self) -> Result<Turn, String> {
        let mut served = lock(&self.served);
        *served += 1;
        match lock(&self.turns).pop_front() {
            Some(t) => Ok(t),
            None => Err(format!(
                "scripted server: script exhausted ({} turns scripted, this is chat request #{})",
                self.script.turns.len(),
                *served
            )),
        }
    }
}

/// HTTP status used when the script has no more turns (not retryable, so the loop fails fast).
pub(crate) const EXHAUSTED_STATUS: u16 = 410;

/// Applies a turn's reply override; `None` means render it normally.
/// `error_body` renders the wire's own error JSON for [`Turn::error`].
pub(crate) fn override_answer(turn: &Turn, error_body: fn(u16, &str) -> Value) -> Option<Answer> {
    match &turn.reply {
        Reply::Normal => None,
        Reply::Raw {
            status,
            content_type,
            body,
        } if content_type.is_empty() => {
            let mut a = Answer::json(*status, &error_body(*status, body));
            if let Answer::Body { headers, .. } = &mut a {
                headers.clone_from(&turn.headers);
            }
            Some(a)
        }
        Reply::Raw {
            status,
            content_type,
            body,
        } => Some(Answer::Body {
            status: *status,
            content_type: content_type.clone(),
            body: body.clone(),
            headers: turn.headers.clone(),
        }),
        Reply::RawStream(chunks) => Some(Answer::Stream {
            content_type: "text/event-stream".to_owned(),
            chunks: chunks.clone(),
            cut_after: turn.cut_after_chunks,
            chunk_delay: turn.chunk_delay,
            headers: turn.headers.clone(),
        }),
        Reply::CutBeforeResponse => Some(Answer::Cut),
    }
}

/// A running scripted server. Dropping it stops it.
pub struct ScriptedServer {
    addr: SocketAddr,
    state: Arc<State>,
    task: Mutex<Option<JoinHandle<()>>>,
}

type Body = UnsyncBoxBody<Bytes, io::Error>;

impl ScriptedServer {
    /// Starts a server for `wire` on `127.0.0.1:0`, replying from `script`.
    pub async fn start(wire: Wire, script: ScriptBuilder) -> io::Result<Self> {
        Self::start_at(wire, script, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts a server at `addr` (e.g. the address of one that was shut down, to bring an
    /// endpoint back).
    pub async fn start_at(wire: Wire, script: ScriptBuilder, addr: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            wire,
            turns: Mutex::new(script.turns.iter().cloned().collect()),
            script,
            recorded: Mutex::new(Vec::new()),
            served: Mutex::new(0),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&state)));
        Ok(ScriptedServer {
            addr,
            state,
            task: Mutex::new(Some(task)),
        })
    }

    /// The base URL as the wire's own SDK takes it: `http://127.0.0.1:PORT` for Ollama,
    /// Anthropic and Gemini, `http://127.0.0.1:PORT/v1` for OpenAI-compatible servers.
    pub fn base_url(&self) -> String {
        match self.state.wire {
            Wire::OpenAi => format!("{}/v1", self.root_url()),
            Wire::Ollama | Wire::Anthropic | Wire::Gemini => self.root_url(),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Bodies of the chat requests received so far (those that consumed a turn), in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state.recorded)
            .iter()
            .filter(|r| r.is_chat)
            .map(|r| r.body.clone())
            .collect()
    }

    /// Broken request invariants in the chat requests so far (empty when all is well): an
    /// empty conversation, or a tool result that answers no earlier tool call. Each problem
    /// names the request and message.
    pub fn invariant_violations(&self) -> Vec<String> {
        self.requests()
            .iter()
            .enumerate()
            .flat_map(|(n, body)| {
                crate::invariants::check(self.state.wire, body)
                    .into_iter()
                    .map(move |p| format!("chat request #{}: {p}", n + 1))
            })
            .collect()
    }

    /// Every request received so far (chat, show, tags, health...), in order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.state.recorded).clone()
    }

    /// Turns not yet served.
    pub fn remaining_turns(&self) -> usize {
        lock(&self.state.turns).len()
    }

    /// Appends a turn to the script while the server runs.
    pub fn push_turn(&self, turn: Turn) {
        lock(&self.state.turns).push_back(turn);
    }

    /// Stops the server and closes every open connection: later requests are refused.
    pub fn shutdown(&self) {
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
    }

    /// Like [`ScriptedServer::shutdown`], and waits until the listener is closed, so the port
    /// refuses connections (and can be bound again) once this returns.
    pub async fn stop(&self) {
        let task = lock(&self.task).take();
        if let Some(task) = task {
            task.abort();
            // The result is the cancellation we just asked for.
            let _ = task.await;
        }
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<State>) {
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let state = Arc::clone(&state);
                let svc = hyper::service::service_fn(move |req| handle(Arc::clone(&state), req));
                conns.spawn(async move {
                    // Errors here are the client going away or a deliberate cut: nothing to do.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, io::Error> {
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => return Err(io::Error::other(e)),
    };
    let body: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().map(str::to_owned);
    let method = parts.method.as_str().to_owned();
    let headers = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let mut rec = RecordedRequest {
        method,
        path,
        query,
        headers,
        body,
        is_chat: false,
    };
    let routed = match state.wire {
        Wire::Ollama => ollama::route(&state, &rec),
        Wire::OpenAi => openai::route(&state, &rec),
        Wire::Anthropic => anthropic::route(&state, &rec),
        Wire::Gemini => gemini::route(&state, &rec),
    };
    rec.is_chat = routed.is_chat;
    lock(&state.recorded).push(rec);
    if !routed.delay.is_zero() {
        tokio::time::sleep(routed.delay).await;
    }
    into_response(routed.answer)
}

/// A routed request: the answer, whether it consumed a turn, and the delay before answering.
pub(crate) struct Routed {
    pub(crate) answer: Answer,
    pub(crate) is_chat: bool,
    pub(crate) delay: Duration,
}

impl Routed {
    /// A non-chat answer without delay.
    pub(crate) fn plain(answer: Answer) -> Routed {
        Routed {
            answer,
            is_chat: false,
            delay: Duration::ZERO,
        }
    }
}

fn into_response(answer: Answer) -> Result<Response<Body>, io::Error> {
    let (status, content_type, headers, body) = match answer {
        Answer::Cut => return Err(io::Error::other("scripted connection cut")),
        Answer::Body {
            status,
            content_type,
            body,
            headers,
        } => (
            status,
            content_type,
            headers,
            Full::new(Bytes::from(body))
                .map_err(|e: Infallible| match e {})
                .boxed_unsync(),
        ),
        Answer::Stream {
            content_type,
            chunks,
            cut_after,
            chunk_delay,
            headers,
        } => {
            let total = chunks.len();
            let keep = cut_after.unwrap_or(total).min(total);
            let cut = cut_after.is_some();
            let items = chunks
                .into_iter()
                .take(keep)
                .map(Ok)
                .chain(cut.then(|| Err(io::Error::other("scripted stream cut"))));
            let stream = futures_util::stream::iter(items).then(move |item| async move {
                if !chunk_delay.is_zero() {
                    tokio::time::sleep(chunk_delay).await;
                }
                if item.is_err() {
                    // Let hyper flush what came before, so the client sees a stream that
                    // breaks off rather than a connection closed before any response.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                item.map(|s| Frame::data(Bytes::from(s)))
            });
            (
                200,
                content_type,
                headers,
                StreamBody::new(stream).boxed_unsync(),
            )
        }
    };
    let mut builder = Response::builder().status(status);
    if !content_type.is_empty() {
        builder = builder.header("content-type", content_type);
    }
    for (k, v) in headers {
        builder = builder.header(k, v);
    }
    builder.body(body).map_err(io::Error::other)
}
