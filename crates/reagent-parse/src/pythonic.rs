//! Pythonic calls `[f(a=1, b='x'), g()]` (Llama 3.2/4, LFM2, OLMo 3, `<|python_tag|>`); the
//! Gemma dialects, whose tags `try_lt` also opens, are in `gemma`.

use serde_json::{Map, Value};

use crate::engine::{Ctx, Hit};
use crate::lenient::Lenient;
use crate::scan::{container_end, skip_ws, End, Quoting};
use crate::{Family, ParsedCall, ToolSchema};

/// Parse `name(k=v, …)` at the parser's position.
fn call(p: &mut Lenient<'_>) -> Option<ParsedCall> {
    let name = p.ident()?;
    if name.starts_with(['.', '-']) || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if !p.eat(b'(') {
        return None;
    }
    let mut args = Map::new();
    loop {
        if p.eat(b')') {
            break;
        }
        let key = p.ident()?;
        if !p.eat(b'=') {
            return None;
        }
        let v = p.value()?;
        args.insert(key.to_string(), v);
        if p.eat(b',') {
            continue;
        }
        if p.eat(b')') {
            break;
        }
        return None;
    }
    Some(ParsedCall {
        name: name.to_string(),
        arguments: Value::Object(args),
        id: None,
    })
}

/// A whole reply that is nothing but pythonic calls, one per line with no brackets
/// (Granite's `get_weather(location="Paris")`): every line must read as a call, and when
/// tools are offered every name must be one of them. A reply with anything else is text.
pub(crate) fn whole_reply_calls(text: &str, tools: &[ToolSchema]) -> Option<Vec<ParsedCall>> {
    let text = text.trim();
    if !starts_call(text) {
        return None;
    }
    let mut p = Lenient::new(text);
    p.python = true;
    let mut calls = Vec::new();
    while p.pos < text.len() {
        let mut call = call(&mut p)?;
        if !tools.is_empty() {
            // `default_api.get_weather` calls the offered `get_weather`.
            crate::engine::resolve_namespaced_names(std::slice::from_mut(&mut call), tools);
            if !tools.iter().any(|t| t.name == call.name) {
                return None;
            }
        }
        calls.push(call);
        let rest = &text[p.pos..];
        let line_end = rest.find('\n').unwrap_or(rest.len());
        if !rest[..line_end].trim().is_empty() {
            return None;
        }
        p.pos = skip_ws(text.as_bytes(), p.pos + line_end);
    }
    Some(calls)
}

/// Pythonic calls in a fence labelled as tool code, as Gemma 3's prompting guide asks for
/// (```` ```tool_code\nget_weather(city="Paris")\n``` ````, also `tool_call`): one call per
/// line, each may be wrapped in `print(…)`, and every line must be a call (to an offered
/// tool, when tools are offered). A fence left open is not read.
pub(crate) fn tool_code_fence(t: &str, i: usize, tools: &[ToolSchema]) -> Option<Hit> {
    let rest = &t[i..];
    let after = ["```tool_code", "```tool_call", "```tool_calls"]
        .iter()
        .find_map(|label| rest.strip_prefix(label))
        .filter(|r| r.starts_with(['\n', '\r', ' ']))?;
    let start = t.len() - after.len();
    let close = start + after.find("```")?;
    let body: Vec<&str> = t[start..close]
        .lines()
        .map(|line| {
            let line = line.trim();
            line.strip_prefix("print(")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or(line)
        })
        .collect();
    let calls = whole_reply_calls(&body.join("\n"), tools)?;
    Some(Hit::new(i, close + 3, Family::Pythonic, calls))
}

/// Parse the list `[f(..), g(..)]` starting at `j`; returns calls and end, or the calls
/// completed before the point where it stopped parsing.
fn list(t: &str, j: usize) -> Result<(Vec<ParsedCall>, usize), Vec<ParsedCall>> {
    let mut p = Lenient::new(t);
    p.python = true;
    p.pos = j;
    let mut calls = Vec::new();
    if !p.eat(b'[') {
        return Err(calls);
    }
    loop {
        match call(&mut p) {
            Some(c) => calls.push(c),
            None => return Err(calls),
        }
        if p.eat(b',') {
            continue;
        }
        if p.eat(b']') {
            break;
        }
        return Err(calls);
    }
    Ok((calls, p.pos))
}

/// Whether the list at `j` is cut off (brackets never balance before the end).
fn cut_off(t: &str, j: usize) -> bool {
    container_end(t.as_bytes(), j, Quoting::PYTHON) == End::Incomplete
}

/// A pythonic list inside `open…close` tokens (LFM2, Llama 4).
pub(crate) fn list_block(t: &str, start: usize, j: usize, close: &str, fam: Family) -> Option<Hit> {
    if !t[j..].starts_with('[') {
        return None;
    }
    match list(t, j) {
        Ok((calls, e)) => {
            let k = skip_ws(t.as_bytes(), e);
            let end = if t[k..].starts_with(close) {
                k + close.len()
            } else {
                e
            };
            Some(Hit::new(start, end, fam, calls))
        }
        Err(calls) if cut_off(t, j) => Some(Hit::cut_after(start, t.len(), fam, calls)),
        // A complete list with a malformed element: keep the calls that parse.
        Err(_) => {
            let (calls, bad, e) = list_skipping_bad(t, j)?;
            let mut h = Hit::new(start, crate::json_fmts::skip_close(t, e, close), fam, calls);
            h.errors
                .push(format!("{bad} malformed call(s) in the list skipped"));
            Some(h)
        }
    }
}

/// Read the balanced list at `j` element by element, skipping the elements that are not
/// calls; returns (calls, skipped, end). `None` when no element is a call.
fn list_skipping_bad(t: &str, j: usize) -> Option<(Vec<ParsedCall>, usize, usize)> {
    let b = t.as_bytes();
    let mut calls = Vec::new();
    let mut bad = 0;
    let mut k = j + 1;
    loop {
        k = skip_ws(b, k);
        if b.get(k) == Some(&b']') {
            break;
        }
        let e = element_end(b, k)?;
        let mut p = Lenient::new(&t[..e]);
        p.python = true;
        p.pos = k;
        match call(&mut p) {
            Some(c) if skip_ws(b, p.pos) == e => calls.push(c),
            _ => bad += 1,
        }
        k = e;
        if b.get(k) == Some(&b',') {
            k += 1;
        }
    }
    (!calls.is_empty()).then_some((calls, bad, k + 1))
}

/// End of the list element starting at `k`: the next `,` or `]` outside brackets and quotes.
fn element_end(b: &[u8], mut k: usize) -> Option<usize> {
    let mut depth = 0usize;
    while k < b.len() {
        match b[k] {
            b'\'' | b'"' => {
                k = crate::scan::string_end(b, k, b[k])?;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b'}' => depth = depth.checked_sub(1)?,
            b']' if depth == 0 => return Some(k),
            b']' => depth -= 1,
            b',' if depth == 0 => return Some(k),
            _ => {}
        }
        k += 1;
    }
    None
}

/// A bare pythonic list in running text: only when it parses completely.
pub(crate) fn bare_list(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    // A list inside another (`[[f()]]`) is an element of data, not calls.
    if t[..i].trim_end().ends_with('[') {
        return None;
    }
    // Cheap gate: `[` identifier `(` (names may hold `-`: `weather-forecast`).
    let b = t.as_bytes();
    let mut k = skip_ws(b, i + 1);
    let s = k;
    while k < b.len() && (b[k].is_ascii_alphanumeric() || b"_.-".contains(&b[k])) {
        k += 1;
    }
    if k == s || k >= b.len() || b[k] != b'(' {
        return None;
    }
    let fam = match ctx.hint() {
        Some(h @ (Family::Llama4Pythonic | Family::Lfm2Pythonic)) => h,
        _ => Family::Pythonic,
    };
    match list(t, i) {
        // With no markers around it, a list naming a tool not offered is data (as bare JSON
        // calls are checked; ollama's LFM2 fallback reads it so).
        Ok((calls, _)) if !calls.iter().all(|c| ctx.known(&c.name)) => None,
        Ok((calls, e)) => Some(Hit::new(i, e, fam, calls)),
        // A list cut off at the end keeps the calls completed before the cut.
        Err(calls) if !calls.is_empty() && cut_off(t, i) => {
            Some(Hit::cut_after(i, t.len(), fam, calls))
        }
        Err(_) => None,
    }
}

/// Raw code after `<|python_tag|>` (Llama 3.1 with its code interpreter on, Functionary
/// v3.1): a call to the interpreter, up to the end of the message, when an interpreter is
/// offered (`python` or `code_interpreter`) or Functionary is hinted. Otherwise the text
/// stays text, as SGLang's Llama parser keeps it.
pub(crate) fn interpreter_code(t: &str, i: usize, j: usize, ctx: &Ctx) -> Option<Hit> {
    let offered = |n: &str| ctx.opts.tools.iter().any(|tool| tool.name == n);
    let hinted = ctx.hint() == Some(Family::Functionary);
    if !hinted && !offered("python") && !offered("code_interpreter") {
        return None;
    }
    let end = ["<|eom_id|>", "<|eot_id|>"]
        .iter()
        .filter_map(|m| t[j..].find(m).map(|p| j + p))
        .min()
        .unwrap_or(t.len());
    let code = t[j..end].trim_end();
    if code.is_empty() {
        return None;
    }
    let name = if !offered("python") && offered("code_interpreter") {
        "code_interpreter"
    } else {
        "python"
    };
    let args = serde_json::json!({ "code": code });
    Some(Hit::one_call(i, end, Family::Llama3PythonTag, name, args))
}

/// `<|python_tag|>tool.call(k=v)` (Llama 3.1 builtins): the tool is the part before `.call`.
pub(crate) fn dotted_call(t: &str, start: usize, j: usize) -> Option<Hit> {
    let fam = Family::Llama3PythonTag;
    let mut p = Lenient::new(t);
    p.python = true;
    p.pos = j;
    match call(&mut p) {
        Some(mut c) => {
            if let Some(n) = c.name.strip_suffix(".call") {
                c.name = n.to_string();
            }
            Some(Hit::new(start, p.pos, fam, vec![c]))
        }
        None if container_end(
            t.as_bytes(),
            j + t.as_bytes()[j..]
                .iter()
                .take(256)
                .position(|&c| c == b'(')?,
            Quoting::PYTHON,
        ) == End::Incomplete =>
        {
            Some(Hit::truncated(start, t.len(), fam))
        }
        None => None,
    }
}

/// Tag-introduced pythonic / Gemma formats.
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    if rest.starts_with("<function_calls>") {
        return line_calls(
            t,
            i,
            i + "<function_calls>".len(),
            "</function_calls>",
            Family::Olmo3Pythonic,
        );
    }
    crate::gemma::GEMMAS
        .into_iter()
        .find(|(_, open, _, _)| rest.starts_with(open))
        .and_then(|(fam, open, close, delim)| {
            let dialect = crate::gemma::Gemma { close, delim, fam };
            // A colon the model let slip before the first call (`<|tool_call>:call:f{…}`).
            let j = i + open.len();
            let j = if t[j..].starts_with(":call:") {
                j + 1
            } else {
                j
            };
            crate::gemma::gemma(t, i, j, &dialect, &ctx.opts.tools)
        })
}

/// Whether `s` starts with `name(`.
pub(crate) fn starts_call(s: &str) -> bool {
    let b = s.as_bytes();
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'.')
        .count();
    n > 0 && !b[0].is_ascii_digit() && b.get(n) == Some(&b'(')
}

/// Pythonic calls one per line from `j` up to `close` (OLMo 3's `<function_calls>`, and
/// SGLang's python dialect inside `<tool_call>`).
pub(crate) fn line_calls(t: &str, i: usize, j: usize, close: &str, fam: Family) -> Option<Hit> {
    let limit = t[j..].find(close).map(|p| j + p);
    let region = &t[..limit.unwrap_or(t.len())];
    let mut p = Lenient::new(region);
    p.python = true;
    p.pos = j;
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    loop {
        p.ws();
        if p.pos >= region.len() {
            break;
        }
        let line = p.pos;
        match call(&mut p) {
            Some(c) => calls.push(c),
            None if limit.is_none() => return Some(Hit::truncated(i, t.len(), fam)),
            // One call per line: a malformed one is skipped, its siblings kept.
            None => {
                let line_end = region[line..].find('\n').map(|n| line + n);
                errors.push(format!(
                    "malformed call skipped: {:?}",
                    &region[line..line_end.unwrap_or(region.len())]
                ));
                match line_end {
                    Some(n) => p.pos = n + 1,
                    None => break,
                }
            }
        }
        p.eat(b',');
    }
    if limit.is_none() && calls.is_empty() {
        return Some(Hit::truncated(i, t.len(), fam));
    }
    let end = limit.map_or(t.len(), |l| l + close.len());
    let mut hit = Hit::new(i, end, fam, calls);
    hit.errors = errors;
    Some(hit)
}

/// The code after the opening line of a markdown fence for Python at the start of `s`
/// (```` ``` ````, ```` ```python ```` or ```` ```py ````).
pub(crate) fn python_fence(s: &str) -> Option<&str> {
    let after = s.strip_prefix("```")?;
    let (label, code) = after.split_once('\n')?;
    matches!(label.trim(), "" | "python" | "py").then_some(code)
}

/// Pythonic calls in a markdown fence inside a call block, one per line (MiniCPM4 writes
/// `<|tool_call_start|>` ```` ```python\nf(k=v)\n``` ```` `<|tool_call_end|>`): the fence is
/// layout around the calls; a fence left open is read as far as it goes.
pub(crate) fn fenced_block(
    t: &str,
    start: usize,
    j: usize,
    close: &str,
    fam: Family,
) -> Option<Hit> {
    let body = t.len() - python_fence(&t[j..])?.len();
    let mut hit = line_calls(t, start, body, "```", fam)?;
    if !hit.truncated {
        hit.end = crate::json_fmts::skip_close(t, hit.end, close);
    }
    Some(hit)
}
