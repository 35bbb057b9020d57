//! The text that may start a call, reasoning or a control token, and the one-byte class
//! table that lets [`super::StreamParser::feed`] release plain text without examining it.

use crate::ToolSchema;

/// Longest pending prefix examined before deciding it is plain text.
pub(super) const MAX_LOOKAHEAD: usize = 64;

/// Tag prefixes that may start a call, reasoning or a control token.
const LT_MARKERS: &[&str] = &[
    "<|",
    "<｜",
    "<tool",
    "<longcat_tool_call>",
    "<function",
    "<think",
    "</think",
    "<thinking",
    "<THINK",
    "</THINK",
    "<reasoning>",
    "</reasoning>",
    "<ifm|think",
    "</ifm|think",
    "<seed:",
    "<minimax:",
    "<mm:",
    "<TOOLCALL>",
    "<start_function_call>",
    "<arg_key>",
    "<longcat_arg_key>",
    "<invoke",
    "<final_answer>",
    "<response>",
    "<xml>",
    "<atem:",
    "<channel|>",
    "<tools>",
    "</tool_call>",
    "</longcat_tool_call>",
];
const BRACKET_MARKERS: &[&str] = &[
    "[TOOL_CALLS]",
    "[TOOL_REQUEST]",
    "[END_TOOL_REQUEST]",
    "[THINK]",
    "[/THINK]",
    "[BEGIN FINAL RESPONSE]",
];
const WORD_MARKERS: &[&str] = &["Action", "Final Answer", "Thought:", "functools", "call:"];

/// [`CLASS`]: plain text wherever it stands.
pub(super) const PLAIN: u8 = 1;
/// [`CLASS`]: a letter that may start a word marker (plain inside a word).
pub(super) const WORD_START: u8 = 2;

/// Class of each ASCII byte for the one-byte path; 0 for call, reasoning and tag
/// starts (always examined by the slow path).
pub(super) const CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if !is_trigger(b) {
            PLAIN
        } else if b.is_ascii_alphabetic() {
            WORD_START
        } else {
            0
        };
        c += 1;
    }
    t
};

/// The word marker starting with `c` (empty if none).
pub(super) fn word_marker(c: u8) -> &'static [u8] {
    WORD_MARKERS
        .iter()
        .map(|m| m.as_bytes())
        .find(|m| m.first() == Some(&c))
        .unwrap_or(b"")
}

pub(super) enum Verdict {
    Yes,
    No,
    NeedMore,
}

fn against(rest: &str, markers: &[&str]) -> Verdict {
    let mut need = false;
    let r = rest.as_bytes();
    for m in markers.iter().map(|m| m.as_bytes()) {
        if m[0] != r[0] {
            continue;
        }
        // Byte loops: these prefixes are short, a `memcmp` call costs more.
        let common = m.iter().zip(r).take_while(|(a, b)| a == b).count();
        if common == m.len() {
            return Verdict::Yes;
        }
        if common == r.len() {
            need = true;
        }
    }
    if need {
        Verdict::NeedMore
    } else {
        Verdict::No
    }
}

/// Could a call (or reasoning) start at the beginning of `rest`? `tools` are the offered
/// tools, whose names open calls as tags (`<read_file>`, see `tool_tags`).
pub(super) fn could_start(rest: &str, tools: &[ToolSchema]) -> Verdict {
    let verdict = match could_start_inner(rest) {
        Verdict::No if rest.starts_with('<') && !tools.is_empty() => tool_tag(rest, tools),
        v => v,
    };
    match verdict {
        Verdict::NeedMore if rest.len() >= MAX_LOOKAHEAD => Verdict::No,
        v => v,
    }
}

/// Whether `rest` (starting with `<`) opens an offered tool's tag, `<NAME>` or `<NAME/>`.
fn tool_tag(rest: &str, tools: &[ToolSchema]) -> Verdict {
    let after = &rest[1..];
    let mut need = false;
    for name in tools.iter().map(|t| t.name.as_str()) {
        if let Some(r) = after.strip_prefix(name) {
            match r.trim_start_matches(' ').as_bytes() {
                [b'>', ..] | [b'/', b'>', ..] => return Verdict::Yes,
                [] | [b'/'] => need = true,
                _ => {}
            }
        } else if name.starts_with(after) {
            need = true;
        }
    }
    if need {
        Verdict::NeedMore
    } else {
        Verdict::No
    }
}

fn could_start_inner(rest: &str) -> Verdict {
    let b = rest.as_bytes();
    match b[0] {
        b'<' => against(rest, LT_MARKERS),
        b'`' => against(rest, &["```"]),
        // MiniMax's noise, which `parse` deletes from the whole text before reading it.
        b']' => against(rest, &["]<]minimax[>["]),
        b'{' => match rest[1..].trim_start().as_bytes().first() {
            None => Verdict::NeedMore,
            Some(b'"') | Some(b'\'') => Verdict::Yes,
            Some(_) => Verdict::No,
        },
        b'@' => gptme_head(rest),
        b'[' => {
            if let v @ (Verdict::Yes | Verdict::NeedMore) = against(rest, BRACKET_MARKERS) {
                return v;
            }
            let r = rest[1..].trim_start();
            let rb = r.as_bytes();
            let mut k = 0;
            while k < rb.len() && (rb[k].is_ascii_alphanumeric() || b"_.-".contains(&rb[k])) {
                k += 1;
            }
            match rb.get(k) {
                _ if r.starts_with('{') => Verdict::Yes,
                Some(b'(') if k > 0 => Verdict::Yes,
                None if rest.len() < MAX_LOOKAHEAD => Verdict::NeedMore,
                _ => Verdict::No,
            }
        }
        _ => against(rest, WORD_MARKERS),
    }
}

/// gptme's call head, `@NAME(ID): {` (see `crate::gptme`; the scan checks it opens a line).
fn gptme_head(rest: &str) -> Verdict {
    let b = rest.as_bytes();
    let name = b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || b"_.-".contains(c))
        .count();
    let mut k = 1 + name;
    if name > 0 && b.get(k) == Some(&b'(') {
        k += b[k..]
            .iter()
            .take_while(|&&c| c != b')' && c != b'\n')
            .count();
        if b.get(k) == Some(&b')') {
            k += 1;
        }
    }
    match b.get(k) {
        None => return Verdict::NeedMore,
        Some(b':') if name > 0 => k += 1,
        Some(_) => return Verdict::No,
    }
    if b.get(k) == Some(&b' ') {
        k += 1;
    }
    match b.get(k) {
        None => Verdict::NeedMore,
        Some(b'{') => Verdict::Yes,
        Some(_) => Verdict::No,
    }
}

pub(super) const fn is_trigger(c: u8) -> bool {
    matches!(
        c,
        b'<' | b'[' | b']' | b'{' | b'`' | b'@' | b'A' | b'F' | b'T' | b'f' | b'c'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_word_start_letter_has_one_word_marker() {
        for c in 0..128u8 {
            let starts = WORD_MARKERS.iter().filter(|m| m.as_bytes()[0] == c).count();
            assert_eq!(CLASS[usize::from(c)] == WORD_START, starts == 1, "{c}");
            assert!(starts <= 1);
        }
        assert_eq!(word_marker(b'f'), b"functools");
        assert_eq!(word_marker(b'x'), b"");
    }
}
