//! Splitting reasoning (think blocks) from the body that may hold calls.
//!
//! Rules: a closed block is reasoning, whatever it contains (calls inside are ignored);
//! a close tag with no open tag before it makes everything before it reasoning (thinking
//! forced open by the prompt); an unclosed block ends at the first tool-call marker; an
//! open tag repeated at the start of a block (the prompt opened it, then the model) is not
//! part of the reasoning.

/// Open/close tag pairs of the think-block dialects.
const PAIRS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("[THINK]", "[/THINK]"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<mm:think>", "</mm:think>"),
    ("<|channel>thought", "<channel|>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
];

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

/// Split `t` into reasoning and body pieces. `is_marker(t, i)` tells whether a tool-call
/// marker starts at byte `i`.
pub(crate) fn split<'a>(
    t: &'a str,
    first_marker: &dyn Fn(&str, usize) -> Option<usize>,
) -> Vec<Seg<'a>> {
    let mut segs = Vec::new();
    // Fast path: no think tags at all.
    if !t.contains("think")
        && !t.contains("THINK")
        && !t.contains("<|channel>")
        && !t.contains("[BEGIN FINAL RESPONSE]")
    {
        segs.push(Seg::Body {
            text: t,
            after_think: false,
        });
        return segs;
    }
    let opens: Vec<&str> = PAIRS.iter().map(|p| p.0).collect();
    let closes: Vec<&str> = PAIRS.iter().map(|p| p.1).collect();
    let mut next_open = NextTag::new(PAIRS.len());
    let mut next_close = NextTag::new(PAIRS.len());
    let mut pos = 0;
    // Apriel: everything before `[BEGIN FINAL RESPONSE]` is reasoning.
    if let Some(p) = t.find("[BEGIN FINAL RESPONSE]") {
        segs.push(Seg::Reasoning {
            inner: &t[..p],
            raw: &t[..p + 22],
        });
        pos = p + "[BEGIN FINAL RESPONSE]".len();
    } else if let Some((c, k)) = NextTag::new(PAIRS.len()).earliest(t, 0, &closes) {
        // A close tag before any open tag of its pair: thinking was forced open.
        let open_before = t[..c].contains(PAIRS[k].0);
        if !open_before {
            let end = c + PAIRS[k].1.len();
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
        let (open, close) = PAIRS[k];
        if o > pos {
            segs.push(Seg::Body {
                text: &t[pos..o],
                after_think,
            });
        }
        let inner_start = past_repeated_open(t, o + open.len(), open);
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
}
