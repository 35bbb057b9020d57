//! Qwen-Agent's function-calling prompt (its default for Qwen 2 and 2.5), which a model
//! answers in text:
//!
//! ```text
//! Let me look.
//! ✿FUNCTION✿: get_weather
//! ✿ARGS✿: {"city": "Paris"}
//! ✿RESULT✿: …
//! ✿RETURN✿: It is sunny.
//! ```
//!
//! Text before the first `✿FUNCTION✿` is content, each `✿FUNCTION✿`/`✿ARGS✿` pair is a call
//! (arguments are JSON; `✿RESULT✿` starts the tool's result, which the model should not
//! write, so what follows it up to the next call or answer is dropped), and the text after
//! `✿RETURN✿` is the answer.

use serde_json::Value;

use crate::engine::{non_empty, Ctx};
use crate::scan::parse_json_lenient;
use crate::{Family, Parsed, ParsedCall};

const FUNCTION: &str = "✿FUNCTION✿";
const ARGS: &str = "✿ARGS✿";
const RESULT: &str = "✿RESULT✿";
const RETURN: &str = "✿RETURN✿";

/// Every marker of `t` with its offset, in order: found in one pass, so a reply of many
/// steps costs linear work.
fn markers(t: &str) -> Vec<(usize, &'static str)> {
    let mut marks: Vec<(usize, &'static str)> = Vec::new();
    for p in memchr::memmem::find_iter(t.as_bytes(), "✿".as_bytes()) {
        // A marker's closing `✿` may open another (`✿FUNCTION✿ARGS✿`): markers never overlap.
        if marks.last().is_some_and(|&(q, m)| p < q + m.len()) {
            continue;
        }
        if let Some(m) = [FUNCTION, ARGS, RESULT, RETURN]
            .into_iter()
            .find(|m| t[p..].starts_with(m))
        {
            marks.push((p, m));
        }
    }
    marks
}

/// Parse `t` as a Qwen-Agent reply; `None` when it holds no call and no answer marker.
pub(crate) fn parse(t: &str, ctx: &Ctx) -> Option<Parsed> {
    let marks = markers(t);
    let first = marks
        .iter()
        .position(|(_, m)| *m == FUNCTION || *m == RETURN)?;
    let mut content = t[..marks[first].0].to_string();
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut truncated = false;
    // The text of marker `k`: from after it to the next marker (or the end).
    let text = |k: usize| {
        let (p, m) = marks[k];
        let end = marks.get(k + 1).map_or(t.len(), |n| n.0);
        after_colon(&t[p + m.len()..end])
    };
    let mut k = first;
    while k < marks.len() {
        match marks[k].1 {
            RETURN => {
                // The answer runs to the end of the reply.
                content.push_str(after_colon(&t[marks[k].0 + RETURN.len()..]));
                break;
            }
            FUNCTION => {
                let name = text(k).trim();
                let at_end = k + 1 == marks.len();
                if marks.get(k + 1).map(|n| n.1) != Some(ARGS) {
                    // `✿FUNCTION✿: f` with no arguments: cut off at the end, or malformed.
                    if at_end {
                        truncated = true;
                    } else {
                        errors.push(format!("a Qwen-Agent call has no {ARGS}"));
                    }
                    k += 1;
                    continue;
                }
                let args = text(k + 1).trim();
                let last = k + 2 == marks.len();
                match parse_json_lenient(args) {
                    Some(arguments @ Value::Object(_)) if !name.is_empty() => {
                        calls.push(ParsedCall {
                            name: name.to_string(),
                            arguments,
                            id: None,
                        });
                    }
                    _ if last && !args.ends_with('}') => truncated = true,
                    _ => errors.push(format!("malformed Qwen-Agent call skipped: {name:?}")),
                }
                k += 2;
            }
            // A result the model wrote itself (or a stray marker): skipped.
            _ => k += 1,
        }
    }
    if calls.is_empty() && marks[first].1 != RETURN && !truncated && errors.is_empty() {
        return None;
    }
    if truncated {
        errors.push("tool call cut off before it was complete".to_string());
    }
    let format = (!calls.is_empty()).then(|| ctx.hint().unwrap_or(Family::QwenAgent));
    Some(Parsed {
        content: non_empty(content.trim().to_string()),
        calls,
        format,
        truncated,
        errors,
        ..Parsed::default()
    })
}

/// `s` past the `: ` that follows a marker.
fn after_colon(s: &str) -> &str {
    let s = s.trim_start_matches([' ', '\t']);
    s.strip_prefix(':')
        .or_else(|| s.strip_prefix('：'))
        .unwrap_or(s)
        .trim_start_matches([' ', '\t'])
}
