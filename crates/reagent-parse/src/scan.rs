//! The shared string-aware scanner: bracket matching that respects string state, and a
//! tolerant value parser for JSON, Python literals and the Gemma-style dialects.
//!
//! Everything here is iterative or depth-limited, moves strictly forward, and returns
//! `None`/[`End::Invalid`] instead of panicking.

use serde_json::{Map, Number, Value};

/// Maximum nesting accepted by the tolerant parser (deeper input is rejected).
const MAX_DEPTH: usize = 128;

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

/// Find the end of the `{…}` / `[…]` / `(…)` starting at `start`, skipping strings.
/// With `py`, single-quoted strings are strings too.
pub(crate) fn container_end(b: &[u8], start: usize, py: bool) -> End {
    container_scan(b, start, py, &mut |_, _| {})
}

/// [`container_end`]; when the scan fails (input ends, or a close bracket mismatches), also
/// reports the same failure for every bracket still open (`record(open_pos, end)`): a scan
/// from such a bracket would see exactly the same bytes in the same string state and fail
/// the same way, so callers can memoise and stay linear on unbalanced input. Successful
/// scans record nothing (callers skip past complete values).
pub(crate) fn container_scan(
    b: &[u8],
    start: usize,
    py: bool,
    record: &mut dyn FnMut(usize, End),
) -> End {
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
                Some(&(_, want)) if want == c => {
                    stack.pop();
                }
                _ => return fail(&mut stack, record, End::Invalid),
            },
            b'"' => match string_end(b, i, b'"') {
                Some(e) => i = e - 1,
                None => return fail(&mut stack, record, End::Incomplete),
            },
            b'\'' if py => match string_end(b, i, b'\'') {
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

/// Memoised [`container_end`] over one text (JSON strings only).
#[derive(Default)]
pub(crate) struct ScanMemo {
    key: (usize, usize),
    ends: std::collections::HashMap<usize, End>,
}

impl ScanMemo {
    /// Forget everything (call when starting on a new text).
    pub(crate) fn reset(&mut self) {
        self.key = (0, 0);
        self.ends.clear();
    }

    /// End of the JSON container at `start` in `t`.
    pub(crate) fn end(&mut self, t: &str, start: usize) -> End {
        let key = (t.as_ptr() as usize, t.len());
        if key != self.key {
            self.reset();
            self.key = key;
        }
        if !self.ends.is_empty() {
            if let Some(e) = self.ends.get(&start) {
                return *e;
            }
        }
        let ends = &mut self.ends;
        container_scan(t.as_bytes(), start, false, &mut |p, e| {
            ends.insert(p, e);
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
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == quote => return Some(i + 1),
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
    let mut p = Lenient::new(t);
    let v = p.value()?;
    p.ws();
    (p.pos == t.len()).then_some(v)
}

/// JSON that came HTML-escaped (`{&quot;name&quot;: …}`, as a web UI or log shows it):
/// only tried when `&quot;` is there, since such text cannot be JSON otherwise.
pub(crate) fn parse_json_html_escaped(text: &str) -> Option<Value> {
    if !text.contains("&quot;") {
        return None;
    }
    let t = text
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    parse_json_lenient(&t)
}

/// A tolerant recursive-descent value parser over a string.
pub(crate) struct Lenient<'a> {
    s: &'a str,
    /// Current byte offset.
    pub(crate) pos: usize,
    depth: usize,
    /// Extra raw-string delimiter (`<|"|>` for Gemma 4, `<escape>` for FunctionGemma).
    pub(crate) str_delim: Option<&'static str>,
    /// Object keys may be bare identifiers.
    pub(crate) bare_keys: bool,
    /// Python call syntax: zero-padded integers (`07`), sets (`{'a', 'b'}`, read as
    /// lists), and a quote of the string's own kind inside it when it is not followed by
    /// what may follow a value (`'sed -n '1,5p' f'`) or sits inside a quotation of the
    /// other kind (`'python -c "f('x')"'`).
    pub(crate) python: bool,
}

impl<'a> Lenient<'a> {
    /// A parser at the start of `s`.
    pub(crate) fn new(s: &'a str) -> Self {
        Lenient {
            s,
            pos: 0,
            depth: 0,
            str_delim: None,
            bare_keys: false,
            python: false,
        }
    }

    fn b(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.b().get(self.pos).copied()
    }

    /// Skip whitespace.
    pub(crate) fn ws(&mut self) {
        self.pos = skip_ws(self.b(), self.pos);
    }

    /// Consume `c` (after whitespace) if present.
    pub(crate) fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Parse an identifier (letters, digits, `_`, `-`, `.`, non-ASCII).
    pub(crate) fn ident(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.pos;
        let b = self.b();
        while self.pos < b.len() {
            let c = b[self.pos];
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' || c >= 0x80 {
                self.pos += 1;
            } else {
                break;
            }
        }
        // Non-ASCII bytes are consumed whole, so `pos` stays on a char boundary.
        (self.pos > start).then(|| &self.s[start..self.pos])
    }

    /// Parse one value.
    pub(crate) fn value(&mut self) -> Option<Value> {
        self.ws();
        if let Some(d) = self.str_delim {
            if self.s[self.pos..].starts_with(d) {
                return self.delim_string(d).map(Value::String);
            }
        }
        match self.peek()? {
            b'{' => self.object(),
            b'[' => self.array(b']'),
            b'(' => self.array(b')'),
            b'"' | b'\'' => self.string().map(Value::String),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => {
                let word = self.ident()?;
                match word {
                    "true" | "True" => Some(Value::Bool(true)),
                    "false" | "False" => Some(Value::Bool(false)),
                    "null" | "None" => Some(Value::Null),
                    _ => None,
                }
            }
        }
    }

    fn nest(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn object(&mut self) -> Option<Value> {
        self.nest()?;
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.ws();
            if self.eat(b'}') {
                break;
            }
            let key = self.key()?;
            if !self.eat(b':') {
                return if self.python && map.is_empty() {
                    self.set_rest(key)
                } else {
                    None
                };
            }
            let v = self.value()?;
            map.insert(key, v);
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            // Gemma's delimited values are sometimes written with no comma between them.
            if self.str_delim.is_some() && self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                continue;
            }
            return None;
        }
        self.depth -= 1;
        Some(Value::Object(map))
    }

    /// The rest of a Python set whose first (string) element was read, as a list.
    fn set_rest(&mut self, first: String) -> Option<Value> {
        let mut items = vec![Value::String(first)];
        loop {
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
            if self.eat(b'}') {
                break;
            }
            items.push(self.value()?);
        }
        self.depth -= 1;
        Some(Value::Array(items))
    }

    fn key(&mut self) -> Option<String> {
        self.ws();
        if let Some(d) = self.str_delim {
            if self.s[self.pos..].starts_with(d) {
                return self.delim_string(d);
            }
        }
        match self.peek()? {
            b'"' | b'\'' => self.string(),
            _ if self.bare_keys => self.ident().map(str::to_string),
            _ => None,
        }
    }

    fn array(&mut self, close: u8) -> Option<Value> {
        self.nest()?;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                break;
            }
            items.push(self.value()?);
            if self.eat(b',') {
                continue;
            }
            if self.eat(close) {
                break;
            }
            return None;
        }
        self.depth -= 1;
        Some(Value::Array(items))
    }

    fn delim_string(&mut self, d: &str) -> Option<String> {
        let start = self.pos + d.len();
        let len = self.s[start..].find(d)?;
        self.pos = start + len + d.len();
        Some(self.s[start..start + len].to_string())
    }

    /// Parse a quoted string (either quote), decoding JSON and Python escapes.
    pub(crate) fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        let mut end = string_end(self.b(), self.pos, quote)?;
        if self.python && !self.may_follow_value(end) {
            // A quote followed by something no value is followed by is inside the string,
            // and so is one inside a quotation of the other kind (`'python -c "f('x')"'`).
            let other = if quote == b'\'' { b'"' } else { b'\'' };
            let start = self.pos;
            let open_quotation = |end: usize| {
                self.b()[start + 1..end - 1]
                    .iter()
                    .filter(|&&c| c == other)
                    .count()
                    % 2
                    == 1
            };
            while !self.may_follow_value(end) || open_quotation(end) {
                match string_end(self.b(), end - 1, quote) {
                    Some(e) => end = e,
                    None => break,
                }
            }
        }
        let raw = &self.s[self.pos + 1..end - 1];
        self.pos = end;
        Some(unescape(raw))
    }

    fn may_follow_value(&self, at: usize) -> bool {
        let k = skip_ws(self.b(), at);
        matches!(
            self.b().get(k),
            None | Some(b',' | b')' | b']' | b'}' | b':')
        )
    }

    fn number(&mut self) -> Option<Value> {
        let b = self.b();
        let start = self.pos;
        let mut i = self.pos;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        while i < b.len()
            && (b[i].is_ascii_digit()
                || b[i] == b'.'
                || b[i] == b'e'
                || b[i] == b'E'
                || ((b[i] == b'-' || b[i] == b'+') && matches!(b[i - 1], b'e' | b'E')))
        {
            i += 1;
        }
        self.pos = i;
        let numeral = self.s[start..i].trim_start_matches(['+', '-']).as_bytes();
        // `007` is no number in JSON: a zip code or id, left for text. In a Python call
        // a bare `07` can only be the number.
        if numeral.len() > 1 && numeral[0] == b'0' && numeral[1].is_ascii_digit() {
            if !self.python {
                return None;
            }
            let digits = self.s[start..i].trim_start_matches(['+', '-']);
            let unpadded = digits.trim_start_matches('0');
            let unpadded = if unpadded.is_empty() || unpadded.starts_with('.') {
                &digits[digits.len() - unpadded.len() - 1..]
            } else {
                unpadded
            };
            let sign = if self.s[start..].starts_with('-') {
                "-"
            } else {
                ""
            };
            return number_value(&format!("{sign}{unpadded}"));
        }
        number_value(self.s[start..i].trim_start_matches('+'))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_inside_strings_do_not_count() {
        let s = br#"{"a": "x}y{", "b": [1, "]"]} tail"#;
        assert_eq!(container_end(s, 0, false), End::Complete(28));
        assert_eq!(container_end(br#"{"a": "x"#, 0, false), End::Incomplete);
        assert_eq!(container_end(br#"{"a": ]"#, 0, false), End::Invalid);
    }

    #[test]
    fn python_mode_reads_sets_padded_integers_and_inner_quotes() {
        let read = |s: &str| {
            let mut p = Lenient::new(s);
            p.python = true;
            p.value()
        };
        assert_eq!(read("{'a', 'b'}"), Some(serde_json::json!(["a", "b"])));
        assert_eq!(read("07"), Some(serde_json::json!(7)));
        assert_eq!(read("-00.5"), Some(serde_json::json!(-0.5)));
        assert_eq!(
            read("'sed -n '1,5p' f'"),
            Some(serde_json::json!("sed -n '1,5p' f"))
        );
        assert_eq!(
            read("'python -c \"f('x')\"'"),
            Some(serde_json::json!("python -c \"f('x')\""))
        );
        // Outside Python calls none of this applies.
        assert_eq!(Lenient::new("07").value(), None);
        assert_eq!(Lenient::new("{'a', 'b'}").value(), None);
    }

    #[test]
    fn lenient_accepts_python_literals_and_trailing_comma() {
        let v = parse_json_lenient("{'a': True, 'b': None, 'c': [1, 2,], 'd': 'it\\'s',}");
        assert_eq!(
            v,
            Some(serde_json::json!({"a": true, "b": null, "c": [1, 2], "d": "it's"}))
        );
        assert_eq!(parse_json_lenient("{'a': }"), None);
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
