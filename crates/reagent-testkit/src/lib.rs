//! # reagent-testkit
//!
//! Scripted model servers for reagent's tests and benchmarks: real HTTP servers on
//! `127.0.0.1:0` that speak each provider's real wire format byte for byte as documented, reply
//! from a script of [`Turn`]s, and record every request so tests can assert what was sent.
//!
//! - [`ScriptedOllama`]: `/api/chat` (JSON or NDJSON), `/api/show`, `/api/tags`;
//! - [`ScriptedOpenAi`]: `/v1/chat/completions` (JSON or SSE), llama-server's `/props`, `/health`;
//! - [`ScriptedAnthropic`]: `/v1/messages` (JSON or the `message_start` … `message_stop` events);
//! - [`ScriptedGemini`]: `generateContent` / `streamGenerateContent?alt=sse`.
//!
//! Each is a thin wrapper over [`ScriptedServer`], which does the HTTP, recording and queueing.
//! When the script runs out, chat requests get HTTP 410 with a message saying so (a status no
//! client retries, so a test with too few turns fails fast and clearly).
//!
//! What a [`Turn`] can do: content, thinking, native tool calls, a finish reason (`stop`,
//! `length`, `tool_calls`), token counts (and cached tokens), a delay before answering or
//! between stream chunks, an HTTP error in the wire's own error shape ([`Turn::error`], with
//! headers such as `Retry-After`), a verbatim body or stream ([`Turn::raw`],
//! [`Turn::raw_stream`]), a connection closed before any response ([`Turn::cut`]) or mid-stream
//! ([`Turn::with_cut_after`]), and wire-specific stream shapes (OpenAI arguments as an object or
//! with empty deltas, Ollama tool calls in the final chunk). [`ModelSpec`] declares the models a
//! server knows (others get the wire's 404), their context length and capabilities.
//!
//! For tests of failures: [`ScriptedServer::stop`] kills the server and every open connection,
//! [`ScriptedServer::start_at`] brings one back at the same address, and
//! [`ScriptedServer::invariant_violations`] lists tool results that answer no earlier call.
//!
//! [`PostgresCluster`] starts a private PostgreSQL for the store's tests; [`OtlpReceiver`]
//! receives OpenTelemetry traces (`POST /v1/traces`, protobuf) for the telemetry tests.
//!
//! Design decision: turns are wire-neutral and rendered by one module per wire (`ollama.rs`,
//! `openai.rs`, `anthropic.rs`, `gemini.rs`), so one script can drive any backend and a test can
//! check that streaming and non-streaming replies of the same turn agree.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
//! let server = ScriptedOllama::start(
//!     ScriptBuilder::new()
//!         .turn(Turn::tool_call("read_file", serde_json::json!({"path": "a.txt"})))
//!         .turn(Turn::text("done")),
//! )
//! .await?;
//! let url = server.base_url(); // http://127.0.0.1:PORT
//! // ... run the code under test against `url` ...
//! let sent = server.requests(); // bodies of the chat requests, in order
//! # let _ = (url, sent);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod anthropic;
mod embed;
mod gemini;
mod invariants;
mod ollama;
mod openai;
mod otlp;
mod postgres;
mod script;
mod server;

pub use otlp::{OtlpReceiver, ReceivedSpan};
pub use postgres::PostgresCluster;
pub use script::{ModelSpec, Reply, ScriptBuilder, ScriptedCall, Turn};
pub use server::{RecordedRequest, ScriptedServer, Wire};

macro_rules! scripted_wrapper {
    ($(#[$doc:meta])* $name:ident, $wire:expr) => {
        $(#[$doc])*
        pub struct $name(ScriptedServer);

        impl $name {
            /// Starts the server on `127.0.0.1:0`, replying from `script`.
            pub async fn start(script: ScriptBuilder) -> std::io::Result<Self> {
                ScriptedServer::start($wire, script).await.map($name)
            }

            /// The base URL as this provider's SDK takes it.
            pub fn base_url(&self) -> String {
                self.0.base_url()
            }

            /// Bodies of the chat requests received so far, in order.
            pub fn requests(&self) -> Vec<serde_json::Value> {
                self.0.requests()
            }

            /// Broken request invariants so far (see [`ScriptedServer::invariant_violations`]).
            pub fn invariant_violations(&self) -> Vec<String> {
                self.0.invariant_violations()
            }

            /// The underlying server (recorded requests, shutdown, extra turns...).
            pub fn server(&self) -> &ScriptedServer {
                &self.0
            }
        }
    };
}

scripted_wrapper!(
    /// A scripted Ollama server (`base_url()` is the host, `http://127.0.0.1:PORT`).
    ScriptedOllama,
    Wire::Ollama
);
scripted_wrapper!(
    /// A scripted OpenAI-compatible server (`base_url()` ends in `/v1`).
    ScriptedOpenAi,
    Wire::OpenAi
);
scripted_wrapper!(
    /// A scripted Anthropic Messages server (`base_url()` is the server root).
    ScriptedAnthropic,
    Wire::Anthropic
);
scripted_wrapper!(
    /// A scripted Gemini server (`base_url()` is the server root; paths under `/v1beta`).
    ScriptedGemini,
    Wire::Gemini
);
