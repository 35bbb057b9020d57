//! The driver: pre-scan for trigger bytes, dispatch each candidate position to the
//! format modules, collect content/reasoning/calls, then apply the family's quirks.

use crate::calls::CallRules;
pub(crate) use crate::hit::Hit;
use crate::think::{self, Seg};
use crate::{harmony, json_fmts, json_tokens, pythonic, react, vendor_tags, xml_fmts};
use crate::{Family, ParseOptions, Parsed, ParsedCall, ReasoningMode};

/// Shared parsing context.
pub(crate) struct Ctx<'a> {
    pub(crate) opts: &'a ParseOptions,
    /// Bracket-matching memo for the text being scanned (keeps repeated scans linear).
    pub(crate) memo: std::cell::RefCell<crate::scan::ScanMemo>,
}

impl Ctx<'_> {
    /// The family hint, if any.
    pub(crate) fn hint(&self) -> Option<Family> {
        self.opts.format
    }

    /// Call-object rules for a detected family (the hint wins).
    pub(crate) fn rules(&self, detected: Family) -> CallRules {
        CallRules {
            keep_string_args: self.hint().unwrap_or(detected).keeps_string_arguments(),
        }
    }

    /// Whether `name` is acceptable where names are validated.
    pub(crate) fn known(&self, name: &str) -> bool {
        self.opts.tools.is_empty() || self.opts.tools.iter().any(|t| t.name == name)
    }
}

/// Result of looking at a `{`.
pub(crate) enum Brace {
    Hit(Hit),
    NotCall,
    /// A valid JSON value that is not a call, ending at the offset: content.
    Skip(usize),
    /// A named JSON object that is not a call: stop looking for bare JSON calls.
    StopBare,
}

/// Accumulated output.
#[derive(Default)]
struct Acc {
    /// Content pieces with the number of calls seen before each.
    content: Vec<(usize, String)>,
    /// Indices into `content` of closed call blocks that held no valid call: the model's
    /// text when the turn holds no call at all, dropped (with their errors) beside calls.
    unread: Vec<usize>,
    reasoning: String,
    calls: Vec<ParsedCall>,
    detected: Option<Family>,
    truncated: bool,
    errors: Vec<String>,
    /// The first call came from the general fallback: it may read the turn's later calls
    /// too (once a family found a call, the fallback stays out of the turn).
    fallback: bool,
}

/// Whether a strong tool-call marker starts at `i` (used to end unclosed think blocks).
fn marker_at(t: &str, i: usize) -> bool {
    const MARKERS: &[&str] = &[
        "<tool_call>",
        "<longcat_tool_call>",
        "<|tool_call|>",
        "<|function_call|>",
        "<tool_calls>",
        "<function=",
        "<|tool_call_begin|>",
        "<|tool_calls_section_begin|>",
        "<｜tool▁calls▁begin｜>",
        "<|tool▁calls▁begin|>",
        "<｜DSML｜",
        "<｜GCML｜",
        "<minimax:tool_call>",
        "<seed:tool_call>",
        "<|tool_call_start|>",
        "<|tool_call>",
        "<start_function_call>",
        "<function_calls>",
        "<TOOLCALL>",
        "<|START_ACTION|>",
        "<|action_start|>",
        "[TOOL_CALLS]",
    ];
    let rest = &t[i..];
    MARKERS.iter().any(|m| rest.starts_with(m))
        || crate::kimi_k3::CHANNEL_OPENERS
            .iter()
            .any(|m| rest.starts_with(m))
        || crate::kimi_k3::marker_cut_off(rest)
}

fn first_marker(t: &str, from: usize) -> Option<usize> {
    let b = t.as_bytes();
    (from..b.len()).find(|&i| (b[i] == b'<' || b[i] == b'[') && marker_at(t, i))
}

/// Whether `t` (prefill included) is plain prose, which parses to itself as content:
/// `trigger_free` says it holds no trigger byte (`<`, `[`, `{`, backtick).
fn plain_prose(t: &str, opts: &ParseOptions, trigger_free: bool) -> bool {
    let quirky = opts
        .format
        .is_some_and(|f| f.trims_content() || f == Family::Functionary);
    // `Answer` covers ReAct's `Final Answer:` and llama_index's `Answer:`.
    // `TOOL_NAME:` opens Continue's blocks, `my thought process:` Granite 3.2's reasoning
    // (SIMD searches: prose pays little for them).
    let holds = |word: &str| memchr::memmem::find(t.as_bytes(), word.as_bytes()).is_some();
    !quirky
        && trigger_free
        && !holds("Action")
        && !holds("Answer")
        && !holds("TOOL_NAME:")
        && !holds("my thought process:")
}

/// [`parse_full`] for a text the caller already knows holds no trigger byte (the stream
/// tracks it): skips the pre-scan, and plain prose keeps the buffer instead of copying.
pub(crate) fn parse_trigger_free(text: String, opts: &ParseOptions) -> Parsed {
    debug_assert_eq!(crate::scan::next_trigger(text.as_bytes(), 0), text.len());
    if opts.prefill.is_empty() && plain_prose(&text, opts, true) {
        let prose = Parsed {
            content: non_empty(text),
            ..Parsed::default()
        };
        // As `parse_full`: the fallback still looks (a `tool key=value` line has no trigger).
        return with_fallback(prose, opts);
    }
    parse_full(&text, opts)
}

/// Parse a whole turn.
pub(crate) fn parse_full(text: &str, opts: &ParseOptions) -> Parsed {
    let mut owned;
    let mut t: &str = text;
    // A model that wrote the prefilled opener again (`<think>` after a `<think>` prompt) is
    // read once: the prefill is not put before it.
    let repeated = text.trim_start().starts_with(opts.prefill.trim());
    if !opts.prefill.trim().is_empty() && !repeated {
        owned = String::with_capacity(opts.prefill.len() + text.len());
        owned.push_str(&opts.prefill);
        owned.push_str(text);
        t = &owned;
    }
    if t.contains(vendor_tags::MINIMAX_NOISE) {
        // MiniMax M3 prefixes every tag with noise: read the text without it, but a text
        // that holds no call after all keeps what it said.
        let parsed = parse_text(&t.replace(vendor_tags::MINIMAX_NOISE, ""), opts);
        if parsed.calls.is_empty() && !parsed.truncated && parsed.errors.is_empty() {
            return with_fallback(parse_text(t, opts), opts);
        }
        return parsed;
    }
    let parsed = with_fallback(parse_text(t, opts), opts);
    // Only a text that holds no call, or whose content still holds a namespaced call tag
    // (the general fallback read a call inside it), is looked at again without the
    // vendor's spelling of the tags.
    let tags_left = |p: &Parsed| {
        p.content
            .as_deref()
            .is_some_and(|c| c.contains("|tool_call"))
    };
    if (parsed.calls.is_empty() && !parsed.truncated) || tags_left(&parsed) {
        if let Some(plain) = vendor_tags::without_namespace(t) {
            let read = parse_text(&plain, opts);
            if read.calls.len() >= parsed.calls.len() && (!read.calls.is_empty() || read.truncated)
            {
                return read;
            }
        }
    }
    parsed
}

/// A turn where no family found a call gets the general fallback's look
/// (see the `fallback` module).
fn with_fallback(mut parsed: Parsed, opts: &ParseOptions) -> Parsed {
    if parsed.calls.is_empty() && !parsed.truncated && parsed.errors.is_empty() {
        let bare = parsed
            .content
            .as_deref()
            .and_then(|c| pythonic::whole_reply_calls(c, &opts.tools));
        if let Some(calls) = bare {
            parsed.calls = calls;
            parsed.content = None;
            parsed.format = Some(Family::Pythonic);
            return parsed;
        }
    }
    let mut parsed = crate::fallback::named_calls(&parsed, &opts.tools).unwrap_or(parsed);
    crate::fallback::drop_orphan_call_closer(&mut parsed);
    parsed
}

/// [`parse_full`] after the prefill is in place.
fn parse_text(t: &str, opts: &ParseOptions) -> Parsed {
    // Fast path: prose with no byte that can start a call, reasoning or agent step.
    if plain_prose(
        t,
        opts,
        crate::scan::next_trigger(t.as_bytes(), 0) == t.len(),
    ) {
        return Parsed {
            content: non_empty(t.to_string()),
            ..Parsed::default()
        };
    }
    let ctx = Ctx {
        opts,
        memo: Default::default(),
    };
    if opts.format == Some(Family::GptOss)
        || (opts.format.is_none() && harmony::detect(t))
        || opts.format == Some(Family::Glimmer)
    {
        if let Some(p) = harmony::parse(t, &ctx) {
            return p;
        }
    }
    if crate::inkling::detect(t) {
        return crate::inkling::parse(t, &ctx);
    }
    let mut acc = Acc::default();
    if let Some(hit) =
        json_tokens::functionary_v32(t, &ctx).or_else(|| json_tokens::functionary_v2(t, &ctx))
    {
        record(&mut acc, t, 0, hit);
        return assemble(acc, &ctx);
    }
    for seg in think::split(t, &first_marker) {
        match seg {
            Seg::Reasoning { inner, raw } => match opts.reasoning {
                ReasoningMode::Extract => acc.reasoning.push_str(inner.trim()),
                ReasoningMode::Keep => acc.content.push((acc.calls.len(), raw.to_string())),
            },
            Seg::Body { text, after_think } => {
                // Taking a think block out joins the text around it as written; the
                // layout after a block that opens the reply is dropped.
                let body = if after_think
                    && opts.reasoning == ReasoningMode::Extract
                    && acc.content.iter().all(|(_, c)| c.trim().is_empty())
                {
                    text.trim_start()
                } else {
                    text
                };
                extract(body, &ctx, &mut acc);
            }
        }
    }
    if acc.calls.is_empty() && !acc.truncated {
        let body: String = acc.content.iter().map(|(_, s)| s.as_str()).collect();
        let prompted = react::parse(&body, &ctx)
            .or_else(|| crate::qwen_agent::parse(&body, &ctx))
            .or_else(|| crate::continue_tools::parse(&body));
        if let Some(r) = prompted {
            return finish_react(r, acc.reasoning);
        }
    }
    assemble(acc, &ctx)
}

fn finish_react(mut r: Parsed, reasoning: String) -> Parsed {
    if !reasoning.trim().is_empty() {
        r.reasoning = Some(reasoning);
    }
    r
}

/// Run the marker scan over one body segment.
fn extract(body: &str, ctx: &Ctx, acc: &mut Acc) {
    ctx.memo.borrow_mut().reset();
    // GLM inner-only form: `name\n<arg_key>…` (or `<longcat_arg_key>`) with no wrapper.
    if (ctx.hint().is_none() || ctx.hint() == Some(Family::GlmXml))
        && body.contains("arg_key>")
        && !body.contains("<tool_call>")
    {
        if let Some(hit) = crate::glm::glm_body(body, 0, body.len(), false, ctx) {
            record(acc, body, 0, hit);
            return;
        }
    }
    let b = body.as_bytes();
    let mut pos = 0; // start of pending content
    let mut i = 0;
    // Gemma or DeepSeek calls whose opener was lost at the very start (`call:f{…}`,
    // `function<｜tool▁sep｜>f…`).
    let at_start =
        crate::gemma::gemma_at_start(body, ctx).or_else(|| json_tokens::deepseek_at_start(body));
    if let Some(hit) = at_start {
        i = hit.end;
        pos = record(acc, body, 0, hit);
        if acc.truncated {
            return;
        }
    }
    let mut bare_ok = true;
    while i < b.len() {
        i = crate::scan::next_trigger(b, i);
        if i >= b.len() {
            break;
        }
        let c = b[i];
        let fallback_ok = acc.calls.is_empty() || acc.fallback;
        let hit = match c {
            b'<' => try_lt(body, i, ctx).or_else(|| {
                fallback_ok
                    .then(|| crate::fallback::wrapped_inner(body, i, ctx))
                    .flatten()
            }),
            b'[' => json_fmts::try_bracket(body, i, ctx, bare_ok),
            b'{' if bare_ok => match json_fmts::try_brace(body, i, ctx) {
                Brace::Hit(h) => Some(h),
                Brace::NotCall => None,
                Brace::Skip(e) => {
                    i = e;
                    continue;
                }
                Brace::StopBare => {
                    bare_ok = false;
                    None
                }
            },
            b'`' if bare_ok => json_fmts::try_fence(body, i, ctx),
            _ => None,
        };
        match hit {
            Some(h) if h.start >= pos && h.end > i => {
                let h = if fallback_ok {
                    crate::fallback::widen_to_wrapper(body, pos, h)
                } else {
                    h
                };
                if acc.calls.is_empty() {
                    acc.fallback = h.fallback;
                }
                let end = h.end;
                pos = record(acc, body, pos, h);
                i = end;
                if acc.truncated {
                    return;
                }
            }
            _ => i += 1,
        }
    }
    if pos < body.len() {
        acc.content.push((acc.calls.len(), body[pos..].to_string()));
    }
}

/// Store a hit; returns the new content start.
fn record(acc: &mut Acc, body: &str, pos: usize, mut h: Hit) -> usize {
    if h.start > pos {
        acc.content
            .push((acc.calls.len(), body[pos..h.start].to_string()));
    }
    if acc.detected.is_none() && !h.calls.is_empty() {
        acc.detected = h.family;
    }
    if let Some(c) = h.content.take() {
        acc.content.push((acc.calls.len(), c));
    }
    if h.calls.is_empty() && !h.truncated && !h.errors.is_empty() && !h.control_tokens {
        // A closed call block that holds no valid call is the model's text when the turn
        // holds no call, as vLLM and SGLang return it (see `Acc::unread`).
        acc.unread.push(acc.content.len());
        acc.content
            .push((acc.calls.len(), body[h.start..h.end].to_string()));
    }
    acc.calls.append(&mut h.calls);
    acc.truncated |= h.truncated;
    acc.errors.append(&mut h.errors);
    // Stray closers after a call (`}}}`, `]]`) are noise.
    let b = body.as_bytes();
    let mut end = h.end.min(b.len());
    if !acc.calls.is_empty() {
        let mut j = end;
        while j < b.len() && (b[j] == b'}' || b[j] == b']') {
            j += 1;
        }
        end = j;
    }
    end
}

fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let rest = &t[i..];
    if rest.starts_with("<tool_call>") {
        return tool_call_tag(t, i, ctx);
    }
    if rest.starts_with("<|open|>") || rest.starts_with("<|close|>") {
        if let Some(hit) = crate::kimi_k3::try_lt(t, i) {
            return Some(hit);
        }
    }
    // LongCat writes GLM pairs (`<longcat_arg_key>`) as well as JSON under its own tag.
    if let Some(r) = rest.strip_prefix("<longcat_tool_call>") {
        let j = crate::scan::skip_ws(t.as_bytes(), t.len() - r.len());
        if !t[j..].starts_with(['{', '[']) {
            return crate::glm::glm_tagged(t, i, j, "</longcat_tool_call>", ctx);
        }
    }
    xml_fmts::try_lt(t, i, ctx)
        .or_else(|| json_fmts::try_lt(t, i, ctx))
        .or_else(|| pythonic::try_lt(t, i, ctx))
        .or_else(|| crate::tool_tags::try_lt(t, i, ctx))
        .or_else(|| crate::chatglm::try_lt(t, i, ctx))
        .or_else(|| crate::fallback::wrapped_inner(t, i, ctx))
}

/// `<tool_call>` is shared by Hermes JSON, Qwen3-Coder XML, GLM, xLAM lists, Granite
/// and MiniMax M3: look at what follows.
pub(crate) fn tool_call_tag(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let j = crate::scan::skip_ws(t.as_bytes(), i + "<tool_call>".len());
    let rest = &t[j..];
    if rest.starts_with('{') || rest.starts_with('[') || rest.is_empty() {
        return json_fmts::hermes_body(t, i, j, ctx);
    }
    if t[crate::scan::skip_layout(t.as_bytes(), j)..].starts_with("<function=") {
        return crate::qwen_xml::qwen_block(t, i, j, "</tool_call>", ctx);
    }
    if rest.starts_with("<invoke") {
        return xml_fmts::minimax_block(t, i, j, "</tool_call>", ctx);
    }
    // SGLang's prompted dialects: a harmony header, or pythonic calls, inside the tag.
    if rest.starts_with("assistant to=") || rest.starts_with("to=") {
        return crate::harmony::tagged_call(t, i, j, ctx);
    }
    if crate::pythonic::starts_call(rest) {
        return crate::pythonic::line_calls(t, i, j, "</tool_call>", Family::Pythonic);
    }
    crate::glm::glm_tagged(t, i, j, "</tool_call>", ctx)
}

/// Cohere Command's citation tags, `<co>cited text</co: 0:[1,2]>`, reduced to the cited
/// text. Only the exact `</co: …>` closer counts, so prose is left alone.
fn strip_citations(s: String) -> String {
    if !s.contains("</co:") {
        return s;
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(open) = rest.find("<co>") {
        let inner = &rest[open + "<co>".len()..];
        let Some(close) = inner.find("</co:") else {
            break;
        };
        let Some(gt) = inner[close..].find('>') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&inner[..close]);
        rest = &inner[close + gt + 1..];
    }
    out.push_str(rest);
    out
}

/// Turn the accumulator into the result, applying the family quirks.
fn assemble(acc: Acc, ctx: &Ctx) -> Parsed {
    let n = acc.calls.len();
    let profile = ctx.hint().or(acc.detected);
    let mut content = String::new();
    // `unread` holds ascending indices: walked beside the pieces, once.
    let mut unread = acc.unread.iter().peekable();
    for (k, (before, piece)) in acc.content.iter().enumerate() {
        if unread.next_if_eq(&&k).is_some() && n > 0 {
            continue;
        }
        if let Some(f) = profile {
            if n > 0 {
                if f.drops_all_content_with_calls() {
                    continue;
                }
                if f.drops_text_between_calls() && *before > 0 && *before < n {
                    continue;
                }
                if f.drops_trailing_text() && *before == n {
                    continue;
                }
            }
        }
        content.push_str(piece);
    }
    content = crate::stop_tokens::unwrap_response(crate::stop_tokens::strip(content, n > 0));
    if n > 0 && acc.detected == Some(Family::ToolTags) {
        content = crate::stop_tokens::drop_emptied_wrappers(content);
    }
    if profile.is_some_and(Family::trims_content) {
        content = content.trim().to_string();
    }
    let content = strip_citations(strip_json_fence(content));
    let mut calls = acc.calls;
    let mut errors = acc.errors;
    if calls.iter().any(|c| c.name.trim().is_empty()) {
        calls.retain(|c| !c.name.trim().is_empty());
        errors.push("a tool call has an empty name".to_string());
    }
    resolve_namespaced_names(&mut calls, &ctx.opts.tools);
    // Names are checked where the syntax that found the calls is ambiguous (bare JSON),
    // not because a hint names such a family over calls in a marked format.
    if let Some(f) = acc.detected.or(profile) {
        if f.validates_names() && !ctx.opts.tools.is_empty() {
            calls.retain(|c| ctx.known(&c.name));
        }
    }
    for call in &mut calls {
        if let Some(tool) = ctx.opts.tools.iter().find(|t| t.name == call.name) {
            crate::schema::coerce_arguments(&mut call.arguments, &tool.parameters);
        }
    }
    let format = if calls.is_empty() {
        None
    } else {
        acc.detected.or(profile)
    };
    Parsed {
        content: non_empty(content),
        reasoning: non_empty(strip_citations(acc.reasoning)),
        calls,
        format,
        truncated: acc.truncated,
        errors,
    }
}

/// A call named `NAMESPACE.NAME` (`default_api.f`, Glimmer's `read.read`) where only the last
/// segment names an offered tool is a call to that tool. A name the tools offer as written,
/// or with no offered tool behind it, is left as the model wrote it.
pub(crate) fn resolve_namespaced_names(calls: &mut [ParsedCall], tools: &[crate::ToolSchema]) {
    for call in calls {
        if tools.iter().any(|t| t.name == call.name) {
            continue;
        }
        let Some((_, last)) = call.name.rsplit_once('.') else {
            continue;
        };
        if let Some(tool) = tools.iter().find(|t| t.name == last) {
            call.name = tool.name.clone();
        }
    }
}

/// Structured output wrapped in a single ```json fence is returned without the fence.
fn strip_json_fence(content: String) -> String {
    let t = content.trim();
    if let Some(inner) = t
        .strip_prefix("```json")
        .and_then(|r| r.strip_suffix("```"))
    {
        if !inner.contains("```") {
            return inner.trim().to_string();
        }
    }
    content
}

pub(crate) fn non_empty(s: String) -> Option<String> {
    if s.trim().is_empty() {
        None
    } else {
        Some(s)
    }
}
