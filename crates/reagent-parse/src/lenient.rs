//! A tolerant recursive-descent value parser for JSON, Python literals and the
//! Gemma-style dialects (bare keys, delimited strings). Depth-limited, moves strictly
//! forward, and returns `None` instead of panicking.

use serde_json::{Map, Value};

use crate::scan::{number_value, skip_ws, string_end, string_end_in, unescape};

/// Maximum nesting accepted by the tolerant parser (deeper input is rejected).
const MAX_DEPTH: usize = 128;

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
    /// A raw line break ends a string (see [`crate::scan::Quoting::line_bound`]).
    pub(crate) line_bound: bool,
    /// Bare words are values too (`args: bar baz,`): the text up to the next `,`, `}`, `]`
    /// or line break, as a string, when it holds no quote or bracket.
    pub(crate) bare_words: bool,
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
            line_bound: false,
            bare_words: false,
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
                let start = self.pos;
                let literal = match self.ident() {
                    Some("true" | "True") => Some(Value::Bool(true)),
                    Some("false" | "False") => Some(Value::Bool(false)),
                    Some("null" | "None") => Some(Value::Null),
                    _ => None,
                };
                match literal {
                    None if self.bare_words => {
                        self.pos = start;
                        self.bare_word()
                    }
                    literal => literal,
                }
            }
        }
    }

    /// A value written as bare words (see [`Lenient::bare_words`]).
    fn bare_word(&mut self) -> Option<Value> {
        let rest = &self.s[self.pos..];
        let len = rest.find([',', '}', ']', '\n']).unwrap_or(rest.len());
        let word = rest[..len].trim();
        if word.is_empty() || word.contains(['"', '\'', '{', '[', '<', ':']) {
            return None;
        }
        self.pos += len;
        Some(Value::String(word.to_string()))
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
        let closed = string_end(self.b(), self.pos, quote);
        if self.line_bound {
            // Read to the end of the line when the line break comes before the quote.
            let line_end = string_end_in(self.b(), self.pos, quote, true)?;
            if closed != Some(line_end) {
                let raw = &self.s[self.pos + 1..line_end];
                self.pos = line_end;
                return Some(unescape(raw));
            }
        }
        let mut end = closed?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::parse_json_lenient;

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
}
