//! Incremental parsing: [`StreamParser`] takes the model's stream chunk by chunk,
//! releases plain text as soon as it cannot start a call, and at the end returns exactly
//! what [`crate::parse`] returns for the whole text.
//!
//! A call closed by a tag of its own (`</tool_call>`, `<|tool_call_end|>`, `<tool_call|>`,
//! … see [`CLOSERS`]) is cut out of the released text once that tag arrives, and the
//! text after it is released live again, for the families whose content is exactly the
//! text around their calls ([`Family::streams_text_after_calls`]). A marker that content
//! drops (Kimi K3's `<|open|>response<|sep|>`) is cut on its own, so the text after it
//! streams too. A think block
//! (`<think>…</think>`, or thinking forced open by a prefill) is cut the same way once it
//! closes, so the answer after it streams too. The cut is checked with
//! [`crate::parse`] itself: the held text, with a probe text appended, must parse to calls
//! and give the probe back as its whole content (so the call is closed and keeps what
//! follows it), and before the first cut the whole text so far must give exactly what was
//! released as its content. What is released after a call is then the content that
//! `finish` returns, unless later text re-reads the turn (a `</think>` with no opening tag,
//! harmony channels); `finish` is always exact.
//!
//! Work is linear: each byte is examined a bounded number of times (a pending marker
//! prefix is re-examined at most until it is [`markers::MAX_LOOKAHEAD`] bytes long), and once a
//! possible call start is seen, `feed` only appends and, on a `>`, compares the closing
//! tags. A held text is parsed at most [`CLOSE_TRIES`] times (once per closing tag tried,
//! with the whole text so far before the first cut), and a cut text is never looked at
//! again. One-byte pushes take an inlined path for the common cases (plain prose: a table
//! lookup and one byte append; a held word marker prefix that still matches; appending
//! while held), and when no pushed byte could start a call `finish` skips the pre-scan
//! that [`crate::parse`] would repeat.

mod markers;

use crate::{parse, Family, ParseOptions, Parsed};
use markers::{
    could_start, is_trigger, word_marker, Verdict, CLASS, MAX_LOOKAHEAD, PLAIN, WORD_START,
};

/// Streaming parser: `push` chunks, print what it returns, then `finish`.
///
/// The released text is the turn's content as far as it is known: the pushed text, with
/// completed `<tool_call>` calls cut out, and whitespace kept back until some text follows it.
/// [`StreamParser::finish`] is authoritative: in a few formats the final `content` differs
/// from what was released (thinking forced open and closed later by `</think>`, Granite
/// 3.2's reasoning written as plain text and closed later by `Here is my response:`, ReAct
/// transcripts whose only content is the final answer, formats that drop prose around
/// calls, a call object written with bare keys (`{request: f, …}`), trimmed whitespace).
#[derive(Debug)]
pub struct StreamParser {
    opts: ParseOptions,
    /// `opts` without the prefill, for held texts that do not start the turn.
    held_opts: Option<Box<ParseOptions>>,
    buf: String,
    /// Bytes of `buf` consumed: released, cut out with a call, or owed (see [`Cuts::owed`]).
    /// Stale while `live`: then all of it is.
    released: usize,
    /// Bytes of `buf` examined and found plain: `buf[released..scanned]` is whitespace kept
    /// back because no text was released yet. Stale while `live`.
    scanned: usize,
    /// A possible call start was seen: release nothing more until it is cut out.
    held: bool,
    /// Where the held text starts.
    hold_start: usize,
    /// Closing tags still worth trying as the end of the held call (0: no call to cut out).
    close_tries: u8,
    /// Where the search for the held call's closing tag resumes.
    close_from: usize,
    /// Set once a call was cut out of the released text.
    cuts: Option<Box<Cuts>>,
    /// Some non-whitespace text was released.
    seen_text: bool,
    /// `buf` holds no byte that [`crate::parse`] treats as a possible call start, so
    /// `finish` may skip its pre-scan.
    trigger_free: bool,
    /// Everything pushed was released, text was seen and nothing is held: a one-byte
    /// push may take the inlined path in [`StreamParser::feed`].
    live: bool,
    /// Like `live`, once a call was cut out: a one-byte push of plain text is appended to
    /// the buffer and to the released text.
    live_after_cut: bool,
    /// Held, and `trigger_free` is settled (false): a push only appends to `buf`.
    append_only: bool,
    /// When not empty: the word marker that the unreleased rest of `buf` is a proper
    /// prefix of (everything before it released, nothing held).
    word: &'static [u8],
}

/// Release state once a call was cut out: the released text is no longer a slice of the
/// buffer.
#[derive(Debug, Default)]
struct Cuts {
    /// All text released so far.
    emitted: String,
    /// Whitespace before and between cut calls, released with the next text.
    owed: String,
    /// What to drop from the text right after the last cut, as [`crate::parse`] drops it.
    skip: Skip,
}

/// Text right after a cut that [`crate::parse`] leaves out of the content.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Skip {
    #[default]
    Nothing,
    /// Stray closers (`}`, `]`) right after a call.
    Closers,
    /// Whitespace right after a think block that opened the reply (the text after it is
    /// trimmed; after one between pieces of text it is kept as written).
    Whitespace,
}

/// What a held text turned out to be.
enum Settled {
    /// Calls (or a control token that content drops).
    Calls,
    /// A think block: reasoning only.
    Thinking,
}

/// Closing tags that may end a held call or think block (each ends with `>`, where the
/// search looks).
const CLOSERS: &[&str] = &[
    "</think>",
    "</thinking>",
    "</seed:think>",
    "</mm:think>",
    "<|END_THINKING|>",
    "<channel|>",
    "</ifm|think>",
    "</ifm|think_fast>",
    "</ifm|think_faster>",
    "</tool_call>",
    "</minimax:tool_call>",
    "</seed:tool_call>",
    "<|tool_call_end|>",
    "<tool_call|>",
    "<end_function_call>",
    "</TOOLCALL>",
    "</function_calls>",
    "<|END_ACTION|>",
    "<|action_end|>",
    "<|tool_calls_section_end|>",
    "<｜tool▁calls▁end｜>",
    "<|tool▁calls▁end|>",
    // Kimi K3's channels: a think channel and a tools section end at their closers; the
    // response channel's markers are cut on their own, so its text streams.
    "<|close|>think<|sep|>",
    "<|close|>tools<|sep|>",
    "<|open|>response<|sep|>",
    "<|close|>response<|sep|>",
];

/// Call starts read only at the very start of the turn (see `scan`).
const TURN_OPENERS: &[&str] = &["to=", "function<｜tool▁sep｜>", "function<|tool▁sep|>"];

/// Plain text appended to a held call to check that it is closed and keeps the text after
/// it as it is (see `StreamParser::only_calls`); it opens with whitespace, which some
/// malformed calls would swallow.
const CUT_PROBE: &str = " \nx";

/// Closing tags tried per hold (each try parses the held text: a bound keeps work linear
/// when a tag appears inside an argument string).
const CLOSE_TRIES: u8 = 8;

/// Whether held text may be cut out of the stream under these options: with no family hint,
/// or a hint whose content is the text around its calls.
fn hint_allows_cuts(opts: &ParseOptions) -> bool {
    opts.format.is_none_or(Family::streams_text_after_calls)
}

impl StreamParser {
    /// A parser with these options.
    pub fn new(opts: ParseOptions) -> Self {
        // A prefill (thinking forced open) makes the start reasoning: hold everything.
        let held = !opts.prefill.is_empty()
            || opts.format.is_some_and(|f| {
                matches!(
                    f,
                    Family::ReactText | Family::ReactJson | Family::Functionary
                )
            });
        // Thinking forced open may be cut once its close tag arrives.
        let prefilled = !opts.prefill.is_empty();
        let cuttable = prefilled && hint_allows_cuts(&opts);
        let held_opts = prefilled.then(|| {
            Box::new(ParseOptions {
                prefill: String::new(),
                ..opts.clone()
            })
        });
        StreamParser {
            opts,
            held_opts,
            buf: String::new(),
            released: 0,
            scanned: 0,
            held,
            hold_start: 0,
            close_tries: if cuttable { CLOSE_TRIES } else { 0 },
            close_from: 0,
            cuts: None,
            seen_text: false,
            trigger_free: true,
            live: false,
            live_after_cut: false,
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
    /// slice of the parser's own buffer (the text kept for [`StreamParser::finish`]; once a
    /// call was cut out, the released text it keeps beside it). This is the cheapest way to
    /// stream: nothing is allocated per chunk.
    #[inline]
    pub fn feed(&mut self, chunk: &str) -> &str {
        // Token-by-token streams, one ASCII byte: append while held (unless the byte may
        // close a call); release plain prose; hold a letter that may start a word
        // marker, and the letters that continue it.
        if let [c] = *chunk.as_bytes() {
            if c.is_ascii() {
                let ch = char::from(c);
                if self.append_only && (c != b'>' || self.close_tries == 0) {
                    self.buf.push(ch);
                    return "";
                }
                if self.live {
                    let class = CLASS[usize::from(c)];
                    if self.continues_text(class) {
                        self.buf.push(ch);
                        return &self.buf[self.buf.len() - 1..];
                    }
                    if class == WORD_START {
                        // A word marker may start here: hold the letter.
                        self.released = self.buf.len();
                        self.scanned = self.released;
                        self.buf.push(ch);
                        self.live = false;
                        self.word = word_marker(c);
                        return "";
                    }
                } else if self.live_after_cut && self.continues_text(CLASS[usize::from(c)]) {
                    self.buf.push(ch);
                    // `live_after_cut` implies a cut: nothing is inserted here.
                    let emitted = &mut self.cuts.get_or_insert_with(Box::default).emitted;
                    emitted.push(ch);
                    return &emitted[emitted.len() - 1..];
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

    /// Whether a byte of this [`CLASS`] is plain text after the buffer's last byte (a
    /// letter inside a word cannot start a word marker).
    #[inline]
    fn continues_text(&self, class: u8) -> bool {
        class == PLAIN
            || (class == WORD_START
                && self
                    .buf
                    .as_bytes()
                    .last()
                    .is_some_and(u8::is_ascii_alphanumeric))
    }

    /// All the text released so far.
    pub fn released(&self) -> &str {
        match &self.cuts {
            Some(cuts) => &cuts.emitted,
            None if self.live => &self.buf,
            None => &self.buf[..self.released],
        }
    }

    #[inline(never)]
    fn feed_slow(&mut self, chunk: &str) -> &str {
        if self.live || self.live_after_cut {
            self.released = self.buf.len();
            self.scanned = self.released;
        }
        let before = self.released;
        self.word = b"";
        if self.trigger_free {
            self.trigger_free = crate::scan::next_trigger(chunk.as_bytes(), 0) == chunk.len();
        }
        let emitted_before = self.cuts.as_ref().map_or(before, |c| c.emitted.len());
        self.release(chunk);
        let live = !self.held && self.seen_text && self.released == self.buf.len();
        self.live = live && self.cuts.is_none();
        self.live_after_cut = live && self.cuts.as_ref().is_some_and(|c| c.skip == Skip::Nothing);
        self.append_only = self.held && !self.trigger_free;
        match &self.cuts {
            Some(cuts) => &cuts.emitted[emitted_before..],
            None => &self.buf[before..self.released],
        }
    }

    /// Append `chunk` to the buffer and release what is now known to be plain text.
    fn release(&mut self, chunk: &str) {
        self.buf.push_str(chunk);
        loop {
            if self.held && !self.try_cut() {
                return;
            }
            self.scan();
            if !self.held {
                return;
            }
        }
    }

    /// Examine `buf` from `scanned`: release plain text, stop at a possible call start.
    fn scan(&mut self) {
        if let Some(cuts) = &mut self.cuts {
            if cuts.skip != Skip::Nothing {
                // Right after a cut nothing is kept back: `released == scanned`.
                let rest = &self.buf[self.scanned..];
                let kept = match cuts.skip {
                    Skip::Closers => rest.trim_start_matches(['}', ']']),
                    _ => rest.trim_start(),
                };
                if !kept.is_empty() {
                    cuts.skip = Skip::Nothing;
                }
                self.scanned += rest.len() - kept.len();
                self.released = self.scanned;
            }
        }
        let start = self.scanned;
        if !self.seen_text {
            // Harmony recipients (` to=functions.f`) and DeepSeek calls whose begin tokens
            // were lost open the turn. Only whitespace was examined so far, so the
            // unexamined part is short.
            let head = self.buf[start..].trim_start();
            if TURN_OPENERS.iter().any(|o| head.starts_with(o)) {
                self.hold(start, false);
                return;
            }
            if !head.is_empty() && TURN_OPENERS.iter().any(|o| o.starts_with(head)) {
                return;
            }
        }
        let b = self.buf.as_bytes();
        let mut i = start;
        let mut stop = b.len();
        while i < b.len() {
            if !is_trigger(b[i]) {
                i += 1;
                continue;
            }
            // A word marker must start a word, gptme's `@NAME(ID): {` a line.
            let after = if i > 0 { b[i - 1] } else { b'\n' };
            let mid_word = b[i].is_ascii_alphabetic() && after.is_ascii_alphanumeric();
            if mid_word || (b[i] == b'@' && after != b'\n') {
                i += 1;
                continue;
            }
            let end = (i + MAX_LOOKAHEAD).min(b.len());
            let end = (end..=b.len())
                .find(|&e| self.buf.is_char_boundary(e))
                .unwrap_or(b.len());
            match could_start(&self.buf[i..end], &self.opts.tools) {
                Verdict::No => i += 1,
                Verdict::Yes => {
                    // MiniMax's noise is deleted from the whole text before it is read, which
                    // can join the text around it into anything: nothing after it is cut.
                    let may_cut = b[i] != b']';
                    self.emit(i);
                    self.hold(i, may_cut);
                    return;
                }
                Verdict::NeedMore => {
                    stop = i;
                    break;
                }
            }
        }
        self.emit(stop);
    }

    /// `buf[scanned..stop]` is plain: release it with what was kept back, or keep it back
    /// too while it is whitespace and no text was released.
    fn emit(&mut self, stop: usize) {
        let from = self.scanned;
        if stop == from {
            return;
        }
        self.scanned = stop;
        if !self.seen_text {
            if self.buf[from..stop].trim().is_empty() {
                return;
            }
            self.seen_text = true;
        }
        if let Some(cuts) = &mut self.cuts {
            cuts.emitted.push_str(&cuts.owed);
            cuts.owed.clear();
            cuts.emitted.push_str(&self.buf[self.released..stop]);
        }
        self.released = stop;
    }

    /// Hold everything from `at`; `may_cut`: a call there may be cut out later.
    fn hold(&mut self, at: usize, may_cut: bool) {
        let cuttable = hint_allows_cuts(&self.opts);
        self.held = true;
        self.hold_start = at;
        self.close_from = at;
        self.close_tries = if may_cut && cuttable { CLOSE_TRIES } else { 0 };
    }

    /// Look for the end of the held call: when the held text up to a closing tag is only
    /// calls, cut it out and resume releasing after it. Returns whether it did.
    fn try_cut(&mut self) -> bool {
        while self.close_tries > 0 {
            let from = self.close_from;
            let Some(p) = memchr::memchr(b'>', &self.buf.as_bytes()[from..]) else {
                self.close_from = self.buf.len();
                return false;
            };
            let end = from + p + 1;
            self.close_from = end;
            let upto = &self.buf.as_bytes()[self.hold_start..end];
            if !CLOSERS.iter().any(|c| upto.ends_with(c.as_bytes())) {
                continue;
            }
            self.close_tries -= 1;
            if let Some(settled) = self.settles(end) {
                self.cut(end, settled);
                return true;
            }
        }
        false
    }

    /// Whether `buf[hold_start..end]` is calls of a family that keeps the text around them,
    /// or a think block, and nothing the content would keep.
    fn settles(&self, end: usize) -> Option<Settled> {
        // A text is appended after the held one: it must come back as the whole content
        // (after a think block, without its leading whitespace, which `parse` trims), so the
        // call or block is closed (one left open would swallow it) and nothing else is kept.
        let opts = match &self.held_opts {
            Some(opts) if self.hold_start > 0 => opts,
            _ => &self.opts,
        };
        let probed = |text: &str, opts: &ParseOptions| parse(&[text, CUT_PROBE].concat(), opts);
        let held = probed(&self.buf[self.hold_start..end], opts);
        if held.truncated || !held.errors.is_empty() {
            return None;
        }
        let calls = held.format.is_some_and(Family::streams_text_after_calls);
        let settled = if held.content.as_deref() == Some(CUT_PROBE) {
            // A control token that content drops (Kimi's section end after its last call,
            // Kimi K3's response markers) is cut out too.
            let nothing = held.calls.is_empty();
            ((calls || nothing) && held.reasoning.is_none()).then_some(Settled::Calls)
        } else {
            let thought = held.content.as_deref() == Some(CUT_PROBE.trim_start())
                && held.calls.is_empty()
                && held.reasoning.is_some();
            thought.then_some(Settled::Thinking)
        }?;
        if self.cuts.is_some() {
            return Some(settled);
        }
        // First cut: the whole text so far must agree that everything before the hold is
        // its content (thinking, kept-back whitespace and the family profile all play in).
        let whole = probed(&self.buf[..end], &self.opts);
        let before = &self.buf[..self.hold_start];
        // Text after a think block that follows text is kept as written.
        let probe = match settled {
            Settled::Thinking if !before.trim().is_empty() => CUT_PROBE,
            _ => held.content.as_deref().unwrap_or_default(),
        };
        let agrees = whole.content == Some([before, probe].concat())
            && whole.calls == held.calls
            && whole.reasoning == held.reasoning
            && whole.format == held.format
            && !whole.truncated;
        agrees.then_some(settled)
    }

    /// Cut `buf[hold_start..end]` (calls or a think block) out of the released text.
    fn cut(&mut self, end: usize, settled: Settled) {
        let cuts = self.cuts.get_or_insert_with(|| {
            Box::new(Cuts {
                emitted: self.buf[..self.released].to_owned(),
                ..Cuts::default()
            })
        });
        // Kept-back whitespace before the call stays owed.
        cuts.owed
            .push_str(&self.buf[self.released..self.hold_start]);
        match settled {
            Settled::Calls => cuts.skip = Skip::Closers,
            Settled::Thinking if self.seen_text => cuts.skip = Skip::Nothing,
            Settled::Thinking => cuts.skip = Skip::Whitespace,
        }
        self.held = false;
        self.close_tries = 0;
        self.released = end;
        self.scanned = end;
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
    fn families_cut_from_the_stream_keep_all_text_around_calls() {
        for f in Family::ALL.iter().filter(|f| f.streams_text_after_calls()) {
            assert!(!f.drops_text_between_calls(), "{f}");
            assert!(!f.drops_all_content_with_calls(), "{f}");
            assert!(!f.drops_trailing_text(), "{f}");
            assert!(!f.trims_content(), "{f}");
        }
    }
}
