//! GLM-4.5/4.7 tool calls: `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`
//! (newlines optional), the same pairs under a vendor prefix (`<longcat_arg_key>`), and HY3's
//! `<tool_sep>` after the name.
//! String values are raw text; other types follow the schema, or the type K2-V3 names
//! before a value (`<arg_type>string</arg_type>`). A JSON object after the name, in place of
//! pairs, is the arguments.

use serde_json::{Map, Value};

use crate::engine::{Ctx, Hit};
use crate::scan::{parse_json_lenient, skip_ws};
use crate::xml_fmts::typed;
use crate::{Family, ParsedCall};

/// A GLM body at `j` inside a tag opened at `i` and closed by `close` (or not at all).
pub(crate) fn glm_tagged(t: &str, i: usize, j: usize, close: &str, ctx: &Ctx) -> Option<Hit> {
    // Cheap name check first, so repeated unclosed tags stay linear.
    if !glm_name_ok(&t[j..]) {
        return None;
    }
    let close_at = call_close(t, j, close);
    let end = close_at.unwrap_or(t.len());
    // The tag opened again before this call closed: the model started over. A new call
    // that repeats this one's text makes it one call (this one is dropped); any other
    // ends this one there, complete.
    let opener = format!("<{}", close.trim_start_matches("</"));
    if let Some(again) = restart_at(t, j, end, &opener) {
        let said = t[j..again].trim_end();
        let restart = skip_ws(t.as_bytes(), again + opener.len());
        if t[restart..].starts_with(said) {
            return Some(Hit::new(i, again, Family::GlmXml, Vec::new()));
        }
        let mut hit = glm_body(t, j, again, false, ctx)?;
        hit.start = i;
        hit.end = again;
        return Some(hit);
    }
    // With neither a pair nor a closer, the call was cut off (its name may be too).
    if close_at.is_none() && !t[j..end].contains("arg_key>") {
        return Some(Hit::truncated(i, t.len(), Family::GlmXml));
    }
    let mut hit = glm_body(t, j, end, close_at.is_none(), ctx)?;
    hit.start = i;
    hit.end = close_at.map_or(t.len(), |c| c + close.len());
    Some(hit)
}

/// Where the call's tag opens again in `t[j..end]`: the first opener not inside an open
/// `<arg_value>` whose own closer follows before `end` (`<arg_value>has <tool_call> in
/// it</arg_value>` is data, as llama.cpp's Ling test has it).
fn restart_at(t: &str, j: usize, end: usize, opener: &str) -> Option<usize> {
    let tags = PairTags::of(&t[j..]);
    let mut from = j;
    loop {
        let at = from + t[from..end].find(opener)?;
        // A value opened since `from` and not closed before the opener holds it when its
        // closer comes later: the search goes on past that closer (each stretch read once).
        let seg = &t[from..at];
        let open = seg
            .rfind(&tags.value_open)
            .is_some_and(|o| !seg[o..].contains(&tags.value_close));
        match open.then(|| t[at..end].find(&tags.value_close)).flatten() {
            Some(c) => from = at + c + tags.value_close.len(),
            None => return Some(at),
        }
    }
}

/// Where the call opened before `j` closes: the first `close` not inside a value. A closer
/// inside an open `<arg_value>` is data when that value's own closer follows before the
/// next key or call (`<arg_value>literal </tool_call> marker</arg_value>`). Each stretch
/// of text is searched once, so the scan stays linear.
fn call_close(t: &str, j: usize, close: &str) -> Option<usize> {
    let tags = PairTags::of(&t[j..]);
    let opener = format!("<{}", close.trim_start_matches("</"));
    let mut p = j;
    loop {
        let c = p + t[p..].find(close)?;
        let seg = &t[p..c];
        let in_value = seg
            .rfind(&tags.value_open)
            .is_some_and(|o| !seg[o..].contains(&tags.value_close));
        if !in_value {
            return Some(c);
        }
        let after = c + close.len();
        let Some(v) = t[after..].find(&tags.value_close) else {
            return Some(c);
        };
        let gap = &t[after..after + v];
        if gap.contains(&tags.key_open) || gap.contains(&opener) {
            return Some(c);
        }
        p = after + v + tags.value_close.len();
    }
}

/// Whether `body` opens with a plausible GLM function name line (bounded look).
pub(crate) fn glm_name_ok(body: &str) -> bool {
    let b = body.as_bytes();
    let Some(name_end) = b
        .iter()
        .take(512)
        .position(|&c| c == b'<' || c == b'\n')
        .or((b.len() <= 512).then_some(b.len()))
    else {
        return false;
    };
    let name = body[..name_end].trim();
    let next = after_tool_sep(&body[name_end..]);
    // A name is an identifier (letters, digits, `_ - . : /`): code or a fence after a lone
    // `<tool_call>` (`"""`, ```` ``` ````) is no call.
    // (Layout written as escapes, `todo_write\\n`, is no part of it.)
    let identifier = |c: char| c.is_alphanumeric() || "_-.:/ ".contains(c);
    let bare = name.trim_end_matches("\\n").trim_end();
    !name.is_empty()
        && bare.chars().all(identifier)
        && bare.chars().any(char::is_alphanumeric)
        // `False:` or `Answer:` on a line after a lone `<tool_call>` is a label, not a name.
        && !bare.ends_with(':')
        // A name with spaces only right before its pairs (`<tool_call> get weather <arg_key>`).
        && (!name.contains(' ') || key_tag_prefix(next).is_some())
        && (next.is_empty()
            || next.starts_with('\n')
            || key_tag_prefix(next).is_some()
            || next.starts_with("</tool_call>")
            || next.starts_with("</longcat_tool_call>"))
}

/// `rest` past the `<tool_sep>` HY3 writes between a tool's name and its pairs.
fn after_tool_sep(rest: &str) -> &str {
    rest.strip_prefix("<tool_sep>").unwrap_or(rest)
}

/// The vendor prefix of a GLM key tag at the start of `s`: `""` for `<arg_key>`,
/// `"longcat_"` for LongCat's `<longcat_arg_key>`.
fn key_tag_prefix(s: &str) -> Option<&str> {
    let tag = s.strip_prefix('<')?;
    let end = tag.bytes().take(40).position(|c| c == b'>')?;
    let prefix = tag[..end].strip_suffix("arg_key")?;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (prefix.is_empty() || (prefix.ends_with('_') && prefix.bytes().all(word))).then_some(prefix)
}

/// GLM's pair tags, with the vendor prefix of the body's first key tag.
struct PairTags {
    key_open: String,
    key_close: String,
    value_open: String,
    value_close: String,
    type_open: String,
    type_close: String,
}

impl PairTags {
    fn of(body: &str) -> PairTags {
        let prefix = body
            .find("arg_key>")
            .and_then(|k| body[..k].rfind('<'))
            .and_then(|lt| key_tag_prefix(&body[lt..]))
            .unwrap_or_default();
        PairTags {
            key_open: format!("<{prefix}arg_key>"),
            key_close: format!("</{prefix}arg_key>"),
            value_open: format!("<{prefix}arg_value>"),
            value_close: format!("</{prefix}arg_value>"),
            type_open: format!("<{prefix}arg_type>"),
            type_close: format!("</{prefix}arg_type>"),
        }
    }
}

/// A GLM body `NAME<arg_key>k</arg_key><arg_value>v</arg_value>…` in `t[j..end]`.
/// `unclosed`: the `<tool_call>` opening it has no `</tool_call>`, so a value still open at
/// the end of the output was cut off (the inner form alone finalises such a value).
pub(crate) fn glm_body(t: &str, j: usize, end: usize, unclosed: bool, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::GlmXml;
    let body = &t[j..end];
    if !glm_name_ok(body) {
        return None;
    }
    let name_end = body
        .bytes()
        .position(|c| c == b'<' || c == b'\n')
        .unwrap_or(body.len());
    // A literal `\n` after the name (the model escaped the newline) is not part of it.
    let name = body[..name_end].trim().trim_end_matches("\\n").trim_end();
    let name_end = body.len() - after_tool_sep(&body[name_end..]).len();
    let tags = PairTags::of(&body[name_end..]);
    // A JSON object after the name line, in place of pairs, is the arguments
    // (`<tool_call>get_weather\n{"city": "Paris"}</tool_call>`).
    let rest = body[name_end..].trim_start();
    if rest.starts_with('{') && !rest.contains(&tags.key_open) {
        if let Some(arguments @ Value::Object(_)) = parse_json_lenient(rest) {
            let call = ParsedCall {
                name: name.to_string(),
                arguments,
                id: None,
            };
            return Some(Hit::new(j, end, fam, vec![call]));
        }
    }
    let mut args = Map::new();
    let mut p = name_end;
    // Text between pairs is tolerated (the unclosed-value case ends a value at `<arg_key>`).
    while let Some(ks) = body[p..]
        .find(&tags.key_open)
        .map(|q| p + q + tags.key_open.len())
    {
        let Some(ke) = body[ks..].find(&tags.key_close).map(|q| ks + q) else {
            return Some(bad(j, end, "unclosed <arg_key>"));
        };
        let key = &body[ks..ke];
        // A key is literal text (`param<1>`, `a&b`), but holds no tag of the format itself.
        if key.contains('\n') || key.contains("</") || key.contains(&tags.value_open) {
            return Some(bad(j, end, "malformed <arg_key>"));
        }
        let mut after = skip_ws(body.as_bytes(), ke + tags.key_close.len());
        while let Some(r) = body[after..].strip_prefix("\\n") {
            after = skip_ws(body.as_bytes(), body.len() - r.len());
        }
        // K2-V3 may name the value's type between key and value (`<arg_type>string</arg_type>`).
        let mut declared = None;
        if let Some(r) = body[after..].strip_prefix(tags.type_open.as_str()) {
            let ts = body.len() - r.len();
            if let Some(te) = body[ts..].find(&tags.type_close).map(|q| ts + q) {
                declared = Some(body[ts..te].trim());
                after = skip_ws(body.as_bytes(), te + tags.type_close.len());
            }
        }
        let Some(vs) = body[after..]
            .strip_prefix(tags.value_open.as_str())
            .map(|r| body.len() - r.len())
        else {
            // The value's opener lost (`</arg_key>\nNew York</arg_value>`): the text up to
            // its closer, when no other key comes first.
            let close = body[after..].find(&tags.value_close).map(|q| after + q);
            let next_key = body[after..].find(&tags.key_open).map(|q| after + q);
            match (close, next_key) {
                (Some(c), n) if n.is_none_or(|n| c < n) => {
                    let raw = body[after..c].trim_end();
                    args.insert(key.to_string(), typed(ctx, fam, name, key, raw));
                    p = c + tags.value_close.len();
                    continue;
                }
                _ => return Some(bad(j, end, "missing <arg_value>")),
            }
        };
        let close = body[vs..].find(&tags.value_close).map(|q| vs + q);
        let next_key = body[vs..].find(&tags.key_open).map(|q| vs + q);
        let (ve, next) = match (close, next_key) {
            (Some(c), Some(n)) if n < c => (n, n),
            (Some(c), _) => (c, c + tags.value_close.len()),
            (None, Some(n)) => (n, n),
            // The output ends inside the value: it was cut off, not finished.
            (None, None) if unclosed => return Some(Hit::truncated(j, end, fam)),
            (None, None) => (body.len(), body.len()),
        };
        let raw = &body[vs..ve];
        let raw = if close.is_some_and(|c| c == ve) {
            raw
        } else {
            raw.trim_end()
        };
        let value = match declared {
            Some(ty) => {
                crate::schema::type_raw(raw, Some(&serde_json::json!({ "type": ty })), true)
            }
            None => typed(ctx, fam, name, key, raw),
        };
        args.insert(key.to_string(), value);
        p = next;
    }
    Some(Hit::one_call(j, end, fam, name, Value::Object(args)))
}

fn bad(j: usize, end: usize, why: &str) -> Hit {
    let mut h = Hit::new(j, end, Family::GlmXml, Vec::new());
    h.errors.push(format!("malformed GLM tool call: {why}"));
    h
}
