//! The shared string-aware scanner: bracket matching that respects string state, the
//! trigger-byte scan, and JSON read strictly then tolerantly (through [`Lenient`]).
//!
//! Everything here is iterative or depth-limited, moves strictly forward, and returns
//! `None`/[`End::Invalid`] instead of panicking.

use serde_json::{Number, Value};

use crate::lenient::Lenient;

/// Where a bracketed value ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Exclusive end offset of the matching close bracket.
    Complete(usize),
    /// The input ran out first (truncated output).
    Incomplete,
    /// A close bracket did not match.
    Invalid,
}

/// Which string literals a bracket scan skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Quoting {
    /// Single-quoted strings are strings too (Python literals).
    pub(crate) single: bool,
    /// A raw line break ends an open string: how a value reads when the model lost its
    /// closing quote (`{"value": "oops` + newline + `}`).
    pub(crate) line_bound: bool,
}

impl Quoting {
    /// JSON's double-quoted strings.
    pub(crate) const JSON: Quoting = Quoting {
        single: false,
        line_bound: false,
    };
    /// Python's strings, in either quote.
    pub(crate) const PYTHON: Quoting = Quoting {
        single: true,
        line_bound: false,
    };
}

/// Find the end of the `{…}` / `[…]` / `(…)` starting at `start`, skipping strings
/// (`(…)` only under [`Quoting::single`], as in Python calls).
pub(crate) fn container_end(b: &[u8], start: usize, quoting: Quoting) -> End {
    container_scan(b, start, quoting, &mut |_, _| {})
}

/// [`container_end`]; when the scan fails (input ends, or a close bracket mismatches), also
/// reports the same failure for every bracket still open (`record(open_pos, end)`): a scan
/// from such a bracket would see exactly the same bytes in the same string state and fail
/// the same way, so callers can memoise and stay linear on unbalanced input. Successful
/// scans record nothing (callers skip past complete values), except line-bound ones, which
/// record every inner container's end too: their callers look inside a value that did not
/// parse, and must not scan it again from each inner bracket.
pub(crate) fn container_scan(
    b: &[u8],
    start: usize,
    quoting: Quoting,
    record: &mut dyn FnMut(usize, End),
) -> End {
    let py = quoting.single;
    let mut stack: Vec<(usize, u8)> = Vec::new();
    let mut i = start;
    let fail = |stack: &mut Vec<(usize, u8)>, record: &mut dyn FnMut(usize, End), e: End| {
        for (p, _) in stack.drain(..) {
            record(p, e);
        }
        e
    };
    while i < b.len() {
        let c = b[i];
        match c {
            b'{' => stack.push((i, b'}')),
            b'[' => stack.push((i, b']')),
            b'(' if py => stack.push((i, b')')),
            b'}' | b']' | b')' if c != b')' || py => match stack.last() {
                Some(&(p, want)) if want == c => {
                    stack.pop();
                    if quoting.line_bound && !stack.is_empty() {
                        record(p, End::Complete(i + 1));
                    }
                }
                _ => return fail(&mut stack, record, End::Invalid),
            },
            b'"' => match string_end_in(b, i, b'"', quoting.line_bound) {
                Some(e) => i = e - 1,
                None => return fail(&mut stack, record, End::Incomplete),
            },
            b'\'' if py => match string_end_in(b, i, b'\'', quoting.line_bound) {
                Some(e) => i = e - 1,
                None => return fail(&mut stack, record, End::Incomplete),
            },
            _ => {}
        }
        i += 1;
        if stack.is_empty() {
            return End::Complete(i);
        }
    }
    fail(&mut stack, record, End::Incomplete)
}

/// The strings of the container at `start`: Python's for a dict whose first key is
/// single-quoted (`{'key': …`), JSON's otherwise.
fn dict_quoting(b: &[u8], start: usize) -> Quoting {
    let python_dict = b.get(start) == Some(&b'{') && b.get(skip_ws(b, start + 1)) == Some(&b'\'');
    if python_dict {
        Quoting::PYTHON
    } else {
        Quoting::JSON
    }
}

/// Memoised [`container_end`] over one text.
#[derive(Default)]
pub(crate) struct ScanMemo {
    key: (usize, usize),
    ends: std::collections::HashMap<(usize, Quoting), End>,
    /// Fence lines counted so far: (up to this offset, how many).
    fences: (usize, usize),
    /// The last closer searched for: (the closer, searched from, found at).
    closer: Option<(String, usize, Option<usize>)>,
}

impl ScanMemo {
    /// Forget everything (call when starting on a new text).
    pub(crate) fn reset(&mut self) {
        self.key = (0, 0);
        self.ends.clear();
        self.fences = (0, 0);
        self.closer = None;
    }

    /// The first `close` in `t` at or after `from`, the last answer reused while it still
    /// holds, so tags looking for their closer one after another stay linear.
    pub(crate) fn next_closer(&mut self, t: &str, close: &str, from: usize) -> Option<usize> {
        self.use_text(t);
        if let Some((c, searched, found)) = &self.closer {
            if c == close && *searched <= from && found.is_none_or(|f| f >= from) {
                return *found;
            }
        }
        let found = t[from..].find(close).map(|p| from + p);
        self.closer = Some((close.to_owned(), from, found));
        found
    }

    /// Whether `pos` in `t` lies inside a markdown code fence: an odd number of fence lines
    /// (three backticks opening the line, after indentation or `> ` quote marks) end before
    /// it. Counted on from the last question, so questions in order stay linear.
    pub(crate) fn in_fence(&mut self, t: &str, pos: usize) -> bool {
        self.use_text(t);
        let (mut line, mut count) = self.fences;
        if pos < line {
            (line, count) = (0, 0);
        }
        while let Some(p) = memchr::memchr(b'\n', &t.as_bytes()[line..pos]) {
            let text = t[line..line + p].trim_start_matches([' ', '\t', '>']);
            if text.starts_with("```") {
                count += 1;
            }
            line += p + 1;
        }
        self.fences = (line, count);
        count % 2 == 1
    }

    /// End of the JSON container at `start` in `t` (a Python dict, `{'key': …`, with
    /// Python's strings).
    pub(crate) fn end(&mut self, t: &str, start: usize) -> End {
        self.end_with(t, start, dict_quoting(t.as_bytes(), start))
    }

    /// [`ScanMemo::end`] with the strings ending at a raw line break, for a second look at
    /// a container that did not balance.
    pub(crate) fn line_bound_end(&mut self, t: &str, start: usize) -> End {
        let quoting = Quoting {
            line_bound: true,
            ..dict_quoting(t.as_bytes(), start)
        };
        self.end_with(t, start, quoting)
    }

    /// Start over when `t` is not the text remembered.
    fn use_text(&mut self, t: &str) {
        let key = (t.as_ptr() as usize, t.len());
        if key != self.key {
            self.reset();
            self.key = key;
        }
    }

    fn end_with(&mut self, t: &str, start: usize, quoting: Quoting) -> End {
        self.use_text(t);
        if !self.ends.is_empty() {
            if let Some(e) = self.ends.get(&(start, quoting)) {
                return *e;
            }
        }
        let ends = &mut self.ends;
        container_scan(t.as_bytes(), start, quoting, &mut |p, e| {
            ends.insert((p, quoting), e);
        })
    }
}

/// Offset of the next byte at or after `from` that can start a call (`<`, `[`, `{`, or
/// a backtick), or `b.len()`. Scans eight bytes at a time (SWAR), so prose costs about a
/// memchr.
pub(crate) fn next_trigger(b: &[u8], from: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    #[inline]
    fn zero_bytes(x: u64) -> u64 {
        x.wrapping_sub(LO) & !x & HI
    }
    let mut i = from;
    while i + 8 <= b.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[i..i + 8]);
        let w = u64::from_le_bytes(word);
        let m = zero_bytes(w ^ (LO * u64::from(b'<')))
            | zero_bytes(w ^ (LO * u64::from(b'[')))
            | zero_bytes(w ^ (LO * u64::from(b'{')))
            | zero_bytes(w ^ (LO * u64::from(b'`')));
        if m != 0 {
            // The lowest flagged byte is exact (false positives only sit above a match).
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !matches!(b[i], b'<' | b'[' | b'{' | b'`') {
        i += 1;
    }
    i
}

/// Exclusive end of the string literal opening at `start` (a `quote` byte).
pub(crate) fn string_end(b: &[u8], start: usize, quote: u8) -> Option<usize> {
    string_end_in(b, start, quote, false)
}

/// [`string_end`]; with `line_bound`, a raw line break ends the string too (the offset of
/// the line break: the string had lost its closing quote).
pub(crate) fn string_end_in(b: &[u8], start: usize, quote: u8, line_bound: bool) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return Some(i + 1),
            b'\n' if line_bound => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Skip ASCII whitespace from `i`.
pub(crate) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// [`skip_ws`], also past escapes a model wrote for layout between tags as if inside a JSON
/// string (a literal `\n`, `\r` or `\t`).
pub(crate) fn skip_layout(b: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_ws(b, i);
        match b.get(i..i + 2) {
            Some([b'\\', b'n' | b'r' | b't']) => i += 2,
            _ => return i,
        }
    }
}

/// Parse `text` (trimmed) as exactly one JSON value, strictly first, then tolerantly
/// (single quotes, Python literals, one trailing comma).
pub(crate) fn parse_json_lenient(text: &str) -> Option<Value> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    lenient_whole(t, |_| {})
}

/// `text` (trimmed) read whole, as one value, by a [`Lenient`] parser `setup` configures.
fn lenient_whole(text: &str, setup: impl FnOnce(&mut Lenient<'_>)) -> Option<Value> {
    let t = text.trim();
    let mut p = Lenient::new(t);
    setup(&mut p);
    let v = p.value()?;
    p.ws();
    (p.pos == t.len()).then_some(v)
}

/// [`parse_json_lenient`] for a value whose strings end at a raw line break when their
/// closing quote is missing (see [`Quoting::line_bound`]).
pub(crate) fn parse_json_line_bound(text: &str) -> Option<Value> {
    lenient_whole(text, |p| p.line_bound = true)
}

/// [`parse_json_lenient`] for an object written with bare keys and bare-word values, as
/// weak models write it (`{request: run_query, query: SELECT * FROM t}`).
pub(crate) fn parse_json_bare_words(text: &str) -> Option<Value> {
    lenient_whole(text, |p| {
        p.bare_keys = true;
        p.bare_words = true;
    })
}

/// JSON that came HTML-escaped (`{&quot;name&quot;: …}`, as a web UI or log shows it):
/// only tried when `&quot;` is there, since such text cannot be JSON otherwise.
pub(crate) fn parse_json_html_escaped(text: &str) -> Option<Value> {
    if !text.contains("&quot;") {
        return None;
    }
    parse_json_lenient(&unescape_xml(text))
}

/// XML's entities (`&amp;`, `&quot;`, `&apos;`, `&#39;`, `&lt;`, `&gt;`) decoded in one
/// pass (`&amp;quot;` is `&quot;`); any other `&` stays.
pub(crate) fn unescape_xml(s: &str) -> String {
    const ENTITIES: &[(&str, char)] = &[
        ("&amp;", '&'),
        ("&quot;", '"'),
        ("&apos;", '\''),
        ("&#39;", '\''),
        ("&lt;", '<'),
        ("&gt;", '>'),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        match ENTITIES.iter().find(|(e, _)| rest.starts_with(e)) {
            Some((e, c)) => {
                out.push(*c);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A JSON number from a numeral such as `42`, `-2.5`, `1.5e10`, `.5`.
pub(crate) fn number_value(t: &str) -> Option<Value> {
    if t.is_empty() {
        return None;
    }
    if let Ok(Value::Number(n)) = serde_json::from_str::<Value>(t) {
        return Some(Value::Number(n));
    }
    // Python-isms like `.5` or `5.`.
    let f: f64 = t.parse().ok()?;
    if !t.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    Number::from_f64(f).map(Value::Number)
}

/// Decode backslash escapes (JSON and Python). Unknown escapes keep the backslash.
pub(crate) fn unescape(raw: &str) -> String {
    if !raw.contains('\\') {
        return raw.to_string();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('0') => out.push('\0'),
            Some('/') => out.push('/'),
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('\'') => out.push('\''),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let Ok(hi) = u32::from_str_radix(&hex, 16) else {
                    out.push_str("\\u");
                    out.push_str(&hex);
                    continue;
                };
                if (0xD800..0xDC00).contains(&hi) {
                    let mut look = chars.clone();
                    if look.next() == Some('\\') && look.next() == Some('u') {
                        let lo_hex: String = look.by_ref().take(4).collect();
                        if let Ok(lo) = u32::from_str_radix(&lo_hex, 16) {
                            if (0xDC00..0xE000).contains(&lo) {
                                let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                if let Some(ch) = char::from_u32(cp) {
                                    out.push(ch);
                                    chars = look;
                                    continue;
                                }
                            }
                        }
                    }
                    out.push('\u{FFFD}');
                } else {
                    out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Whether `c` may stand in a tool's name (`get_weather`, `read-file`, `api.v2`).
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Whether `name` is a tool's name as formats spell it: no spaces, tags or punctuation
/// beyond `_ - .` (a label or markup around it makes it something else).
pub(crate) fn is_tool_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(is_name_char)
}

/// `raw` without one line break at each end (the layout around a value on its own lines).
pub(crate) fn without_layout_newlines(raw: &str) -> &str {
    let raw = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    raw.strip_suffix("\r\n")
        .or_else(|| raw.strip_suffix('\n'))
        .unwrap_or(raw)
}

/// Offset of the first `word` at or after `from` that starts a line of `t` (after spaces or
/// tabs). Only the blanks before each candidate are looked back over, so any input costs
/// linear work.
pub(crate) fn line_starting(t: &str, from: usize, word: &str) -> Option<usize> {
    memchr::memmem::find_iter(&t.as_bytes()[from..], word.as_bytes())
        .map(|p| from + p)
        .find(|&p| {
            let before = t[..p].trim_end_matches([' ', '\t']);
            before.is_empty() || before.ends_with('\n')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_inside_strings_do_not_count() {
        let s = br#"{"a": "x}y{", "b": [1, "]"]} tail"#;
        assert_eq!(container_end(s, 0, Quoting::JSON), End::Complete(28));
        assert_eq!(
            container_end(br#"{"a": "x"#, 0, Quoting::JSON),
            End::Incomplete
        );
        assert_eq!(container_end(br#"{"a": ]"#, 0, Quoting::JSON), End::Invalid);
        // A string that lost its closing quote, read to the end of its line.
        let lost = b"{\"a\": \"x\n} {\"b\": 1}";
        assert_eq!(container_end(lost, 0, Quoting::JSON), End::Incomplete);
        let line_bound = Quoting {
            single: false,
            line_bound: true,
        };
        assert_eq!(container_end(lost, 0, line_bound), End::Complete(10));
    }

    #[test]
    fn next_trigger_finds_the_first_marker_byte() {
        let text = b"plain text, no markers here at all; then <x";
        assert_eq!(next_trigger(text, 0), text.len() - 2);
        assert_eq!(next_trigger(b"abc", 0), 3);
        for (k, c) in [b'<', b'[', b'{', b'`'].into_iter().enumerate() {
            let mut v = vec![b'a'; 37];
            v[20 + k] = c;
            v[30] = b'<';
            assert_eq!(next_trigger(&v, 3), 20 + k);
        }
        // Bytes adjacent in value to the triggers must not match.
        assert_eq!(next_trigger(b";=>ZZ\\]]}}_a|~ \x7f\x80\xff", 0), 18);
    }

    #[test]
    fn unescape_handles_surrogates() {
        assert_eq!(unescape("\\ud83c\\udf89 \\n"), "\u{1F389} \n");
        assert_eq!(unescape("\\ud83c"), "\u{FFFD}");
    }
}
