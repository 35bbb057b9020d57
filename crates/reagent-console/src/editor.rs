//! The multi-line input editor: a text and a cursor (a byte offset on a char boundary).
//!
//! New lines come from Ctrl-J / Shift-Enter and from pasted text; Enter itself is decided by
//! the [`App`](crate::App) (send, queue or steer), never by the editor.

/// The text being typed and where the cursor is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Editor {
    text: String,
    cursor: usize,
}

impl Editor {
    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor as a byte offset into [`Editor::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The cursor as (line, column in chars), both from 0.
    pub fn cursor_position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count())
    }

    /// Replace the text; the cursor goes to its end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Take the text out, leaving the editor empty.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Insert a character at the cursor.
    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Insert text (a paste) at the cursor, line breaks normalised to `\n`.
    pub fn insert_str(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
    }

    /// Delete the character before the cursor.
    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Delete the character at the cursor.
    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    /// Move one character left.
    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    /// Move one character right.
    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    /// Move to the start of the current line.
    pub fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// Move to the end of the current line.
    pub fn end(&mut self) {
        self.cursor = self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i);
    }

    /// Delete from the start of the line to the cursor (Ctrl-U).
    pub fn kill_to_line_start(&mut self) {
        let start = self.line_start(self.cursor);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Move up a line, keeping the column where it can; `false` on the first line (the
    /// caller then walks the history).
    pub fn up(&mut self) -> bool {
        let (line, col) = self.cursor_position();
        if line == 0 {
            return false;
        }
        let start = self.line_start(self.cursor);
        let prev_start = self.line_start(start - 1);
        self.cursor = self.column_in_line(prev_start, col);
        true
    }

    /// Move down a line, keeping the column where it can; `false` on the last line.
    pub fn down(&mut self) -> bool {
        let (_, col) = self.cursor_position();
        let Some(nl) = self.text[self.cursor..].find('\n') else {
            return false;
        };
        self.cursor = self.column_in_line(self.cursor + nl + 1, col);
        true
    }

    fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    /// The offset of column `col` (chars) of the line starting at `start`, or that line's end.
    fn column_in_line(&self, start: usize, col: usize) -> usize {
        let line = &self.text[start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        start + line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_editing_and_multibyte_characters() {
        let mut e = Editor::default();
        for c in "héllo".chars() {
            e.insert_char(c);
        }
        e.left();
        e.left();
        e.backspace();
        assert_eq!(e.text(), "hélo");
        assert_eq!(e.cursor_position(), (0, 2));
        e.delete();
        assert_eq!(e.text(), "héo");
        e.home();
        e.insert_char('>');
        e.end();
        e.insert_char('!');
        assert_eq!(e.text(), ">héo!");
        assert_eq!(e.take(), ">héo!");
        assert!(e.is_empty());
        // Nothing to delete or move over: no panic.
        e.backspace();
        e.delete();
        e.left();
        e.right();
        assert_eq!(e.cursor(), 0);
    }

    #[test]
    fn lines_move_up_and_down_keeping_the_column() {
        let mut e = Editor::default();
        e.insert_str("first line\r\nab\rthird line");
        assert_eq!(e.text(), "first line\nab\nthird line");
        assert_eq!(e.cursor_position(), (2, 10));
        assert!(e.up());
        assert_eq!(e.cursor_position(), (1, 2), "clamped to the short line");
        assert!(e.up());
        assert_eq!(e.cursor_position(), (0, 2));
        assert!(!e.up(), "the first line hands Up to the history");
        assert!(e.down());
        assert!(e.down());
        assert!(!e.down());
        e.kill_to_line_start();
        assert_eq!(e.text(), "first line\nab\nird line");
    }
}
