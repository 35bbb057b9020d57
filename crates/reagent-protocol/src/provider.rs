//! The [`Provider`] trait: one chat round trip with a model server, and what it returns.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::event::{ErrorKind, PoolEndpointState};
use crate::message::{Message, ToolSpec};
use crate::wire::WireCache;

pub use tokio_util::sync::CancellationToken;

/// Generation options. `None` leaves the server's default.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ModelOptions {
    /// Context window to allocate (Ollama `num_ctx`); reagent always sets it for Ollama.
    pub num_ctx: Option<u32>,
    /// Maximum tokens to generate (`num_predict` / `max_tokens`).
    pub num_predict: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Sampling seed, for reproducible runs.
    pub seed: Option<i64>,
    /// How long Ollama keeps the model loaded (`"5m"`, `"-1"`...).
    pub keep_alive: Option<String>,
    /// Ask for (`Some(true)`) or suppress (`Some(false)`) the model's thinking.
    pub think: Option<bool>,
    /// Nucleus sampling threshold (`top_p`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Penalty for repeated tokens (Ollama and llama-server `repeat_penalty`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_penalty: Option<f32>,
    /// How many recent tokens the repeat penalty looks back over (`repeat_last_n`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_last_n: Option<i32>,
}

/// How the model is asked to use tools.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must not call a tool (used to ask for a final answer).
    None,
    /// The model must call some tool.
    Required,
}

/// One chat request, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// Model name as the server knows it.
    pub model: String,
    /// The conversation so far, shared with the run's history (cloning a request or building
    /// the next one copies pointers, not text).
    pub messages: Vec<Arc<Message>>,
    /// Tools offered natively (empty in constrained and prompt modes), shared between requests.
    pub tools: Arc<[ToolSpec]>,
    /// Tool choice, when `tools` is not empty.
    pub tool_choice: ToolChoice,
    /// Generation options.
    pub options: ModelOptions,
    /// Constrain the reply to this JSON Schema (Ollama `format`, OpenAI `response_format`).
    pub response_schema: Option<Value>,
    /// Stream the reply (text pieces go to the [`SignalSink`] as they arrive).
    pub stream: bool,
    /// The run's encoded messages, so a provider encodes each message once per run; share one
    /// cache between the requests of a run (a default, empty one is always correct).
    pub wire: WireCache,
}

impl ChatRequest {
    /// A request for `model` over `messages`, with no tools, default options and no streaming.
    pub fn new(model: impl Into<String>, messages: impl IntoIterator<Item = Message>) -> Self {
        ChatRequest {
            model: model.into(),
            messages: messages.into_iter().map(Arc::new).collect(),
            tools: Arc::default(),
            tool_choice: ToolChoice::Auto,
            options: ModelOptions::default(),
            response_schema: None,
            stream: false,
            wire: WireCache::default(),
        }
    }
}

/// Why generation stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// Natural end of the reply.
    Stop,
    /// Hit `num_predict` / `max_tokens`: the reply is truncated.
    Length,
    /// The model stopped to call tools.
    ToolCalls,
    /// Anything else the server said.
    Other(String),
}

/// Token accounting for one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens evaluated (or billed).
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Prompt tokens served from the server's cache, when the server says.
    pub cached_prompt_tokens: Option<u64>,
}

/// The reply to one [`ChatRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The assistant message: content, reasoning, and native tool calls.
    pub message: Message,
    /// Why generation stopped.
    pub finish: FinishReason,
    /// Token usage.
    pub usage: Usage,
    /// Wall time of the HTTP exchange.
    pub latency: Duration,
    /// Which endpoint answered (base URL), for pools.
    pub endpoint: String,
}

/// What the server says about a model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelInfo {
    /// Trained context length, when known.
    pub context_length: Option<u32>,
    /// What the model/server supports.
    pub capabilities: Capabilities,
}

/// Feature support, `None` where unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Capabilities {
    /// Native tool calling.
    pub tools: Option<bool>,
    /// Structured output constrained by a JSON Schema.
    pub json_schema: Option<bool>,
    /// Separate thinking/reasoning output.
    pub thinking: Option<bool>,
}

/// Something a provider reports while a call is under way: streamed text, a retry, pool state.
/// The loop turns these into events and live output.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatSignal {
    /// A piece of visible text, as streamed.
    Content(String),
    /// A piece of reasoning text, as streamed.
    Reasoning(String),
    /// The call failed and will be retried after `delay`.
    Retry {
        /// Attempt that failed (1-based).
        attempt: u32,
        /// Wait before the next attempt.
        delay: Duration,
        /// What went wrong.
        error: String,
    },
    /// The state of an endpoint pool changed.
    Pool(Vec<PoolEndpointState>),
    /// The server refused a feature of the request; this call and the rest of the run use the
    /// next step down at that endpoint. Sent once per feature and endpoint.
    Fallback {
        /// The feature refused.
        feature: Feature,
        /// The endpoint (base URL) that refused it.
        endpoint: String,
        /// What the server said and what is sent instead, for the person running reagent.
        detail: String,
    },
}

/// A request feature a server may refuse (HTTP 400 naming it), in the order it is stepped down:
/// a JSON Schema becomes JSON mode with the schema stated in the prompt, JSON mode becomes the
/// prompt alone; native tools become tools described in the prompt; `think` is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// The reply constrained by a JSON Schema (Ollama `format: {schema}`, OpenAI `json_schema`).
    Schema,
    /// The reply constrained to JSON (Ollama `format: "json"`, OpenAI `json_object`).
    JsonMode,
    /// Native tool calling (`tools` in the request).
    Tools,
    /// The `think` switch.
    Think,
}

impl Feature {
    /// The name used in events and messages: `schema`, `json_mode`, `tools`, `think`.
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Schema => "schema",
            Feature::JsonMode => "json_mode",
            Feature::Tools => "tools",
            Feature::Think => "think",
        }
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Receives [`ChatSignal`]s as they happen.
pub type SignalSink<'a> = &'a (dyn Fn(ChatSignal) + Send + Sync);

/// Errors of a provider call. Messages are written for the person running reagent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Nothing answered at the address.
    #[error("cannot reach the model server at {url}: {detail}. {hint}")]
    Unreachable {
        /// Address tried.
        url: String,
        /// Underlying error.
        detail: String,
        /// How to start the server.
        hint: String,
    },
    /// The server does not have the model.
    #[error("model '{model}' not found on {url}. {hint}")]
    ModelNotFound {
        /// Model asked for.
        model: String,
        /// Server.
        url: String,
        /// How to get it (e.g. `ollama pull MODEL`).
        hint: String,
    },
    /// The server answered with an HTTP error.
    #[error("{url} answered HTTP {status}: {message}")]
    Http {
        /// Endpoint.
        url: String,
        /// HTTP status.
        status: u16,
        /// The server's own message.
        message: String,
        /// `Retry-After`, when given.
        retry_after: Option<Duration>,
    },
    /// No answer within the per-call timeout.
    #[error("the model server at {url} did not answer within {after:?} (raise --timeout)")]
    Timeout {
        /// Endpoint.
        url: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The reply could not be understood.
    #[error("malformed reply from {url}: {detail}")]
    Protocol {
        /// Endpoint.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// A streamed reply broke off before its end; `partial` is the visible text received so far.
    #[error("{detail} ({} characters of the reply were received and kept)", partial.chars().count())]
    Incomplete {
        /// Endpoint.
        url: String,
        /// What went wrong (the underlying error's message).
        detail: String,
        /// The visible text received before the break.
        partial: String,
    },
    /// The reply grew past the configured cap on its size.
    #[error(
        "the reply from {url} passed the cap of {limit} bytes on a reply's size and was \
             abandoned (the cap is ClientOptions::max_reply_bytes)"
    )]
    ReplyTooLarge {
        /// Endpoint.
        url: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Bad configuration (missing API key, bad URL...).
    #[error("{0}")]
    Config(String),
}

impl ProviderError {
    /// The kind of error a run that ends with this error reports.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProviderError::Unreachable { .. } | ProviderError::Timeout { .. } => {
                ErrorKind::ServerUnreachable
            }
            ProviderError::ModelNotFound { .. } => ErrorKind::ModelNotFound,
            ProviderError::Http { status: 413, .. } => ErrorKind::ContextOverflow,
            ProviderError::Http { .. } if self.is_context_overflow() => ErrorKind::ContextOverflow,
            ProviderError::Http { status, .. } if *status < 500 => ErrorKind::RefusedRequest,
            ProviderError::Http { .. }
            | ProviderError::Protocol { .. }
            | ProviderError::Incomplete { .. }
            | ProviderError::ReplyTooLarge { .. } => ErrorKind::ServerError,
            ProviderError::Cancelled => ErrorKind::Cancelled,
            ProviderError::Config(_) => ErrorKind::Internal,
        }
    }

    /// Whether retrying the same request may succeed: connection errors, timeouts, 429 and 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::Unreachable { .. } | ProviderError::Timeout { .. } => true,
            ProviderError::Http { status, .. } => *status == 429 || *status >= 500,
            ProviderError::ModelNotFound { .. }
            | ProviderError::Protocol { .. }
            | ProviderError::Incomplete { .. }
            | ProviderError::ReplyTooLarge { .. }
            | ProviderError::Cancelled
            | ProviderError::Config(_) => false,
        }
    }

    /// The visible text received before a streamed reply broke off ([`ProviderError::Incomplete`]).
    pub fn partial_text(&self) -> Option<&str> {
        match self {
            ProviderError::Incomplete { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// Whether the server refused the prompt as longer than its context window:
    /// llama-server (`exceeds the available context size`), OpenAI and vLLM (`maximum context
    /// length`, `context_length_exceeded`), Anthropic (`prompt is too long`).
    pub fn is_context_overflow(&self) -> bool {
        let ProviderError::Http {
            status: 400 | 413,
            message,
            ..
        } = self
        else {
            return false;
        };
        let message = message.to_ascii_lowercase();
        [
            "exceeds the available context size",
            "exceed_context_size",
            "maximum context length",
            "context_length_exceeded",
            "prompt is too long",
        ]
        .iter()
        .any(|m| message.contains(m))
    }
}

/// A model backend. Implemented by `reagent-providers`; the loop sees only this trait.
#[async_trait]
pub trait Provider: Send + Sync {
    /// Short name for logs and events (`ollama`, `openai`...).
    fn name(&self) -> &str;

    /// What the server says about `model` (context length, capabilities).
    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError>;

    /// One chat round trip. With `request.stream`, text pieces are passed to `sink` as they arrive
    /// (retries and pool changes go there too, streaming or not);
    /// the returned response is complete either way. Must return [`ProviderError::Cancelled`]
    /// promptly once `cancel` fires.
    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_overflow_is_told_from_other_refusals() {
        let http = |status, message: &str| ProviderError::Http {
            url: "u".into(),
            status,
            message: message.into(),
            retry_after: None,
        };
        for words in [
            "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ] {
            assert!(http(400, words).is_context_overflow(), "{words}");
            assert!(!http(500, words).is_context_overflow(), "{words}");
        }
        assert!(!http(400, "invalid `tools` field").is_context_overflow());
        assert!(!ProviderError::Cancelled.is_context_overflow());
    }
}
