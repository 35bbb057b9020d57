//! Qwen3-Coder / Seed-OSS calls, `<function=f><parameter=k>v</parameter></function>`: values
//! are raw text typed by the schema; a value may quote the format itself, and a closer the
//! model left out is inferred from what follows.

use serde_json::{Map, Value};

use crate::engine::{Ctx, Hit};
use crate::scan::skip_layout;
use crate::xml_fmts::typed;
use crate::{Family, ParsedCall};

/// One or more `<function=NAME>…</function>` blocks starting at `j`, wrapped in `open..close`
/// (the wrapper may be missing on either side).
pub(crate) fn qwen_block(t: &str, start: usize, j: usize, close: &str, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::Qwen3CoderXml;
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut k = j;
    loop {
        k = skip_layout(t.as_bytes(), k);
        let Some(r) = t[k..].strip_prefix("<function=") else {
            break;
        };
        let s = t.len() - r.len();
        let Some(gt) = t[s..].find('>') else {
            return Some(Hit::truncated(start, t.len(), fam));
        };
        let name = &t[s..s + gt];
        // `<function=NAME/>`: a call with no arguments.
        if let Some(bare) = name
            .strip_suffix('/')
            .filter(|n| crate::scan::is_tool_name(n))
        {
            calls.push(ParsedCall {
                name: bare.to_string(),
                arguments: Value::Object(Map::new()),
                id: None,
            });
            k = s + gt + 1;
            continue;
        }
        // `<function=NAME` whose `>` was lost, or a template left unrendered
        // (`<function={{ tc.name }}>`): no name, so no call; the block is skipped.
        if name.trim().is_empty() || name.contains(|c: char| "\n\r<>{}".contains(c)) {
            let shown = name.lines().next().unwrap_or_default();
            errors.push(format!("a function with no valid name skipped: {shown:?}"));
            match t[s..].find("</function>") {
                Some(e) => {
                    k = s + e + "</function>".len();
                    continue;
                }
                None => break,
            }
        }
        let mut args = Map::new();
        let mut p = s + gt + 1;
        loop {
            p = skip_layout(t.as_bytes(), p);
            if let Some(r) = t[p..].strip_prefix("</function>") {
                p = t.len() - r.len();
                break;
            }
            let Some((tags, r)) = PARAM_TAGS
                .iter()
                .find_map(|tags| t[p..].strip_prefix(tags.open).map(|r| (tags, r)))
            else {
                if p >= t.len() {
                    return Some(Hit::truncated(start, t.len(), fam));
                }
                // A parameter written as its own tag, `<path>…</path>`, when the tool's
                // schema names it (a spelling live models slip into).
                if let Some((key, raw, after)) = schema_tag(t, p, name, ctx) {
                    args.insert(key.to_string(), typed(ctx, fam, name, key, raw));
                    p = after;
                    continue;
                }
                // Garbage inside the function: stop here.
                break;
            };
            let ks = t.len() - r.len();
            let Some(kgt) = t[ks..].find('>') else {
                return Some(Hit::truncated(start, t.len(), fam));
            };
            // A header that lost its `>` runs into the value's closer:
            // `<parameter=command=str_replace</parameter>` is `command` = `str_replace`.
            if let Some((key, value)) = t[ks..ks + kgt]
                .strip_suffix(tags.close.trim_end_matches('>'))
                .and_then(|h| h.split_once('='))
            {
                args.insert(key.to_string(), typed(ctx, fam, name, key, value));
                p = ks + kgt + 1;
                continue;
            }
            let key = &t[ks..ks + kgt];
            let vs = ks + kgt + 1;
            // A CDATA section is the value as written, tags and all, up to its `]]>`.
            if let Some((cdata, after)) = cdata_value(&t[vs..], tags.close) {
                args.insert(key.to_string(), typed(ctx, fam, name, key, cdata));
                p = vs + after;
                continue;
            }
            let opens_next = |next: &str| -> bool {
                !args.contains_key(next)
                    && next != key
                    && crate::schema::property_schema(&ctx.opts.tools, name, next).is_some()
                        == ctx.opts.tools.iter().any(|tool| tool.name == name)
            };
            let Some((len, closed)) = qwen_value_len(&t[vs..], tags, &opens_next) else {
                return Some(Hit::truncated(start, t.len(), fam));
            };
            let ve = vs + len;
            let raw = if closed {
                qwen_value(&t[vs..ve])
            } else {
                crate::scan::without_layout_newlines(&t[vs..ve])
            };
            args.insert(key.to_string(), typed(ctx, fam, name, key, raw));
            p = if closed { ve + tags.close.len() } else { ve };
        }
        calls.push(ParsedCall {
            name: name.to_string(),
            arguments: Value::Object(args),
            id: None,
        });
        k = p;
    }
    if calls.is_empty() && errors.is_empty() {
        return None;
    }
    let end = skip_close_tag(t, k, close);
    let mut hit = Hit::new(start, end, fam, calls);
    hit.errors = errors;
    Some(hit)
}

/// How a parameter is tagged: `<parameter=k>…</parameter>`, or the short `<param=k>…</param>`
/// some runtimes' templates write (LocalAI's constructed tools).
struct ParamTags {
    open: &'static str,
    close: &'static str,
}

const PARAM_TAGS: &[ParamTags] = &[
    ParamTags {
        open: "<parameter=",
        close: "</parameter>",
    },
    ParamTags {
        open: "<param=",
        close: "</param>",
    },
];

/// The length of the `<parameter=k>` value (tagged as `tags` says) at the start of `rest`,
/// and whether its own `</parameter>` closes it; `None`: the output ends inside the value.
/// A value may quote the format itself (a file that holds tool calls): a `<function=…>`
/// inside it nests until its `</function>`, and at the value's own level a `</parameter>`
/// closes it only when the
/// next tag opens a parameter the call may still take (`opens_next`: one its tool's schema
/// names, not yet given), ends the function, or nothing follows. The model may also leave
/// the closer out: the value then ends at such a parameter or at its function's
/// `</function>`. Failing all that, the first `</parameter>` closes it.
fn qwen_value_len(
    rest: &str,
    tags: &ParamTags,
    opens_next: &dyn Fn(&str) -> bool,
) -> Option<(usize, bool)> {
    let close = tags.close;
    const FN_CLOSE: &str = "</function>";
    let param_opening = |at: &str| -> bool {
        at.strip_prefix(tags.open)
            .and_then(|r| r.find('>').map(|gt| &r[..gt]))
            .is_some_and(opens_next)
    };
    let mut depth = 0usize;
    let mut first_close = None;
    // Where the next closer and the next function opener stand, searched once each and
    // reused while ahead, so a value full of `</function>` text stays linear.
    let (mut close_memo, mut open_memo) = (None, None);
    let mut i = 0;
    while let Some(lt) = rest[i..].find('<').map(|p| i + p) {
        let at = &rest[lt..];
        if at.starts_with("<function=") {
            depth += 1;
        } else if at.starts_with(FN_CLOSE) {
            if depth == 0 {
                // The function ends with the value's closer left out, unless a closer of
                // this value's level follows before any other function opens.
                let closer = next_at(rest, close, lt, &mut close_memo);
                let opener = next_at(rest, "<function=", lt, &mut open_memo);
                let closer_follows = closer.is_some_and(|c| opener.is_none_or(|o| c < o));
                if !closer_follows {
                    return Some((lt, false));
                }
            } else {
                depth -= 1;
            }
        } else if depth == 0 && at.starts_with(close) {
            first_close.get_or_insert(lt);
            let next = skip_layout(rest.as_bytes(), lt + close.len());
            let after = &rest[next..];
            if after.is_empty()
                || after.starts_with(FN_CLOSE)
                || after.starts_with("</tool_call>")
                || param_opening(after)
            {
                return Some((lt, true));
            }
        } else if depth == 0 && param_opening(at) {
            return Some((lt, false));
        }
        i = lt + 1;
    }
    first_close.map(|c| (c, true))
}

/// The first `pat` in `rest` at or after `from`, remembered in `memo` as (searched from,
/// found at): a later search from a point not past the hit reuses it.
fn next_at(
    rest: &str,
    pat: &str,
    from: usize,
    memo: &mut Option<(usize, Option<usize>)>,
) -> Option<usize> {
    if let Some((searched, hit)) = *memo {
        if searched <= from && hit.is_none_or(|h| h >= from) {
            return hit;
        }
    }
    let hit = rest[from..].find(pat).map(|p| from + p);
    *memo = Some((from, hit));
    hit
}

/// `<KEY>value</KEY>` at `p`, KEY a property the schema of tool `name` names: the key, the
/// value (its layout line breaks dropped) and the offset after the closer.
fn schema_tag<'a>(
    t: &'a str,
    p: usize,
    name: &str,
    ctx: &Ctx,
) -> Option<(&'a str, &'a str, usize)> {
    let rest = t[p..].strip_prefix('<')?;
    let gt = rest.bytes().take(128).position(|c| c == b'>')?;
    let key = &rest[..gt];
    crate::schema::property_schema(&ctx.opts.tools, name, key)?;
    let vs = p + 1 + gt + 1;
    let close = format!("</{key}>");
    // Memoised: functions that each open such a tag and never close it stay linear.
    let end = ctx.memo.borrow_mut().next_closer(t, &close, vs)?;
    let raw = crate::scan::without_layout_newlines(&t[vs..end]);
    Some((key, raw, end + close.len()))
}

/// A value that is one CDATA section followed by its closer `close`: the section's text and
/// the offset after the closer.
fn cdata_value<'a>(rest: &'a str, close: &str) -> Option<(&'a str, usize)> {
    let body = rest.trim_start().strip_prefix("<![CDATA[")?;
    let end = body.find("]]>")?;
    let after = &body[end + 3..];
    let closed = after.trim_start().strip_prefix(close)?;
    Some((&body[..end], rest.len() - closed.len()))
}

/// The text of a `<parameter=k>` value: one delimiter newline on each side (only when the
/// value opens with one). When the closing tag sits indented on a line of its own, the
/// indentation is layout (`\n    Dallas\n    </parameter>`) and is dropped around the value;
/// a value of nothing but that indentation is empty.
fn qwen_value(raw: &str) -> &str {
    let Some(r) = raw.strip_prefix('\n') else {
        return raw;
    };
    // Nothing but the closing tag's indentation: an empty value.
    if r.bytes().all(|c| c == b' ' || c == b'\t') {
        return "";
    }
    if let Some(v) = r.strip_suffix('\n') {
        return v;
    }
    match r.rfind('\n') {
        Some(nl) if r[nl + 1..].bytes().all(|c| c == b' ' || c == b'\t') => {
            r[..nl].trim_start_matches([' ', '\t'])
        }
        _ => r,
    }
}

pub(crate) fn skip_close_tag(t: &str, k: usize, close: &str) -> usize {
    let s = skip_layout(t.as_bytes(), k);
    if t[s..].starts_with(close) {
        s + close.len()
    } else {
        k
    }
}
