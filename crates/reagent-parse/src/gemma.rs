//! The Gemma dialects: Gemma 4's `<|tool_call>call:f{k:<|"|>v<|"|>}<tool_call|>` and
//! FunctionGemma's `<start_function_call>call:f{k:<escape>v<escape>}<end_function_call>`,
//! their calls with the opener lost, and the repairs `gemma_repair` offers.

use serde_json::Value;

use crate::engine::{Ctx, Hit};
use crate::lenient::Lenient;
use crate::scan::skip_ws;
use crate::{Family, ParsedCall, ToolSchema};

/// The two Gemma dialects: (family, opener, closer, string delimiter).
pub(crate) const GEMMAS: [(Family, &str, &str, &str); 2] = [
    (Family::Gemma4, "<|tool_call>", "<tool_call|>", "<|\"|>"),
    (
        Family::FunctionGemma,
        "<start_function_call>",
        "<end_function_call>",
        "<escape>",
    ),
];

/// Gemma calls with their opener lost (`call:f{…}`), at the very start of the output or
/// at the start of a line after plain prose (no byte that may start a call before it): the
/// dialect is the hinted one, else the one whose string delimiter the text uses. After
/// prose only calls that read whole count, so a line that merely starts with `call:` stays
/// text.
pub(crate) fn gemma_at_start(t: &str, ctx: &Ctx) -> Option<Hit> {
    let j = skip_ws(t.as_bytes(), 0);
    let after_prose = !t[j..].starts_with("call:");
    let j = if after_prose {
        let line = t.find("\ncall:")? + 1;
        let before = &t.as_bytes()[..line];
        if crate::scan::next_trigger(before, 0) < before.len() {
            return None;
        }
        line
    } else {
        j
    };
    let (fam, _, close, delim) = match ctx.hint() {
        Some(h) => GEMMAS.into_iter().find(|g| g.0 == h)?,
        None if t.contains("<escape>") => GEMMAS[1],
        None => GEMMAS[0],
    };
    let hit = gemma(t, j, j, &Gemma { close, delim, fam }, &ctx.opts.tools)?;
    (!after_prose || (!hit.calls.is_empty() && !hit.truncated)).then_some(hit)
}

/// A Gemma dialect's closer, string delimiter and family.
pub(crate) struct Gemma {
    pub(crate) close: &'static str,
    pub(crate) delim: &'static str,
    pub(crate) fam: Family,
}

/// Gemma: `open call:NAME{k:v,…} close`; several calls may follow each other inside one
/// block (`call:f{…}call:g{…}`); strings use a delimiter token. `j` is where the first
/// `call:` stands (right after the opener, or at `i` when the opener was lost). A call
/// that does not read strictly gets the `gemma_repair` repairs over its region: up to
/// the block's closer or, when the opener was lost and no closer follows, the end of the
/// text (a server's inner text); an opened block with no closer was cut off, not repaired.
pub(crate) fn gemma(
    t: &str,
    i: usize,
    j: usize,
    dialect: &Gemma,
    tools: &[ToolSchema],
) -> Option<Hit> {
    let &Gemma { close, delim, fam } = dialect;
    let mut calls = Vec::new();
    let mut k = j;
    let mut closer = None;
    while let Some(r) = t[k..].strip_prefix("call:") {
        let s = t.len() - r.len();
        let Some(brace) = t[s..].find('{').map(|b| s + b) else {
            break;
        };
        let name = t[s..brace].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            break;
        }
        let strict = match gemma_args(t, brace, delim, false) {
            Some(read) => Some(read),
            None => {
                let block_end = match closer_from(t, close, brace, &mut closer) {
                    Some(c) => Some(c),
                    None => (i == j).then_some(t.len()),
                };
                block_end
                    .and_then(|e| repaired_call(t, brace, e, delim, tools, name))
                    .or_else(|| undelimited_values(t, brace, delim, tools))
            }
        };
        let Some((args, end)) = strict else {
            return match closer_from(t, close, brace, &mut closer) {
                // Cut off: the calls completed before it are kept, the cut one is not guessed.
                None => Some(Hit::cut_after(i, t.len(), fam, calls)),
                Some(_) if calls.is_empty() => None,
                Some(c) => {
                    let mut hit = Hit::new(i, c + close.len(), fam, calls);
                    hit.errors
                        .push(format!("malformed call to {name:?} skipped"));
                    Some(hit)
                }
            };
        };
        calls.push(ParsedCall {
            name: name.to_string(),
            arguments: args,
            id: None,
        });
        k = end;
        let next = skip_ws(t.as_bytes(), k);
        if t[next..].starts_with("call:") {
            k = next;
        }
    }
    if calls.is_empty() {
        return None;
    }
    let after = skip_ws(t.as_bytes(), k);
    let end = if t[after..].starts_with(close) {
        after + close.len()
    } else {
        k
    };
    Some(Hit::new(i, end, fam, calls))
}

/// A Gemma call's arguments at `brace` (bare keys, `delim`-delimited strings), and their
/// end; with `bare_words`, values left undelimited are their bare words.
fn gemma_args(
    t: &str,
    brace: usize,
    delim: &'static str,
    bare_words: bool,
) -> Option<(Value, usize)> {
    // A JSON object inside Gemma's braces (`{{"min": 1}}`, as node-llama-cpp renders calls).
    if t[brace..].starts_with("{{") {
        let mut inner = Lenient::new(t);
        inner.pos = brace + 1;
        if let Some(args @ Value::Object(_)) = inner.value() {
            let end = crate::scan::skip_ws(t.as_bytes(), inner.pos);
            if t[end..].starts_with('}') {
                return Some((args, end + 1));
            }
        }
    }
    let mut p = Lenient::new(t);
    p.pos = brace;
    p.str_delim = Some(delim);
    p.bare_keys = true;
    p.bare_words = bare_words;
    match p.value() {
        Some(args @ Value::Object(_)) => Some((args, p.pos)),
        _ => None,
    }
}

/// A Gemma call's arguments with values the model left undelimited (`{city:Austin}`), read
/// as their bare words, where no tool schema says what they should be (with one, the
/// `gemma_repair` repairs decide). Returns the arguments and their end.
fn undelimited_values(
    t: &str,
    brace: usize,
    delim: &'static str,
    tools: &[ToolSchema],
) -> Option<(Value, usize)> {
    if !tools.is_empty() {
        return None;
    }
    gemma_args(t, brace, delim, true)
}

/// The first `close` at or after `from`, remembered in `memo`: the calls of a block move
/// forward, so its closer is searched for once (linear work however many calls it holds).
fn closer_from(
    t: &str,
    close: &str,
    from: usize,
    memo: &mut Option<Option<usize>>,
) -> Option<usize> {
    if let Some(found) = *memo {
        if found.is_none_or(|c| c >= from) {
            return found;
        }
    }
    let found = t[from..].find(close).map(|c| from + c);
    *memo = Some(found);
    found
}

/// The arguments of the call whose `{` is at `brace`, repaired (`gemma_repair`), and where
/// the call ends; `block_end` is where its block ends (the closer, or the end of a text
/// holding only calls). `None` when its tool declares no properties or no repair makes it
/// read.
fn repaired_call(
    t: &str,
    brace: usize,
    block_end: usize,
    delim: &'static str,
    tools: &[ToolSchema],
    name: &str,
) -> Option<(Value, usize)> {
    let props = tools
        .iter()
        .find(|tool| tool.name == name)?
        .parameters
        .get("properties")?
        .as_object()?;
    // A call ends where the next one of the block starts (`…}call:g{`).
    let end = t[brace..block_end]
        .match_indices("call:")
        .map(|(c, _)| t[brace..brace + c].trim_end())
        .find(|before| before.ends_with('}'))
        .map_or(block_end, |before| brace + before.len());
    let args = crate::gemma_repair::repaired_arguments(&t[brace..end], delim, props)?;
    Some((args, end))
}
