//! XML-style formats: Qwen3-Coder / Seed-OSS `<function=f><parameter=k>` (GLM
//! `<arg_key>/<arg_value>` is in `glm`), invoke-style MiniMax / DeepSeek DSML / Step-3 / Glimmer
//! (`<invoke name="f"><parameter name="k">`), MiniCPM `<function name><param name>`, and
//! Anthropic's legacy `<invoke><tool_name>f</tool_name><parameters>…`, CWM's `<tool: …>`.
//! String values are raw text (never JSON-decoded); other types follow the schema.

use serde_json::{Map, Value};

use crate::engine::{Ctx, Hit};
use crate::scan::{parse_json_lenient, skip_ws, unescape_xml};
use crate::schema::{property_schema, type_raw};
use crate::{Family, ParsedCall};

/// Maximum element nesting for MiniMax M3 nested values.
const MAX_DEPTH: usize = 32;

pub(crate) fn typed(ctx: &Ctx, fam: Family, name: &str, key: &str, raw: &str) -> Value {
    let untyped = ctx.hint().unwrap_or(fam).untyped_values_are_json();
    type_raw(raw, property_schema(&ctx.opts.tools, name, key), untyped)
}

/// Tag-introduced XML formats.
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    if rest.starts_with("<function=") {
        let gt = tag_end(rest)?;
        let k = skip_ws(t.as_bytes(), i + gt + 1);
        if t[k..].starts_with("<parameter=") || t[k..].starts_with("</function>") || k >= t.len() {
            return crate::qwen_xml::qwen_block(t, i, i, "</tool_call>", ctx);
        }
        return None;
    }
    if rest.starts_with("<seed:tool_call>") {
        let j = skip_ws(t.as_bytes(), i + "<seed:tool_call>".len());
        let mut h = crate::qwen_xml::qwen_block(t, i, j, "</seed:tool_call>", ctx)?;
        relabel(&mut h, Family::SeedOss);
        return Some(h);
    }
    if rest.starts_with("<minimax:tool_call>") {
        let j = i + "<minimax:tool_call>".len();
        return minimax_block(t, i, j, "</minimax:tool_call>", ctx);
    }
    // MiniMax with its opener lost at the very start of the output: its closer says so,
    // or, with the wrapper lost on both sides, a closed `</invoke>`.
    if rest.starts_with("<invoke name=\"")
        && t[..i].trim().is_empty()
        && (rest.contains("</minimax:tool_call>") || rest.contains("</invoke>"))
    {
        return minimax_block(t, i, i, "</minimax:tool_call>", ctx);
    }
    if let Some(hit) = fullwidth_namespaced(t, i, ctx).or_else(|| bare_invoke(t, i, ctx)) {
        return Some(hit);
    }
    for (open, close, ns, fam) in [
        (
            "<｜tool_calls_begin｜>",
            "<｜tool_calls_end｜>",
            "steptml:",
            Family::Step3,
        ),
        (
            "<atem:function_calls>",
            "</atem:function_calls>",
            "atem:",
            Family::Glimmer,
        ),
    ] {
        if rest.starts_with(open) {
            return invoke_region(t, i, i + open.len(), close, ns, fam, ctx);
        }
    }
    // DeepSeek V3.2's block with its `｜DSML｜` namespace lost (Claude's legacy format is
    // spelled alike): `<function_calls><invoke name="f"><parameter name="k" …>`.
    if let Some(after) = rest.strip_prefix("<function_calls>") {
        if after.trim_start().starts_with("<invoke name=\"") {
            let j = i + "<function_calls>".len();
            return invoke_region(t, i, j, "</function_calls>", "", Family::DeepseekDsml, ctx);
        }
    }
    if name_attr(rest, "function").is_some() {
        return minicpm(t, i, ctx);
    }
    if rest.starts_with("<tool: ") {
        return cwm_tool(t, i);
    }
    anthropic_invokes(t, i, ctx)
}

/// Meta CWM's raw commands: `<tool: KIND>\nNAME COMMAND\n</tool>` (also the shorthand with
/// no `>`, `<tool: NAME COMMAND </tool>`): a call to NAME with `{"command": COMMAND}`. A
/// block left open is cut off, never guessed.
fn cwm_tool(t: &str, i: usize) -> Option<Hit> {
    const CLOSE: &str = "</tool>";
    let fam = Family::Cwm;
    let after = i + "<tool: ".len();
    let Some(len) = t[after..].find(CLOSE) else {
        // Cut off after a whole opener line (`<tool: function>\n…`); a mention in prose
        // (`<tool: name> syntax`) is text.
        let opener = t[after..].split('\n').next().unwrap_or_default();
        let whole_opener = opener.ends_with('>') && t.len() > after + opener.len();
        return whole_opener.then(|| Hit::truncated(i, t.len(), fam));
    };
    let block = &t[after..after + len];
    // `KIND>` on the opener's line, then the command line; or the shorthand's one line.
    let line = match block.split_once('\n') {
        Some((kind, body)) if kind.trim_end().ends_with('>') => body,
        _ => block,
    };
    let line = line.trim();
    let (name, command) = line.split_once(char::is_whitespace)?;
    if !crate::scan::is_tool_name(name) {
        return None;
    }
    let args = serde_json::json!({ "command": command.trim() });
    Some(Hit::one_call(i, after + len + CLOSE.len(), fam, name, args))
}

/// Anthropic's legacy XML tool use (the Claude 2.1 prompt format, still taught by agent
/// prompts): `<function_calls><invoke><tool_name>f</tool_name><parameters><k>v</k>
/// </parameters></invoke></function_calls>`, the wrapper optional. A scalar value is raw
/// text typed by the schema; nested elements become objects, `<item>`s a list.
fn anthropic_invokes(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    const INVOKE: &str = "<invoke>";
    const WRAPPER_CLOSE: &str = "</function_calls>";
    let fam = Family::AnthropicXml;
    let rest = &t[i..];
    let wrapped = rest.starts_with("<function_calls>");
    let mut p = if wrapped {
        skip_ws(t.as_bytes(), i + "<function_calls>".len())
    } else {
        i
    };
    if !t[p..].starts_with(INVOKE) {
        return None;
    }
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let end = loop {
        p = skip_ws(t.as_bytes(), p);
        if wrapped && t[p..].starts_with(WRAPPER_CLOSE) {
            break p + WRAPPER_CLOSE.len();
        }
        if !t[p..].starts_with(INVOKE) {
            if p >= t.len() || WRAPPER_CLOSE.starts_with(&t[p..]) {
                break t.len();
            }
            break p;
        }
        let body = p + INVOKE.len();
        let Some(len) = t[body..].find("</invoke>") else {
            return Some(Hit::cut_after(i, t.len(), fam, calls));
        };
        match anthropic_invoke(&t[body..body + len], ctx) {
            Some(call) => calls.push(call),
            None => errors.push("an <invoke> with no <tool_name> or malformed parameters".into()),
        }
        p = body + len + "</invoke>".len();
    };
    let mut hit = Hit::new(i, end, fam, calls);
    hit.errors = errors;
    Some(hit)
}

/// One `<invoke>` body: its `<tool_name>` and the elements of its `<parameters>`.
fn anthropic_invoke(body: &str, ctx: &Ctx) -> Option<ParsedCall> {
    let inside = |open: &str, close: &str| {
        let s = body.find(open)? + open.len();
        Some(&body[s..s + body[s..].find(close)?])
    };
    let name = inside("<tool_name>", "</tool_name>")?.trim();
    if name.is_empty() {
        return None;
    }
    let params = inside("<parameters>", "</parameters>").unwrap_or_default();
    let mut args = Map::new();
    let mut q = skip_ws(params.as_bytes(), 0);
    while q < params.len() {
        let (key, value, e) = element(params, q, 0, false)?;
        let open_end = q + key.len() + 2;
        let raw = &params[open_end..e - key.len() - 3];
        let value = if raw.trim_start().starts_with('<') {
            value
        } else {
            typed(ctx, Family::AnthropicXml, name, &key, raw.trim())
        };
        args.insert(key, value);
        q = skip_ws(params.as_bytes(), e);
    }
    Some(ParsedCall {
        name: name.to_string(),
        arguments: Value::Object(args),
        id: None,
    })
}

/// DeepSeek V3.2/V4's DSML and its siblings under another fullwidth namespace (GigaChat
/// 3.5's `<｜GCML｜tool_calls>`): `<｜NS｜function_calls>` or `<｜NS｜tool_calls>` around
/// `<｜NS｜invoke name="…">` elements.
fn fullwidth_namespaced(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    const BAR: &str = "｜";
    let after = t[i..].strip_prefix('<')?.strip_prefix(BAR)?;
    let len = after.find(BAR)?;
    let name = &after[..len];
    if name.is_empty() || len > 16 || !name.bytes().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    // DeepSeek V4.1 writes a space after the namespace (`<｜DSML｜ calls>`): it belongs to
    // every tag of the block.
    let spaced = after[len + BAR.len()..].starts_with(' ');
    let ns_len = BAR.len() + len + BAR.len() + usize::from(spaced);
    let ns = &t[i + 1..i + 1 + ns_len];
    let tag = &t[i + 1 + ns_len..];
    let wrapper = ["function_calls>", "tool_calls>", "calls>"]
        .into_iter()
        .find(|w| tag.starts_with(w))?;
    let open_len = 1 + ns.len() + wrapper.len();
    let close = format!("</{ns}{wrapper}");
    invoke_region(t, i, i + open_len, &close, ns, Family::DeepseekDsml, ctx)
}

/// Whether an invoke body that runs to the end of the output ends cleanly, after a closed
/// parameter (an invoke with nothing after its name was cut off).
fn closes_cleanly(body: &str, ns: &str) -> bool {
    body.trim_end().ends_with(&format!("</{ns}parameter>"))
}

/// An invoke with its wrapper lost, at the very start of the output, in the namespaced
/// dialects (DSML and its siblings, `<｜NS｜invoke name="…">`; Glimmer, `<atem:invoke …>`;
/// Step-3, `<steptml:invoke …>`): read as the block its wrapper would have opened.
fn bare_invoke(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    if !t[..i].trim().is_empty() {
        return None;
    }
    let rest = &t[i + 1..];
    let ns_len = rest.find("invoke name=\"")?;
    let ns = &rest[..ns_len];
    let fam = match ns {
        "atem:" => Family::Glimmer,
        "steptml:" => Family::Step3,
        _ => {
            let bars = ns.strip_suffix(' ').unwrap_or(ns);
            let name = bars.strip_prefix('｜')?.strip_suffix('｜')?;
            if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric()) {
                return None;
            }
            Family::DeepseekDsml
        }
    };
    invoke_region(t, i, i, "\u{0}", ns, fam, ctx)
}

/// Offset of the `>` closing a short tag (names are short; bounded search keeps
/// repeated unclosed tags linear).
pub(crate) fn tag_end(rest: &str) -> Option<usize> {
    rest.bytes()
        .take(512)
        .position(|c| c == b'>' || c == b'\n')
        .filter(|&p| rest.as_bytes()[p] == b'>')
}

fn relabel(h: &mut Hit, fam: Family) {
    if h.family.is_some() {
        h.family = Some(fam);
    }
}

/// MiniMax M2/M3: `<invoke name="f"><parameter name="k">v</parameter></invoke>` blocks.
pub(crate) fn minimax_block(
    t: &str,
    start: usize,
    j: usize,
    close: &str,
    ctx: &Ctx,
) -> Option<Hit> {
    invoke_region(t, start, j, close, "", Family::MinimaxXml, ctx)
}

/// Parse every `<{ns}invoke name="…">` in `t[j..close]`.
fn invoke_region(
    t: &str,
    start: usize,
    j: usize,
    close: &str,
    ns: &str,
    fam: Family,
    ctx: &Ctx,
) -> Option<Hit> {
    let close_at = t[j..].find(close).map(|p| j + p);
    let limit = close_at.unwrap_or(t.len());
    let region = &t[j..limit];
    let open = format!("<{ns}invoke name=\"");
    let end_tag = format!("</{ns}invoke>");
    let mut calls = Vec::new();
    let mut errors = Vec::new();
    let mut p = 0;
    while let Some(q) = region[p..].find(&open) {
        let s = p + q + open.len();
        let Some(nq) = region[s..].find('"') else {
            break;
        };
        let (name, tag_in_name) = invoke_name(&region[s..s + nq]);
        let body_start = match tag_in_name {
            // The name ran into the body: its `">` was lost.
            Some(at) => s + at,
            None => match region[s + nq..].find('>') {
                Some(gt) => s + nq + gt + 1,
                None => break,
            },
        };
        let be = match region[body_start..].find(&end_tag) {
            Some(e) => body_start + e,
            // The output ends after the invoke's last parameter closed: a complete call
            // whose closer is missing (as for GLM and Hermes). Anything else was cut off.
            None if close_at.is_none() && closes_cleanly(&region[body_start..], ns) => region.len(),
            None => return Some(Hit::cut_after(start, t.len(), fam, calls)),
        };
        match invoke_args(&region[body_start..be], ns, &name, fam, ctx) {
            Some(args) => calls.push(ParsedCall {
                name: name.to_string(),
                arguments: Value::Object(args),
                id: None,
            }),
            None => errors.push(format!(
                "call to {name:?} skipped: a parameter never closes"
            )),
        }
        p = (be + end_tag.len()).min(region.len());
    }
    if calls.is_empty() && errors.is_empty() {
        // A closed block with no invoke that names a tool (`<invoke>` with no name) is the
        // model's text, not swallowed; an open one was cut off.
        return close_at
            .is_none()
            .then(|| Hit::truncated(start, t.len(), fam));
    }
    let end = close_at.map_or(t.len(), |c| c + close.len());
    let mut hit = Hit::new(start, end, fam, calls);
    hit.errors = errors;
    Some(hit)
}

/// The tool name of an invoke from the text up to its closing quote: a control token
/// (`<|…|>`) the model let slip in is no part of it, and a tag ends it. The offset of that
/// tag, where the invoke's body then starts, comes second.
fn invoke_name(raw: &str) -> (String, Option<usize>) {
    let mut name = String::new();
    let mut i = 0;
    while let Some(lt) = raw[i..].find('<').map(|p| i + p) {
        name.push_str(&raw[i..lt]);
        let token_end = raw[lt..]
            .strip_prefix("<|")
            .and_then(|r| r.find("|>"))
            .map(|e| lt + 2 + e + 2);
        match token_end {
            Some(end) => i = end,
            None => return (name, Some(lt)),
        }
    }
    name.push_str(&raw[i..]);
    (name, None)
}

/// The arguments of one complete invoke; `None` when a parameter in it never closes.
fn invoke_args(
    body: &str,
    ns: &str,
    name: &str,
    fam: Family,
    ctx: &Ctx,
) -> Option<Map<String, Value>> {
    // A JSON object as the whole body, in place of parameter tags, is the arguments.
    if body.trim_start().starts_with('{') {
        if let Some(Value::Object(args)) = parse_json_lenient(body) {
            return Some(args);
        }
    }
    let popen = format!("<{ns}parameter name=\"");
    let pclose = format!("</{ns}parameter>");
    let mut args = Map::new();
    let mut repeated = Vec::new();
    let mut p = 0;
    loop {
        p = skip_ws(body.as_bytes(), p);
        if p >= body.len() {
            break;
        }
        let rest = &body[p..];
        if let Some(r) = rest.strip_prefix(popen.as_str()) {
            let s = body.len() - r.len();
            let Some(nq) = body[s..].find('"') else { break };
            let key = &body[s..s + nq];
            let Some(gt) = body[s + nq..].find('>') else {
                break;
            };
            let attrs = &body[s + nq + 1..s + nq + gt];
            let vs = s + nq + gt + 1;
            let ve = parameter_end(body, vs, &pclose, &popen)?;
            let raw = &body[vs..ve];
            // MiniMax's parameter text is XML text: its entities stand for characters (as
            // SGLang and Xinference read it; GLM's values are raw, ollama's test).
            let unescaped;
            let raw = if fam == Family::MinimaxXml && raw.contains('&') {
                unescaped = unescape_xml(raw);
                unescaped.as_str()
            } else {
                raw
            };
            // DSML's `string="true"` marks text; `string="false"` (or no mark) is typed
            // against the schema, or read as JSON without one.
            let v = if attrs.contains("string=\"true\"") {
                Value::String(raw.to_string())
            } else {
                typed(ctx, fam, name, key, raw)
            };
            args.insert(key.to_string(), v);
            p = ve + pclose.len();
        } else if rest.starts_with('<') && !rest.starts_with("</") {
            // MiniMax M3's element per parameter; one given again makes a list.
            match element(body, p, 0, fam == Family::MinimaxXml) {
                Some((k, v, e)) => {
                    insert_repeatable(&mut args, &mut repeated, k, v);
                    p = e;
                }
                None => break,
            }
        } else {
            // No parameter elements, only text, for a tool that takes one string: the text.
            if args.is_empty() && !rest.starts_with('<') {
                if let Some(key) = crate::schema::sole_string_property(&ctx.opts.tools, name) {
                    let text = crate::scan::without_layout_newlines(body);
                    args.insert(key.to_owned(), Value::String(text.to_owned()));
                }
            }
            break;
        }
    }
    Some(args)
}

/// Where the value starting at `vs` ends: the first `pclose` followed (after whitespace) by
/// the next parameter or the end of the call; a `</parameter>` inside the value, followed by
/// more text, is data (SGLang's MiniMax M2 test). Without such a closer, the first one.
fn parameter_end(body: &str, vs: usize, pclose: &str, popen: &str) -> Option<usize> {
    let first = vs + body[vs..].find(pclose)?;
    let mut at = first;
    loop {
        let after = skip_ws(body.as_bytes(), at + pclose.len());
        if after >= body.len() || body[after..].starts_with(popen) {
            return Some(at);
        }
        match body[at + pclose.len()..].find(pclose) {
            Some(next) => at += pclose.len() + next,
            None => return Some(first),
        }
    }
}

/// Insert `key: value`; a key given again turns into the list of its values (`repeated`
/// holds the keys already turned).
pub(crate) fn insert_repeatable(
    args: &mut Map<String, Value>,
    repeated: &mut Vec<String>,
    key: String,
    value: Value,
) {
    match args.get_mut(&key) {
        Some(Value::Array(list)) if repeated.contains(&key) => list.push(value),
        Some(first) => {
            let first = first.take();
            args.insert(key.clone(), Value::Array(vec![first, value]));
            repeated.push(key);
        }
        None => {
            args.insert(key, value);
        }
    }
}

/// Child elements as an object; a tag that repeats becomes a list of its values
/// (`<tag>a</tag><tag>b</tag>` → `"tag": ["a", "b"]`).
fn grouped(kids: Vec<(String, Value)>) -> Map<String, Value> {
    let mut map = Map::new();
    let mut repeated = Vec::new();
    for (k, v) in kids {
        insert_repeatable(&mut map, &mut repeated, k, v);
    }
    map
}

/// A nested element `<tag>…</tag>`: children become an object (or an array when all are
/// `<item>`), text becomes a JSON-typed scalar (its XML entities decoded with `entities`).
/// Returns (tag, value, end).
fn element(s: &str, p: usize, depth: usize, entities: bool) -> Option<(String, Value, usize)> {
    if depth > MAX_DEPTH || !s[p..].starts_with('<') {
        return None;
    }
    let gt = p + s[p..].find('>')?;
    let tag = &s[p + 1..gt];
    if tag.is_empty() || tag.contains(['<', ' ', '/']) {
        return None;
    }
    let close = format!("</{tag}>");
    let mut q = skip_ws(s.as_bytes(), gt + 1);
    if s[q..].starts_with('<') && !s[q..].starts_with("</") {
        let mut kids: Vec<(String, Value)> = Vec::new();
        loop {
            q = skip_ws(s.as_bytes(), q);
            if let Some(r) = s[q..].strip_prefix(close.as_str()) {
                let end = s.len() - r.len();
                let all_items = kids.iter().all(|(k, _)| k == "item");
                let v = if all_items {
                    Value::Array(kids.into_iter().map(|(_, v)| v).collect())
                } else {
                    Value::Object(grouped(kids))
                };
                return Some((tag.to_string(), v, end));
            }
            let (k, v, e) = element(s, q, depth + 1, entities)?;
            kids.push((k, v));
            q = e;
        }
    }
    let ve = gt + 1 + s[gt + 1..].find(close.as_str())?;
    let raw = &s[gt + 1..ve];
    let v = if entities && raw.contains('&') {
        type_raw(&unescape_xml(raw), None, true)
    } else {
        type_raw(raw, None, true)
    };
    Some((tag.to_string(), v, ve + close.len()))
}

/// `rest` past `<TAG name="`, also when the tokenizer's space marker stands for the space
/// (`<functionĠname="`) or the space was lost (`<paramname="`), as MiniCPM5's outputs show.
fn name_attr<'a>(rest: &'a str, tag: &str) -> Option<&'a str> {
    let r = rest.strip_prefix('<')?.strip_prefix(tag)?;
    let r = r
        .strip_prefix(' ')
        .or_else(|| r.strip_prefix('\u{120}'))
        .unwrap_or(r);
    r.strip_prefix("name=\"")
}

/// MiniCPM5: `<function name="f"><param name="k">v</param></function>` (CDATA allowed).
fn minicpm(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let fam = Family::MinicpmXml;
    let s = t.len() - name_attr(&t[i..], "function")?.len();
    let nq = s + t[s..].find('"')?;
    let name = &t[s..nq];
    let gt = nq + t[nq..].find('>')?;
    let mut p = skip_ws(t.as_bytes(), gt + 1);
    if name_attr(&t[p..], "param").is_none() && !t[p..].starts_with("</function>") {
        return None;
    }
    let mut args = Map::new();
    loop {
        p = skip_ws(t.as_bytes(), p);
        if let Some(r) = t[p..].strip_prefix("</function>") {
            let end = t.len() - r.len();
            return Some(Hit::one_call(i, end, fam, name, Value::Object(args)));
        }
        let Some(r) = name_attr(&t[p..], "param") else {
            return Some(Hit::truncated(i, t.len(), fam));
        };
        let ks = t.len() - r.len();
        let kq = ks + t[ks..].find('"')?;
        let key = &t[ks..kq];
        let vs = kq + t[kq..].find('>')? + 1;
        let (raw, after) = if let Some(r) = t[vs..].strip_prefix("<![CDATA[") {
            let cs = t.len() - r.len();
            let ce = cs + t[cs..].find("]]>")?;
            (&t[cs..ce], ce + 3)
        } else {
            let ve = vs + t[vs..].find("</param>")?;
            (&t[vs..ve], ve)
        };
        let Some(r) = t[after..].strip_prefix("</param>") else {
            return Some(Hit::truncated(i, t.len(), fam));
        };
        args.insert(key.to_string(), typed(ctx, fam, name, key, raw));
        p = t.len() - r.len();
    }
}
