//! Anthropic Messages backend (`POST /v1/messages`).
//!
//! The base URL is the server root, as the Anthropic SDK takes it (`https://api.anthropic.com`).
//! Headers: `x-api-key` (when a key is given) and `anthropic-version: 2023-06-01`. System
//! messages go to the top-level `system`; tool calls are `tool_use` blocks and tool results
//! `tool_result` blocks in a user message (consecutive results share one message, as the API
//! requires for parallel calls). `max_tokens` is required: `num_predict`, else 4096. With
//! `think: Some(true)` extended thinking is enabled with a budget of half of `max_tokens` (at
//! least 1024, raising `max_tokens` when needed). `response_schema` is not sent (capabilities
//! report `json_schema: Some(false)`); `num_ctx`, `seed` and `keep_alive` have no equivalent.
//! Streaming events are put together by `anthropic_stream.rs`.

use std::borrow::Borrow;
use std::time::Instant;

use reagent_protocol::{
    Capabilities, ChatRequest, ChatResponse, FinishReason, Message, ModelInfo, ProviderError, Role,
    SignalSink, ToolCall, ToolChoice, Usage,
};
use serde_json::{json, Map, Value};

use crate::anthropic_stream::read_stream;
use crate::http::{self, ClientOptions};
use crate::reply::{self, assistant};

const HINT: &str =
    "Check --base-url (Anthropic-style URLs are the server root, e.g. https://api.anthropic.com) and your network.";
const VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A model behind the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    base: String,
    api_key: Option<String>,
    client: reqwest::Client,
    opts: ClientOptions,
    /// What this endpoint refused (shared by clones).
    refusals: std::sync::Arc<crate::fallback::Refusals>,
}

impl AnthropicProvider {
    /// A provider for the server at `base_url` (the root, without `/v1`).
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        opts: ClientOptions,
    ) -> Result<Self, ProviderError> {
        Ok(AnthropicProvider {
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

    fn headers(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let req = req.header("anthropic-version", VERSION);
        match &self.api_key {
            Some(k) => req.header("x-api-key", k),
            None => req,
        }
    }

    /// `GET url` with the API headers; a non-success status is an error.
    async fn get(&self, url: &str) -> Result<reqwest::Response, ProviderError> {
        http::send_ok(
            self.headers(self.client.get(url)),
            url,
            self.opts.timeout,
            HINT,
        )
        .await
    }

    /// Checks the server answers `GET /v1/models`.
    pub async fn health(&self) -> Result<(), ProviderError> {
        self.get(&format!("{}/v1/models", self.base))
            .await
            .map(drop)
    }

    fn classify(&self, model: &str, err: ProviderError) -> ProviderError {
        http::classify_404(
            err,
            model,
            &self.base,
            |message| format!("The server said: {message}. Check the model name."),
            "Anthropic-style base URLs are the server root, without /v1",
        )
    }

    /// Checks the model exists (`GET /v1/models/{model}`); the API reports no context length.
    async fn model(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        self.get(&format!("{}/v1/models/{model}", self.base))
            .await
            .map_err(|e| self.classify(model, e))?;
        Ok(ModelInfo {
            context_length: None,
            capabilities: Capabilities {
                tools: Some(true),
                json_schema: Some(false),
                thinking: None,
            },
        })
    }

    async fn attempt(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
    ) -> Result<ChatResponse, ProviderError> {
        let started = Instant::now();
        let url = format!("{}/v1/messages", self.base);
        let req = self.headers(self.client.post(&url).json(&request_body(request)));
        let resp = http::send_ok(req, &url, self.opts.timeout, HINT)
            .await
            .map_err(|e| self.classify(&request.model, e))?;
        let (message, finish, usage) = if request.stream {
            read_stream(resp, &url, &self.opts, sink).await?
        } else {
            let v = http::read_json(resp, &url, &self.opts, started).await?;
            parse_message(&v, &url)?
        };
        Ok(reply::response(
            (message, finish, usage),
            started,
            &self.base,
        ))
    }
}

crate::retry::retrying_provider!(AnthropicProvider, "anthropic", model);

/// The `/v1/messages` body for `request`.
pub(crate) fn request_body(request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let o = &request.options;
    let mut max_tokens = o.num_predict.unwrap_or(DEFAULT_MAX_TOKENS);
    if o.think == Some(true) {
        let budget = (max_tokens / 2).max(1024);
        if max_tokens <= budget {
            max_tokens = budget + 1024;
        }
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "any",
        };
        body.insert("tool_choice".into(), json!({ "type": choice }));
    }
    if let Some(t) = o.temperature {
        // Extended thinking requires the default temperature.
        if o.think != Some(true) {
            body.insert("temperature".into(), http::f32_json(t));
        }
    }
    body.insert("stream".into(), json!(request.stream));
    Value::Object(body)
}

/// Converts the conversation: tool results become `tool_result` blocks in user messages, and
/// consecutive user-side messages are merged into one.
fn messages(msgs: &[impl Borrow<Message>]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in msgs {
        let m: &Message = m.borrow();
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", vec![json!({"type": "text", "text": m.content})]),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.as_deref().or(m.tool_name.as_deref()).unwrap_or(""),
                    "content": m.content,
                })],
            ),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.content}));
                }
                for c in &m.tool_calls {
                    let input = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        Value::Null => json!({}),
                        other => json!({ "input": other }),
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                if blocks.is_empty() {
                    continue;
                }
                ("assistant", blocks)
            }
        };
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, blocks)| {
            // A lone text block is sent as a plain string, the common short form.
            let content = match blocks.as_slice() {
                [b] if b["type"] == "text" => b["text"].clone(),
                _ => Value::Array(blocks),
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

/// Maps `stop_reason`.
pub(crate) fn finish_reason(reason: Option<&str>, has_calls: bool) -> FinishReason {
    match reason {
        Some("max_tokens") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        None | Some("end_turn" | "stop_sequence") if has_calls => FinishReason::ToolCalls,
        None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// Usage from an Anthropic `usage` object: the prompt counts cached and uncached tokens.
pub(crate) fn usage(u: &Value, output_tokens: Option<u64>) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let cached = n("cache_read_input_tokens");
    Usage {
        prompt_tokens: n("input_tokens").unwrap_or(0)
            + cached.unwrap_or(0)
            + n("cache_creation_input_tokens").unwrap_or(0),
        completion_tokens: output_tokens.or_else(|| n("output_tokens")).unwrap_or(0),
        cached_prompt_tokens: cached.filter(|c| *c > 0),
    }
}

fn parse_message(v: &Value, url: &str) -> Result<(Message, FinishReason, Usage), ProviderError> {
    let protocol = |detail: String| ProviderError::Protocol {
        url: url.to_owned(),
        detail,
    };
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| protocol(format!("no `content` array in {}", crate::reply::short(v))))?;
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => content.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("thinking") => {
                reasoning.push_str(b.get("thinking").and_then(Value::as_str).unwrap_or(""));
            }
            Some("tool_use") => {
                let name = b.get("name").and_then(Value::as_str).ok_or_else(|| {
                    protocol(format!(
                        "a tool_use block without a name: {}",
                        crate::reply::short(b)
                    ))
                })?;
                calls.push(ToolCall {
                    id: b
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("call_{}", calls.len()), str::to_owned),
                    name: name.to_owned(),
                    arguments: reply::parse_arguments(
                        b.get("input").cloned().unwrap_or(Value::Null),
                    ),
                });
            }
            _ => {}
        }
    }
    let finish = finish_reason(
        v.get("stop_reason").and_then(Value::as_str),
        !calls.is_empty(),
    );
    let usage = usage(v.get("usage").unwrap_or(&Value::Null), None);
    Ok((assistant(content, reasoning, calls), finish, usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_are_merged_into_one_user_message() {
        let a = ToolCall {
            id: "t1".into(),
            name: "f".into(),
            arguments: json!({}),
        };
        let b = ToolCall {
            id: "t2".into(),
            name: "g".into(),
            arguments: json!("raw"),
        };
        let mut asst = Message::assistant("");
        asst.tool_calls = vec![a.clone(), b.clone()];
        let msgs = vec![
            Message::system("sys"),
            Message::user("go"),
            asst,
            Message::tool_result(&a, "r1"),
            Message::tool_result(&b, "r2"),
            Message::user("and now?"),
        ];
        let out = messages(&msgs);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], json!({"role": "user", "content": "go"}));
        assert_eq!(
            out[1]["content"][1],
            json!({"type": "tool_use", "id": "t2", "name": "g", "input": {"input": "raw"}})
        );
        assert_eq!(
            out[2]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "r2"},
                {"type": "text", "text": "and now?"}
            ])
        );
    }
}
