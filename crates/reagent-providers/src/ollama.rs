//! Ollama backend: `POST /api/chat` (JSON or NDJSON stream) and `POST /api/show`.
//!
//! Wire details handled here: tools as `{"type":"function","function":{..}}`, tool results as
//! `{"role":"tool","content":..,"tool_name":..}`, generation options under `options`,
//! `keep_alive` and `think` at the top level, `format` = the response JSON Schema (`"json"` for
//! JSON mode). Streamed tool
//! calls may arrive in any chunk; `thinking` becomes the message's reasoning. `<think>` blocks in
//! content are left alone (the loop's parser handles them). Ollama has no `tool_choice`: with
//! [`ToolChoice::None`] the tools are simply not sent, and [`ToolChoice::Required`] cannot be
//! enforced (constrain with `response_schema` instead).

use std::time::Instant;

use bytes::Bytes;
use reagent_protocol::{
    Capabilities, ChatRequest, ChatResponse, Message, ModelInfo, ProviderError, Role, SignalSink,
    ToolChoice,
};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::fallback;
use crate::http::{self, ClientOptions};
use crate::ollama_reply::{read_stream, Accumulator};
use crate::wire;

/// Where Ollama listens by default.
pub const DEFAULT_OLLAMA_HOST: &str = "http://127.0.0.1:11434";

const HINT: &str = "Is Ollama running? Start it with `ollama serve` (or set OLLAMA_HOST / \
     --base-url), or use the embedded model server: `reagent run --provider local` (installed \
     and started on demand).";

/// `$OLLAMA_HOST` normalized by [`normalize_ollama_host`], else [`DEFAULT_OLLAMA_HOST`].
pub fn default_ollama_host() -> String {
    match std::env::var("OLLAMA_HOST") {
        Ok(v) if !v.trim().is_empty() => normalize_ollama_host(&v),
        _ => DEFAULT_OLLAMA_HOST.to_owned(),
    }
}

/// Turns an `OLLAMA_HOST`-style value into a base URL the way Ollama itself does: the scheme
/// defaults to `http`, the port to 11434 (80 / 443 when an `http://` / `https://` scheme is given
/// without one), a path is kept. Bind-all addresses (`0.0.0.0`, `::`) become loopback, since
/// they are where a server listens, not where a client connects. Unusable values give the default.
///
/// ```
/// use reagent_providers::ollama::normalize_ollama_host;
/// assert_eq!(normalize_ollama_host("0.0.0.0"), "http://127.0.0.1:11434");
/// assert_eq!(normalize_ollama_host("gpu-box:8000"), "http://gpu-box:8000");
/// ```
pub fn normalize_ollama_host(raw: &str) -> String {
    let s = raw.trim();
    if s.is_empty() {
        return DEFAULT_OLLAMA_HOST.to_owned();
    }
    let (scheme, rest, default_port) = match s.split_once("://") {
        None => ("http", s, 11434u16),
        Some((sch, r)) if sch.eq_ignore_ascii_case("http") => ("http", r, 80),
        Some((sch, r)) if sch.eq_ignore_ascii_case("https") => ("https", r, 443),
        Some((sch, r)) => (sch, r, 11434),
    };
    let (hostport, path) = match rest.split_once('/') {
        Some((h, p)) => (h, p.trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = match split_host_port(hostport) {
        Some((h, p)) => match p.parse::<u16>() {
            Ok(port) => (h.to_owned(), port),
            Err(_) => return DEFAULT_OLLAMA_HOST.to_owned(),
        },
        None => (
            hostport
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            default_port,
        ),
    };
    let host = match host.as_str() {
        "" | "0.0.0.0" => "127.0.0.1".to_owned(),
        "::" => "::1".to_owned(),
        _ => host,
    };
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    if path.is_empty() {
        format!("{scheme}://{host}:{port}")
    } else {
        format!("{scheme}://{host}:{port}/{path}")
    }
}

/// Go's `net.SplitHostPort`: `host:port` or `[v6]:port`; `None` when there is no port.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = after.strip_prefix(':')?;
        return Some((host, port));
    }
    let (host, port) = s.split_once(':')?;
    (!port.contains(':')).then_some((host, port))
}

/// A model served by Ollama.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    base: String,
    chat_url: reqwest::Url,
    show_url: reqwest::Url,
    client: reqwest::Client,
    opts: ClientOptions,
    /// What this endpoint refused (shared by clones).
    refusals: std::sync::Arc<crate::fallback::Refusals>,
}

impl OllamaProvider {
    /// A provider for the Ollama server at `host` (a URL such as `http://127.0.0.1:11434`, or
    /// any `OLLAMA_HOST`-style value, normalized by [`normalize_ollama_host`]).
    pub fn new(host: &str, opts: ClientOptions) -> Result<Self, ProviderError> {
        let base = http::clean_base_url(&normalize_ollama_host(host))?;
        Ok(OllamaProvider {
            chat_url: http::endpoint(&base, "/api/chat")?,
            show_url: http::endpoint(&base, "/api/show")?,
            base,
            client: http::client()?,
            opts,
            refusals: Default::default(),
        })
    }

    /// The normalized base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// Checks the server answers `GET /api/tags`.
    pub async fn health(&self) -> Result<(), ProviderError> {
        let url = format!("{}/api/tags", self.base);
        http::send_ok(self.client.get(&url), &url, self.opts.timeout, HINT)
            .await
            .map(drop)
    }

    async fn post(
        &self,
        url: &reqwest::Url,
        model: &str,
        body: impl Into<reqwest::Body>,
    ) -> Result<reqwest::Response, ProviderError> {
        let req = self
            .client
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        http::send_ok(req, url.as_str(), self.opts.timeout, HINT)
            .await
            .map_err(|e| {
                http::classify_404(
                    e,
                    model,
                    &self.base,
                    |_| format!("Download it with `ollama pull {model}`."),
                    "is --base-url the Ollama host, e.g. http://127.0.0.1:11434?",
                )
            })
    }

    async fn show(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        let started = Instant::now();
        let mut body = Vec::new();
        wire::push_json(&mut body, &json!({ "model": model }));
        let resp = self.post(&self.show_url, model, body).await?;
        let url = self.show_url.as_str();
        let v = http::read_json(resp, url, &self.opts, started).await?;
        Ok(parse_show(&v))
    }

    async fn attempt(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let started = Instant::now();
        let body = request_body(request);
        let resp = self.post(&self.chat_url, &request.model, body).await?;
        let url = self.chat_url.as_str();
        let mut acc = Accumulator::default();
        if request.stream {
            read_stream(resp, url, &self.opts, sink, &mut acc).await?;
        } else {
            let raw = http::read_body(resp, url, &self.opts, started).await?;
            acc.take(&raw, url, None, |raw| http::parse_json(raw, url))?;
        }
        acc.finish(url, started, &self.base)
    }
}

crate::retry::retrying_provider!(OllamaProvider, "ollama", show);

/// Context length and capabilities from an `/api/show` reply.
fn parse_show(v: &Value) -> ModelInfo {
    let info = v.get("model_info").and_then(Value::as_object);
    let arch = info
        .and_then(|i| i.get("general.architecture"))
        .and_then(Value::as_str);
    let context_length = info.and_then(|i| {
        let exact = arch.and_then(|a| i.get(&format!("{a}.context_length")));
        exact
            .or_else(|| {
                i.iter()
                    .find(|(k, _)| k.ends_with(".context_length"))
                    .map(|(_, v)| v)
            })
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
    });
    let caps: Option<Vec<&str>> = v
        .get("capabilities")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect());
    ModelInfo {
        context_length,
        capabilities: Capabilities {
            tools: caps.as_ref().map(|c| c.contains(&"tools")),
            json_schema: Some(true),
            thinking: caps.as_ref().map(|c| c.contains(&"thinking")),
        },
    }
}

/// The `/api/chat` body for `request` (messages and tools encoded once per run, see
/// [`crate::wire`]).
pub(crate) fn request_body(request: &ChatRequest) -> Bytes {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("stream".into(), json!(request.stream));
    let o = &request.options;
    let mut options = Map::new();
    if let Some(n) = o.num_ctx {
        options.insert("num_ctx".into(), json!(n));
    }
    if let Some(n) = o.num_predict {
        options.insert("num_predict".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        options.insert("temperature".into(), http::f32_json(t));
    }
    if let Some(s) = o.seed {
        options.insert("seed".into(), json!(s));
    }
    if let Some(p) = o.top_p {
        options.insert("top_p".into(), http::f32_json(p));
    }
    if let Some(p) = o.repeat_penalty {
        options.insert("repeat_penalty".into(), http::f32_json(p));
    }
    if let Some(n) = o.repeat_last_n {
        options.insert("repeat_last_n".into(), json!(n));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    if let Some(k) = &o.keep_alive {
        // Ollama takes a duration string ("5m") or a number of seconds (-1 = forever).
        let v = k.parse::<i64>().map_or_else(|_| json!(k), |n| json!(n));
        body.insert("keep_alive".into(), v);
    }
    if let Some(t) = o.think {
        body.insert("think".into(), json!(t));
    }
    if let Some(schema) = &request.response_schema {
        let format = match fallback::is_json_mode(schema) {
            true => json!("json"),
            false => schema.clone(),
        };
        body.insert("format".into(), format);
    }
    let with_tools = !request.tools.is_empty() && request.tool_choice != ToolChoice::None;
    wire::chat_body(request, "ollama", encode_message, with_tools, &body)
}

/// A message in Ollama's form, written straight into the body (no `Value` tree, no copy of
/// the text).
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: Option<&'a str>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a Value,
}

fn encode_message(m: &Message, out: &mut Vec<u8>) {
    let assistant = m.role == Role::Assistant;
    let tool_calls = match assistant {
        true => m
            .tool_calls
            .iter()
            .map(|c| WireCall {
                function: WireFunction {
                    name: &c.name,
                    arguments: &c.arguments,
                },
            })
            .collect(),
        false => Vec::new(),
    };
    let message = WireMessage {
        role: m.role.as_str(),
        content: &m.content,
        thinking: m
            .reasoning
            .as_deref()
            .filter(|r| assistant && !r.is_empty()),
        tool_calls,
        tool_name: m.tool_name.as_deref().filter(|_| m.role == Role::Tool),
    };
    wire::push_json(out, &message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_normalized_like_ollama_does() {
        let cases = [
            ("", "http://127.0.0.1:11434"),
            ("   ", "http://127.0.0.1:11434"),
            ("0.0.0.0", "http://127.0.0.1:11434"),
            ("0.0.0.0:8080", "http://127.0.0.1:8080"),
            ("example.com", "http://example.com:11434"),
            ("example.com:5", "http://example.com:5"),
            ("http://example.com", "http://example.com:80"),
            ("https://example.com", "https://example.com:443"),
            ("https://example.com:8443/", "https://example.com:8443"),
            ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
            ("http://host:1/proxy/ollama/", "http://host:1/proxy/ollama"),
            ("::1", "http://[::1]:11434"),
            ("[::1]:9000", "http://[::1]:9000"),
            ("::", "http://[::1]:11434"),
            (":11435", "http://127.0.0.1:11435"),
            ("host:notaport", "http://127.0.0.1:11434"),
            ("host:70000", "http://127.0.0.1:11434"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize_ollama_host(input), want, "input {input:?}");
        }
    }

    #[test]
    fn show_reply_gives_context_and_capabilities() {
        let v = json!({
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960,
                           "other.context_length": 1},
            "capabilities": ["completion", "tools", "thinking"]
        });
        let info = parse_show(&v);
        assert_eq!(info.context_length, Some(40960));
        assert_eq!(info.capabilities.tools, Some(true));
        assert_eq!(info.capabilities.thinking, Some(true));
        assert_eq!(info.capabilities.json_schema, Some(true));
        let old = parse_show(&json!({"model_info": {"llama.context_length": 2048}}));
        assert_eq!(old.context_length, Some(2048));
        assert_eq!(old.capabilities.tools, None);
    }
}
