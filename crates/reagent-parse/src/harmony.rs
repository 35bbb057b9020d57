//! GPT-OSS harmony messages (`<|channel|>analysis<|message|>…`, `to=functions.f`) and the
//! harmony-like Glimmer headers (`to=user<|message|>…<|eom|>`).

use serde_json::Value;

use crate::engine::{non_empty, Ctx, Hit};
use crate::scan::parse_json_lenient;
use crate::{Family, Parsed, ParsedCall, ReasoningMode};

/// Whether `t` looks like harmony output: a channel, a recipient, or a message opening the
/// output with its header lost.
pub(crate) fn detect(t: &str) -> bool {
    t.contains("<|channel|>")
        || (t.contains("<|message|>")
            && (t.contains("to=")
                || t.trim_start().starts_with("<|message|>")
                || t.contains("<|start|>assistant<|message|>")))
}

const BODY_ENDS: &[&str] = &["<|end|>", "<|call|>", "<|return|>", "<|eom|>", "<|eot|>"];

/// Word after `key` in `header` (up to whitespace or `<`).
fn word_after<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let p = header.rfind(key)?;
    let rest = header[p + key.len()..].trim_start();
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '<')
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// What the messages read so far say.
#[derive(Default)]
struct Messages {
    out: Parsed,
    content: String,
    reasoning: String,
}

impl Messages {
    /// One message: its header (channel, recipient) and body; `raw` is its whole text.
    fn message(&mut self, raw: &str, header: &str, body: &str, complete: bool, ctx: &Ctx) {
        let out = &mut self.out;
        let recipient = word_after(header, "to=");
        let channel = word_after(header, "<|channel|>");
        match recipient {
            Some(r) if r.starts_with("functions.") => {
                let name = &r["functions.".len()..];
                let raw = body.trim();
                match parse_json_lenient(raw) {
                    Some(v) => out.calls.push(ParsedCall {
                        name: name.to_string(),
                        arguments: v,
                        id: None,
                    }),
                    None if !complete && raw.starts_with(['{', '[']) => {
                        out.truncated = true;
                        out.errors.push(format!("call to {name:?} was cut off"));
                    }
                    // A call with nothing after its header has no arguments.
                    None if raw.is_empty() => out.calls.push(ParsedCall {
                        name: name.to_string(),
                        arguments: Value::Object(serde_json::Map::new()),
                        id: None,
                    }),
                    // Arguments that are no JSON pass through as written, layout trimmed.
                    None => out.calls.push(ParsedCall {
                        name: name.to_string(),
                        arguments: Value::String(raw.to_string()),
                        id: None,
                    }),
                }
                out.format.get_or_insert(Family::GptOss);
            }
            // Glimmer's message to itself is its thinking.
            Some("self") => self.thought(raw, body, ctx),
            Some(r) if r != "user" && r != "assistant" && r != "all" => {
                let found = body
                    .find('<')
                    .and_then(|p| crate::xml_fmts::try_lt(body, p, ctx));
                match (found, channel) {
                    (Some(h), _) => out.take(h),
                    // A harmony message to a namespaced tool (`to=api.users.create`) with a
                    // JSON body: a call to the tool the recipient's last segment names,
                    // unless the tools offer the recipient as written.
                    (None, Some(_)) if body.trim_start().starts_with('{') => {
                        match parse_json_lenient(body.trim()) {
                            Some(arguments @ Value::Object(_)) => {
                                let offered = ctx.opts.tools.iter().any(|t| t.name == r);
                                let name = if offered {
                                    r
                                } else {
                                    r.rsplit('.').next().unwrap_or(r)
                                };
                                out.calls.push(ParsedCall {
                                    name: name.to_string(),
                                    arguments,
                                    id: None,
                                });
                                out.format.get_or_insert(Family::GptOss);
                            }
                            _ if !complete => {
                                out.truncated = true;
                                out.errors.push(format!("call to {r:?} was cut off"));
                            }
                            _ => out
                                .errors
                                .push(format!("the message to {r:?} is not a JSON object")),
                        }
                    }
                    // Text (code to a `python` tool) sent to an offered tool that takes one
                    // string: that string. A builtin the tools do not offer is no call
                    // (llama.cpp's unsolicited-builtin tests).
                    (None, _) => match crate::schema::sole_string_property(&ctx.opts.tools, r)
                        .filter(|_| !body.trim().is_empty())
                    {
                        Some(key) => {
                            let mut arguments = serde_json::Map::new();
                            let text = Value::String(body.trim().to_string());
                            arguments.insert(key.to_string(), text);
                            out.calls.push(ParsedCall {
                                name: r.to_string(),
                                arguments: Value::Object(arguments),
                                id: None,
                            });
                            out.format.get_or_insert(Family::GptOss);
                        }
                        None => out
                            .errors
                            .push(format!("the message to {r:?} holds no call")),
                    },
                }
            }
            _ => match channel {
                Some("analysis") => self.thought(raw, body, ctx),
                _ => match whole_call_block(body, ctx) {
                    // A fumbled header (none, or to the user) over a message that is
                    // nothing but a call block: the call its block names.
                    Some(h) => out.take(h),
                    None => self.content.push_str(body),
                },
            },
        }
    }

    /// A message of reasoning: kept whole in the content when the options keep reasoning.
    fn thought(&mut self, raw: &str, body: &str, ctx: &Ctx) {
        if ctx.opts.reasoning == ReasoningMode::Keep {
            self.content.push_str(raw);
        } else {
            self.reasoning.push_str(body.trim());
        }
    }
}

/// The call block `body` consists of, whitespace aside; `None` when it holds anything else.
fn whole_call_block(body: &str, ctx: &Ctx) -> Option<Hit> {
    let start = body.len() - body.trim_start().len();
    if !body[start..].starts_with('<') {
        return None;
    }
    let hit = crate::xml_fmts::try_lt(body, start, ctx)?;
    (!hit.calls.is_empty() && body[hit.end..].trim().is_empty()).then_some(hit)
}

impl Parsed {
    /// Take in the calls of a block found inside a message.
    fn take(&mut self, mut hit: Hit) {
        self.calls.append(&mut hit.calls);
        if self.format.is_none() {
            self.format = hit.family;
        }
    }
}

/// `t` cut before each `<|start|>` that opens a message (a header with `<|message|>` or a
/// channel before the next `<|start|>`), the token itself left out; a `<|start|>` that
/// opens none is text of the message it stands in.
fn message_segments(t: &str) -> Vec<&str> {
    const START: &str = "<|start|>";
    let blocks = call_blocks(t);
    let starts: Vec<usize> = t
        .match_indices(START)
        .map(|(p, _)| p)
        .filter(|p| !inside(&blocks, *p))
        .collect();
    let mut segments = Vec::new();
    let mut from = 0;
    for (k, &p) in starts.iter().enumerate() {
        let next = starts.get(k + 1).copied().unwrap_or(t.len());
        let header = &t[p + START.len()..next];
        if header.contains("<|message|>") || header.contains("<|channel|>") {
            segments.push(&t[from..p]);
            from = p + START.len();
        }
    }
    segments.push(&t[from..]);
    segments
}

/// The spans of the complete Glimmer call blocks in `t`: control-token text inside them
/// (a parameter value quoting `<|eot|>` or a whole `<|start|>` header) is the value's text,
/// not the end of the message.
fn call_blocks(t: &str) -> Vec<(usize, usize)> {
    const OPEN: &str = "<atem:function_calls>";
    const CLOSE: &str = "</atem:function_calls>";
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(open) = t[from..].find(OPEN).map(|p| from + p) {
        let Some(close) = t[open..].find(CLOSE).map(|p| open + p + CLOSE.len()) else {
            break;
        };
        blocks.push((open, close));
        from = close;
    }
    blocks
}

/// Whether offset `p` lies inside one of `blocks`.
fn inside(blocks: &[(usize, usize)], p: usize) -> bool {
    blocks.iter().any(|&(open, close)| open < p && p < close)
}

/// The first token in `s` that ends a message body (`<|end|>`, `<|call|>`, …), skipping the
/// offsets `skip` says are values' text: (offset, token length). One pass, stopping there.
fn first_body_end(s: &str, skip: impl Fn(usize) -> bool) -> Option<(usize, usize)> {
    s.match_indices("<|")
        .map(|(p, _)| p)
        .filter(|&p| !skip(p))
        .find_map(|p| {
            BODY_ENDS
                .iter()
                .find(|e| s[p..].starts_with(*e))
                .map(|e| (p, e.len()))
        })
}

/// A message at the start of `rest` whose `<|message|>` token was lost
/// (`<|channel|>analysis I must refuse<|end|>`): the words after the channel's name, up to
/// the end token, are its body. Returns (bytes used, header, body); `None` when the
/// message token (at `found`) comes before the end, or `rest` opens no such message.
fn lost_message_token(rest: &str, found: Option<usize>) -> Option<(usize, &str, &str)> {
    const CHANNEL: &str = "<|channel|>";
    let lead = rest.len() - rest.trim_start().len();
    let after = rest[lead..].strip_prefix(CHANNEL)?;
    let (end, len) = first_body_end(after, |_| false)?;
    let start = lead + CHANNEL.len();
    if found.is_some_and(|m| m < start + end) {
        return None;
    }
    let name = after[..end].find(char::is_whitespace)?;
    let header = &rest[..start + name];
    Some((start + end + len, header, after[name..end].trim()))
}

/// Parse harmony output; `None` if there is no message structure at all.
pub(crate) fn parse(t: &str, ctx: &Ctx) -> Option<Parsed> {
    if !t.contains("<|message|>") {
        if !t.contains("<|channel|>") {
            return None;
        }
        if !BODY_ENDS.iter().any(|e| t.contains(e)) {
            // Header only, nothing said yet.
            return Some(Parsed::default());
        }
    }
    let mut acc = Messages::default();
    for segment in message_segments(t) {
        // Control-token text inside Glimmer call blocks is the values' text.
        let blocks = call_blocks(segment);
        // Messages may follow each other without `<|start|>` (`…<|end|><|channel|>…`).
        let mut rest = segment;
        let mut first = true;
        // The next `<|message|>` in the segment, searched again only once passed (many
        // messages that lost theirs cost linear work).
        let mut next_message = segment.find("<|message|>");
        loop {
            let at = segment.len() - rest.len();
            if next_message.is_some_and(|m| m < at) {
                next_message = rest.find("<|message|>").map(|p| at + p);
            }
            let found = next_message.map(|m| m - at);
            if let Some((used, header, body)) = lost_message_token(rest, found) {
                acc.message(&rest[..used], header, body, true, ctx);
                rest = &rest[used..];
                first = false;
                continue;
            }
            let Some(mp) = found else {
                if first
                    && !rest.trim().is_empty()
                    && !rest.contains("<|channel|>")
                    && !rest.contains("to=")
                {
                    // Text before the first header, its end token left out.
                    let text = BODY_ENDS
                        .iter()
                        .find_map(|e| rest.trim_end().strip_suffix(e))
                        .unwrap_or(rest);
                    acc.content.push_str(text);
                }
                break;
            };
            first = false;
            let header = &rest[..mp];
            let after = &rest[mp + "<|message|>".len()..];
            let base = segment.len() - after.len();
            let end = first_body_end(after, |p| inside(&blocks, base + p));
            let (body, complete) = match end {
                Some((e, _)) => (&after[..e], true),
                None => (after, false),
            };
            let used = match end {
                Some((e, len)) => mp + "<|message|>".len() + e + len,
                None => rest.len(),
            };
            acc.message(&rest[..used], header, body, complete, ctx);
            if end.is_none() {
                break;
            }
            rest = &rest[used..];
        }
    }
    let Messages {
        mut out,
        content,
        reasoning,
    } = acc;
    crate::engine::resolve_namespaced_names(&mut out.calls, &ctx.opts.tools);
    out.content = non_empty(content.trim().to_string());
    out.reasoning = non_empty(reasoning);
    if out.calls.is_empty() {
        out.format = None;
    }
    Some(out)
}

/// SGLang's gptoss dialect: a harmony header inside `<tool_call>` (`<tool_call>assistant
/// to=functions.f json\n{…}\n</tool_call>`); `j` is after the tag. JSON that does not
/// parse gives no call and an error.
pub(crate) fn tagged_call(t: &str, i: usize, j: usize, ctx: &Ctx) -> Option<Hit> {
    let close = "</tool_call>";
    let header_end = j + t[j..].find(['\n', '{'])?;
    let name = word_after(&t[j..header_end], "to=functions.")?;
    if name.is_empty() {
        return None;
    }
    let fam = Family::GptOss;
    crate::json_fmts::named_json(ctx, t, i, header_end, name, close, fam).or_else(|| {
        let end = t[j..].find(close).map_or(t.len(), |p| j + p + close.len());
        let mut h = Hit::new(i, end, fam, Vec::new());
        h.errors
            .push(format!("call to {name:?}: arguments are not JSON"));
        Some(h)
    })
}
