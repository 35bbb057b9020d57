//! Incremental parsing: [`StreamParser`] takes the model's stream chunk by chunk,
//! releases plain text as soon as it cannot start a call, and at the end returns exactly
//! what [`crate::parse`] returns for the whole text.
//!
//! Work is linear: each byte is examined a bounded number of times (a pending marker
//! prefix is re-examined at most until it is [`MAX_LOOKAHEAD`] bytes long), and once a
//! possible call start is seen, `feed` only appends. One-byte pushes take an inlined path
//! for the common cases (plain prose: a table lookup and one byte append; a held word
//! marker prefix that still matches; appending while held), and when no pushed byte could
//! start a call `finish` skips the pre-scan that [`crate::parse`] would repeat.

use crate::{parse, ParseOptions, Parsed};

/// Longest pending prefix examined before deciding it is plain text.
const MAX_LOOKAHEAD: usize = 64;

/// Tag prefixes that may start a call, reasoning or a control token.
const LT_MARKERS: &[&str] = &[
    "<|",
    "<｜",
    "<tool",
    "<function",
    "<think",
    "</think",
    "<thinking",
    "<seed:",
    "<minimax:",
    "<mm:",
    "<TOOLCALL>",
    "<start_function_call>",
    "<arg_key>",
    "<invoke",
    "<final_answer>",
    "<response>",
    "<xml>",
    "<atem:",
    "<channel|>",
    "<tools>",
    "</tool_call>",
];
const BRACKET_MARKERS: &[&str] = &[
    "[TOOL_CALLS]",
    "[THINK]",
    "[/THINK]",
    "[BEGIN FINAL RESPONSE]",
];
const WORD_MARKERS: &[&str] = &["Action", "Final Answer", "Thought:", "functools", "call:"];

/// Streaming parser: `push` chunks, print what it returns, then `finish`.
///
/// The released text is the plain-text prefix of the turn. [`StreamParser::finish`] is
/// authoritative: in a few formats the final `content` differs from what was released
/// (thinking forced open and closed later by `</think>`, ReAct transcripts whose only
/// content is the final answer, formats that drop prose around calls, trimmed whitespace).
#[derive(Debug)]
pub struct StreamParser {
    opts: ParseOptions,
    buf: String,
    /// Bytes of `buf` already released (stale while `live`: then all of it is).
    released: usize,
    /// A possible call start was seen: release nothing more.
    held: bool,
    /// Some non-whitespace text was released.
    seen_text: bool,
    /// `buf` holds no byte that [`crate::parse`] treats as a possible call start, so
    /// `finish` may skip its pre-scan.
    trigger_free: bool,
    /// Everything pushed was released, text was seen and nothing is held: a one-byte
    /// push may take the inlined path in [`StreamParser::feed`].
    live: bool,
    /// Held, and `trigger_free` is settled (false): a push only appends to `buf`.
    append_only: bool,
    /// When not empty: the word marker that the unreleased rest of `buf` is a proper
    /// prefix of (everything before it released, nothing held).
    word: &'static [u8],
}

/// [`CLASS`]: plain text wherever it stands.
const PLAIN: u8 = 1;
/// [`CLASS`]: a letter that may start a word marker (plain inside a word).
const WORD_START: u8 = 2;

/// Class of each ASCII byte for the one-byte path; 0 for call, reasoning and tag
/// starts (always examined by the slow path).
const CLASS: [u8; 128] = {
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
fn word_marker(c: u8) -> &'static [u8] {
    WORD_MARKERS
        .iter()
        .map(|m| m.as_bytes())
        .find(|m| m.first() == Some(&c))
        .unwrap_or(b"")
}

enum Verdict {
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

/// Could a call (or reasoning) start at the beginning of `rest`?
fn could_start(rest: &str) -> Verdict {
    match could_start_inner(rest) {
        Verdict::NeedMore if rest.len() >= MAX_LOOKAHEAD => Verdict::No,
        v => v,
    }
}

fn could_start_inner(rest: &str) -> Verdict {
    let b = rest.as_bytes();
    match b[0] {
        b'<' => against(rest, LT_MARKERS),
        b'`' => against(rest, &["```"]),
        b'{' => match rest[1..].trim_start().as_bytes().first() {
            None => Verdict::NeedMore,
            Some(b'"') | Some(b'\'') => Verdict::Yes,
            Some(_) => Verdict::No,
        },
        b'[' => {
            if let v @ (Verdict::Yes | Verdict::NeedMore) = against(rest, BRACKET_MARKERS) {
                return v;
            }
            let r = rest[1..].trim_start();
            let rb = r.as_bytes();
            let mut k = 0;
            while k < rb.len() && (rb[k].is_ascii_alphanumeric() || rb[k] == b'_' || rb[k] == b'.')
            {
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

const fn is_trigger(c: u8) -> bool {
    matches!(
        c,
        b'<' | b'[' | b'{' | b'`' | b'A' | b'F' | b'T' | b'f' | b'c'
    )
}

impl StreamParser {
    /// A parser with these options.
    pub fn new(opts: ParseOptions) -> Self {
        // A prefill (thinking forced open) makes the start reasoning: hold everything.
        let held = !opts.prefill.is_empty()
            || opts.format.is_some_and(|f| {
                matches!(
                    f,
                    crate::Family::ReactText
                        | crate::Family::ReactJson
                        | crate::Family::Functionary
                )
            });
        StreamParser {
            opts,
            buf: String::new(),
            released: 0,
            held,
            seen_text: false,
            trigger_free: true,
            live: false,
            append_only: false,
            word: b"",
        }
    }

    /// Append a chunk; returns plain content that is now safe to print (may be empty).
    pub fn push(&mut self, chunk: &str) -> String {
        self.feed(chunk).to_owned()
    }

    /// Like [`StreamParser::push`], but appends the released text to `out` (no allocation
    /// per chunk, one copy).
    #[inline]
    pub fn push_into(&mut self, chunk: &str, out: &mut String) {
        let piece = self.feed(chunk);
        match *piece.as_bytes() {
            [c] => out.push(char::from(c)),
            _ => out.push_str(piece),
        }
    }

    /// Like [`StreamParser::push`], without copying: the released text is returned as a
    /// slice of the parser's own buffer (the text kept for [`StreamParser::finish`]). This is
    /// the cheapest way to stream: nothing is allocated or copied per chunk.
    #[inline]
    pub fn feed(&mut self, chunk: &str) -> &str {
        // Token-by-token streams, one ASCII byte: append while held; release plain prose;
        // hold a letter that may start a word marker, and the letters that continue it.
        if let [c] = *chunk.as_bytes() {
            if c.is_ascii() {
                let ch = char::from(c);
                if self.append_only {
                    self.buf.push(ch);
                    return "";
                }
                if self.live {
                    let class = CLASS[usize::from(c)];
                    let in_word = || {
                        let last = self.buf.as_bytes().last();
                        last.is_some_and(u8::is_ascii_alphanumeric)
                    };
                    if class == PLAIN || (class == WORD_START && in_word()) {
                        self.buf.push(ch);
                        return &self.buf[self.buf.len() - 1..];
                    }
                    if class == WORD_START {
                        // A word marker may start here: hold the letter.
                        self.released = self.buf.len();
                        self.buf.push(ch);
                        self.live = false;
                        self.word = word_marker(c);
                        return "";
                    }
                } else if self.word.get(self.buf.len() - self.released + 1).is_some()
                    && self.word.get(self.buf.len() - self.released) == Some(&c)
                {
                    // The held word still matches and does not complete the marker.
                    self.buf.push(ch);
                    return "";
                }
            }
        }
        self.feed_slow(chunk)
    }

    /// All the text released so far: a prefix of the pushed text.
    pub fn released(&self) -> &str {
        &self.buf[..self.released_len()]
    }

    /// Bytes of `buf` released so far.
    fn released_len(&self) -> usize {
        if self.live {
            self.buf.len()
        } else {
            self.released
        }
    }

    #[inline(never)]
    fn feed_slow(&mut self, chunk: &str) -> &str {
        if self.live {
            self.released = self.buf.len();
        }
        let before = self.released;
        self.word = b"";
        if self.trigger_free {
            self.trigger_free = crate::scan::next_trigger(chunk.as_bytes(), 0) == chunk.len();
        }
        self.release(chunk);
        self.live = !self.held && self.seen_text && self.released == self.buf.len();
        self.append_only = self.held && !self.trigger_free;
        &self.buf[before..self.released]
    }

    /// Append `chunk` to the buffer and release what is now known to be plain text.
    fn release(&mut self, chunk: &str) {
        let start = self.released;
        let old_len = self.buf.len();
        self.buf.push_str(chunk);
        if self.held {
            return;
        }
        if !self.seen_text {
            // Harmony recipients (` to=functions.f`) open the turn. Only whitespace was
            // released so far, so the unreleased part is short.
            let head = self.buf[start..].trim_start();
            if head.starts_with("to=") {
                self.held = true;
                return;
            }
            if !head.is_empty() && "to=".starts_with(head) {
                return;
            }
        }
        // Fast path: nothing pending and no byte of the chunk can start anything (a letter
        // only matters at the start of a word).
        let cb = chunk.as_bytes();
        let plain = cb.iter().enumerate().all(|(k, &c)| {
            !is_trigger(c)
                || (c.is_ascii_alphabetic()
                    && match k {
                        0 => {
                            old_len > 0 && self.buf.as_bytes()[old_len - 1].is_ascii_alphanumeric()
                        }
                        _ => cb[k - 1].is_ascii_alphanumeric(),
                    })
        });
        if start == old_len && plain {
            self.released = self.buf.len();
            if !self.seen_text {
                self.seen_text = !chunk.trim().is_empty();
            }
            return;
        }
        let b = self.buf.as_bytes();
        let mut i = start;
        let mut stop = b.len();
        while i < b.len() {
            if !is_trigger(b[i]) {
                i += 1;
                continue;
            }
            // A word marker must start a word.
            if b[i].is_ascii_alphabetic() && i > 0 && b[i - 1].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let end = (i + MAX_LOOKAHEAD).min(b.len());
            let end = (end..=b.len())
                .find(|&e| self.buf.is_char_boundary(e))
                .unwrap_or(b.len());
            match could_start(&self.buf[i..end]) {
                Verdict::No => i += 1,
                Verdict::Yes => {
                    self.held = true;
                    stop = i;
                    break;
                }
                Verdict::NeedMore => {
                    stop = i;
                    break;
                }
            }
        }
        self.released = stop;
        let piece = &self.buf[start..stop];
        if !self.seen_text {
            self.seen_text = !piece.trim().is_empty();
        }
    }

    /// End of stream: the full result, identical to [`crate::parse`] on all pushed text.
    pub fn finish(self) -> Parsed {
        if self.trigger_free {
            crate::engine::parse_trigger_free(self.buf, &self.opts)
        } else {
            parse(&self.buf, &self.opts)
        }
    }
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
