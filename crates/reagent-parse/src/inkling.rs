//! Inkling's messages: each block opens with `<|content_KIND|>` (after `<|message_model|>`
//! and, for a tool call, the tool's name) and ends at `<|end_message|>`:
//!
//! ```text
//! <|content_thinking|>Consider it.<|end_message|><|message_model|><|content_text|>Checking.<|end_message|>
//! <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{…}}<|end_message|>
//! <|content_model_end_sampling|>
//! ```
//!
//! Thinking blocks are the reasoning, text blocks (and a tool's text invocation) the
//! content, each joined as written; a JSON invocation is a call when it holds a call object,
//! else its text is content. Blocks of other kinds (`<|content_image|>`) and text outside
//! any block (headers, tool names, what follows the end of sampling) are markup. A block
//! left open runs to the end of the output.

use crate::calls::{calls_from_owned, CallRules};
use crate::engine::{non_empty, Ctx};
use crate::scan::parse_json_lenient;
use crate::{Family, Parsed, ReasoningMode};

const BLOCK: &str = "<|content_";
/// Where a block's body stops: its end, or the next message or block opening.
const BODY_ENDS: &[&str] = &["<|end_message|>", "<|message_model|>", BLOCK];

/// Whether `t` is written in Inkling's blocks.
pub(crate) fn detect(t: &str) -> bool {
    t.contains("<|content_text|>")
        || t.contains("<|content_thinking|>")
        || t.contains("<|content_invoke_tool_")
}

/// The turn read block by block (see the module docs).
pub(crate) fn parse(t: &str, ctx: &Ctx) -> Parsed {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    // The next occurrence of each body end, kept while it lies ahead: every stretch of the
    // text is searched once per end (linear on any input).
    let mut next_end: [Option<Option<usize>>; BODY_ENDS.len()] = [None; BODY_ENDS.len()];
    let mut pos = 0;
    while let Some(open) = t[pos..].find(BLOCK).map(|p| pos + p) {
        let kind_at = open + BLOCK.len();
        let Some(kind_len) = t[kind_at..].find("|>") else {
            break;
        };
        let kind = &t[kind_at..kind_at + kind_len];
        let body_at = kind_at + kind_len + 2;
        let body_end = BODY_ENDS
            .iter()
            .zip(next_end.iter_mut())
            .filter_map(|(end, cached)| {
                let at = match *cached {
                    Some(Some(at)) if at >= body_at => Some(at),
                    Some(None) => None,
                    _ => t[body_at..].find(end).map(|p| body_at + p),
                };
                *cached = Some(at);
                at
            })
            .min()
            .unwrap_or(t.len());
        let body_len = body_end - body_at;
        let body = &t[body_at..body_at + body_len];
        match kind {
            "thinking" if ctx.opts.reasoning == ReasoningMode::Extract => {
                reasoning.push_str(body);
            }
            // Kept reasoning stays as written, its opener included.
            "thinking" => content.push_str(&t[open..body_at + body_len]),
            "text" | "invoke_tool_text" => content.push_str(body),
            "invoke_tool_json" => {
                let read = parse_json_lenient(body)
                    .and_then(|v| calls_from_owned(v, CallRules::default()));
                match read {
                    Some(found) => calls.extend(found),
                    None => content.push_str(body),
                }
            }
            _ => {}
        }
        pos = body_at + body_len;
    }
    let format = (!calls.is_empty()).then_some(Family::GenericJson);
    Parsed {
        content: non_empty(content.trim().to_string()),
        reasoning: non_empty(reasoning.trim().to_string()),
        calls,
        format,
        ..Parsed::default()
    }
}
