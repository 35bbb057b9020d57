//! Special-token formats with JSON arguments: Mistral `[TOOL_CALLS]`, Kimi K2 and
//! DeepSeek V3/V3.1/R1 (fullwidth `｜`/`▁` tokens and their ASCII spellings).

use crate::engine::{Ctx, Hit};
use crate::json_at::{json_at, JsonAt};
use crate::json_fmts::skip_close;
use crate::json_list::list_hit;
use crate::scan::{parse_json_lenient, skip_ws};
use crate::{calls::calls_from_owned, Family, ParsedCall};
use serde_json::Value;

/// Mistral: `[TOOL_CALLS][{...}]`, `[TOOL_CALLS]name[ARGS]{...}`,
/// `[TOOL_CALLS]name[CALL_ID]id[ARGS]{...}`, `[TOOL_CALLS]name{...}`.
pub(crate) fn mistral(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::Mistral;
    let j = skip_ws(t.as_bytes(), i + "[TOOL_CALLS]".len());
    if j >= t.len() {
        return Some(Hit::truncated(i, t.len(), fam));
    }
    if t[j..].starts_with('[') || t[j..].starts_with('{') {
        return list_call(t, i, j, ctx);
    }
    // name up to `[` or `{`
    let b = t.as_bytes();
    let mut k = j;
    while k < b.len() && b[k] != b'[' && b[k] != b'{' && !b[k].is_ascii_whitespace() {
        k += 1;
    }
    let name = &t[j..k];
    let mut id = None;
    // Devstral may put spaces around the name (`[TOOL_CALLS] f [ARGS]{…}`).
    let after_ws = skip_ws(b, k);
    let mut a = if t[after_ws..].starts_with("[ARGS]") || t[after_ws..].starts_with("[CALL_ID]") {
        after_ws
    } else {
        k
    };
    if t[a..].starts_with("[CALL_ID]") {
        let s = a + "[CALL_ID]".len();
        let Some(e) = t[s..].find("[ARGS]").map(|p| s + p) else {
            return Some(Hit::truncated(i, t.len(), fam));
        };
        id = Some(t[s..e].to_string());
        a = e;
    }
    let args_marked = t[a..].starts_with("[ARGS]");
    if args_marked {
        a += "[ARGS]".len();
    }
    let a2 = skip_ws(b, a);
    if args_marked && !name.is_empty() && t[a2..].starts_with("</s>") {
        // `[ARGS]` and then the end of the turn: a call without arguments.
        let call = ParsedCall {
            name: name.to_string(),
            arguments: Value::Object(serde_json::Map::new()),
            id,
        };
        return Some(Hit::new(i, a2, fam, vec![call]));
    }
    if a2 >= t.len() || name.is_empty() {
        // Name but no arguments yet.
        let mut h = Hit::truncated(i, t.len(), fam);
        h.errors = vec![format!("call to {name:?} has no arguments")];
        return Some(h);
    }
    if t[a2..].starts_with('{') {
        return match json_at(ctx, t, a2) {
            JsonAt::Value(v @ Value::Object(_), e) => Some(Hit::new(
                i,
                e,
                fam,
                vec![ParsedCall {
                    name: name.to_string(),
                    arguments: v,
                    id,
                }],
            )),
            JsonAt::Truncated => Some(Hit::truncated(i, t.len(), fam)),
            _ => None,
        };
    }
    // Junk before a JSON list: take the first `[{`.
    let window = &t.as_bytes()[j..(j + 256).min(t.len())];
    let p = j + window.windows(2).position(|w| w == b"[{")?;
    list_call(t, i, p, ctx)
}

fn list_call(t: &str, i: usize, j: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::Mistral;
    match json_at(ctx, t, j) {
        JsonAt::Value(v, e) => match calls_from_owned(v, ctx.rules(fam)) {
            Some(calls) => Some(Hit::new(i, e, fam, calls)),
            None => list_hit(ctx, t, i, j, "", fam),
        },
        JsonAt::Truncated => {
            Some(list_hit(ctx, t, i, j, "", fam).unwrap_or_else(|| Hit::truncated(i, t.len(), fam)))
        }
        JsonAt::Bad(_) => list_hit(ctx, t, i, j, "", fam),
    }
}

/// Tag-introduced token formats (Kimi, DeepSeek).
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    if rest.starts_with("<|tool_calls_section_begin|>") || rest.starts_with("<|tool_call_begin|>") {
        return kimi(t, i, ctx);
    }
    if let Some(n) = ds_tok(rest, "tool▁calls▁begin") {
        return deepseek(t, i, i + n, Family::DeepseekV3, false);
    }
    // The section token was lost: the first call token opens the block.
    if ds_tok(rest, "tool▁call▁begin").is_some() {
        return deepseek(t, i, i, Family::DeepseekV3, false);
    }
    if let Some(n) = ds_tok(rest, "tool▁calls") {
        return deepseek(t, i, i + n, Family::DeepseekR1, true);
    }
    // A tool-output block is the template's tool result, which the model wrote itself:
    // not an answer, so not content.
    if let Some(n) = ds_tok(rest, "tool▁outputs▁begin") {
        let end = ds_find(&t[i + n..], "tool▁outputs▁end").map_or(t.len(), |(p, m)| i + n + p + m);
        return Some(Hit::new(i, end, Family::DeepseekV3, Vec::new()));
    }
    None
}

/// A DeepSeek V3 call at the very start of the output with its begin tokens lost
/// (`function<｜tool▁sep｜>NAME\n```json …`): read as the first call of a block.
pub(crate) fn deepseek_at_start(t: &str) -> Option<Hit> {
    let j = skip_ws(t.as_bytes(), 0);
    let rest = &t[j..];
    // V3's `function<｜tool▁sep｜>NAME…`, or V3.1's `NAME<｜tool▁sep｜>{…}`.
    let v3 = rest
        .strip_prefix(DS_BARE_START)
        .is_some_and(|after| ds_tok(after, "tool▁sep").is_some());
    (v3 || bare_named_call(rest)).then(|| deepseek(t, j, j, Family::DeepseekV3, true))?
}

/// The word that opens a DeepSeek V3 call's body, right before its `tool▁sep` token.
const DS_BARE_START: &str = "function";

/// Length of the DeepSeek token `<｜NAME｜>` (or `<|NAME|>`) at the start of `s`.
fn ds_tok(s: &str, name: &str) -> Option<usize> {
    for (l, r) in [("<｜", "｜>"), ("<|", "|>")] {
        if let Some(a) = s.strip_prefix(l) {
            if let Some(b) = a.strip_prefix(name) {
                if b.starts_with(r) {
                    return Some(l.len() + name.len() + r.len());
                }
            }
        }
    }
    None
}

fn ds_find(s: &str, name: &str) -> Option<(usize, usize)> {
    ["｜", "|"]
        .iter()
        .filter_map(|bar| {
            let tok = format!("<{bar}{name}{bar}>");
            s.find(&tok).map(|p| (p, tok.len()))
        })
        .min()
}

/// A DeepSeek block from `j`; `bare_first`: the first call may come without its
/// `tool▁call▁begin` token.
fn deepseek(t: &str, start: usize, mut j: usize, fam: Family, bare_first: bool) -> Option<Hit> {
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut first = true;
    loop {
        j = skip_ws(t.as_bytes(), j);
        let rest = &t[j..];
        if rest.is_empty() {
            if calls.is_empty() && errors.is_empty() {
                return Some(Hit::truncated(start, t.len(), fam));
            }
            break;
        }
        if let Some(n) = ds_tok(rest, "tool▁calls▁end") {
            j += n;
            break;
        }
        // The section opened again before the next call: the block goes on.
        if let Some(n) = ds_tok(rest, "tool▁calls▁begin") {
            j += n;
            continue;
        }
        // A call's end token written twice: the second one is noise.
        if let Some(n) = ds_tok(rest, "tool▁call▁end") {
            j += n;
            continue;
        }
        let begun = ds_tok(rest, "tool▁call▁begin");
        if let Some(n) = begun {
            j += n;
        } else if !first || !(bare_first || bare_named_call(rest)) {
            errors.push("malformed DeepSeek tool call block".to_string());
            j = ds_find(rest, "tool▁calls▁end").map_or(t.len(), |(p, n)| j + p + n);
            break;
        }
        first = false;
        let Some((sp, sn)) = ds_find(&t[j..], "tool▁sep") else {
            return Some(Hit::cut_after(start, t.len(), fam, calls));
        };
        let pre = t[j..j + sp].trim();
        let after = j + sp + sn;
        let (name, args_at) = if pre == "function" || pre.is_empty() {
            let nl = t[after..].find('\n').map_or(t.len(), |p| after + p);
            (t[after..nl].trim(), nl)
        } else {
            (pre, after)
        };
        let call_end = ds_find(&t[args_at..], "tool▁call▁end").map(|(p, n)| (args_at + p, n));
        // A name that runs into its arguments (no line break before the fence or object)
        // is no name: the call is malformed.
        if name.is_empty() || name.contains(['`', '{']) {
            errors.push("malformed DeepSeek tool call: no function name".to_string());
            j = call_end.map_or(t.len(), |(p, n)| p + n);
            continue;
        }
        let body_end = call_end.map_or(t.len(), |(p, _)| p);
        let mut body = t[args_at..body_end].trim();
        if let Some(b) = body
            .strip_prefix("```json")
            .or_else(|| body.strip_prefix("```"))
        {
            body = b.trim().strip_suffix("```").unwrap_or(b).trim();
        }
        match parse_json_lenient(body) {
            Some(v @ Value::Object(_)) => {
                calls.push(ParsedCall {
                    name: name.to_string(),
                    arguments: v,
                    id: None,
                });
            }
            _ if call_end.is_none() => return Some(Hit::cut_after(start, t.len(), fam, calls)),
            _ => errors.push(format!("arguments of {name:?} are not valid JSON")),
        }
        j = call_end.map_or(t.len(), |(p, n)| p + n);
    }
    let mut h = Hit::new(start, j, fam, calls);
    h.errors = errors;
    Some(h)
}

/// Whether `rest` opens a V3.1 call that lost its `tool▁call▁begin` token: a tool's name
/// right before the `tool▁sep` token (`NAME<｜tool▁sep｜>{…}`, as a stream that dropped the
/// first call's token shows).
fn bare_named_call(rest: &str) -> bool {
    // A name is short: the token is looked for right after it, never through the whole text
    // (this runs on every text's start).
    if !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let mut cut = rest.len().min(BARE_NAME_LOOK);
    while !rest.is_char_boundary(cut) {
        cut -= 1;
    }
    ds_find(&rest[..cut], "tool▁sep").is_some_and(|(p, _)| crate::scan::is_tool_name(&rest[..p]))
}

/// How far [`bare_named_call`] looks for the `tool▁sep` token after a name, in bytes.
const BARE_NAME_LOOK: usize = 160;

fn kimi(t: &str, start: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::KimiK2;
    let mut j = start;
    if t[j..].starts_with("<|tool_calls_section_begin|>") {
        j += "<|tool_calls_section_begin|>".len();
    }
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut no_end_left = false;
    loop {
        j = skip_ws(t.as_bytes(), j);
        let rest = &t[j..];
        if let Some(r) = rest.strip_prefix("<|tool_calls_section_end|>") {
            j = t.len() - r.len();
            break;
        }
        let Some(r) = rest.strip_prefix("<|tool_call_begin|>") else {
            // A section token followed by text that is no call: the token is text too.
            if calls.is_empty() && errors.is_empty() && !rest.is_empty() {
                return None;
            }
            break;
        };
        let s = t.len() - r.len();
        let Some(p) = t[s..].find("<|tool_call_argument_begin|>") else {
            return Some(Hit::cut_after(start, t.len(), fam, calls));
        };
        let id = t[s..s + p].trim();
        let a = s + p + "<|tool_call_argument_begin|>".len();
        // The call's own end token bounds its arguments, so a malformed call cannot
        // swallow the calls after it.
        // Once no end token is left, none is searched for again (keeps the scan linear).
        let end_tok = if no_end_left {
            None
        } else {
            t[a..].find("<|tool_call_end|>").map(|q| a + q)
        };
        no_end_left = end_tok.is_none();
        let (args, e) = match end_tok {
            Some(e) => match parse_json_lenient(&t[a..e]) {
                Some(v) => (v, e),
                None => (Value::String(t[a..e].trim().to_string()), e),
            },
            None => match json_at(ctx, t, a) {
                JsonAt::Value(v, e) => (v, e),
                JsonAt::Truncated => return Some(Hit::cut_after(start, t.len(), fam, calls)),
                JsonAt::Bad(_) => (Value::String(t[a..].trim().to_string()), t.len()),
            },
        };
        j = skip_close(t, e, "<|tool_call_end|>");
        match kimi_name(id, ctx) {
            Some(name) => calls.push(ParsedCall {
                name,
                arguments: args,
                id: Some(id.to_string()),
            }),
            None => errors.push(format!("cannot tell the tool from call id {id:?}")),
        }
    }
    let mut h = Hit::new(start, j, fam, calls);
    h.errors = errors;
    h.control_tokens = true;
    Some(h)
}

/// `functions.NAME:IDX` or `NAME:IDX`; a bare counter names the only offered tool.
fn kimi_name(id: &str, ctx: &Ctx) -> Option<String> {
    if !id.is_empty() && id.bytes().all(|c| c.is_ascii_digit()) {
        return match ctx.opts.tools.as_slice() {
            [only] => Some(only.name.clone()),
            _ => None,
        };
    }
    // The counter may be left out after the namespace (`functions.NAME`, as Kilo Code's tests
    // write it); a dotted rest (`functions.f.0`) is a malformed counter, a bare word a label.
    let (head, idx) = match id.rsplit_once(':') {
        Some(parts) => parts,
        None => {
            let name = id.strip_prefix("functions.")?;
            return (!name.contains('.') && crate::scan::is_tool_name(name))
                .then(|| name.to_string());
        }
    };
    if idx.is_empty() || !idx.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let name = head.strip_prefix("functions.").unwrap_or(head);
    // A name is an identifier: a label before it (`label functions.f:0`,
    // `shell:functions.f:0`) makes the id malformed, not a tool called `label functions.f`.
    crate::scan::is_tool_name(name).then(|| name.to_string())
}

/// Functionary v2: messages `<|from|>assistant\n<|recipient|>NAME\n<|content|>BODY<|stop|>`;
/// the recipient `all` is text, any other names a call whose body is its JSON arguments. The
/// generation prompt ends with `<|recipient|>`, so the output may start with the name itself.
/// Used when the text holds `<|content|>` and every message reads this way.
pub(crate) fn functionary_v2(t: &str, ctx: &Ctx) -> Option<Hit> {
    if !t.contains("<|content|>") {
        return None;
    }
    let fam = Family::Functionary;
    let mut calls = Vec::new();
    let mut content = String::new();
    for message in t.split("<|from|>") {
        let message = match message.strip_prefix("assistant") {
            Some(rest) => rest.trim_start_matches(['\n', ' ']),
            None => message,
        };
        if message.trim().is_empty() {
            continue;
        }
        let message = message.strip_prefix("<|recipient|>").unwrap_or(message);
        let (name, body) = message.split_once("\n<|content|>")?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"_-.".contains(&c))
        {
            return None;
        }
        let body = body.split("<|stop|>").next().unwrap_or_default();
        if name == "all" {
            content.push_str(body.trim_end());
            continue;
        }
        match json_at(ctx, body, 0) {
            JsonAt::Value(v @ Value::Object(_), e) if body[e..].trim().is_empty() => {
                calls.push(ParsedCall {
                    name: name.to_string(),
                    arguments: v,
                    id: None,
                });
            }
            JsonAt::Truncated => return Some(Hit::cut_after(0, t.len(), fam, calls)),
            // The code interpreter takes raw code.
            _ if name == "python" => calls.push(ParsedCall {
                name: name.to_string(),
                arguments: serde_json::json!({ "code": body }),
                id: None,
            }),
            _ => return None,
        }
    }
    let mut h = Hit::new(0, t.len(), fam, calls);
    h.content = Some(content);
    Some(h)
}

/// The token Functionary v2.5 (Llama 3 based) writes where v3.2 writes `>>>`.
const FUNCTIONARY_LLAMA3_SEP: &str = "<|reserved_special_token_249|>";

/// Functionary v3.2: `>>>`-separated blocks `NAME\n{json}` (v2.5 on Llama 3 separates them
/// with [`FUNCTIONARY_LLAMA3_SEP`]); `all\n` is content and `python\n` takes raw code. The
/// generation prompt ends with the separator, so the first block has none, and in v2.5 text
/// before the first separator is content. Read with the `functionary` hint or where a
/// separator joins blocks; otherwise only a text that is nothing but `NAME\n{json}` blocks
/// naming offered tools, or, with no tools offered, names that look like function
/// identifiers (`get_weather`, `getWeather`: a word such as `Sure` or `json` on its own line
/// before a JSON object is text).
pub(crate) fn functionary_v32(t: &str, ctx: &Ctx) -> Option<Hit> {
    let hinted = ctx.hint() == Some(Family::Functionary);
    // Cheap checks first (most texts are neither): the first line names a recipient, or
    // v2.5's separator is somewhere (a SIMD search).
    let first_line = t.split('\n').next().unwrap_or_default().trim();
    let named_first = crate::scan::is_tool_name(first_line) && t.len() > first_line.len();
    let v25 = memchr::memmem::find(t.as_bytes(), FUNCTIONARY_LLAMA3_SEP.as_bytes()).is_some();
    if !hinted && !named_first && !v25 {
        return None;
    }
    // v2's messages (`NAME\n<|content|>…`) are read by `functionary_v2`.
    if (!v25 && t.trim_start().starts_with('<')) || t.contains("<|content|>") {
        return None;
    }
    let blocks: Vec<&str> = if v25 {
        t.split(FUNCTIONARY_LLAMA3_SEP).collect()
    } else {
        t.split(">>>").collect()
    };
    // `all` (text), `python` (raw code) and text before v2.5's first separator are read
    // with the hint or a separator: alone, a word on a line is text.
    let marked = hinted || blocks.len() > 1;
    let fam = Family::Functionary;
    let mut calls = Vec::new();
    let mut content = String::new();
    for (k, block) in blocks.iter().enumerate() {
        if block.trim().is_empty() {
            continue;
        }
        let named = block
            .split_once('\n')
            .filter(|(name, _)| crate::scan::is_tool_name(name.trim()));
        let Some((name, body)) = named else {
            if v25 && k == 0 {
                content.push_str(block);
                continue;
            }
            return None;
        };
        let name = name.trim();
        if name == "all" && marked {
            content.push_str(body);
            continue;
        }
        let interpreter = marked && name == "python";
        let trusted = hinted || interpreter || ctx.known(name);
        if !trusted
            || (ctx.opts.tools.is_empty() && !hinted && !interpreter && !looks_like_function(name))
        {
            return None;
        }
        match json_at(ctx, body, 0) {
            JsonAt::Value(v @ Value::Object(_), e) if body[e..].trim().is_empty() => {
                calls.push(ParsedCall {
                    name: name.to_string(),
                    arguments: v,
                    id: None,
                });
            }
            _ if interpreter => calls.push(ParsedCall {
                name: name.to_string(),
                arguments: serde_json::json!({ "code": body }),
                id: None,
            }),
            JsonAt::Truncated if hinted => return Some(Hit::truncated(0, t.len(), fam)),
            _ => return None,
        }
    }
    // Text alone (`all\nHi.`) is read here only with the hint.
    if calls.is_empty() && (!hinted || content.is_empty()) {
        return None;
    }
    let mut h = Hit::new(0, t.len(), fam, calls);
    if !content.is_empty() {
        h.content = Some(content);
    }
    Some(h)
}

/// Whether `name` reads as a function identifier rather than a word: it joins words with
/// `_` or `.`, or in camel case.
fn looks_like_function(name: &str) -> bool {
    let mut chars = name.chars();
    let starts_lower = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    name.contains(['_', '.']) || (starts_lower && chars.any(|c| c.is_ascii_uppercase()))
}
