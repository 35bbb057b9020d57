//! Continue's tool calls for models without native tools ("system message tools"), which
//! its prompt teaches the model to write, in a ```` ```tool ```` fence or without one:
//!
//! ````text
//! ```tool
//! TOOL_NAME: read_file
//! BEGIN_ARG: path
//! src/main.rs
//! END_ARG
//! ```
//! ````
//!
//! Each argument's value is read as JSON when it parses (`123`, `true`, `{…}`), else it is
//! the trimmed text. The text around the block is content. A block cut off inside an
//! argument is flagged, never guessed.

use serde_json::{Map, Value};

use crate::engine::non_empty;
use crate::scan::{line_starting, parse_json_lenient};
use crate::{Family, Parsed, ParsedCall};

const TOOL_NAME: &str = "TOOL_NAME:";
const BEGIN_ARG: &str = "BEGIN_ARG:";
const END_ARG: &str = "END_ARG";
const FENCE: &str = "```tool";

/// Parse `t` as a reply holding Continue's tool blocks; `None` when it holds none.
pub(crate) fn parse(t: &str) -> Option<Parsed> {
    memchr::memmem::find(t.as_bytes(), TOOL_NAME.as_bytes())?;
    let mut content = String::new();
    let mut calls = Vec::new();
    let mut truncated = false;
    let mut pos = 0;
    while let Some(name_at) = line_starting(t, pos, TOOL_NAME) {
        // The block opens at its fence when one stands on the line before.
        let before = &t[pos..name_at];
        let block_start = before
            .strip_suffix('\n')
            .and_then(|b| b.trim_end_matches([' ', '\t']).strip_suffix(FENCE))
            .map_or(name_at, |b| pos + b.len());
        let fenced = block_start != name_at;
        content.push_str(&t[pos..block_start]);
        let name_end = t[name_at..].find('\n').map_or(t.len(), |p| name_at + p);
        let name = t[name_at + TOOL_NAME.len()..name_end].trim();
        let mut args = Map::new();
        let mut p = name_end;
        while let Some(arg_at) = next_line(t, p).filter(|&a| t[a..].starts_with(BEGIN_ARG)) {
            let key_end = t[arg_at..].find('\n').map_or(t.len(), |q| arg_at + q);
            let key = t[arg_at + BEGIN_ARG.len()..key_end].trim();
            let Some(end) = line_starting(t, key_end, END_ARG) else {
                truncated = true;
                p = t.len();
                break;
            };
            let raw = t[key_end..end].trim();
            let value = parse_json_lenient(raw).unwrap_or_else(|| Value::String(raw.to_string()));
            args.insert(key.to_string(), value);
            p = end + END_ARG.len();
        }
        if truncated {
            pos = t.len();
            break;
        }
        if fenced {
            // Up to and past the closing fence, when it follows.
            if let Some(f) = next_line(t, p).filter(|&f| t[f..].starts_with("```")) {
                p = f + 3;
            }
        }
        if !name.is_empty() {
            calls.push(ParsedCall {
                name: name.to_string(),
                arguments: Value::Object(args),
                id: None,
            });
        }
        pos = p;
    }
    if pos < t.len() {
        content.push_str(&t[pos..]);
    }
    if calls.is_empty() && !truncated {
        return None;
    }
    let errors = if truncated {
        vec!["tool call cut off before it was complete".to_string()]
    } else {
        Vec::new()
    };
    let format = (!calls.is_empty()).then_some(Family::ContinueTools);
    Some(Parsed {
        content: non_empty(content),
        calls,
        format,
        truncated,
        errors,
        ..Parsed::default()
    })
}

/// Offset of the first non-blank line's text after the line break at or after `from`.
fn next_line(t: &str, from: usize) -> Option<usize> {
    let rest = &t[from..];
    let skipped = rest.len() - rest.trim_start().len();
    (skipped < rest.len()).then_some(from + skipped)
}
