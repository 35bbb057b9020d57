//! # reagent-providers
//!
//! Model backends implementing [`reagent_protocol::Provider`]:
//!
//! - [`ollama::OllamaProvider`]: Ollama's `/api/chat` (JSON or NDJSON) and `/api/show`;
//! - [`openai::OpenAiProvider`]: OpenAI-compatible `/v1/chat/completions` (JSON or SSE),
//!   llama-server's `/props`;
//! - [`anthropic::AnthropicProvider`]: Anthropic Messages `/v1/messages` (JSON or events);
//! - [`gemini::GeminiProvider`]: Gemini `generateContent` / `streamGenerateContent?alt=sse`;
//!
//! Every backend shares the same plumbing: a per-call timeout ([`ClientOptions`]), retries with
//! exponential backoff and jitter on connection errors, timeouts, 429 and 5xx, honouring
//! `Retry-After` ([`RetryPolicy`]), each retry reported as `ChatSignal::Retry`, and prompt
//! cancellation. Errors are [`reagent_protocol::ProviderError`]s whose messages say what to do
//! (start the server, pull the model...).
//!
//! ```no_run
//! # async fn demo() -> Result<(), reagent_protocol::ProviderError> {
//! use reagent_protocol::Provider;
//! use reagent_providers::{ollama::OllamaProvider, ClientOptions};
//! let p = OllamaProvider::new(&reagent_providers::ollama::default_ollama_host(), ClientOptions::default())?;
//! let info = p.model_info("qwen3:0.6b").await?;
//! # let _ = info;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod anthropic;
mod anthropic_stream;
pub mod gemini;
mod http;
pub mod ollama;
pub mod openai;
mod openai_stream;
mod reply;
mod retry;
mod sse;

pub use http::ClientOptions;
pub use retry::RetryPolicy;
