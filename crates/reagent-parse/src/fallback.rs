//! The general fallback: shapes every tool-calling format shares, for outputs in a format
//! no family reads.
//!
//! It runs only where no family recognised a call (once a family found one, it stays out
//! of the turn), and it knows these shapes:
//!
//! - **An unknown wrapper around a call object or list.** A bare JSON call (read by the
//!   generic JSON rules, `{"name"|"function"|"tool"|"tool_name": …, "arguments"|
//!   "parameters"|"args"|"input": {…}}` or a list of them) that stands right after a marker
//!   token (`<anything>`, `<|anything|>`, `[ANYTHING]`) or a label line (`**Tool Call:**`),
//!   or right before closing tokens (`</anything>`, `<|/anything|>`, `<anything|>`,
//!   `[/ANYTHING]`, or a name with an `end`/`close`/`stop` word: `<|x_end|>`,
//!   `[END_X]`), takes them with it, so they do not stay in the content
//!   ([`widen_to_wrapper`]).
//! - **An unknown tag around a known inner format**: `<anything><invoke name=…>…
//!   </anything>` or `<anything><function=…>…</anything>` ([`wrapped_inner`]).
//! - **A known tool's name followed by its arguments.** Only when tools are offered:
//!   `NAME{…}`, `NAME {…}`, `NAME\n{…}`, `NAME: {…}`, `NAME({…})` (also `functions.NAME`), at the start
//!   of a line or right after marker tokens, with more marker tokens allowed before the
//!   object (`<|end_name|><|args|>json<|msg|>{…}`); or, right after a special token
//!   (`<|…|>`, `[…]`), marker-delimited pairs `<|arg|>KEY<|value|>VALUE<|arg_end|>` up to a
//!   closing token; or, on a line of its own, `KEY=VALUE` words (`read_file
//!   path=notes.txt`). Outside any code fence, where the keys are all properties the tool's
//!   schema declares and its required ones are present ([`named_calls`]). The name, the
//!   arguments and the marker tokens around them (and stop tokens ending the turn) leave
//!   the content.
//! - **An orphan wrapper closer**: a turn with no call that ends in `</…tool_call>` or
//!   `</…function_call>` whose opener is nowhere in it loses that tag
//!   ([`drop_orphan_call_closer`]).
//!
//! What it leaves alone: JSON that is not a call object (a JSON answer is the answer),
//! a name + object in a fenced code block (code the user asked for), an object whose keys
//! the named tool does not take (prose showing some other JSON), and any name that is not
//! an offered tool.

use serde_json::Value;

use crate::engine::{non_empty, Hit};
use crate::scan::{parse_json_lenient, skip_ws};
use crate::{Family, Parsed, ParsedCall, ToolSchema};

/// Longest name accepted inside a marker token.
const MAX_MARKER_NAME: usize = 48;

/// Whether `b` may appear in a marker token's name (`tool_call`, `TOOL_REQUEST`, `a:b`).
fn marker_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.' | b' ')
}

/// Whether `b` may appear between a marker's brackets: its name, `|`, or the `/` of a
/// closer (checked in place by [`marker_inner_ok`]).
fn marker_byte(b: u8) -> bool {
    marker_name_byte(b) || b == b'|' || b == b'/'
}

/// The length of the marker token that ends exactly at `end` in `t` (`<x>`, `<|x|>`,
/// `[X]`), if one does.
fn marker_ending_at(t: &str, end: usize) -> Option<usize> {
    let b = &t.as_bytes()[..end];
    let (close, open) = match b.last()? {
        b'>' => (b'>', b'<'),
        b']' => (b']', b'['),
        _ => return None,
    };
    let mut k = b.len() - 1;
    let mut seen = 0;
    while k > 0 && seen <= MAX_MARKER_NAME + 2 {
        k -= 1;
        let c = b[k];
        if c == open {
            let inner = &t[k + 1..end - 1];
            return marker_inner_ok(inner, close).then_some(end - k);
        }
        if !marker_byte(c) {
            return None;
        }
        seen += 1;
    }
    None
}

/// The length of the marker token that starts at `start` in `t`, if one does.
fn marker_starting_at(t: &str, start: usize) -> Option<usize> {
    let b = t.as_bytes();
    let (open, close) = match b.get(start)? {
        b'<' => (b'<', b'>'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let limit = (start + MAX_MARKER_NAME + 4).min(b.len());
    let k = (start + 1..limit).find(|&k| b[k] == close || !marker_byte(b[k]))?;
    if b[k] != close || b[start] != open {
        return None;
    }
    marker_inner_ok(&t[start + 1..k], close).then_some(k + 1 - start)
}

/// A marker's inside: a name, optionally in `|…|` (special tokens) or after `/` (closers).
fn marker_inner_ok(inner: &str, close: u8) -> bool {
    let name = inner.trim_start_matches('/').trim_matches('|');
    let name = name.trim_start_matches('/');
    !name.is_empty()
        && name.len() <= MAX_MARKER_NAME
        && name.bytes().all(marker_name_byte)
        && name.bytes().next().is_some_and(|c| c.is_ascii_alphabetic())
        // `[x]` is a markdown checkbox or a footnote, `[1]` a citation: a bracket marker is
        // an upper-case word (`[TOOL_REQUEST]`, `[/CALL]`).
        && (close == b'>' || name.bytes().all(|c| !c.is_ascii_lowercase()))
        && !name.contains("  ")
}

/// Whether a marker token closes something (`</x>`, `<|/x|>`, `<x|>`, `[/X]`, or a name
/// with an `end`/`close`/`stop` word: `<|x_end|>`, `[END_X]`, `<|x:end|>`).
fn is_closer(token: &str) -> bool {
    let inner = &token[1..token.len() - 1];
    inner.starts_with('/')
        || inner.starts_with("|/")
        || (inner.ends_with('|') && !inner.starts_with('|'))
        || inner.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
            ["end", "close", "stop"]
                .iter()
                .any(|e| w.eq_ignore_ascii_case(e))
        })
}

/// The end of the closing marker tokens (and whitespace between them) from `j`; `j` when
/// none follows.
fn skip_closers(t: &str, j: usize) -> usize {
    let mut end = j;
    loop {
        let k = skip_ws(t.as_bytes(), end);
        match marker_starting_at(t, k) {
            Some(n) if is_closer(&t[k..k + n]) => end = k + n,
            _ => return end,
        }
    }
}

/// The end of `t` when only marker tokens and whitespace follow `j` (a stop token such as
/// `<|x:tag|>` after the calls), else `j`.
fn skip_trailing_markers(t: &str, j: usize) -> usize {
    let mut k = skip_ws(t.as_bytes(), j);
    while let Some(n) = marker_starting_at(t, k) {
        k = skip_ws(t.as_bytes(), k + n);
    }
    if k == t.len() {
        k
    } else {
        j
    }
}

/// Whether the line `line` only labels the call after it (`**Tool Call:**`,
/// `Function call:`, `### Tool request`).
fn is_call_label(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "tool",
        "tools",
        "function",
        "functions",
        "call",
        "calls",
        "request",
        "invocation",
    ];
    let bare = line
        .trim()
        .trim_matches(|c| matches!(c, '*' | '#' | '_' | ' ' | ':'));
    (line.contains(':') || line.trim_start().starts_with('#'))
        && !bare.is_empty()
        && bare
            .split([' ', '_'])
            .all(|w| WORDS.iter().any(|x| w.eq_ignore_ascii_case(x)))
}

/// `<anything>` right before a known inner call format (`<invoke name=…>` XML,
/// `<function=…>` blocks, a GLM name and its `<arg_key>` pairs): read that format up to
/// `</anything>`.
pub(crate) fn wrapped_inner(t: &str, i: usize, ctx: &crate::engine::Ctx) -> Option<Hit> {
    let n = marker_starting_at(t, i)?;
    let token = &t[i..i + n];
    if !token.starts_with('<') || token.starts_with("<|") || is_closer(token) {
        return None;
    }
    let close = format!("</{}", &token[1..]);
    let j = skip_ws(t.as_bytes(), i + n);
    let rest = &t[j..];
    let mut hit = if rest.starts_with("<invoke ") {
        crate::xml_fmts::minimax_block(t, i, j, &close, ctx)?
    } else if rest.starts_with("<function=") {
        crate::qwen_xml::qwen_block(t, i, j, &close, ctx)?
    } else if glm_pairs_before(rest, &close) {
        crate::glm::glm_tagged(t, i, j, &close, ctx)?
    } else {
        bare_name_call(t, i, j, token, &close, &ctx.opts.tools)?
    };
    if hit.calls.is_empty() {
        return None;
    }
    hit.start = i;
    hit.fallback = true;
    Some(hit)
}

/// A call wrapper of an unknown vendor (`<iquestcoder_tool_call>`) around nothing but an
/// offered tool's name: a call with no arguments. Only a tag that says it holds a call
/// counts, and only a name the tools offer (a word in such a tag is no call by itself).
fn bare_name_call(
    t: &str,
    i: usize,
    j: usize,
    token: &str,
    close: &str,
    tools: &[ToolSchema],
) -> Option<Hit> {
    // Vendor spellings of known tags (`<tool_call:opensource>`, `<ifm|tool_call>`) are read
    // whole by the second look (`vendor_tags`).
    let says_call = token.contains("tool_call") || token.contains("function_call");
    if !says_call || token.contains([':', '|']) {
        return None;
    }
    let rest = &t[j..];
    let name_len = rest.find('<')?;
    let name = rest[..name_len].trim();
    if !tools.iter().any(|tool| tool.name == name) || !rest[name_len..].starts_with(close) {
        return None;
    }
    let end = rest[name_len..].find('>')? + j + name_len + 1;
    Some(Hit::one_call(
        i,
        end,
        Family::GenericJson,
        name,
        Value::Object(Default::default()),
    ))
}

/// Whether `rest` opens with a GLM name line and holds a key tag before `close`, near the
/// start (the first pair follows the name line): a bounded look, so many unknown tags in a
/// row cost linear work.
fn glm_pairs_before(rest: &str, close: &str) -> bool {
    const NEAR: usize = 1024;
    if !crate::glm::glm_name_ok(rest) {
        return false;
    }
    let mut near = rest.len().min(NEAR);
    while !rest.is_char_boundary(near) {
        near -= 1;
    }
    let head = &rest[..near];
    let region = head.find(close).map_or(head, |p| &head[..p]);
    region.contains("arg_key>")
}

/// A bare JSON call found by the generic rules: take in the unknown wrapper right around
/// it (an opener token before, a closing token after; each only when it touches the call
/// across whitespace), never reaching before `pos`, the start of pending content.
pub(crate) fn widen_to_wrapper(body: &str, pos: usize, mut h: Hit) -> Hit {
    let bare = matches!(
        h.family,
        Some(Family::GenericJson | Family::Llama3Json | Family::XlamJsonList)
    ) || body[h.start..].starts_with("```");
    if !bare || h.calls.is_empty() || h.content.is_some() {
        return h;
    }
    h.fallback = true;
    let b = body.as_bytes();
    let mut before = h.start;
    while before > pos && b[before - 1].is_ascii_whitespace() {
        before -= 1;
    }
    if before > pos {
        if let Some(n) = marker_ending_at(body, before) {
            let token = &body[before - n..before];
            if before - n >= pos && !is_closer(token) {
                h.start = before - n;
            }
        } else if h.start > before && body[before..h.start].contains('\n') {
            // A label line right above the call (`**Tool Call:**`).
            let line_start = body[pos..before].rfind('\n').map_or(pos, |k| pos + k + 1);
            if is_call_label(&body[line_start..before]) {
                h.start = line_start;
            }
        }
    }
    h.end = skip_closers(body, h.end);
    h
}

/// Calls written as a known tool's name and a JSON arguments object, in a turn where no
/// family found any. Returns `None` when there are none (the turn stays as it was).
pub(crate) fn named_calls(parsed: &Parsed, tools: &[ToolSchema]) -> Option<Parsed> {
    if tools.is_empty() || !parsed.calls.is_empty() || parsed.truncated {
        return None;
    }
    let text = parsed.content.as_deref()?;
    if !text.contains(['{', '<', '[', '=']) {
        return None;
    }
    let mut calls = Vec::new();
    let mut content = String::new();
    let mut pos = 0;
    let mut i = 0;
    let b = text.as_bytes();
    while i < b.len() {
        if b[i] == b'`' && text[i..].starts_with("```") {
            // A fenced block is code the user asked for: skip it whole.
            i = text[i + 3..].find("```").map_or(b.len(), |e| i + 3 + e + 3);
            continue;
        }
        match call_at(text, i, pos, tools) {
            Some((start, end, call)) => {
                content.push_str(&text[pos..start]);
                calls.push(call);
                pos = end;
                i = end;
            }
            None => i += text[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    if calls.is_empty() {
        return None;
    }
    content.push_str(&text[pos..]);
    Some(Parsed {
        content: non_empty(content),
        reasoning: parsed.reasoning.clone(),
        calls,
        format: Some(Family::GenericJson),
        truncated: false,
        errors: parsed.errors.clone(),
    })
}

/// A turn with no call that ends in the closing tag of a call wrapper whose opener is
/// nowhere in it (`…some text </x_function_call>`): the tag is noise, not text.
pub(crate) fn drop_orphan_call_closer(parsed: &mut Parsed) {
    let Some(text) = parsed.content.as_deref() else {
        return;
    };
    if !parsed.calls.is_empty() || !text.trim_end().ends_with('>') {
        return;
    }
    let kept = text.trim_end();
    let Some(n) = marker_ending_at(kept, kept.len()) else {
        return;
    };
    let token = &kept[kept.len() - n..];
    let Some(name) = token.strip_prefix("</").and_then(|r| r.strip_suffix('>')) else {
        return;
    };
    let wrapper = ["tool_call", "tool_calls", "function_call", "function_calls"]
        .iter()
        .any(|w| name.ends_with(w));
    if wrapper && !text.contains(&format!("<{name}>")) {
        let cut = kept.len() - n;
        parsed.content = non_empty(text[..cut].to_string());
    }
}

/// A call starting with a tool name at `i`: its region (markers included, never before
/// `pos`) and the call.
fn call_at(
    text: &str,
    i: usize,
    pos: usize,
    tools: &[ToolSchema],
) -> Option<(usize, usize, ParsedCall)> {
    let b = text.as_bytes();
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.') {
        return None;
    }
    let (start, special) = region_start(text, i, pos)?;
    let name_at = if text[i..].starts_with("functions.") {
        i + "functions.".len()
    } else {
        i
    };
    let tool = tools
        .iter()
        .filter(|t| !t.name.is_empty() && text[name_at..].starts_with(t.name.as_str()))
        .max_by_key(|t| t.name.len())?;
    let mut j = name_at + tool.name.len();
    j = skip_inline_ws(b, j);
    if b.get(j) == Some(&b':') {
        j += 1;
    }
    // `NAME({…})`: a call written as a function of one object (Qwen2.5-Coder's
    // `task_complete({"summary": …})`); the closing parenthesis must follow the object, or
    // the object must end the reply (the 1.5B ended a reply with `task_complete({…}`).
    let paren = b.get(j) == Some(&b'(');
    let j = if paren {
        skip_ws(b, j + 1)
    } else {
        skip_markers_before_args(text, j)
    };
    if paren && b.get(j) != Some(&b'{') {
        return None;
    }
    if b.get(j) != Some(&b'{') {
        // After a special token, the arguments may be marker-delimited pairs; on a line of
        // its own, `KEY=VALUE` words.
        let name_end = name_at + tool.name.len();
        let (mut args, end) = if special {
            marker_pairs(text, name_end, &tool.parameters)?
        } else {
            key_value_line(text, name_end, &tool.parameters)?
        };
        if !fits_schema(&args, &tool.parameters) {
            return None;
        }
        crate::schema::coerce_arguments(&mut args, &tool.parameters);
        let end = skip_trailing_markers(text, skip_closers(text, end));
        let call = ParsedCall {
            name: tool.name.clone(),
            arguments: args,
            id: None,
        };
        return Some((start, end, call));
    }
    let end = match crate::scan::container_end(b, j, crate::scan::Quoting::JSON) {
        crate::scan::End::Complete(e) => e,
        _ => return None,
    };
    let mut args = parse_json_lenient(&text[j..end])?;
    if !fits_schema(&args, &tool.parameters) {
        return None;
    }
    crate::schema::coerce_arguments(&mut args, &tool.parameters);
    let end = if paren {
        let close = skip_ws(b, end);
        match b.get(close) {
            Some(b')') => close + 1,
            None => close,
            Some(_) => return None,
        }
    } else {
        end
    };
    let end = skip_trailing_markers(text, skip_closers(text, end));
    Some((
        start,
        end,
        ParsedCall {
            name: tool.name.clone(),
            arguments: args,
            id: None,
        },
    ))
}

/// Skip whitespace and the marker tokens between a name and its arguments
/// (`<|end_name|><|args|><|constrain|>json<|msg|>`): the format word `json` may stand
/// between two of them.
fn skip_markers_before_args(t: &str, mut j: usize) -> usize {
    loop {
        j = skip_ws(t.as_bytes(), j);
        if let Some(n) = marker_starting_at(t, j) {
            j += n;
            if t[j..].starts_with("json") && marker_starting_at(t, j + 4).is_some() {
                j += 4;
            }
            continue;
        }
        return j;
    }
}

fn skip_inline_ws(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
        j += 1;
    }
    j
}

/// Where a call whose name starts at `i` begins: the marker tokens right before the name,
/// or the start of its line; `None` when other text precedes it on its line. Also
/// whether a special token (`<|…|>`, `[…]`) stands right before the name.
fn region_start(text: &str, i: usize, pos: usize) -> Option<(usize, bool)> {
    let b = text.as_bytes();
    let mut k = i;
    let mut markers = 0;
    let mut special = false;
    loop {
        while k > pos && (b[k - 1] == b' ' || b[k - 1] == b'\t') {
            k -= 1;
        }
        if k == pos || b[k - 1] == b'\n' {
            return Some((k, special));
        }
        let n = match marker_ending_at(text, k) {
            Some(n) if k - n >= pos && !is_closer(&text[k - n..k]) => n,
            _ if markers > 0 => return Some((k, special)),
            _ => return None,
        };
        if markers == 0 {
            special = text[k - n..k].starts_with("<|") || text[k - n..k].starts_with('[');
        }
        markers += 1;
        k -= n;
    }
}

/// Arguments written as marker-delimited pairs after the name (`<|arg|>KEY<|value|>VALUE
/// <|arg_end|>`, repeated), ending at a closing marker; each key a property of the
/// schema when it declares properties. No pairs at all before the closer is a call
/// without arguments. Returns the arguments and where they end.
fn marker_pairs(t: &str, j: usize, schema: &Value) -> Option<(Value, usize)> {
    let props = schema.get("properties").and_then(Value::as_object);
    let mut args = serde_json::Map::new();
    let mut k = skip_ws(t.as_bytes(), j);
    loop {
        let n = marker_starting_at(t, k)?;
        if is_closer(&t[k..k + n]) {
            return Some((Value::Object(args), k + n));
        }
        let key_at = k + n;
        let key_len = t[key_at..].find(['<', '[', '\n'])?;
        let key = t[key_at..key_at + key_len].trim();
        if key.is_empty() || props.is_some_and(|p| !p.contains_key(key)) {
            return None;
        }
        let sep = key_at + key_len;
        let n = marker_starting_at(t, sep)?;
        let value_at = sep + n;
        let (value_len, end_len) = next_marker(t, value_at)?;
        if !is_closer(&t[value_at + value_len..value_at + value_len + end_len]) {
            return None;
        }
        args.entry(key.to_string())
            .or_insert_with(|| Value::String(t[value_at..value_at + value_len].to_string()));
        k = skip_ws(t.as_bytes(), value_at + value_len + end_len);
    }
}

/// Arguments written as `KEY=VALUE` words after the name, up to the end of its line
/// (`read_file path=notes.txt`, `f a=1 b="two words"`): at least one pair, separated from
/// the name by a space, every key a property the schema declares (it must declare them),
/// nothing else on the line. Values are text (quotes removed), typed later by the schema.
fn key_value_line(t: &str, j: usize, schema: &Value) -> Option<(Value, usize)> {
    let props = schema.get("properties").and_then(Value::as_object)?;
    let line_end = t[j..].find('\n').map_or(t.len(), |n| j + n);
    let line = &t[j..line_end];
    if !line.starts_with([' ', '\t']) {
        return None;
    }
    let mut args = serde_json::Map::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        if !props.contains_key(key) {
            return None;
        }
        let (value, after) = match after.chars().next() {
            Some(q @ ('"' | '\'')) => after[1..].split_once(q)?,
            _ => after.split_once([' ', '\t']).unwrap_or((after, "")),
        };
        args.insert(key.to_string(), Value::String(value.to_string()));
        rest = after.trim_start();
    }
    (!args.is_empty()).then_some((Value::Object(args), line_end))
}

/// The offset (from `from`) and length of the next marker token at or after `from`.
fn next_marker(t: &str, from: usize) -> Option<(usize, usize)> {
    let b = t.as_bytes();
    (from..b.len())
        .filter(|&k| b[k] == b'<' || b[k] == b'[')
        .find_map(|k| marker_starting_at(t, k).map(|n| (k - from, n)))
}

/// Whether `args` is an object the schema accepts by its keys: every key a declared
/// property (when properties are declared), every required property present.
fn fits_schema(args: &Value, schema: &Value) -> bool {
    let Value::Object(args) = args else {
        return false;
    };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        if !args.keys().all(|k| props.contains_key(k)) {
            return false;
        }
    }
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(|req| {
            req.iter()
                .filter_map(Value::as_str)
                .all(|k| args.contains_key(k))
        })
}

#[cfg(test)]
mod tests;
