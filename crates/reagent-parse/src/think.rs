//! Splitting reasoning (think blocks) from the body that may hold calls.
//!
//! Rules: a closed block is reasoning, whatever it contains (calls inside are ignored);
//! a close tag with no open tag before it makes everything before it reasoning (thinking
//! forced open by the prompt); an unclosed block ends at the first tool-call marker.

/// Open/close tag pairs of the think-block dialects.
const PAIRS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("[THINK]", "[/THINK]"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<mm:think>", "</mm:think>"),
    ("<|channel>thought", "<channel|>"),
];

/// A piece of the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// Reasoning: the inner text and the raw text with its tags.
    Reasoning { inner: String, raw: String },
    /// Body text (may contain calls); `after_think` is true right after a close tag.
    Body { text: String, after_think: bool },
}

fn earliest<'a>(t: &str, from: usize, tags: impl Iterator<Item = (usize, &'a str)>) -> Option<(usize, usize)> {
    let hay = t.get(from..)?;
    tags.filter_map(|(k, tag)| hay.find(tag).map(|p| (from + p, k)))
        .min()
}

/// Split `t` into reasoning and body pieces. `is_marker(t, i)` tells whether a tool-call
/// marker starts at byte `i`.
pub(crate) fn split(t: &str, first_marker: &dyn Fn(&str, usize) -> Option<usize>) -> Vec<Seg> {
    let mut segs = Vec::new();
    // Fast path: no think tags at all.
    if !t.contains("think")
        && !t.contains("THINK")
        && !t.contains("<|channel>")
        && !t.contains("[BEGIN FINAL RESPONSE]")
    {
        segs.push(Seg::Body { text: t.to_string(), after_think: false });
        return segs;
    }
    let mut pos = 0;
    // Apriel: everything before `[BEGIN FINAL RESPONSE]` is reasoning.
    if let Some(p) = t.find("[BEGIN FINAL RESPONSE]") {
        segs.push(Seg::Reasoning { inner: t[..p].to_string(), raw: t[..p + 22].to_string() });
        pos = p + "[BEGIN FINAL RESPONSE]".len();
    } else if let Some((c, k)) = earliest(t, 0, PAIRS.iter().map(|p| p.1).enumerate()) {
        // A close tag before any open tag of its pair: thinking was forced open.
        let open_before = t[..c].contains(PAIRS[k].0);
        if !open_before {
            let end = c + PAIRS[k].1.len();
            segs.push(Seg::Reasoning { inner: t[..c].to_string(), raw: t[..end].to_string() });
            pos = end;
        }
    }
    let mut after_think = pos > 0;
    while pos < t.len() {
        let Some((o, k)) = earliest(t, pos, PAIRS.iter().map(|p| p.0).enumerate()) else {
            break;
        };
        let (open, close) = PAIRS[k];
        if o > pos {
            segs.push(Seg::Body { text: t[pos..o].to_string(), after_think });
        }
        let inner_start = o + open.len();
        match t[inner_start..].find(close) {
            Some(rel) => {
                let c = inner_start + rel;
                segs.push(Seg::Reasoning {
                    inner: t[inner_start..c].to_string(),
                    raw: t[o..c + close.len()].to_string(),
                });
                pos = c + close.len();
                after_think = true;
            }
            None => {
                let m = first_marker(t, inner_start).unwrap_or(t.len());
                segs.push(Seg::Reasoning {
                    inner: t[inner_start..m].to_string(),
                    raw: t[o..m].to_string(),
                });
                pos = m;
                after_think = false;
            }
        }
    }
    if pos < t.len() {
        segs.push(Seg::Body { text: t[pos..].to_string(), after_think });
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
        assert_eq!(s[0], Seg::Reasoning { inner: "R".into(), raw: "R</think>".into() });
        assert_eq!(s[1], Seg::Body { text: "\nC".into(), after_think: true });
        let s = split("a<think>b</think>c", &none);
        assert_eq!(s.len(), 3);
    }
}
