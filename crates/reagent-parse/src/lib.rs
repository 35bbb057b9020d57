//! reagent-parse: find the tool calls in whatever a local model writes.
//!
//! Small local models rarely return clean native `tool_calls`. This crate takes the raw
//! text of one assistant turn and splits it into [`Parsed`]: the plain `content`, the
//! `reasoning` (think blocks), and the [`ParsedCall`]s, in any of the formats the
//! open-weight model families emit (Hermes/Qwen `<tool_call>`, Qwen3-Coder/GLM/MiniMax
//! XML, Llama 3 JSON, Mistral `[TOOL_CALLS]`, DeepSeek and Kimi tool tokens, Kimi K3 XTML, GPT-OSS
//! harmony, pythonic `[f(a=1)]` lists, ReAct text, ...). See [`Family`] for the list.
//!
//! ```
//! use reagent_parse::{parse, ParseOptions};
//!
//! let text = "Let me check.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>";
//! let parsed = parse(text, &ParseOptions::default());
//! assert_eq!(parsed.content.as_deref(), Some("Let me check."));
//! assert_eq!(parsed.calls[0].name, "get_weather");
//! assert_eq!(parsed.calls[0].arguments["city"], "Paris");
//! assert_eq!(parsed.format, Some(reagent_parse::Family::Hermes));
//! ```
//!
//! Streaming: feed chunks to [`StreamParser::feed`] (or [`StreamParser::push`] for an owned
//! copy), print what it releases, and call [`StreamParser::finish`]; the result is identical
//! to [`parse`] on the whole text.
//!
//! Code map: `engine` (pre-scan, dispatch, family quirks), `hit` (the call region a
//! reader returns), `think` (reasoning split), `scan` (string-aware bracket matching, SWAR
//! trigger scan), `lenient` (tolerant JSON/Python-literal parser), `json_at` (a JSON value
//! at an offset, with the repairs weak models need), `calls` (call-object spellings), one
//! module per family group (`json_fmts`, `json_list`, `json_tokens`, `xml_fmts`,
//! `qwen_xml`, `glm`, `kimi_k3`, `pythonic` with `gemma_repair`, `harmony`, `react`,
//! `qwen_agent`, `continue_tools`, `tool_tags`, `chatglm`, `inkling`), `schema` (typing and
//! [`coerce_arguments`]), `vendor_tags` (vendor spellings of known tags), `stop_tokens`,
//! `fallback`, `stream`, `render`.
//!
//! **The general fallback** (`fallback` module) is for formats no family reads. It runs
//! only where no family recognised a call, and knows the shapes every format shares: a
//! call object or list (`name`/`function`/`tool`/`tool_name` with `arguments`/
//! `parameters`/`args`/`input`) inside an unknown wrapper (`<x>…</x>`, `<|x|>…<|x_end|>`,
//! `[X]…[/X]`, a `**Tool Call:**` label), whose marker tokens then leave the content; an
//! unknown tag around `<invoke>` or `<function=…>` XML; and, when [`ParseOptions::tools`]
//! is given, an offered tool's name (at a line start or after marker tokens) followed by a
//! JSON object (`NAME{…}`, `NAME\n{…}`, `NAME: {…}`, markers between them allowed) or by
//! marker-delimited `KEY`/`VALUE` pairs, whose keys the tool's schema declares. A JSON
//! answer that is no call object, a name in running prose or a code fence, and a name
//! with keys its tool does not take stay text. The stream releases an unknown wrapper's
//! opener before it can know; [`StreamParser::finish`] gives the exact content.
//!
//! A [`ParseOptions::format`] hint selects that family's rules where upstream projects
//! disagree (for example GLM drops prose between calls; Hermes keeps non-JSON string
//! arguments). Other syntaxes are still recognised.
//!
//! Key design decisions:
//! - **Hand-written, string-aware scanning** (`scan` module): brace matching respects
//!   JSON and Python string state, so `"a}b"` never closes an object. No regex, no
//!   parser generators: every loop moves forward, so work is linear and nothing panics.
//! - **Marker pre-scan**: only the bytes `<`, `[`, `{`, `` ` `` can start a call, so prose
//!   without them is copied straight to `content`.
//! - **Truncation never guesses**: a call cut off mid-JSON yields no call and
//!   `truncated = true`.
//! - **Quirks are per family** ([`Family`]): where upstream projects disagree, the family
//!   hint (or the detected family) picks the behaviour.
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod calls;
mod chatglm;
mod continue_tools;
mod engine;
mod fallback;
mod family;
mod gemma;
mod gemma_repair;
mod glm;
mod gptme;
mod harmony;
mod hit;
mod inkling;
mod json_at;
mod json_fmts;
mod json_list;
mod json_tokens;
mod kimi_k3;
mod lenient;
mod pythonic;
mod qwen_agent;
mod qwen_xml;
mod react;
mod render;
mod scan;
mod schema;
mod stop_tokens;
mod stream;
mod think;
mod tool_tags;
mod vendor_tags;
mod xml_fmts;

pub use family::Family;
pub use render::{render_human, render_json};
pub use schema::coerce_arguments;
pub use stream::StreamParser;

use serde_json::Value;

/// How think blocks (`<think>…</think>` and friends) are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningMode {
    /// Move reasoning into [`Parsed::reasoning`] (default).
    #[default]
    Extract,
    /// Leave the think block, tags included, in [`Parsed::content`]
    /// (llama.cpp `reasoning_format=none`). Calls inside it are still ignored.
    Keep,
}

/// Options for [`parse`] and [`StreamParser`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParseOptions {
    /// Force one format family's rules instead of auto-detection.
    pub format: Option<Family>,
    /// The tools offered to the model; used to type XML parameter values and to
    /// validate names where a format's rules require it. May be empty (untyped).
    pub tools: Vec<ToolSchema>,
    /// Text the prompt already placed at the start of the assistant turn (for example
    /// `"<think>"` when the template forces thinking open). It is parsed as if the model
    /// had written it.
    pub prefill: String,
    /// Where reasoning goes.
    pub reasoning: ReasoningMode,
}

impl ParseOptions {
    /// Options with a format hint and nothing else.
    pub fn with_format(format: Family) -> Self {
        ParseOptions {
            format: Some(format),
            ..ParseOptions::default()
        }
    }
}

/// A tool's name and the JSON Schema of its arguments object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSchema {
    /// The tool name, case-sensitive.
    pub name: String,
    /// JSON Schema of the arguments (`{"type":"object","properties":{...}}`), or `null`.
    pub parameters: Value,
}

/// The result of parsing one assistant turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// Plain text meant for the user; `None` when empty or only whitespace.
    pub content: Option<String>,
    /// Reasoning / thinking text; never parsed for calls. `None` when empty.
    pub reasoning: Option<String>,
    /// The tool calls found, in order.
    pub calls: Vec<ParsedCall>,
    /// Which format found the calls (the "parse layer").
    pub format: Option<Family>,
    /// A call was cut off (for example mid-JSON); no call was guessed for it.
    pub truncated: bool,
    /// Parse failures worth telling the model.
    pub errors: Vec<String>,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// Tool name as the model wrote it, except that a namespace before an offered tool's
    /// name (`default_api.f` when `f` is offered and `default_api.f` is not) is dropped.
    pub name: String,
    /// Arguments, usually an object.
    pub arguments: Value,
    /// Call id when the format carries one.
    pub id: Option<String>,
}

/// Parse a whole assistant turn.
pub fn parse(text: &str, opts: &ParseOptions) -> Parsed {
    engine::parse_full(text, opts)
}
