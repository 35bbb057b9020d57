//! Degenerate output: a reply in which one character or a short phrase repeats on and on
//! ("1000000…", "the the the …"). SmolLM2-135M, asked for a final answer after three failed
//! calls, wrote 1,922 tokens of "1000…0". Such text is cut where the repetition began (one
//! copy of the repeated unit kept), and the loop reports a `degenerate_output` guardrail.
//!
//! The test is a pure function over the text: for each period `p` up to [`MAX_PERIOD`]
//! characters, the longest stretch in which every character equals the one `p` before it. A
//! stretch counts as degenerate when it covers at least [`MIN_SPAN`] characters and at least
//! [`MIN_REPEATS`] copies of its unit, and either the unit holds a letter or digit or the
//! stretch runs over [`MIN_REPEATS`] lines or more: a long rule of `-` or `=` on one line in
//! Markdown is not degenerate, a column of `#` lines or of blank lines is (SmolLM2-135M wrote
//! 1,000 lines of `#` as an answer). Work is `O(MAX_PERIOD · n)`. Longer units are caught as
//! lines: [`MIN_REPEATS`] identical non-blank lines in a row over [`MIN_SPAN`] characters or
//! more (SmolLM2-135M listed "- src/src.rs: This file contains the main content of the src
//! folder." until `num_predict`), in `O(n)`.

use std::time::Duration;

use reagent_protocol::{ChatResponse, FinishReason, Message, ProviderError, Usage};

use crate::events::EventSink;

/// Longest repeated unit looked for, in characters.
const MAX_PERIOD: usize = 40;
/// Fewest characters a repetitive stretch covers before it is degenerate.
const MIN_SPAN: usize = 120;
/// Fewest copies of the unit in a degenerate stretch.
const MIN_REPEATS: usize = 8;

/// Where a text degenerates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Degeneration {
    /// Byte offset at which to cut: the start of the stretch plus one copy of the unit.
    pub cut_at: usize,
    /// The repeated unit.
    pub unit: String,
    /// Characters the repetitive stretch covers (to the end of what was seen).
    pub span_chars: usize,
}

/// The earliest degenerate stretch of `text`, if there is one.
pub fn find(text: &str) -> Option<Degeneration> {
    match (repeated_unit(text), repeated_line(text)) {
        (Some(unit), Some(line)) if line.cut_at < unit.cut_at => Some(line),
        (unit, line) => unit.or(line),
    }
}

/// The earliest stretch in which a unit of up to [`MAX_PERIOD`] characters repeats.
fn repeated_unit(text: &str) -> Option<Degeneration> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    if n < MIN_SPAN {
        return None;
    }
    let mut best: Option<(usize, usize, usize)> = None; // (start, period, span)
    for period in 1..=MAX_PERIOD.min(n / MIN_REPEATS) {
        let need = MIN_SPAN.max(period * MIN_REPEATS);
        // `run` counts positions i (from `period` on) where chars[i] == chars[i - period].
        let mut run = 0usize;
        let mut i = period;
        while i <= n {
            let same = i < n && chars[i].1 == chars[i - period].1;
            if same {
                run += 1;
                i += 1;
                continue;
            }
            let span = run + period;
            let start = i - span;
            if run > 0
                && span >= need
                && best.is_none_or(|(s, _, _)| start < s)
                && is_degenerate_unit(&chars[start..start + period], &chars[start..i])
            {
                best = Some((start, period, span));
            }
            run = 0;
            i += 1;
        }
    }
    best.map(|(start, period, span)| {
        let unit: String = chars[start..start + period].iter().map(|c| c.1).collect();
        let cut_at = chars.get(start + period).map_or(text.len(), |c| c.0);
        Degeneration {
            cut_at,
            unit,
            span_chars: span,
        }
    })
}

/// The earliest run of [`MIN_REPEATS`] identical non-blank lines (complete ones, of any length)
/// covering [`MIN_SPAN`] characters or more.
fn repeated_line(text: &str) -> Option<Degeneration> {
    let mut offset = 0;
    // The run so far: its first line (with its newline), where it starts, how many copies.
    let mut run: Option<(&str, usize, usize)> = None;
    for line in text.split_inclusive('\n') {
        let counts = line.ends_with('\n') && !line.trim().is_empty();
        run = match run {
            Some((first, start, copies)) if counts && line == first => {
                Some((first, start, copies + 1))
            }
            done => {
                if let Some(found) = done.and_then(|r| degenerate_lines(text, r, offset)) {
                    return Some(found);
                }
                counts.then_some((line, offset, 1))
            }
        };
        offset += line.len();
    }
    run.and_then(|r| degenerate_lines(text, r, offset))
}

/// The run of identical lines `(first, start, copies)` ending at byte `end`, if it is degenerate.
fn degenerate_lines(
    text: &str,
    (first, start, copies): (&str, usize, usize),
    end: usize,
) -> Option<Degeneration> {
    let span_chars = text[start..end].chars().count();
    (copies >= MIN_REPEATS && span_chars >= MIN_SPAN).then(|| Degeneration {
        cut_at: start + first.len(),
        unit: first.to_owned(),
        span_chars,
    })
}

/// Whether a long repetition of `unit` over `stretch` is degenerate: the unit says something
/// (a letter or digit), or the stretch repeats whole lines (symbols or blank lines, line after
/// line); a rule of symbols on one line is layout.
fn is_degenerate_unit(unit: &[(usize, char)], stretch: &[(usize, char)]) -> bool {
    unit.iter().any(|c| c.1.is_alphanumeric())
        || stretch.iter().filter(|c| c.1 == '\n').count() >= MIN_REPEATS
}

/// How many new bytes of a stream arrive between two checks.
const CHECK_EVERY_BYTES: usize = 128;
/// How much of a stream's end each check looks at.
const TAIL_BYTES: usize = 1024;
/// How much of a stream's end the check for repeated lines looks at (linear work).
const LINE_TAIL_BYTES: usize = 8192;
/// Bytes per token assumed for a stream cut before the server reported its usage.
const BYTES_PER_TOKEN: usize = 4;

/// Watches a streamed reply and says once it has certainly degenerated, so the model call can
/// be stopped instead of running on to `num_predict`. Each check looks at the last
/// [`TAIL_BYTES`] only, every [`CHECK_EVERY_BYTES`], so watching costs linear work.
#[derive(Debug, Default)]
pub(crate) struct StreamWatch {
    text: String,
    checked: usize,
    degenerate: bool,
}

impl StreamWatch {
    /// Add a streamed piece; true once the text so far has degenerated.
    pub(crate) fn push(&mut self, piece: &str) -> bool {
        self.text.push_str(piece);
        if !self.degenerate && self.text.len() >= self.checked + CHECK_EVERY_BYTES {
            self.checked = self.text.len();
            let tail = |bytes: usize| {
                let mut from = self.text.len().saturating_sub(bytes);
                while !self.text.is_char_boundary(from) {
                    from += 1;
                }
                &self.text[from..]
            };
            // The line check covers the short tail too: `find` would run it twice.
            self.degenerate = repeated_unit(tail(TAIL_BYTES)).is_some()
                || repeated_line(tail(LINE_TAIL_BYTES)).is_some();
        }
        self.degenerate
    }

    /// The reply of a model call stopped because its stream degenerated: the text so far,
    /// with its tokens estimated (the server never reported them) and finish reason
    /// `degenerate`. A call stopped for any other reason stays [`ProviderError::Cancelled`].
    pub(crate) fn into_reply(self, latency: Duration) -> Result<ChatResponse, ProviderError> {
        if !self.degenerate {
            return Err(ProviderError::Cancelled);
        }
        let completion_tokens = (self.text.len() / BYTES_PER_TOKEN) as u64;
        Ok(ChatResponse {
            message: Message::assistant(self.text),
            finish: FinishReason::Other("degenerate".to_owned()),
            usage: Usage {
                completion_tokens,
                ..Usage::default()
            },
            latency,
            endpoint: String::new(),
        })
    }
}

/// Cut `text` where it degenerates, report it as a `degenerate_output` guardrail, and say
/// whether it was cut.
pub(crate) fn cut(text: &mut String, events: &EventSink) -> bool {
    let Some(d) = find(text) else {
        return false;
    };
    let dropped = text.len() - d.cut_at;
    text.truncate(d.cut_at);
    let kept = text.trim_end().len();
    text.truncate(kept);
    let unit: String = d.unit.chars().take(20).collect();
    events.guardrail(
        reagent_protocol::Guardrail::DegenerateOutput,
        reagent_protocol::GuardrailAction::Cut,
        format!(
            "the reply repeated {unit:?} over {} characters; {dropped} bytes cut",
            d.span_chars
        ),
    );
    true
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_repeated_digit_is_cut_after_the_first_copy() {
        let text = format!("The code is 1{}", "0".repeat(2000));
        let d = find(&text).unwrap();
        assert_eq!(d.unit, "0");
        assert_eq!(&text[..d.cut_at], "The code is 10");
        assert_eq!(d.span_chars, 2000);
    }

    #[test]
    fn a_repeated_phrase_is_cut() {
        let text = format!("Answer: {}", "the file ".repeat(30));
        let d = find(&text).unwrap();
        // The stretch begins at the space before the first copy.
        assert_eq!(&text[..d.cut_at], "Answer: the file");
        assert_eq!(d.unit, " the file");
        let text = format!("so {}", "the ".repeat(40));
        assert_eq!(&text[..find(&text).unwrap().cut_at], "so the");
    }

    #[test]
    fn short_repeats_rules_and_tables_are_not_degenerate() {
        assert_eq!(find(&"0".repeat(MIN_SPAN - 1)), None);
        assert_eq!(find(&"ab".repeat(7)), None);
        assert_eq!(find(&format!("Title\n{}\ntext", "=".repeat(300))), None);
        let table = "| a | b |\n|---|---|\n".to_owned() + &"| 1 | 2 |\n".repeat(5);
        assert_eq!(find(&table), None);
        assert_eq!(find(""), None);
    }

    #[test]
    fn repeated_lines_of_symbols_or_blank_lines_are_cut() {
        // What SmolLM2-135M answered once: a fence, then a column of `#` lines.
        let text = format!("The file has two lines:\n\n```\n{}", "#\n".repeat(1000));
        let d = find(&text).unwrap();
        assert_eq!(&text[..d.cut_at], "The file has two lines:\n\n```\n#");
        let blank = format!("Done.{}", "\n".repeat(200));
        assert_eq!(&blank[..find(&blank).unwrap().cut_at], "Done.\n");
        // A few lines of a rule, or a short column, stay.
        let ruled = format!("a\n{}b", format!("{}\n", "-".repeat(60)).repeat(3));
        assert_eq!(find(&ruled), None);
        assert_eq!(find(&format!("x{}y", "#\n".repeat(7))), None);
    }

    #[test]
    fn a_long_line_repeated_line_after_line_is_cut_after_its_first_copy() {
        let item = "- src/src.rs: This file contains the main content of the src folder.\n";
        let text = format!(
            "The files are:\n- src/main.rs: the main module.\n{}- src/src.rs: This file",
            item.repeat(100)
        );
        let d = find(&text).unwrap();
        assert_eq!(
            &text[..d.cut_at],
            format!("The files are:\n- src/main.rs: the main module.\n{item}")
        );
        assert_eq!(d.unit, item);
        assert_eq!(d.span_chars, 100 * item.len());
        // A list of different lines, or a line written a few times, stays.
        let list: String = (0..40)
            .map(|i| format!("- file{i}.txt: a file.\n"))
            .collect();
        assert_eq!(find(&list), None);
        assert_eq!(find(&item.repeat(MIN_REPEATS - 1)), None);
        // Short lines need the same span as any repetition.
        assert_eq!(find(&"ok\n".repeat(MIN_REPEATS)), None);
    }

    #[test]
    fn a_stream_repeating_a_long_line_is_stopped() {
        let mut watch = StreamWatch::default();
        // 160 characters: longer than a unit, and its lines do not fit the short tail.
        let line =
            "- The keeper of the northern lighthouse wrote in his log that the lamp was lit \
                    at dusk, the fog horn sounded twice, and no ship passed the point tonight.\n";
        let mut pushed = 0;
        while !watch.push(line) {
            pushed += 1;
            assert!(pushed < 3 * MIN_REPEATS, "never stopped");
        }
        assert!(pushed >= MIN_REPEATS - 1, "stopped after {pushed} lines");
    }

    #[test]
    fn multibyte_text_is_cut_on_a_char_boundary() {
        let text = format!("é{}", "ü".repeat(500));
        let d = find(&text).unwrap();
        assert_eq!(&text[..d.cut_at], "éü");
    }

    #[test]
    fn cut_trims_and_reports() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink_seen = seen.clone();
        let events = EventSink::new(
            "r",
            std::sync::Arc::new(move |e| sink_seen.lock().unwrap().push(e)),
        );
        let mut text = format!("It is {}", "go ".repeat(100));
        assert!(cut(&mut text, &events));
        assert_eq!(text, "It is go");
        let mut fine = "A normal answer.".to_owned();
        assert!(!cut(&mut fine, &events));
        assert_eq!(fine, "A normal answer.");
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        let json = serde_json::to_value(&seen[0]).unwrap();
        assert_eq!(json["type"], "guardrail");
        assert_eq!(json["guardrail"], "degenerate_output");
        assert_eq!(json["action"], "cut");
    }

    #[test]
    fn a_stream_is_stopped_once_it_degenerates_and_not_before() {
        let mut watch = StreamWatch::default();
        for i in 0..50 {
            let sentence = format!("The keeper lit lamp {} at {} o'clock. ", i * 7, i % 12);
            assert!(!watch.push(&sentence), "{i}");
        }
        let mut pushed = 0;
        while !watch.push("0") {
            pushed += 1;
            assert!(pushed < 2 * MIN_SPAN + CHECK_EVERY_BYTES, "never stopped");
        }
        assert!(pushed >= MIN_SPAN, "stopped after {pushed} zeros");
        let reply = watch.into_reply(Duration::from_millis(7)).unwrap();
        let text = &reply.message.content;
        assert!(text.ends_with("0000"));
        assert_eq!(reply.finish, FinishReason::Other("degenerate".into()));
        assert_eq!(
            reply.usage.completion_tokens,
            (text.len() / BYTES_PER_TOKEN) as u64
        );
        assert_eq!(reply.latency, Duration::from_millis(7));
    }

    #[test]
    fn a_call_stopped_for_another_reason_stays_cancelled() {
        let mut watch = StreamWatch::default();
        watch.push("A fine answer.");
        assert!(matches!(
            watch.into_reply(Duration::ZERO),
            Err(ProviderError::Cancelled)
        ));
    }

    const WORDS: &[&str] = &[
        "the",
        "file",
        "notes.txt",
        "contains",
        "a",
        "line",
        "with",
        "orchid",
        "and",
        "port",
        "8080",
        "is",
        "set",
        "in",
        "config.toml;",
        "error",
        "code",
        "E4711",
        "was",
        "found",
        "at",
        "line",
        "2718.",
        "The",
        "answer",
        "keeper",
        "Ines",
        "Calloway",
        "lights",
        "lamp",
    ];

    proptest! {
        /// Prose made of varied words (even with a word or two repeated) is never flagged.
        #[test]
        fn normal_prose_is_not_flagged(picks in proptest::collection::vec(0..WORDS.len(), 0..400)) {
            let mut text = String::new();
            let mut last = usize::MAX;
            let mut streak = 0;
            for p in picks {
                // Prose may repeat a word, but not the same word eight times in a row.
                streak = if p == last { streak + 1 } else { 0 };
                if streak >= 2 { continue; }
                last = p;
                text.push_str(WORDS[p]);
                text.push(' ');
            }
            prop_assert_eq!(find(&text), None, "{}", text);
        }
    }
}
