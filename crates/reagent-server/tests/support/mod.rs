//! A real server on 127.0.0.1:0 over a temp store, token file and workspace root, and a
//! real HTTP client for it.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use reagent_server::{Server, ServerConfig, ServerError};
use reagent_store::Location;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server.
pub struct TestServer {
    pub base: String,
    pub token: String,
    pub dir: tempfile::TempDir,
    /// A directory under the workspace root.
    pub workspace: PathBuf,
    pub store: Location,
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<Result<(), ServerError>>>,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Start with `model_url` allowed as a request's `base_url` (`[serve] base_urls`).
    pub async fn start_allowing(model_url: &str) -> Self {
        let url = model_url.to_owned();
        Self::start_with(|c| c.base_urls.push(url)).await
    }

    /// Start with the defaults changed by `change`.
    pub async fn start_with(change: impl FnOnce(&mut ServerConfig)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(dir, change).await
    }

    /// Start over the store, token and root in `dir` (to restart over the same state).
    pub async fn start_in(dir: tempfile::TempDir, change: impl FnOnce(&mut ServerConfig)) -> Self {
        let root = dir.path().join("root");
        let workspace = root.join("project");
        std::fs::create_dir_all(&workspace).unwrap();
        let store = Location::Sqlite(dir.path().join("reagent.db"));
        let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), store.clone());
        config.workspace_roots = vec![root];
        config.token_file = Some(dir.path().join("token"));
        change(&mut config);
        let server = Server::bind(config).await.unwrap();
        let base = format!("http://{}", server.local_addr());
        let token = server.token().reveal().to_owned();
        let (stop, stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(server.serve(async {
            let _ = stopped.await;
        }));
        TestServer {
            base,
            token,
            dir,
            workspace,
            store,
            client: reqwest::Client::new(),
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.get(self.url(path)).bearer_auth(&self.token)
    }

    /// `GET path`, its body as JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        self.get(path).send().await.unwrap().json().await.unwrap()
    }

    /// `GET path`, its body as text.
    pub async fn get_text(&self, path: &str) -> String {
        self.get(path).send().await.unwrap().text().await.unwrap()
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.post(self.url(path)).bearer_auth(&self.token)
    }

    /// `POST /v1/runs/{id}/cancel`.
    pub async fn cancel(&self, id: &str) -> reqwest::Response {
        self.post(&format!("/v1/runs/{id}/cancel"))
            .send()
            .await
            .unwrap()
    }

    /// The frames of the WebSocket at `path` (opened with the token), each text frame's JSON,
    /// until it closes.
    pub async fn websocket_frames(&self, path: &str) -> Vec<Value> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        use tokio_tungstenite::tungstenite::Message;
        let url = format!("ws://{}{path}", self.base.trim_start_matches("http://"));
        let mut request = url.as_str().into_client_request().unwrap();
        request.headers_mut().insert(
            "authorization",
            format!("Bearer {}", self.token).parse().unwrap(),
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        let mut frames = Vec::new();
        while let Some(msg) = socket.next().await {
            match msg.unwrap() {
                Message::Text(t) => frames.push(serde_json::from_str::<Value>(&t).unwrap()),
                Message::Close(_) => break,
                _ => {}
            }
        }
        frames
    }

    /// `POST /v1/runs` for model `m` on the Ollama at `model_url`, with `extra` fields
    /// merged in; returns the 201 body.
    pub async fn start_run(&self, model_url: &str, extra: Value) -> Value {
        let mut body = json!({
            "task": "do the thing",
            "model": "m",
            "provider": "ollama",
            "base_url": model_url,
            "workspace": self.workspace.display().to_string(),
            "approval": "deny",
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        let res = self.post("/v1/runs").json(&body).send().await.unwrap();
        assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
        res.json().await.unwrap()
    }

    /// The run's events over SSE, from `after`, until the stream ends.
    pub async fn events(&self, run_id: &str, after: Option<u64>) -> Vec<SseEvent> {
        let mut req = self.get(&format!("/v1/runs/{run_id}/events"));
        if let Some(a) = after {
            req = req.header("Last-Event-ID", a.to_string());
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200);
        read_sse(res, usize::MAX).await
    }

    /// Wait until run `id` is no longer running (as `GET /v1/runs/{id}` says).
    pub async fn wait_finished(&self, id: &str) -> Value {
        for _ in 0..200 {
            let res = self.get(&format!("/v1/runs/{id}")).send().await.unwrap();
            if res.status() == 200 {
                let detail: Value = res.json().await.unwrap();
                if detail["run"]["outcome"] != "running" {
                    return detail;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("run {id} did not finish");
    }

    /// Stop the server (as on SIGTERM) and wait for `serve` to return; gives back the
    /// directory so a new server can start over the same state.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(h) = self.handle.take() {
            tokio::time::timeout(Duration::from_secs(10), h)
                .await
                .expect("serve returns within seconds of its shutdown")
                .unwrap()
                .unwrap();
        }
        let TestServer { dir, .. } = self;
        dir
    }
}

/// One Server-Sent Event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub id: u64,
    pub event: String,
    pub data: Value,
}

/// Read SSE events from `res` until the stream ends or `max` events arrived.
pub async fn read_sse(res: reqwest::Response, max: usize) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut stream = res.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        buf.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if let Some(e) = parse_block(&block) {
                out.push(e);
                if out.len() >= max {
                    return out;
                }
            }
        }
    }
    out
}

fn parse_block(block: &str) -> Option<SseEvent> {
    let (mut id, mut event, mut data) = (None, None, String::new());
    for line in block.lines() {
        let field = |name: &str| {
            line.strip_prefix(name)
                .map(|v| v.strip_prefix(' ').unwrap_or(v).to_owned())
        };
        if let Some(v) = field("id:") {
            id = Some(v.parse().unwrap());
        } else if let Some(v) = field("event:") {
            event = Some(v);
        } else if let Some(v) = field("data:") {
            data.push_str(&v);
        }
    }
    Some(SseEvent {
        id: id?,
        event: event?,
        data: serde_json::from_str(&data).unwrap(),
    })
}

/// Check `events` are seq 1, 2, … in order, each once, ending with `run_finished`, with SSE
/// ids and types matching the JSON.
pub fn assert_complete(events: &[SseEvent]) {
    assert!(!events.is_empty());
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.id, i as u64 + 1, "event {i} out of order: {events:?}");
        assert_eq!(e.data["seq"], e.id);
        assert_eq!(e.data["type"], e.event.as_str());
    }
    assert_eq!(events.last().unwrap().event, "run_finished");
}
