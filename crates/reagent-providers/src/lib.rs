//! # reagent-providers
//!
//! Model backends implementing [`reagent_protocol::Provider`], one module each:
//!
//! - [`ollama::OllamaProvider`]: Ollama's `/api/chat` (JSON or NDJSON) and `/api/show`;
//! - [`openai::OpenAiProvider`]: OpenAI-compatible `/v1/chat/completions` (JSON or SSE),
//!   llama-server's `/props`;
//! - [`anthropic::AnthropicProvider`]: Anthropic Messages `/v1/messages` (JSON or events);
//! - [`gemini::GeminiProvider`]: Gemini `generateContent` / `streamGenerateContent?alt=sse`;
//! - [`pool::EndpointPool`]: several endpoints for one model, with health checks, least-loaded
//!   routing and failover, itself a `Provider`.
//!
//! [`build_provider`] builds the right one from a [`ProviderConfig`] (what the CLI calls).
//!
//! Every backend shares the same plumbing: a per-call timeout ([`ClientOptions`]), retries with
//! exponential backoff and jitter on connection errors, timeouts, 429 and 5xx, honouring
//! `Retry-After` ([`RetryPolicy`]), each retry reported as `ChatSignal::Retry`, and prompt
//! cancellation. Errors are [`reagent_protocol::ProviderError`]s whose messages say what to do
//! (start the server, pull the model...). Base URLs are taken the way each provider's own SDK
//! takes them: OpenAI-style ends in `/v1`, Anthropic and Gemini are the server root, Ollama the
//! host (`OLLAMA_HOST` forms accepted).
//!
//! Design decisions: wire formats stay inside each module (built with `serde_json::Value` at
//! the edge, never as public types); the Ollama and OpenAI-style bodies, which carry the whole
//! history on every call, are assembled from messages encoded once per run (`wire.rs`); streamed and non-streamed replies of the same turn give
//! the same `ChatResponse`; `<think>` blocks inside content are left for the loop's parser.
//!
//! ```no_run
//! # async fn demo() -> Result<(), reagent_protocol::ProviderError> {
//! use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
//! let mut cfg = ProviderConfig::new("ollama".parse::<ProviderKind>()?);
//! cfg.base_urls = vec!["http://127.0.0.1:11434".into()];
//! let provider = build_provider(&cfg)?;
//! let info = provider.model_info("qwen3:0.6b").await?;
//! # let _ = info;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod anthropic;
mod anthropic_stream;
mod config;
mod embed;
mod fallback;
pub mod gemini;
mod http;
pub mod ollama;
mod ollama_reply;
pub mod openai;
mod openai_stream;
pub mod pool;
mod reply;
mod retry;
#[cfg(test)]
mod robustness;
mod sse;
mod wire;

pub use config::{build_provider, ProviderConfig, ProviderKind};
pub use embed::Embedder;
pub use http::{ClientOptions, DEFAULT_MAX_REPLY_BYTES};
pub use retry::RetryPolicy;
