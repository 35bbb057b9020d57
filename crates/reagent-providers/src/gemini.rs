//! Gemini backend: `POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent?alt=sse`.
//!
//! The base URL is the server root, as Google's SDK takes it
//! (`https://generativelanguage.googleapis.com`); the key goes in `x-goog-api-key`. Messages
//! become `contents` with roles `user` / `model`; tool calls are `functionCall` parts and tool
//! results `functionResponse` parts (the result JSON object, or `{"result": ...}` when the result
//! is not an object). Tool parameters and the response schema are sent as standard JSON Schema
//! (`parametersJsonSchema`, `responseJsonSchema`). Parts marked `thought: true` are reasoning.
//! Each SSE event is a whole `GenerateContentResponse` holding the next parts; a stream that ends
//! without a `finishReason` is a [`ProviderError::Protocol`] error.

use std::borrow::Borrow;
use std::time::Instant;

use reagent_protocol::{
    Capabilities, ChatRequest, ChatResponse, FinishReason, Message, ModelInfo, ProviderError, Role,
    SignalSink, ToolCall, ToolChoice, Usage,
};
use serde_json::{json, Map, Value};

use crate::fallback;
use crate::http::{self, ClientOptions};
use crate::reply::{self, assistant, short};
use crate::sse::SseReader;

const HINT: &str =
    "Check --base-url (Gemini-style URLs are the server root, e.g. https://generativelanguage.googleapis.com) and your network.";

/// A model behind the Gemini API.
#[derive(Debug, Clone)]
pub struct GeminiProvider {
    base: String,
    api_key: Option<String>,
    client: reqwest::Client,
    opts: ClientOptions,
    /// What this endpoint refused (shared by clones).
    refusals: std::sync::Arc<crate::fallback::Refusals>,
}

impl GeminiProvider {
    /// A provider for the server at `base_url` (the root, without `/v1beta`).
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        opts: ClientOptions,
    ) -> Result<Self, ProviderError> {
        Ok(GeminiProvider {
            base: http::clean_base_url(base_url)?,
            api_key: api_key.filter(|k| !k.is_empty()),
            client: http::client()?,
            opts,
            refusals: Default::default(),
        })
    }

    /// The base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn auth(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(k) => req.header("x-goog-api-key", k),
            None => req,
        }
    }

    fn model_url(&self, model: &str) -> String {
        let model = model.strip_prefix("models/").unwrap_or(model);
        format!("{}/v1beta/models/{model}", self.base)
    }

    /// `GET url` with the API key; a non-success status is an error.
    async fn get(&self, url: &str) -> Result<reqwest::Response, ProviderError> {
        http::send_ok(
            self.auth(self.client.get(url)),
            url,
            self.opts.timeout,
            HINT,
        )
        .await
    }

    /// Checks the server answers `GET /v1beta/models`.
    pub async fn health(&self) -> Result<(), ProviderError> {
        self.get(&format!("{}/v1beta/models", self.base))
            .await
            .map(drop)
    }

    fn classify(&self, model: &str, err: ProviderError) -> ProviderError {
        http::classify_404(
            err,
            model,
            &self.base,
            |message| format!("The server said: {message}. `GET /v1beta/models` lists the models."),
            "Gemini base URLs are the server root, without /v1beta",
        )
    }

    async fn model(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        let started = Instant::now();
        let url = self.model_url(model);
        let resp = self.get(&url).await.map_err(|e| self.classify(model, e))?;
        let v = http::read_json(resp, &url, &self.opts, started).await?;
        Ok(ModelInfo {
            context_length: v
                .get("inputTokenLimit")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
            capabilities: Capabilities {
                tools: Some(true),
                json_schema: Some(true),
                thinking: v.get("thinking").and_then(Value::as_bool),
            },
        })
    }

    async fn attempt(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let started = Instant::now();
        let url = if request.stream {
            format!(
                "{}:streamGenerateContent?alt=sse",
                self.model_url(&request.model)
            )
        } else {
            format!("{}:generateContent", self.model_url(&request.model))
        };
        let req = self.auth(self.client.post(&url).json(&request_body(request)));
        let resp = http::send_ok(req, &url, self.opts.timeout, HINT)
            .await
            .map_err(|e| self.classify(&request.model, e))?;
        let mut acc = Accumulator::default();
        if request.stream {
            read_stream(resp, &url, &self.opts, sink, &mut acc).await?;
        } else {
            let v = http::read_json(resp, &url, &self.opts, started).await?;
            acc.chunk(&v, &url, None)?;
        }
        let (message, finish, usage) = acc.finish(&url)?;
        Ok(reply::response(
            (message, finish, usage),
            started,
            &self.base,
        ))
    }
}

crate::retry::retrying_provider!(GeminiProvider, "gemini", model);

/// The `generateContent` body for `request`.
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    let mut body = Map::new();
    let system: Vec<Value> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| json!({"text": m.content}))
        .collect();
    if !system.is_empty() {
        body.insert("systemInstruction".into(), json!({ "parts": system }));
    }
    body.insert("contents".into(), Value::Array(contents(&request.messages)));
    if !request.tools.is_empty() {
        let decls: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}))
            .collect();
        body.insert("tools".into(), json!([{ "functionDeclarations": decls }]));
        let mode = match request.tool_choice {
            ToolChoice::Auto => "AUTO",
            ToolChoice::None => "NONE",
            ToolChoice::Required => "ANY",
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": {"mode": mode}}),
        );
    }
    let o = &request.options;
    let mut gen = Map::new();
    if let Some(t) = o.temperature {
        gen.insert("temperature".into(), http::f32_json(t));
    }
    if let Some(n) = o.num_predict {
        gen.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(s) = o.seed {
        gen.insert("seed".into(), json!(s));
    }
    if let Some(schema) = &request.response_schema {
        gen.insert("responseMimeType".into(), json!("application/json"));
        // JSON mode (a refused schema stepped down) is the MIME type alone.
        if !fallback::is_json_mode(schema) {
            gen.insert("responseJsonSchema".into(), schema.clone());
        }
    }
    match o.think {
        Some(true) => {
            gen.insert("thinkingConfig".into(), json!({"includeThoughts": true}));
        }
        Some(false) => {
            gen.insert("thinkingConfig".into(), json!({"thinkingBudget": 0}));
        }
        None => {}
    }
    if !gen.is_empty() {
        body.insert("generationConfig".into(), Value::Object(gen));
    }
    Value::Object(body)
}

fn contents(msgs: &[impl Borrow<Message>]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in msgs {
        let m: &Message = m.borrow();
        let (role, parts) = match m.role {
            Role::System => continue,
            Role::User => ("user", vec![json!({"text": m.content})]),
            Role::Tool => {
                let response = match serde_json::from_str::<Value>(&m.content) {
                    Ok(v @ Value::Object(_)) => v,
                    Ok(other) => json!({ "result": other }),
                    Err(_) => json!({ "result": m.content }),
                };
                let name = m.tool_name.as_deref().unwrap_or("");
                (
                    "user",
                    vec![json!({"functionResponse": {"name": name, "response": response}})],
                )
            }
            Role::Assistant => {
                let mut parts = Vec::new();
                if !m.content.is_empty() {
                    parts.push(json!({"text": m.content}));
                }
                for c in &m.tool_calls {
                    let args = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        Value::Null => json!({}),
                        other => json!({ "input": other }),
                    };
                    parts.push(json!({"functionCall": {"name": c.name, "args": args}}));
                }
                if parts.is_empty() {
                    continue;
                }
                ("model", parts)
            }
        };
        match out.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(parts),
            _ => out.push((role, parts)),
        }
    }
    out.into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

/// Collects parts from one response or many streamed chunks.
#[derive(Default)]
pub(crate) struct Accumulator {
    content: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    finish: Option<String>,
    usage: Option<Value>,
    blocked: Option<String>,
}

impl Accumulator {
    pub(crate) fn chunk(
        &mut self,
        v: &Value,
        url: &str,
        sink: Option<SignalSink<'_>>,
    ) -> Result<(), ProviderError> {
        reply::check_reported_error(v, url)?;
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        if let Some(reason) = v
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            self.blocked = Some(reason.to_owned());
        }
        let Some(cand) = v.pointer("/candidates/0") else {
            return Ok(());
        };
        if let Some(r) = cand.get("finishReason").and_then(Value::as_str) {
            self.finish = Some(r.to_owned());
        }
        for part in cand
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
                if thought {
                    self.reasoning.push_str(text);
                } else {
                    self.content.push_str(text);
                }
                if let Some(sink) = sink {
                    reply::emit(sink, text, thought);
                }
            }
            if let Some(fc) = part.get("functionCall") {
                let name = fc.get("name").and_then(Value::as_str).ok_or_else(|| {
                    ProviderError::Protocol {
                        url: url.to_owned(),
                        detail: format!("a functionCall without a name: {}", short(fc)),
                    }
                })?;
                let id = fc
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map_or_else(|| format!("call_{}", self.calls.len()), str::to_owned);
                self.calls.push(ToolCall {
                    id,
                    name: name.to_owned(),
                    arguments: reply::parse_arguments(
                        fc.get("args").cloned().unwrap_or(Value::Null),
                    ),
                });
            }
        }
        Ok(())
    }

    pub(crate) fn finish(self, url: &str) -> Result<(Message, FinishReason, Usage), ProviderError> {
        let finish = match (self.finish.as_deref(), &self.blocked) {
            (Some("MAX_TOKENS"), _) => FinishReason::Length,
            (Some("STOP") | Some("FINISH_REASON_UNSPECIFIED"), _) if !self.calls.is_empty() => {
                FinishReason::ToolCalls
            }
            (Some("STOP") | Some("FINISH_REASON_UNSPECIFIED"), _) => FinishReason::Stop,
            (Some(other), _) => FinishReason::Other(other.to_lowercase()),
            (None, Some(reason)) => FinishReason::Other(format!("blocked: {reason}")),
            (None, None) => {
                return Err(ProviderError::Protocol {
                    url: url.to_owned(),
                    detail: "the reply ended without a `finishReason` (connection cut?)".to_owned(),
                })
            }
        };
        let u = self.usage.unwrap_or(Value::Null);
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        let usage = Usage {
            prompt_tokens: n("promptTokenCount").unwrap_or(0),
            completion_tokens: n("candidatesTokenCount").unwrap_or(0)
                + n("thoughtsTokenCount").unwrap_or(0),
            cached_prompt_tokens: n("cachedContentTokenCount"),
        };
        Ok((
            assistant(self.content, self.reasoning, self.calls),
            finish,
            usage,
        ))
    }
}

async fn read_stream(
    resp: reqwest::Response,
    url: &str,
    opts: &crate::http::ClientOptions,
    sink: SignalSink<'_>,
    acc: &mut Accumulator,
) -> Result<(), ProviderError> {
    let mut reader = SseReader::new(resp, url, opts);
    while let Some(ev) = reader.next().await? {
        let data = ev.data.trim();
        if data.is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(data).map_err(|e| ProviderError::Protocol {
            url: url.to_owned(),
            detail: format!(
                "malformed SSE data ({e}): {}",
                data.chars().take(200).collect::<String>()
            ),
        })?;
        acc.chunk(&v, url, Some(sink))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_become_function_responses() {
        let call = ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a"}),
        };
        let mut asst = Message::assistant("");
        asst.tool_calls = vec![call.clone()];
        let out = contents(&[
            Message::system("s"),
            Message::user("u"),
            asst,
            Message::tool_result(&call, "{\"content\":\"x\"}"),
            Message::tool_result(&call, "plain text"),
        ]);
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[1],
            json!({"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a"}}}]})
        );
        assert_eq!(
            out[2]["parts"],
            json!([
                {"functionResponse": {"name": "read_file", "response": {"content": "x"}}},
                {"functionResponse": {"name": "read_file", "response": {"result": "plain text"}}}
            ])
        );
    }
}
