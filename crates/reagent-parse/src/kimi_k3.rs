//! Kimi K3's XTML channels: `<|open|>NAME<|sep|>…<|close|>NAME<|sep|>`.
//!
//! ```text
//! <|open|>response<|sep|>text<|close|>response<|sep|>
//! <|open|>tools<|sep|>
//!   <|open|>call tool="name" index="1"<|sep|>
//!     <|open|>argument key="k" type="string"<|sep|>raw text<|close|>argument<|sep|>
//!   <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! ```
//!
//! The `response` channel is content, the `tools` channel holds the calls, and the `think`
//! channel is reasoning (a think-block pair in `think`). Attribute values are
//! XML-unescaped (`tool="a&amp;b"` names `a&b`); an argument typed `string`, or not typed,
//! is raw text, any other type is read as JSON and stays text when it is not JSON. A
//! section with no closer keeps its complete calls; a call cut off is never guessed.
//! `<|close|>message<|sep|>` ends the message and is a stop token (`stop_tokens`).
//!
//! Each marker is one token of the model's vocabulary (the channel name another), so an
//! output cut off by a token limit ends between tokens: `<|open|>` or `<|open|>tool` at
//! the very end is a marker cut off and is dropped. A `<|open|>` in prose followed by
//! anything that is no channel of this format stays text.

use serde_json::{Map, Value};

use crate::engine::Hit;
use crate::scan::{skip_ws, unescape_xml};
use crate::{Family, ParsedCall};

const OPEN: &str = "<|open|>";
const CLOSE: &str = "<|close|>";
const SEP: &str = "<|sep|>";
const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
const RESPONSE_CLOSE: &str = "<|close|>response<|sep|>";
const CALL_OPEN: &str = "<|open|>call";
const CALL_CLOSE: &str = "<|close|>call<|sep|>";
const ARGUMENT_OPEN: &str = "<|open|>argument";
const ARGUMENT_CLOSE: &str = "<|close|>argument<|sep|>";

/// What may follow `<|open|>` or `<|close|>`: the channel and element names.
const NAMES: &[&str] = &["think", "response", "tools", "message", "call", "argument"];

/// Markers that end a `think` channel left open (see `engine::marker_at`).
pub(crate) const CHANNEL_OPENERS: &[&str] =
    &["<|open|>tools<|sep|>", "<|open|>response<|sep|>", CALL_OPEN];

/// A Kimi K3 marker at `t[i..]` (`t[i..]` starts with `<|open|>` or `<|close|>`): a
/// section of calls, a response channel (its text is content), a closer whose opener is
/// missing or a marker cut off at the end (both dropped). `None` for anything else.
pub(crate) fn try_lt(t: &str, i: usize) -> Option<Hit> {
    let rest = &t[i..];
    let (opens, after) = match rest.strip_prefix(OPEN) {
        Some(after) => (true, after),
        None => (false, rest.strip_prefix(CLOSE)?),
    };
    let at = t.len() - after.len();
    if marker_cut_off(rest) {
        return Some(dropped(i, t.len()));
    }
    if !opens {
        // `<|close|>message<|sep|>` is left to the stop tokens.
        let name = NAMES
            .iter()
            .filter(|n| **n != "message")
            .find(|n| after.strip_prefix(**n).is_some_and(|r| r.starts_with(SEP)))?;
        return Some(dropped(i, at + name.len() + SEP.len()));
    }
    if let Some(r) = after
        .strip_prefix("tools")
        .and_then(|r| r.strip_prefix(SEP))
    {
        return Some(section(t, i, t.len() - r.len()));
    }
    if element_opens(rest, CALL_OPEN) {
        // The section's opener was lost: the calls stand on their own.
        return Some(section(t, i, i));
    }
    let r = after.strip_prefix("response")?.strip_prefix(SEP)?;
    Some(response(t, i, t.len() - r.len()))
}

/// Whether `after` (the text after `<|open|>` or `<|close|>`, to the end of the output)
/// is a channel or element name cut off before its `<|sep|>`.
fn cut_off(after: &str) -> bool {
    NAMES.iter().any(|n| {
        n.starts_with(after)
            || (after.len() < n.len() + SEP.len()
                && after.starts_with(n)
                && SEP.starts_with(&after[n.len()..]))
    })
}

/// Whether `rest` is a marker cut off at the end of the output (`<|op`, `<|open|>tool`); it also
/// ends a `think` channel left open (see `engine::marker_at`).
pub(crate) fn marker_cut_off(rest: &str) -> bool {
    // Cut inside the marker token itself (`<`, `<|op`).
    if !rest.is_empty() && (OPEN.starts_with(rest) || CLOSE.starts_with(rest)) {
        return true;
    }
    rest.strip_prefix(OPEN)
        .or_else(|| rest.strip_prefix(CLOSE))
        .is_some_and(cut_off)
}

/// A marker that is no text and holds nothing.
fn dropped(start: usize, end: usize) -> Hit {
    Hit {
        start,
        end,
        family: Some(Family::KimiK3),
        ..Hit::default()
    }
}

/// Whether `rest` opens the element `open` (`<|open|>call` then attributes or `<|sep|>`).
fn element_opens(rest: &str, open: &str) -> bool {
    rest.strip_prefix(open)
        .is_some_and(|r| r.starts_with(SEP) || r.starts_with(|c: char| c.is_ascii_whitespace()))
}

/// The response channel whose text starts at `j`: it ends at the next marker of the
/// format, which is consumed when it is the channel's closer (what follows a marker that
/// is not is read on its own: a quoted `<|open|>` stays text, a tools section is read).
fn response(t: &str, start: usize, j: usize) -> Hit {
    let mut text_end = t.len();
    let mut from = j;
    while let Some(p) = t[from..].find("<|").map(|p| from + p) {
        if t[p..].starts_with(OPEN) || t[p..].starts_with(CLOSE) {
            text_end = p;
            break;
        }
        from = p + 2;
    }
    let end = if t[text_end..].starts_with(RESPONSE_CLOSE) {
        text_end + RESPONSE_CLOSE.len()
    } else {
        text_end
    };
    Hit {
        content: Some(t[j..text_end].to_string()),
        ..dropped(start, end)
    }
}

/// One call element read by [`call`].
enum Step {
    /// A complete call, and the offset after it.
    Call(ParsedCall, usize),
    /// A call that is not usable (no tool name, a malformed argument), and where the
    /// section goes on.
    Skipped(String, usize),
    /// The output ends inside the call.
    Cut,
}

/// The calls from `j` on (`start` is the section's opener), up to `<|close|>tools<|sep|>`;
/// a section with no closer ends after its last complete call.
fn section(t: &str, start: usize, j: usize) -> Hit {
    let fam = Family::KimiK3;
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut p = j;
    let end = loop {
        p = skip_ws(t.as_bytes(), p);
        let rest = &t[p..];
        if rest.starts_with(TOOLS_CLOSE) {
            break p + TOOLS_CLOSE.len();
        }
        if !element_opens(rest, CALL_OPEN) {
            let at_end = rest.is_empty() || marker_cut_off(rest);
            if calls.is_empty() && errors.is_empty() {
                if at_end {
                    return Hit::truncated(start, t.len(), fam);
                }
                errors.push("a Kimi K3 tools section holds no call".to_string());
            }
            // Text after the calls: the section ended there (its closer was lost).
            break if at_end { t.len() } else { p };
        }
        match call(t, p + CALL_OPEN.len()) {
            Step::Call(c, e) => {
                calls.push(c);
                p = e;
            }
            Step::Skipped(why, e) => {
                errors.push(why);
                p = e;
            }
            Step::Cut => {
                let mut hit = Hit::cut_after(start, t.len(), fam, calls);
                hit.errors.append(&mut errors);
                return hit;
            }
        }
    };
    let mut hit = Hit::new(start, end, fam, calls);
    hit.errors = errors;
    hit
}

/// The attributes of an element from `j` (right after its name) to its `<|sep|>`, and the
/// offset after that; `None` when the text ends first or another marker comes first.
fn attributes(t: &str, j: usize) -> Option<(&str, usize)> {
    let lt = j + t[j..].find("<|")?;
    t[lt..]
        .starts_with(SEP)
        .then(|| (&t[j..lt], lt + SEP.len()))
}

/// One call whose attributes start at `j` (after `<|open|>call`), read up to its closer.
/// With no closer the output was cut inside it, unless the section's closer follows.
fn call(t: &str, j: usize) -> Step {
    let Some(close) = t[j..].find(CALL_CLOSE).map(|e| j + e) else {
        return match t[j..].find(TOOLS_CLOSE) {
            Some(e) => Step::Skipped("a Kimi K3 call never closes".to_string(), j + e),
            None => Step::Cut,
        };
    };
    let after = close + CALL_CLOSE.len();
    match call_body(&t[..close], j) {
        Ok(call) => Step::Call(call, after),
        Err(why) => Step::Skipped(why, after),
    }
}

/// The call in `t[j..]` (its closer cut off): the tool name and the arguments.
fn call_body(t: &str, j: usize) -> Result<ParsedCall, String> {
    let (attrs, mut p) =
        attributes(t, j).ok_or_else(|| "a Kimi K3 call's attributes never end".to_string())?;
    let name = attribute(attrs, "tool").unwrap_or_default();
    if name.is_empty() {
        return Err("a Kimi K3 call names no tool".to_string());
    }
    let mut args = Map::new();
    loop {
        p = skip_ws(t.as_bytes(), p);
        let rest = &t[p..];
        if rest.is_empty() {
            return Ok(ParsedCall {
                name,
                arguments: Value::Object(args),
                id: None,
            });
        }
        let broken = |what: &str| format!("call to {name:?} skipped: {what}");
        if !element_opens(rest, ARGUMENT_OPEN) {
            return Err(broken("text that is no argument"));
        }
        let (attrs, vs) = attributes(t, p + ARGUMENT_OPEN.len())
            .ok_or_else(|| broken("an argument's attributes never end"))?;
        let ve = t[vs..]
            .find(ARGUMENT_CLOSE)
            .map(|e| vs + e)
            .ok_or_else(|| broken("an argument never closes"))?;
        let key = attribute(attrs, "key").ok_or_else(|| broken("an argument has no key"))?;
        let value = typed(&t[vs..ve], attribute(attrs, "type").as_deref());
        args.insert(key, value);
        p = ve + ARGUMENT_CLOSE.len();
    }
}

/// An argument's value: raw text when typed `string` (or not typed), else JSON, else the
/// text.
fn typed(raw: &str, ty: Option<&str>) -> Value {
    match ty {
        None | Some("string") => Value::String(raw.to_string()),
        Some(_) => serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string())),
    }
}

/// The value of the attribute `key` in `key="value"` pairs, XML-unescaped.
fn attribute(attrs: &str, key: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        rest = rest.trim_start();
        let eq = rest.find("=\"")?;
        let value = &rest[eq + 2..];
        let close = value.find('"')?;
        if &rest[..eq] == key {
            return Some(unescape_xml(&value[..close]));
        }
        rest = &value[close + 1..];
    }
}
