//! OpenAI-compatible backend (`/v1/chat/completions`): OpenAI, llama.cpp's llama-server, vLLM,
//! LM Studio and friends.
//!
//! The base URL is taken as the OpenAI SDK takes it, ending in `/v1`
//! (`http://127.0.0.1:8080/v1`). Tools, `tool_choice`, `max_tokens`, `temperature`, `seed` and
//! `response_format: {"type": "json_schema", ...}` are sent; `num_ctx`, `keep_alive` and `think`
//! have no OpenAI equivalent and are not. Replies may carry `reasoning_content` (reasoning) and
//! llama-server's `timings` (`cache_n` → cached prompt tokens). Streaming is SSE; the deltas are
//! put together by `openai_stream.rs`. `model_info` reads llama-server's `GET /props` at the
//! server root; other servers give unknown capabilities.

use std::borrow::Cow;
use std::time::Instant;

use bytes::Bytes;
use reagent_protocol::{
    Capabilities, ChatRequest, ChatResponse, FinishReason, Message, ModelInfo, ProviderError, Role,
    SignalSink, ToolCall, ToolChoice, Usage,
};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::fallback;
use crate::http::{self, ClientOptions};
use crate::openai_stream::read_stream;
use crate::reply::{self, assistant, short};
use crate::wire;

const HINT: &str = "Is the server running? Start one with `llama-server -m MODEL.gguf --port 8080 --jinja`, or check --base-url (OpenAI-style URLs end in /v1).";

/// A model behind an OpenAI-compatible chat completions API.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    base: String,
    chat_url: reqwest::Url,
    api_key: Option<String>,
    client: reqwest::Client,
    opts: ClientOptions,
    /// What this endpoint refused (shared by clones).
    refusals: std::sync::Arc<crate::fallback::Refusals>,
}

impl OpenAiProvider {
    /// A provider for `base_url` (ending in `/v1`), with an optional bearer API key.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        opts: ClientOptions,
    ) -> Result<Self, ProviderError> {
        let base = http::clean_base_url(base_url)?;
        Ok(OpenAiProvider {
            chat_url: http::endpoint(&base, "/chat/completions")?,
            base,
            api_key: api_key.filter(|k| !k.is_empty()),
            client: http::client()?,
            opts,
            refusals: Default::default(),
        })
    }

    /// The base URL (ending in `/v1` when given so).
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The server root: the base URL without its trailing `/v1`.
    fn root(&self) -> &str {
        self.base.strip_suffix("/v1").unwrap_or(&self.base)
    }

    fn with_auth(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(k) => req.bearer_auth(k),
            None => req,
        }
    }

    /// Checks the server answers `GET {base}/models`.
    pub async fn health(&self) -> Result<(), ProviderError> {
        let url = format!("{}/models", self.base);
        let req = self.with_auth(self.client.get(&url));
        http::send_ok(req, &url, self.opts.timeout, HINT)
            .await
            .map(drop)
    }

    /// `/props` of llama-server (`_model` is unused: such a server serves one model).
    async fn props(&self, _model: &str) -> Result<ModelInfo, ProviderError> {
        let started = Instant::now();
        let url = format!("{}/props", self.root());
        let req = self.with_auth(self.client.get(&url));
        let resp = http::send(req, &url, self.opts.timeout, HINT).await?;
        let status = resp.status().as_u16();
        if status == 404 || status == 401 || status == 403 || status == 405 {
            // Not llama-server (or /props is closed): nothing known.
            return Ok(ModelInfo::default());
        }
        if !resp.status().is_success() {
            return Err(http::http_error(&url, resp).await);
        }
        let v = http::read_json(resp, &url, &self.opts, started).await?;
        Ok(parse_props(&v))
    }

    async fn attempt(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let started = Instant::now();
        let url = self.chat_url.as_str();
        let req = self.with_auth(
            self.client
                .post(self.chat_url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(request_body(request)),
        );
        let resp = http::send_ok(req, url, self.opts.timeout, HINT)
            .await
            .map_err(|e| self.classify(&request.model, e))?;
        let (message, finish, usage) = if request.stream {
            read_stream(resp, url, &self.opts, sink).await?
        } else {
            let v = http::read_json(resp, url, &self.opts, started).await?;
            parse_completion(&v, url)?
        };
        Ok(reply::response(
            (message, finish, usage),
            started,
            &self.base,
        ))
    }

    /// Turns a 404 about the model into [`ProviderError::ModelNotFound`].
    fn classify(&self, model: &str, err: ProviderError) -> ProviderError {
        http::classify_404(
            err,
            model,
            &self.base,
            |message| {
                format!(
                    "The server said: {message}. `GET {}/models` lists the models it serves.",
                    self.base
                )
            },
            "OpenAI-style base URLs end in /v1, e.g. http://127.0.0.1:8080/v1",
        )
    }
}

crate::retry::retrying_provider!(OpenAiProvider, "openai", props);

/// Capabilities from llama-server's `/props`.
fn parse_props(v: &Value) -> ModelInfo {
    let context_length = v
        .pointer("/default_generation_settings/n_ctx")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0);
    let tools = v
        .pointer("/chat_template_caps/supports_tools")
        .and_then(Value::as_bool);
    ModelInfo {
        context_length,
        capabilities: Capabilities {
            tools,
            // llama-server constrains `response_format` json_schema with a grammar.
            json_schema: Some(true),
            thinking: None,
        },
    }
}

/// The `/chat/completions` body for `request` (messages and tools encoded once per run, see
/// [`crate::wire`]).
pub(crate) fn request_body(request: &ChatRequest) -> Bytes {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let with_tools = !request.tools.is_empty();
    if with_tools {
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "required",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    let o = &request.options;
    if let Some(n) = o.num_predict {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), http::f32_json(t));
    }
    if let Some(s) = o.seed {
        body.insert("seed".into(), json!(s));
    }
    if let Some(p) = o.top_p {
        body.insert("top_p".into(), http::f32_json(p));
    }
    // llama-server and vLLM read these beside the OpenAI fields.
    if let Some(p) = o.repeat_penalty {
        body.insert("repeat_penalty".into(), http::f32_json(p));
    }
    if let Some(n) = o.repeat_last_n {
        body.insert("repeat_last_n".into(), json!(n));
    }
    if let Some(schema) = &request.response_schema {
        let format = match fallback::is_json_mode(schema) {
            true => json!({"type": "json_object"}),
            false => json!({"type": "json_schema",
                   "json_schema": {"name": "response", "schema": schema, "strict": true}}),
        };
        body.insert("response_format".into(), format);
    }
    body.insert("stream".into(), json!(request.stream));
    if request.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    wire::chat_body(request, "openai", encode_message, with_tools, &body)
}

/// A message in the OpenAI form, written straight into the body (no `Value` tree, no copy of
/// the text).
#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    /// `null` for an assistant message that only calls tools.
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCall<'a>>,
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    /// The arguments as a JSON-encoded string, as the API wants them.
    arguments: Cow<'a, str>,
}

fn encode_message(m: &Message, out: &mut Vec<u8>) {
    let calls_only = m.role == Role::Assistant && !m.tool_calls.is_empty() && m.content.is_empty();
    let tool_calls = match m.role {
        Role::Assistant => m
            .tool_calls
            .iter()
            .map(|c| WireCall {
                id: &c.id,
                kind: "function",
                function: WireFunction {
                    name: &c.name,
                    arguments: match &c.arguments {
                        Value::String(s) => Cow::Borrowed(s),
                        other => Cow::Owned(other.to_string()),
                    },
                },
            })
            .collect(),
        _ => Vec::new(),
    };
    let tool_call_id = match m.role {
        Role::Tool => Some(
            m.tool_call_id
                .as_deref()
                .or(m.tool_name.as_deref())
                .unwrap_or(""),
        ),
        _ => None,
    };
    let message = WireMessage {
        role: m.role.as_str(),
        tool_call_id,
        content: (!calls_only).then_some(m.content.as_str()),
        tool_calls,
    };
    wire::push_json(out, &message);
}

/// Maps `finish_reason` (absent while streaming) to [`FinishReason`].
pub(crate) fn finish_reason(reason: Option<&str>, has_calls: bool) -> FinishReason {
    match reason {
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        None | Some("stop") if has_calls => FinishReason::ToolCalls,
        None | Some("stop") => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// Usage from `usage` and llama-server's `timings` (either may be absent).
pub(crate) fn usage(usage: Option<&Value>, timings: Option<&Value>) -> Usage {
    let num = |v: Option<&Value>, p: &str| v.and_then(|v| v.pointer(p)).and_then(Value::as_u64);
    let cache_n = num(timings, "/cache_n");
    let prompt = num(usage, "/prompt_tokens")
        .or_else(|| num(timings, "/prompt_n").map(|n| n + cache_n.unwrap_or(0)));
    Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: num(usage, "/completion_tokens")
            .or_else(|| num(timings, "/predicted_n"))
            .unwrap_or(0),
        cached_prompt_tokens: cache_n
            .or_else(|| num(usage, "/prompt_tokens_details/cached_tokens")),
    }
}

fn parse_completion(v: &Value, url: &str) -> Result<(Message, FinishReason, Usage), ProviderError> {
    let protocol = |detail: String| ProviderError::Protocol {
        url: url.to_owned(),
        detail,
    };
    let choice = v
        .pointer("/choices/0")
        .ok_or_else(|| protocol(format!("no `choices[0]` in {}", short(v))))?;
    let msg = choice
        .get("message")
        .ok_or_else(|| protocol("no `message` in `choices[0]`".to_owned()))?;
    let text = |k: &str| {
        msg.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut calls = Vec::new();
    for (i, c) in msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = c.get("function").unwrap_or(c);
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| protocol(format!("a tool call without a name: {}", short(c))))?;
        calls.push(ToolCall {
            id: c
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_owned),
            name: name.to_owned(),
            arguments: reply::parse_arguments(f.get("arguments").cloned().unwrap_or(Value::Null)),
        });
    }
    let finish = finish_reason(
        choice.get("finish_reason").and_then(Value::as_str),
        !calls.is_empty(),
    );
    let usage = usage(v.get("usage"), v.get("timings"));
    let message = assistant(text("content"), text("reasoning_content"), calls);
    Ok((message, finish, usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn props_give_context_and_tool_support() {
        let info = parse_props(&json!({
            "default_generation_settings": {"n_ctx": 8192},
            "chat_template_caps": {"supports_tools": false}
        }));
        assert_eq!(info.context_length, Some(8192));
        assert_eq!(info.capabilities.tools, Some(false));
        assert_eq!(parse_props(&json!({})).context_length, None);
    }

    #[test]
    fn usage_prefers_usage_and_takes_cache_from_timings() {
        let u = usage(
            Some(&json!({"prompt_tokens": 30, "completion_tokens": 4})),
            Some(&json!({"cache_n": 20, "prompt_n": 10, "predicted_n": 4})),
        );
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 30,
                completion_tokens: 4,
                cached_prompt_tokens: Some(20)
            }
        );
        let u = usage(
            None,
            Some(&json!({"cache_n": 20, "prompt_n": 10, "predicted_n": 4})),
        );
        assert_eq!(
            u,
            Usage {
                prompt_tokens: 30,
                completion_tokens: 4,
                cached_prompt_tokens: Some(20)
            }
        );
        let u = usage(
            Some(&json!({"prompt_tokens": 9, "completion_tokens": 1,
                         "prompt_tokens_details": {"cached_tokens": 8}})),
            None,
        );
        assert_eq!(u.cached_prompt_tokens, Some(8));
    }
}
