//! The script a scripted server replies from: a queue of [`Turn`]s plus the models it knows.
//!
//! A [`Turn`] is wire-neutral (content, thinking, tool calls, finish reason, token counts); each
//! wire module renders it in its own format, streaming or not. Turns can also override the reply
//! entirely (HTTP status, raw body, raw stream chunks) or cut the connection, for error tests.

use std::time::Duration;

use serde_json::Value;

/// One tool call a scripted turn makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// Call id; `None` lets the wire pick (`call_N` / `toolu_N`, none at all for Ollama).
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments (normally a JSON object).
    pub arguments: Value,
}

/// How a turn's reply deviates from a normal rendering.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Reply {
    /// Render the turn in the server's wire format.
    #[default]
    Normal,
    /// Answer with this status, content type and body verbatim (streaming or not).
    Raw {
        /// HTTP status.
        status: u16,
        /// `Content-Type` header.
        content_type: String,
        /// Body bytes.
        body: String,
    },
    /// Answer 200 with these stream chunks verbatim (each is flushed as its own HTTP chunk).
    RawStream(Vec<String>),
    /// Close the connection without any response.
    CutBeforeResponse,
}

/// One scripted model turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Visible text.
    pub content: String,
    /// Separate thinking text (`thinking`, `reasoning_content`, thinking blocks, thought parts).
    pub thinking: Option<String>,
    /// Native tool calls.
    pub tool_calls: Vec<ScriptedCall>,
    /// Wire-neutral finish reason: `stop`, `length` or `tool_calls`; `None` derives it
    /// (`tool_calls` when there are calls, else `stop`).
    pub finish: Option<String>,
    /// Prompt tokens reported.
    pub prompt_tokens: u64,
    /// Generated tokens reported.
    pub completion_tokens: u64,
    /// Prompt tokens served from cache (OpenAI `timings.cache_n`, Anthropic
    /// `cache_read_input_tokens`, Gemini `cachedContentTokenCount`).
    pub cached_tokens: Option<u64>,
    /// Wait this long before answering (before the headers).
    pub delay: Duration,
    /// Wait this long between stream chunks.
    pub chunk_delay: Duration,
    /// Streamed text and argument strings are split into pieces of this many characters.
    pub chunk_chars: usize,
    /// Extra response headers (e.g. `Retry-After`).
    pub headers: Vec<(String, String)>,
    /// Reply override.
    pub reply: Reply,
    /// When streaming: close the connection after this many chunks (no final chunk).
    pub cut_after_chunks: Option<usize>,
    /// OpenAI streaming: send each call's arguments as one JSON object, not string fragments.
    pub args_as_object: bool,
    /// OpenAI streaming: insert empty `delta: {}` chunks between the pieces.
    pub empty_deltas: bool,
    /// Ollama streaming: put the tool calls in the final `done: true` chunk rather than before it.
    pub calls_in_final_chunk: bool,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            content: String::new(),
            thinking: None,
            tool_calls: Vec::new(),
            finish: None,
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_tokens: None,
            delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            chunk_chars: 6,
            headers: Vec::new(),
            reply: Reply::Normal,
            cut_after_chunks: None,
            args_as_object: false,
            empty_deltas: false,
            calls_in_final_chunk: false,
        }
    }
}

impl Turn {
    /// A plain text answer.
    pub fn text(content: impl Into<String>) -> Self {
        Turn {
            content: content.into(),
            ..Turn::default()
        }
    }

    /// A turn making one native tool call.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Turn::default().with_call(name, arguments)
    }

    /// An error reply: `status` with the wire's own error body for `message`.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Turn {
            reply: Reply::Raw {
                status,
                content_type: String::new(),
                body: message.into(),
            },
            ..Turn::default()
        }
    }

    /// A verbatim reply: status, content type and body exactly as given.
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Self {
        Turn {
            reply: Reply::Raw {
                status,
                content_type: content_type.into(),
                body: body.into(),
            },
            ..Turn::default()
        }
    }

    /// A verbatim 200 stream: each chunk is sent as is (include your own `\n` / `\n\n`).
    pub fn raw_stream<S: Into<String>>(chunks: impl IntoIterator<Item = S>) -> Self {
        Turn {
            reply: Reply::RawStream(chunks.into_iter().map(Into::into).collect()),
            ..Turn::default()
        }
    }

    /// A turn whose connection is closed without any response.
    pub fn cut() -> Self {
        Turn {
            reply: Reply::CutBeforeResponse,
            ..Turn::default()
        }
    }

    /// Adds a tool call (id chosen by the wire).
    pub fn with_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: None,
            name: name.into(),
            arguments,
        });
        self
    }

    /// Adds a tool call with an explicit id.
    pub fn with_call_id(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.tool_calls.push(ScriptedCall {
            id: Some(id.into()),
            name: name.into(),
            arguments,
        });
        self
    }

    /// Sets the visible text.
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = content.into();
        self
    }

    /// Sets the thinking text.
    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// Sets the wire-neutral finish reason (`stop`, `length`, `tool_calls`).
    pub fn with_finish(mut self, finish: impl Into<String>) -> Self {
        self.finish = Some(finish.into());
        self
    }

    /// Sets the reported token counts.
    pub fn with_usage(mut self, prompt: u64, completion: u64) -> Self {
        self.prompt_tokens = prompt;
        self.completion_tokens = completion;
        self
    }

    /// Sets the reported cached prompt tokens.
    pub fn with_cached(mut self, cached: u64) -> Self {
        self.cached_tokens = Some(cached);
        self
    }

    /// Waits before answering.
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Waits between stream chunks.
    pub fn with_chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Splits streamed strings into pieces of `chars` characters (at least 1).
    pub fn with_chunk_chars(mut self, chars: usize) -> Self {
        self.chunk_chars = chars.max(1);
        self
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// When streaming, closes the connection after `chunks` chunks.
    pub fn with_cut_after(mut self, chunks: usize) -> Self {
        self.cut_after_chunks = Some(chunks);
        self
    }

    /// OpenAI streaming: arguments as one JSON object.
    pub fn with_args_as_object(mut self) -> Self {
        self.args_as_object = true;
        self
    }

    /// OpenAI streaming: empty deltas between pieces.
    pub fn with_empty_deltas(mut self) -> Self {
        self.empty_deltas = true;
        self
    }

    /// Ollama streaming: tool calls in the final chunk.
    pub fn with_calls_in_final_chunk(mut self) -> Self {
        self.calls_in_final_chunk = true;
        self
    }

    /// The finish reason to report: explicit, else derived.
    pub fn finish_reason(&self) -> &str {
        match &self.finish {
            Some(f) => f,
            None if self.tool_calls.is_empty() => "stop",
            None => "tool_calls",
        }
    }
}

/// A model the server knows.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// Model name (for Ollama, `name` and `name:latest` both match).
    pub name: String,
    /// Architecture, used for Ollama's `<arch>.context_length` key.
    pub arch: String,
    /// Trained context length.
    pub context_length: u32,
    /// Capabilities (Ollama's list: `completion`, `tools`, `thinking`...).
    pub capabilities: Vec<String>,
}

impl ModelSpec {
    /// A model with arch `llama`, 8192 context and capabilities `completion` and `tools`.
    pub fn new(name: impl Into<String>) -> Self {
        ModelSpec {
            name: name.into(),
            arch: "llama".to_owned(),
            context_length: 8192,
            capabilities: vec!["completion".to_owned(), "tools".to_owned()],
        }
    }

    /// Sets the context length.
    pub fn with_context_length(mut self, n: u32) -> Self {
        self.context_length = n;
        self
    }

    /// Sets the architecture name.
    pub fn with_arch(mut self, arch: impl Into<String>) -> Self {
        self.arch = arch.into();
        self
    }

    /// Replaces the capability list.
    pub fn with_capabilities<S: Into<String>>(mut self, caps: impl IntoIterator<Item = S>) -> Self {
        self.capabilities = caps.into_iter().map(Into::into).collect();
        self
    }
}

/// Builds the script of a scripted server.
#[derive(Debug, Clone, Default)]
pub struct ScriptBuilder {
    pub(crate) turns: Vec<Turn>,
    pub(crate) models: Vec<ModelSpec>,
    pub(crate) only_json_format: bool,
    pub(crate) embeddings: bool,
}

impl ScriptBuilder {
    /// An empty script that accepts any model name.
    pub fn new() -> Self {
        ScriptBuilder::default()
    }

    /// Appends a turn.
    pub fn turn(mut self, turn: Turn) -> Self {
        self.turns.push(turn);
        self
    }

    /// Appends several turns.
    pub fn turns(mut self, turns: impl IntoIterator<Item = Turn>) -> Self {
        self.turns.extend(turns);
        self
    }

    /// Ollama wire: behave like the third-party implementations of the Ollama API that accept
    /// only `"json"` in `format` (the `ollama-openai-proxy` package; older Ollama releases
    /// refuse alike): a chat request whose `format` is anything else (a JSON Schema) gets
    /// HTTP 400 with that proxy's exact body, and uses no turn.
    pub fn only_json_format(mut self) -> Self {
        self.only_json_format = true;
        self
    }

    /// Serve embeddings (Ollama `POST /api/embed`, OpenAI `POST /v1/embeddings`): each text's
    /// vector counts its words hashed into 64 buckets, so texts sharing words are close. Without
    /// it those routes answer as a server without embeddings does (Ollama 404, llama-server
    /// started without `--embeddings` 501).
    pub fn embeddings(mut self) -> Self {
        self.embeddings = true;
        self
    }

    /// Declares a known model. Once any model is declared, other names get the wire's
    /// "model not found" error (HTTP 404); with none declared, every name is accepted.
    pub fn model(mut self, model: ModelSpec) -> Self {
        self.models.push(model);
        self
    }

    pub(crate) fn find_model(&self, name: &str) -> Option<ModelSpec> {
        if self.models.is_empty() {
            return Some(ModelSpec::new(name));
        }
        let bare = name.strip_suffix(":latest").unwrap_or(name);
        self.models
            .iter()
            .find(|m| m.name == name || m.name.strip_suffix(":latest").unwrap_or(&m.name) == bare)
            .cloned()
    }
}

/// Splits `s` into pieces of at most `n` characters (never splitting a character).
pub(crate) fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .chunks(n.max(1))
        .map(|c| c.iter().collect::<String>())
        .collect()
}
