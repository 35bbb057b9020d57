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

/// Parse `t` as a Qwen-Agent reply; `None` when it holds no call and no answer marker.
pub(crate) fn parse(t: &str, ctx: &Ctx) -> Option<Parsed> {
    // A SIMD search for the marker's rare bytes: prose pays little for it.
    memchr::memmem::find(t.as_bytes(), "✿".as_bytes())?;
    let first = [FUNCTION, RETURN].iter().filter_map(|m| t.find(m)).min()?;
    let mut content = t[..first].to_string();
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut truncated = false;
    let mut rest = &t[first..];
    while !rest.is_empty() {
        if let Some(answer) = rest.strip_prefix(RETURN) {
            content.push_str(after_colon(answer));
            break;
        }
        let Some(body) = rest.strip_prefix(FUNCTION) else {
            // Past a result (or stray text between steps): skip to the next step.
            match next_step(rest, 1) {
                Some(p) => {
                    rest = &rest[p..];
                    continue;
                }
                None => break,
            }
        };
        let end = next_marker(body).unwrap_or(body.len());
        let step = &body[..end];
        rest = &body[end..];
        let Some((name, args)) = step.split_once(ARGS) else {
            // `✿FUNCTION✿: f` with no arguments yet: cut off at the end, or malformed.
            if rest.is_empty() {
                truncated = true;
            } else {
                errors.push(format!("a Qwen-Agent call has no {ARGS}"));
            }
            continue;
        };
        let name = after_colon(name).trim();
        match parse_json_lenient(after_colon(args).trim()) {
            Some(arguments @ Value::Object(_)) if !name.is_empty() => calls.push(ParsedCall {
                name: name.to_string(),
                arguments,
                id: None,
            }),
            _ if rest.is_empty() && !args.trim_end().ends_with('}') => truncated = true,
            _ => errors.push(format!("malformed Qwen-Agent call skipped: {name:?}")),
        }
    }
    if calls.is_empty() && !t[first..].starts_with(RETURN) && !truncated && errors.is_empty() {
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

/// Offset in `s` of the next `✿RESULT✿`, `✿FUNCTION✿` or `✿RETURN✿`.
fn next_marker(s: &str) -> Option<usize> {
    [RESULT, FUNCTION, RETURN]
        .iter()
        .filter_map(|m| s.find(m))
        .min()
}

/// Offset in `s`, from `from` on, of the next call or answer.
fn next_step(s: &str, from: usize) -> Option<usize> {
    let from = (from..=s.len()).find(|&i| s.is_char_boundary(i))?;
    [FUNCTION, RETURN]
        .iter()
        .filter_map(|m| s[from..].find(m))
        .min()
        .map(|p| from + p)
}
