//! Splitting reasoning (think blocks) from the body that may hold calls.
//!
//! Rules: a closed block is reasoning, whatever it contains (calls inside are ignored);
//! a close tag with no open tag before it makes everything before it reasoning (thinking
//! forced open by the prompt); an unclosed block ends at the first tool-call marker; an
//! open tag repeated at the start of a block (the prompt opened it, then the model) is not
//! part of the reasoning. Gemma 4's `<|channel>` may name its channel on the opener's line
//! (`<|channel>thought\n…`); the name is optional and no part of the reasoning, and every
//! channel block is reasoning. K2-V3 prefixes its think tags `ifm|` and names the effort in
//! them (`<ifm|think_fast>…</ifm|think_fast>`). HY4 writes its checkpoint's name into
//! them (`<think:opensource>…</think:opensource>`): any short suffix is read. Granite 3.2
//! writes its markers as text (`Here is my thought process:` … `Here is my response:`):
//! read only when both are there, in order. MiniCPM4 writes `<|thought_start|>` …
//! `<|thought_end|>`, Apertus `<|inner_prefix|>` … `<|inner_suffix|>`, Solar Open `<|think|>` …
//! `<|end|><|begin|>assistant<|content|>` (its reasoning turn, then the answer's header);
//! `<THINK>`/`<THINKING>` in capitals and `<reasoning>` (spring-ai's and genkit's cleaners), and
//! a ```` ```thinking ```` fence that opens the reply.

/// Open/close tag pairs of the think-block dialects.
const PAIRS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<THINK>", "</THINK>"),
    ("<THINKING>", "</THINKING>"),
    ("<reasoning>", "</reasoning>"),
    ("[THINK]", "[/THINK]"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<mm:think>", "</mm:think>"),
    (GEMMA_CHANNEL, "<channel|>"),
    ("<ifm|think>", "</ifm|think>"),
    ("<ifm|think_fast>", "</ifm|think_fast>"),
    ("<ifm|think_faster>", "</ifm|think_faster>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
    ("<|thought_start|>", "<|thought_end|>"),
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|think|>", SOLAR_OPEN_CLOSE),
];

/// Solar Open ends its reasoning turn and opens the answer's: `<|think|>…` then this.
const SOLAR_OPEN_CLOSE: &str = "<|end|><|begin|>assistant<|content|>";

/// Words one of which every think tag holds (each tag of [`PAIRS`], since a closer alone is
/// thinking forced open; the suffixed pair; Granite's opener, read only with its closer),
/// and Apriel's `[BEGIN FINAL RESPONSE]`: a text with none of them has no reasoning.
const SPLIT_WORDS: &[&str] = &[
    "think",
    "THINK",
    "reasoning>",
    "channel",
    "[BEGIN FINAL RESPONSE]",
    "my thought process:",
    "<|thought_start|>",
    "<|thought_end|>",
    "<|inner_prefix|>",
    "<|inner_suffix|>",
    SOLAR_OPEN_CLOSE,
];

/// Gemma 4's channel opener; its block is reasoning, whatever channel it names.
const GEMMA_CHANNEL: &str = "<|channel>";

/// The channel names Gemma 4 writes after [`GEMMA_CHANNEL`] (alone on the opener's line).
const CHANNEL_NAMES: &[&str] = &["thought"];

/// A piece of the turn, borrowed from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg<'a> {
    /// Reasoning: the inner text and the raw text with its tags.
    Reasoning { inner: &'a str, raw: &'a str },
    /// Body text (may contain calls); `after_think` is true right after a close tag.
    Body { text: &'a str, after_think: bool },
}

/// Next occurrence of each tag, cached: positions only move forward, so every tag's text
/// is searched at most once overall (linear total work).
struct NextTag {
    /// Per tag: (searched from, first occurrence at or after it).
    cache: Vec<Option<(usize, Option<usize>)>>,
}

impl NextTag {
    fn new(n: usize) -> Self {
        NextTag {
            cache: vec![None; n],
        }
    }

    fn find(&mut self, t: &str, k: usize, tag: &str, from: usize) -> Option<usize> {
        if let Some(Some((f, hit))) = self.cache.get(k) {
            match hit {
                Some(p) if *f <= from && *p >= from => return Some(*p),
                None if *f <= from => return None,
                _ => {}
            }
        }
        let hit = t.get(from..).and_then(|h| h.find(tag)).map(|p| from + p);
        if let Some(slot) = self.cache.get_mut(k) {
            *slot = Some((from, hit));
        }
        hit
    }

    /// Earliest (position, tag index) among `tags` at or after `from`.
    fn earliest(&mut self, t: &str, from: usize, tags: &[&str]) -> Option<(usize, usize)> {
        let mut best = None;
        for (k, tag) in tags.iter().enumerate() {
            if let Some(p) = self.find(t, k, tag, from) {
                if best.is_none_or(|(b, _)| p < b) {
                    best = Some((p, k));
                }
            }
        }
        best
    }
}

/// The think pair with the checkpoint suffix `t` writes into its tags
/// (`<think:opensource>`, `</think:opensource>`), if any.
fn suffixed_pair(t: &str) -> Option<(String, String)> {
    // One pass over `t` for both tags.
    let at = t
        .match_indices("think:")
        .map(|(at, _)| at)
        .find(|&at| t[..at].ends_with('<') || t[..at].ends_with("</"))?;
    let suffix = crate::vendor_tags::checkpoint_suffix(&t[at + "think:".len()..])?;
    Some((format!("<think:{suffix}>"), format!("</think:{suffix}>")))
}

/// Granite 3.2's reasoning markers, written as plain text: `Here is my thought process:`
/// opens the reasoning, `Here is my response:` ends it (either with `Here's`).
const GRANITE_OPENS: &[&str] = &["Here is my thought process:", "Here's my thought process:"];
const GRANITE_CLOSES: &[&str] = &["Here is my response:", "Here's my response:"];

/// Granite 3.2's marker pair as `t` spells it, when both markers are there in order (one
/// alone is the model's prose: "Here is my response:" opens many answers).
fn granite_pair(t: &str) -> Option<(&'static str, &'static str)> {
    let first = |tags: &[&'static str], from: usize| {
        tags.iter()
            .filter_map(|tag| t[from..].find(tag).map(|p| (from + p, *tag)))
            .min()
    };
    let (o, open) = first(GRANITE_OPENS, 0)?;
    let (c, close) = first(GRANITE_CLOSES, 0)?;
    (c > o).then_some((open, close))
}

/// Past the open tags that repeat the one just read (`<think><think>\n…`: the prompt
/// opened the block and the model opened it again), whitespace between them included.
fn past_repeated_open(t: &str, mut from: usize, open: &str) -> usize {
    loop {
        let rest = &t[from..];
        let Some(again) = rest.trim_start().strip_prefix(open) else {
            return from;
        };
        from = t.len() - again.len();
    }
}

/// Past the channel name after a Gemma 4 channel opener (`<|channel>thought\n…`): a known
/// name ending its line, or the whole block. A word that runs on (`thoughtful`, `thought
/// about`) is the reasoning's first word.
fn past_channel_name(t: &str, from: usize, open: &str) -> usize {
    if open != GEMMA_CHANNEL {
        return from;
    }
    let rest = &t[from..];
    CHANNEL_NAMES
        .iter()
        .filter_map(|name| rest.strip_prefix(name))
        // On its own line, or glued to a capitalised first word (`thoughtLet me…`, as
        // node-llama-cpp renders it); `thoughtful` is a word.
        .find(|after| {
            after.is_empty()
                || after.starts_with(['\n', '\r'])
                || after.starts_with("<channel|>")
                || after.starts_with(|c: char| c.is_ascii_uppercase())
        })
        .map_or(from, |after| t.len() - after.len())
}

/// A closed ```` ```thinking ```` (or ```` ```think ````) fence opening the reply: the span of
/// its text and the end of its closing fence.
fn thinking_fence(t: &str) -> Option<((usize, usize), usize)> {
    let start = t.len() - t.trim_start().len();
    let rest = &t[start..];
    let opener = ["```thinking\n", "```think\n"]
        .into_iter()
        .find(|o| rest.starts_with(o))?;
    let inner = start + opener.len();
    let close = inner + t[inner..].find("```")?;
    Some(((inner, close), close + 3))
}

/// Split `t` into reasoning and body pieces. `is_marker(t, i)` tells whether a tool-call
/// marker starts at byte `i`.
pub(crate) fn split<'a>(
    t: &'a str,
    first_marker: &dyn Fn(&str, usize) -> Option<usize>,
) -> Vec<Seg<'a>> {
    let mut segs = Vec::new();
    // Fast path: no think tags at all.
    if !SPLIT_WORDS.iter().any(|w| t.contains(w)) {
        segs.push(Seg::Body {
            text: t,
            after_think: false,
        });
        return segs;
    }
    let suffixed = suffixed_pair(t);
    let suffixed = suffixed.as_ref().map(|(o, c)| (o.as_str(), c.as_str()));
    let granite = granite_pair(t);
    let extra = suffixed.iter().chain(&granite);
    let opens: Vec<&str> = PAIRS.iter().chain(extra.clone()).map(|p| p.0).collect();
    let closes: Vec<&str> = PAIRS.iter().chain(extra).map(|p| p.1).collect();
    let mut next_open = NextTag::new(opens.len());
    let mut next_close = NextTag::new(opens.len());
    let mut pos = 0;
    // Apriel: everything before `[BEGIN FINAL RESPONSE]` is reasoning.
    if let Some(p) = t.find("[BEGIN FINAL RESPONSE]") {
        segs.push(Seg::Reasoning {
            inner: &t[..p],
            raw: &t[..p + 22],
        });
        pos = p + "[BEGIN FINAL RESPONSE]".len();
    } else if let Some((inner, end)) = thinking_fence(t) {
        segs.push(Seg::Reasoning {
            inner: &t[inner.0..inner.1],
            raw: &t[..end],
        });
        pos = end;
    } else if let Some((c, k)) = NextTag::new(opens.len()).earliest(t, 0, &closes) {
        // A close tag before any open tag: thinking was forced open. (After another
        // dialect's opener, `<thinking>…</think>`, that block is open and runs on.)
        let open_before = opens.iter().any(|o| t[..c].contains(o));
        if !open_before {
            let end = c + closes[k].len();
            segs.push(Seg::Reasoning {
                inner: &t[..c],
                raw: &t[..end],
            });
            pos = end;
        }
    }
    let mut after_think = pos > 0;
    while pos < t.len() {
        let Some((o, k)) = next_open.earliest(t, pos, &opens) else {
            break;
        };
        let (open, close) = (opens[k], closes[k]);
        if o > pos {
            segs.push(Seg::Body {
                text: &t[pos..o],
                after_think,
            });
        }
        let inner_start = past_channel_name(t, past_repeated_open(t, o + open.len(), open), open);
        match next_close.find(t, k, close, inner_start) {
            Some(c) => {
                segs.push(Seg::Reasoning {
                    inner: &t[inner_start..c],
                    raw: &t[o..c + close.len()],
                });
                pos = c + close.len();
                after_think = true;
            }
            None => {
                let m = first_marker(t, inner_start).unwrap_or(t.len());
                segs.push(Seg::Reasoning {
                    inner: &t[inner_start..m],
                    raw: &t[o..m],
                });
                pos = m;
                after_think = false;
            }
        }
    }
    if pos < t.len() {
        segs.push(Seg::Body {
            text: &t[pos..],
            after_think,
        });
    }
    segs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_think_tag_is_seen_by_the_fast_path() {
        let seen = |tag: &str| SPLIT_WORDS.iter().any(|w| tag.contains(w));
        for tag in PAIRS.iter().flat_map(|(open, close)| [open, close]) {
            assert!(seen(tag), "{tag}");
        }
        for tag in GRANITE_OPENS {
            assert!(seen(tag), "{tag}");
        }
        // A closer alone: the text before it is the reasoning.
        let s = split("R<|thought_end|>C", &none);
        assert!(matches!(s[0], Seg::Reasoning { inner: "R", .. }), "{s:?}");
    }

    fn none(_: &str, _: usize) -> Option<usize> {
        None
    }

    #[test]
    fn forced_open_and_closed() {
        let s = split("R</think>\nC", &none);
        assert_eq!(
            s[0],
            Seg::Reasoning {
                inner: "R",
                raw: "R</think>"
            }
        );
        assert_eq!(
            s[1],
            Seg::Body {
                text: "\nC",
                after_think: true
            }
        );
        let s = split("a<think>b</think>c", &none);
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn an_open_tag_repeated_at_the_start_is_not_reasoning() {
        for t in ["<think><think>\nR</think>C", "<think>\n<think>R</think>C"] {
            let s = split(t, &none);
            let Seg::Reasoning { inner, .. } = &s[0] else {
                panic!("{t}: {s:?}");
            };
            assert_eq!(inner.trim(), "R", "{t}");
        }
        // Further in, a quoted tag is the model's text.
        let s = split("<think>R <think> tag</think>C", &none);
        assert_eq!(
            s[0],
            Seg::Reasoning {
                inner: "R <think> tag",
                raw: "<think>R <think> tag</think>"
            }
        );
    }

    /// The reasoning pieces of `t`, trimmed, and its body text.
    fn reasoning_and_body(t: &str) -> (Vec<&str>, String) {
        let mut reasoning = Vec::new();
        let mut body = String::new();
        for seg in split(t, &none) {
            match seg {
                Seg::Reasoning { inner, .. } => reasoning.push(inner.trim()),
                Seg::Body { text, .. } => body.push_str(text),
            }
        }
        (reasoning, body)
    }

    #[test]
    fn think_tags_with_a_checkpoint_suffix_are_reasoning() {
        let (reasoning, body) =
            reasoning_and_body("<think:opensource>\nweigh it\n</think:opensource>\nAnswer.");
        assert_eq!((reasoning, body.as_str()), (vec!["weigh it"], "\nAnswer."));
        // Forced open by the prompt: only the suffixed closer.
        let (reasoning, body) = reasoning_and_body("plan</think:v2.1>answer");
        assert_eq!((reasoning, body.as_str()), (vec!["plan"], "answer"));
        // A suffix that is no checkpoint name (a space, a tag) leaves the text as it is.
        for t in [
            "<think: not a tag> x</think: not a tag>",
            "<think:<b>> x</think:<b>>",
        ] {
            let (reasoning, body) = reasoning_and_body(t);
            assert_eq!((reasoning.len(), body.as_str()), (0, t), "{t}");
        }
    }

    #[test]
    fn k2v3_effort_think_blocks_are_reasoning() {
        for effort in ["think", "think_fast", "think_faster"] {
            let t = format!("<ifm|{effort}>need lookup</ifm|{effort}>\n<ifm|tool_call>x");
            let (reasoning, body) = reasoning_and_body(&t);
            assert_eq!(reasoning, ["need lookup"], "{t}");
            assert_eq!(body, "\n<ifm|tool_call>x", "{t}");
        }
        // Forced open by the prompt: the text before the close tag is reasoning.
        let (reasoning, body) = reasoning_and_body("plan</ifm|think_fast>answer");
        assert_eq!((reasoning, body.as_str()), (vec!["plan"], "answer"));
        // Two effort blocks, each closed by its own closer.
        let (reasoning, body) =
            reasoning_and_body("<ifm|think_faster>a</ifm|think_faster>b<ifm|think>c</ifm|think>");
        assert_eq!((reasoning, body.as_str()), (vec!["a", "c"], "b"));
        // Left open, the block ends at the first call marker.
        let s = split("<ifm|think>plan<tool_call>{}", &|t: &str, from: usize| {
            t[from..].find("<tool_call>").map(|p| from + p)
        });
        assert_eq!(
            s,
            [
                Seg::Reasoning {
                    inner: "plan",
                    raw: "<ifm|think>plan"
                },
                Seg::Body {
                    text: "<tool_call>{}",
                    after_think: false
                }
            ]
        );
    }

    #[test]
    fn gemma_channel_blocks_are_reasoning_named_or_not() {
        let cases: [(&str, &[&str], &str); 6] = [
            ("<|channel>\nthought\nR<channel|>C", &["thought\nR"], "C"),
            ("<|channel>thought\nR<channel|>C", &["R"], "C"),
            (
                "<|channel>first<channel|><|channel>second<channel|>C",
                &["first", "second"],
                "C",
            ),
            ("<|channel>thought<channel|>C", &[""], "C"),
            // A word running on from the name is the reasoning's.
            ("<|channel>thoughtful<channel|>C", &["thoughtful"], "C"),
            (
                "<|channel>thought about it<channel|>C",
                &["thought about it"],
                "C",
            ),
        ];
        for (t, reasoning, body) in cases {
            assert_eq!(
                reasoning_and_body(t),
                (reasoning.to_vec(), body.to_string()),
                "{t}"
            );
        }
    }
}
