//! JSON-bodied formats: Hermes, Granite, Jamba/MiniMax M1, Nemotron, InternLM2,
//! Command R7B, Apertus, GigaChat, LFM2 JSON, Llama 3 (bare and `<|python_tag|>`), xLAM
//! lists, Mistral, Phi-4-mini, Functionary v3.1, fenced and bare JSON.

use serde_json::Value;

use crate::calls::{calls_from_owned, calls_from_value, looks_like_named_object};
use crate::engine::{Brace, Ctx, Hit};
use crate::json_at::{json_at, JsonAt};
use crate::json_list::{list_calls, list_hit};
use crate::scan::{parse_json_lenient, skip_ws};
use crate::{pythonic, Family, ParsedCall};

/// Skip whitespace and an optional closing tag; returns the new offset.
pub(crate) fn skip_close(t: &str, j: usize, close: &str) -> usize {
    let k = skip_ws(t.as_bytes(), j);
    if !close.is_empty() && t[k..].starts_with(close) {
        k + close.len()
    } else {
        j
    }
}

/// Parse calls from the JSON at `j`, closing with `close`; shared by the wrapped formats.
fn wrapped_json(
    t: &str,
    start: usize,
    j: usize,
    close: &str,
    family: Family,
    ctx: &Ctx,
) -> Option<Hit> {
    // A list that does not parse whole keeps the elements that are calls.
    let good_list = || list_hit(ctx, t, start, j, close, family).filter(|h| !h.calls.is_empty());
    match json_at(ctx, t, j) {
        JsonAt::Value(v, e) => {
            // Inside a call tag, an object that is only a name (`{"name": "now"}`) is a call
            // with no arguments; bare JSON like that stays an answer.
            let named = crate::calls::name_only_call(&v);
            let calls = calls_from_owned(v, ctx.rules(family)).or(named.map(|c| vec![c]));
            match calls {
                Some(mut calls) => {
                    let e = crate::json_list::joined_calls(ctx, t, e, family, &mut calls);
                    Some(Hit::new(start, skip_close(t, e, close), family, calls))
                }
                None => good_list().or_else(|| {
                    let mut h = Hit::new(start, skip_close(t, e, close), family, Vec::new());
                    h.errors
                        .push(format!("not a valid tool call: {}", &t[j..e].trim()));
                    Some(h)
                }),
            }
        }
        JsonAt::Truncated => Some(good_list().unwrap_or_else(|| {
            match closed_after_bad_json(t, j, close) {
                // A string that never closes, in a block whose closer came: malformed.
                Some(end) => {
                    let mut h = Hit::new(start, end, family, Vec::new());
                    h.errors.push("tool call is not valid JSON".to_string());
                    h
                }
                None => Hit::truncated(start, t.len(), family),
            }
        })),
        JsonAt::Bad(e) => good_list().or_else(|| {
            let end = match e {
                Some(e) => skip_close(t, e, close),
                None => t[j..].find(close).map_or(t.len(), |p| j + p + close.len()),
            };
            let mut h = Hit::new(start, end, family, Vec::new());
            h.errors.push("tool call is not valid JSON".to_string());
            Some(h)
        }),
    }
}

/// Where a block whose JSON never balances (an unescaped quote leaves a string open) still
/// ends: after its closer, when the closer stands on its own line or right after a `}` or
/// `]` (inside a string cut off at the end of the output, the tag would be mid-line text).
fn closed_after_bad_json(t: &str, j: usize, close: &str) -> Option<usize> {
    if close.is_empty() {
        return None;
    }
    let (p, _) = t[j..].match_indices(close).find(|&(p, _)| {
        let before = t[j..j + p].trim_end_matches([' ', '\t']);
        before.ends_with(['\n', '}', ']'])
    })?;
    Some(j + p + close.len())
}

/// `<tool_call>` followed by JSON (Hermes; a list means xLAM/Granite).
pub(crate) fn hermes_body(t: &str, start: usize, j: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = if t[j..].starts_with('[') {
        Family::XlamJsonList
    } else {
        Family::Hermes
    };
    wrapped_json(t, start, j, "</tool_call>", fam, ctx)
}

/// Tag-introduced JSON formats.
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    let simple: &[(&str, &str, Family)] = &[
        // Granite 3 writes no closer; Phi-4-mini's newer template closes with `<|/tool_call|>`.
        ("<|tool_call|>", "<|/tool_call|>", Family::Granite),
        ("<TOOLCALL>", "</TOOLCALL>", Family::NemotronToolcall),
        (
            "<|action_start|><|plugin|>",
            "<|action_end|>",
            Family::Internlm2,
        ),
        ("<|START_ACTION|>", "<|END_ACTION|>", Family::CommandR7b),
        ("<tools>", "</tools>", Family::Hermes),
        ("<response>", "</response>", Family::Hermes),
        ("<xml>", "</xml>", Family::Hermes),
        ("<function_call>", "</function_call>", Family::Hermes),
        // LongCat: Hermes JSON under its own tag.
        (
            "<longcat_tool_call>",
            "</longcat_tool_call>",
            Family::Hermes,
        ),
        // GigaChat 3.1's header; 3.0 writes `function call<|role_sep|>` (below).
        ("<|function_call|>", "", Family::Gigachat),
    ];
    for (open, close, fam) in simple {
        if rest.starts_with(open) {
            let j = i + open.len();
            let wrapper = matches!(*open, "<tools>" | "<response>" | "<xml>");
            if wrapper && !t[skip_ws(t.as_bytes(), j)..].starts_with('{') {
                return None;
            }
            return wrapped_json(t, i, j, close, *fam, ctx);
        }
    }
    if rest.starts_with("<tool_calls>") {
        return tool_calls_block(t, i, ctx);
    }
    if rest.starts_with("<|tools_prefix|>") {
        return apertus(t, i, ctx);
    }
    if rest.starts_with("<|message_sep|>") {
        let j = i + "<|message_sep|>".len();
        let k = skip_ws(t.as_bytes(), j);
        let r = t[k..].strip_prefix("function call<|role_sep|>")?;
        let j2 = t.len() - r.len();
        return wrapped_json(t, i, j2, "", Family::Gigachat, ctx);
    }
    if rest.starts_with("<|tool_call_start|>") {
        let j = i + "<|tool_call_start|>".len();
        let k = skip_ws(t.as_bytes(), j);
        if t[k..].starts_with('[') && t[skip_ws(t.as_bytes(), k + 1)..].starts_with('{') {
            return wrapped_json(t, i, j, "<|tool_call_end|>", Family::Lfm2Json, ctx);
        }
        return pythonic::list_block(t, i, k, "<|tool_call_end|>", Family::Lfm2Pythonic).or_else(
            || pythonic::fenced_block(t, i, k, "<|tool_call_end|>", Family::Lfm2Pythonic),
        );
    }
    if rest.starts_with("<|python_start|>") {
        let j = skip_ws(t.as_bytes(), i + "<|python_start|>".len());
        return pythonic::list_block(t, i, j, "<|python_end|>", Family::Llama4Pythonic);
    }
    if rest.starts_with("<|python_tag|>") {
        let j = skip_ws(t.as_bytes(), i + "<|python_tag|>".len());
        if t[j..].starts_with('{') {
            return semicolon_json(t, i, j, Family::Llama3Json, ctx);
        }
        return pythonic::dotted_call(t, i, j).or_else(|| pythonic::interpreter_code(t, i, j, ctx));
    }
    if rest.starts_with("<function=") {
        // Functionary v3.1: `<function=NAME>{json}</function>`.
        let j = i + "<function=".len();
        let gt = j + crate::xml_fmts::tag_end(&t[j..])?;
        let name = &t[j..gt];
        if name.is_empty() || name.contains('<') || name.contains('\n') {
            return None;
        }
        let k = skip_ws(t.as_bytes(), gt + 1);
        if !t[k..].starts_with('{') {
            return None;
        }
        return named_json(ctx, t, i, k, name, "</function>", Family::Functionary);
    }
    if let Some(r) = rest.strip_prefix("<function name=\"") {
        let q = r.bytes().take(512).position(|c| c == b'"')?;
        let name = &r[..q];
        let after = i + "<function name=\"".len() + q + 1;
        let gt = after + crate::xml_fmts::tag_end(&t[after..])?;
        let k = skip_ws(t.as_bytes(), gt + 1);
        if !t[k..].starts_with('{') {
            return None;
        }
        return named_json(ctx, t, i, k, name, "</function>", Family::Hermes);
    }
    crate::json_tokens::try_lt(t, i, ctx)
}

/// `NAME` known, arguments JSON at `k`.
pub(crate) fn named_json(
    ctx: &Ctx,
    t: &str,
    start: usize,
    k: usize,
    name: &str,
    close: &str,
    fam: Family,
) -> Option<Hit> {
    match json_at(ctx, t, k) {
        JsonAt::Value(v @ Value::Object(_), e) => {
            Some(Hit::one_call(start, skip_close(t, e, close), fam, name, v))
        }
        JsonAt::Truncated => Some(Hit::truncated(start, t.len(), fam)),
        _ => None,
    }
}

/// `<tool_calls>`: a JSON list (Jamba, Apriel) or JSON objects one per line (MiniMax M1).
/// `<tool_calls>` around `<tool_call>` blocks (K2-V3's `<ifm|tool_calls>`, read without its
/// namespace): the calls of each block, and the wrapper's closer consumed.
fn tagged_calls_block(t: &str, i: usize, j: usize, ctx: &Ctx) -> Option<Hit> {
    let mut whole = Hit {
        start: i,
        end: j,
        ..Hit::default()
    };
    let mut k = j;
    while t[k..].starts_with("<tool_call>") {
        let Some(mut hit) = crate::engine::tool_call_tag(t, k, ctx) else {
            break;
        };
        whole.family = whole.family.or(hit.family);
        whole.calls.append(&mut hit.calls);
        whole.errors.append(&mut hit.errors);
        whole.truncated |= hit.truncated;
        whole.end = hit.end;
        if hit.truncated || hit.end <= k {
            return Some(whole);
        }
        k = skip_ws(t.as_bytes(), hit.end);
    }
    if whole.calls.is_empty() && whole.errors.is_empty() && !whole.truncated {
        return None;
    }
    whole.end = match t[k..].strip_prefix("</tool_calls>") {
        Some(r) => t.len() - r.len(),
        None => whole.end,
    };
    Some(whole)
}

fn tool_calls_block(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let j = skip_ws(t.as_bytes(), i + "<tool_calls>".len());
    if t[j..].starts_with("<invoke") {
        // SGLang's minimax and dsv32 dialects: invoke XML without a namespace.
        return crate::xml_fmts::minimax_block(t, i, j, "</tool_calls>", ctx);
    }
    if t[j..].starts_with("<tool_call>") {
        return tagged_calls_block(t, i, j, ctx);
    }
    if t[j..].starts_with('[') {
        let fam = ctx
            .hint()
            .filter(|f| *f == Family::Apriel)
            .unwrap_or(Family::Jamba);
        return wrapped_json(t, i, j, "</tool_calls>", fam, ctx);
    }
    let fam = Family::MinimaxM1;
    let close_at = t[j..].find("</tool_calls>").map(|p| j + p);
    let limit = close_at.unwrap_or(t.len());
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut k = j;
    while k < limit {
        k = skip_ws(t.as_bytes(), k);
        if k >= limit {
            break;
        }
        match json_at(ctx, &t[..limit], k) {
            JsonAt::Value(v, e) => {
                match calls_from_owned(v, ctx.rules(fam)) {
                    Some(mut c) => calls.append(&mut c),
                    None => errors.push(format!("skipped invalid call: {}", &t[k..e])),
                }
                k = e;
            }
            JsonAt::Truncated if close_at.is_none() => {
                return Some(Hit::truncated(i, t.len(), fam));
            }
            _ => {
                // Skip the bad line.
                k = t[k..limit].find('\n').map_or(limit, |p| k + p + 1);
                errors.push("skipped a line that is not valid JSON".to_string());
            }
        }
    }
    let end = close_at.map_or(t.len(), |c| c + "</tool_calls>".len());
    let mut h = Hit::new(i, end, fam, calls);
    h.errors = errors;
    Some(h)
}

/// Apertus: `<|tools_prefix|>[{"name": {args}}]<|tools_suffix|>`.
fn apertus(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let j = i + "<|tools_prefix|>".len();
    let fam = Family::Apertus;
    match json_at(ctx, t, j) {
        JsonAt::Value(Value::Array(items), e) => {
            let mut calls = Vec::new();
            for it in items {
                let Value::Object(m) = it else { return None };
                for (k, v) in m {
                    calls.push(ParsedCall {
                        name: k,
                        arguments: v,
                        id: None,
                    });
                }
            }
            Some(Hit::new(
                i,
                skip_close(t, e, "<|tools_suffix|>"),
                fam,
                calls,
            ))
        }
        JsonAt::Truncated => Some(Hit::truncated(i, t.len(), fam)),
        _ => None,
    }
}

/// JSON calls separated by `;` (Llama 3).
fn semicolon_json(t: &str, start: usize, j: usize, fam: Family, ctx: &Ctx) -> Option<Hit> {
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut k = j;
    loop {
        match json_at(ctx, t, k) {
            JsonAt::Value(v, e) => {
                match calls_from_owned(v, ctx.rules(fam)) {
                    Some(c) => calls.extend(c),
                    None if k == j => return None,
                    None => errors.push("a tool call in the list is not valid".to_string()),
                }
                k = e;
            }
            JsonAt::Truncated => return Some(Hit::cut_after(start, t.len(), fam, calls)),
            // One malformed call among good ones is skipped (its brackets balance).
            JsonAt::Bad(Some(e)) if k > j => {
                errors.push("a tool call in the list is not valid JSON".to_string());
                k = e;
            }
            JsonAt::Bad(_) if k > j => break,
            JsonAt::Bad(_) => return None,
        }
        let s = skip_ws(t.as_bytes(), k);
        if t[s..].starts_with(';') && t[skip_ws(t.as_bytes(), s + 1)..].starts_with('{') {
            k = s + 1;
        } else {
            break;
        }
    }
    let mut h = Hit::new(start, k, fam, calls);
    h.errors = errors;
    Some(h)
}

/// LM Studio's call opener (its closer is `[END_TOOL_REQUEST]`).
const TOOL_REQUEST: &str = "[TOOL_REQUEST]";

/// `[`: Mistral `[TOOL_CALLS]`, LM Studio `[TOOL_REQUEST]`, Phi-4 `functools[`, bare JSON lists, pythonic lists.
pub(crate) fn try_bracket(t: &str, i: usize, ctx: &Ctx, bare_ok: bool) -> Option<Hit> {
    let rest = &t[i..];
    if rest.starts_with("[TOOL_CALLS]") {
        return crate::json_tokens::mistral(t, i, ctx);
    }
    if let Some(after) = rest.strip_prefix(TOOL_REQUEST) {
        // LM Studio's default format for models without a tool template:
        // `[TOOL_REQUEST]{"name": ..., "arguments": {...}}[END_TOOL_REQUEST]`.
        let j = skip_ws(t.as_bytes(), t.len() - after.len());
        let fam = ctx.hint().unwrap_or(Family::GenericJson);
        return wrapped_json(t, i, j, "[END_TOOL_REQUEST]", fam, ctx);
    }
    if t[..i].ends_with("functools") {
        let start = i - "functools".len();
        let fam = if t[..start].ends_with(' ') {
            Family::Firefunction
        } else {
            Family::Phi4Mini
        };
        let fam = ctx
            .hint()
            .filter(|h| *h == Family::Firefunction)
            .unwrap_or(fam);
        return match json_at(ctx, t, i) {
            JsonAt::Value(Value::Array(items), e) if items.is_empty() => {
                Some(Hit::new(start, e, fam, Vec::new()))
            }
            _ => wrapped_json(t, start, i, "", fam, ctx),
        };
    }
    if !bare_ok {
        return None;
    }
    let k = skip_ws(t.as_bytes(), i + 1);
    if t[k..].starts_with('{') {
        return bare_list(t, i, ctx);
    }
    pythonic::bare_list(t, i, ctx)
}

fn bare_list(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::XlamJsonList;
    match json_at(ctx, t, i) {
        JsonAt::Value(v, e) => {
            let calls = calls_from_owned(v, ctx.rules(fam))?;
            if calls.iter().all(|c| ctx.known(&c.name)) {
                Some(Hit::new(i, e, fam, calls))
            } else {
                let mut h = Hit::new(i, e, fam, Vec::new());
                h.errors.push("unknown tool name in call list".to_string());
                Some(h)
            }
        }
        JsonAt::Truncated if looks_like_call_prefix(&t[i..]) => match list_calls(ctx, t, i, fam) {
            Some(list) => Some(list.into_hit(i, t.len(), fam)),
            None => Some(Hit::truncated(i, t.len(), fam)),
        },
        _ => None,
    }
}

/// Whether truncated JSON text starts like a call object.
/// How far after an open bare object a paragraph of prose is looked for (a bounded look
/// keeps many open objects linear).
const PROSE_LOOK: usize = 4096;

/// Whether a blank line followed by a line of prose (starting with a letter) comes in the
/// first [`PROSE_LOOK`] bytes of `s`.
fn prose_paragraph_after(s: &str) -> bool {
    let mut look = s.len().min(PROSE_LOOK);
    while !s.is_char_boundary(look) {
        look -= 1;
    }
    let s = &s[..look];
    memchr::memmem::find_iter(s.as_bytes(), b"\n\n").any(|p| {
        s[p..]
            .trim_start()
            .chars()
            .next()
            .is_some_and(char::is_alphabetic)
    })
}

fn looks_like_call_prefix(s: &str) -> bool {
    let s = s.trim_start_matches(['[', ' ', '\n', '\t', '\r']);
    let Some(s) = s.strip_prefix('{') else {
        return false;
    };
    let s = s.trim_start();
    [
        "\"name\"",
        "\"tool_call\"",
        "\"tool_calls\"",
        "\"function\"",
        "\"arguments\"",
        "\"tool_name\"",
    ]
    .iter()
    .any(|k| s.starts_with(k))
}

/// The text of an object that answers instead of calling: `{"response": "..."}`, or
/// text-generation-inference's grammar answer `{"function": {"_name": "no_tool",
/// "content": "..."}}`.
fn plain_answer_object(v: &Value) -> Option<&str> {
    let Value::Object(m) = v else {
        return None;
    };
    if m.len() != 1 {
        return None;
    }
    if let Some(Value::String(r)) = m.get("response") {
        return Some(r);
    }
    let inner = m.get("function")?.as_object()?;
    if inner.get("_name")?.as_str()? != "no_tool" {
        return None;
    }
    inner.get("content")?.as_str()
}

/// A bare `{`: a call object (Hermes/generic/Llama 3 JSON) in running text.
pub(crate) fn try_brace(t: &str, i: usize, ctx: &Ctx) -> Brace {
    if let Some(h) = crate::gptme::call_at(t, i, ctx) {
        return Brace::Hit(h);
    }
    match json_at(ctx, t, i) {
        JsonAt::Value(v, e) => {
            if let Some(text) = plain_answer_object(&v) {
                let mut h = Hit::new(i, e, Family::GenericJson, Vec::new());
                h.content = Some(text.to_owned());
                return Brace::Hit(h);
            }
            let fam = match &v {
                Value::Object(m) if m.contains_key("parameters") => Family::Llama3Json,
                _ => ctx.hint().unwrap_or(Family::GenericJson),
            };
            let fam = if matches!(
                fam,
                Family::Llama3Json | Family::GenericJson | Family::Hermes
            ) {
                fam
            } else {
                Family::GenericJson
            };
            match calls_from_value(&v, ctx.rules(fam)) {
                Some(calls) if calls.iter().all(|c| ctx.known(&c.name)) => {
                    if fam == Family::Llama3Json {
                        if let Some(h) = semicolon_json(t, i, i, fam, ctx) {
                            return Brace::Hit(h);
                        }
                    }
                    Brace::Hit(Hit::new(i, e, fam, calls))
                }
                _ if looks_like_named_object(&v) => Brace::StopBare,
                // A valid object that is not a call: skip it whole (keeps scanning linear).
                _ => Brace::Skip(e),
            }
        }
        // A call object that never closes, with another call object after it, was
        // malformed rather than cut off: go on to the next one (the search stops at the
        // next `{"name"`, where the scan goes next anyway, so the work stays linear).
        JsonAt::Truncated
            if looks_like_call_prefix(&t[i..]) && t[i + 1..].contains("{\"name\"") =>
        {
            Brace::NotCall
        }
        // A bare call object that never closes is a call cut off at the end of the output,
        // unless prose follows it after a blank line (no JSON holds one inside a call): then
        // it was an example left open, and the text stays.
        JsonAt::Truncated if looks_like_call_prefix(&t[i..]) && !prose_paragraph_after(&t[i..]) => {
            Brace::Hit(Hit::truncated(
                i,
                t.len(),
                ctx.hint().unwrap_or(Family::GenericJson),
            ))
        }
        _ => Brace::NotCall,
    }
}

/// A markdown fence around call JSON (or around pythonic calls, see
/// [`pythonic::tool_code_fence`]).
pub(crate) fn try_fence(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    if let Some(hit) = pythonic::tool_code_fence(t, i, &ctx.opts.tools) {
        return Some(hit);
    }
    let after = rest
        .strip_prefix("```json")
        .or_else(|| rest.strip_prefix("```JSON"))
        .or_else(|| rest.strip_prefix("```"))?;
    let j = t.len() - after.len();
    let k = skip_ws(t.as_bytes(), j);
    if !t[k..].starts_with('{') && !t[k..].starts_with('[') {
        return None;
    }
    let close = k + t[k..].find("```")?;
    let v = parse_json_lenient(&t[k..close])?;
    let fam = match &v {
        Value::Array(_) => Family::XlamJsonList,
        Value::Object(m) if m.contains_key("parameters") => Family::Llama3Json,
        _ => ctx.hint().unwrap_or(Family::Hermes),
    };
    let calls = calls_from_owned(v, ctx.rules(fam))?;
    if !calls.iter().all(|c| ctx.known(&c.name)) {
        return None;
    }
    Some(Hit::new(i, close + 3, fam, calls))
}
