//! Output capture: a byte budget that keeps the head and the tail, and
//! rendering that escapes control sequences and caps line length.
//!
//! The reader keeps draining the pipe after the budget is spent (so the child
//! never blocks on a full pipe) and only counts the dropped bytes; the
//! rendered text carries a `[truncated N bytes]` note where bytes were dropped.

use std::fmt::Write as _;

/// Longest line (in characters) kept verbatim; longer lines are cut in the middle.
pub(crate) const MAX_LINE_CHARS: usize = 4096;

/// A capped capture buffer keeping the first and the last `cap / 2` bytes.
#[derive(Debug)]
pub(crate) struct CappedBuf {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl CappedBuf {
    /// A buffer keeping at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        CappedBuf {
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            head_cap,
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    /// Appends bytes read from the pipe.
    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total = self.total.saturating_add(data.len() as u64);
        if self.head.len() < self.head_cap {
            let n = (self.head_cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if self.tail_cap == 0 {
            return;
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + data.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(data);
        }
    }

    /// Bytes seen in total.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Bytes dropped from the middle.
    pub(crate) fn truncated(&self) -> u64 {
        self.total
            .saturating_sub((self.head.len() + self.tail.len()) as u64)
    }

    /// Renders the kept bytes as escaped text with a truncation note.
    pub(crate) fn render(&self) -> String {
        let dropped = self.truncated();
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if dropped == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return escape(&all);
        }
        let mut s = escape(&self.head);
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        let _ = writeln!(s, "[truncated {dropped} bytes]");
        s.push_str(&escape(&tail));
        s
    }
}

/// Decodes lossily and escapes control characters, bidi controls and
/// over-long lines so output cannot drive a terminal or a log viewer.
pub(crate) fn escape(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let count = line.chars().count();
        if count > MAX_LINE_CHARS {
            let keep = MAX_LINE_CHARS / 2;
            line.chars()
                .take(keep)
                .for_each(|c| push_escaped(&mut out, c));
            let _ = write!(out, "[line truncated {} chars]", count - 2 * keep);
            line.chars()
                .skip(count - keep)
                .for_each(|c| push_escaped(&mut out, c));
        } else {
            line.chars().for_each(|c| push_escaped(&mut out, c));
        }
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\t' => out.push('\t'),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        '\u{80}'..='\u{9f}'
        | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}' => {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail() {
        let mut b = CappedBuf::new(8);
        b.push(b"0123");
        b.push(b"456789abcdef");
        assert_eq!(b.total(), 16);
        assert_eq!(b.truncated(), 8);
        assert_eq!(b.render(), "0123\n[truncated 8 bytes]\ncdef");
    }

    #[test]
    fn small_output_is_kept_whole() {
        let mut b = CappedBuf::new(100);
        b.push(b"hello\n");
        b.push(b"world\n");
        assert_eq!(b.truncated(), 0);
        assert_eq!(b.render(), "hello\nworld\n");
    }

    #[test]
    fn tail_rolls_in_small_pieces() {
        let mut b = CappedBuf::new(4);
        for byte in b"abcdefgh" {
            b.push(&[*byte]);
        }
        assert_eq!(b.render(), "ab\n[truncated 4 bytes]\ngh");
    }

    #[test]
    fn escapes_controls() {
        assert_eq!(
            escape(b"a\x1b[31mred\x1b]0;title\x07\r\n\xff\xe2\x80\xaeb"),
            "a\\x1b[31mred\\x1b]0;title\\x07\\r\n\u{fffd}\\u{202e}b"
        );
        let long = vec![b'x'; MAX_LINE_CHARS + 10];
        let e = escape(&long);
        assert!(e.contains("[line truncated 10 chars]"), "{e}");
        assert_eq!(e.len(), MAX_LINE_CHARS + "[line truncated 10 chars]".len());
    }
}
