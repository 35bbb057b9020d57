//! Word wrapping by display width (wide characters take two cells), for the lines written to
//! the scrollback, whose height must be known before they are drawn.

use unicode_width::UnicodeWidthChar;

/// `text` wrapped to `width` cells: at spaces where it can, inside a word too long for a line.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r').replace('\t', "    ");
        let mut current = String::new();
        let mut current_width = 0;
        for word in split_keep_spaces(&line) {
            let w: usize = word.chars().map(char_width).sum();
            if current_width + w > width && current_width > 0 {
                out.push(std::mem::take(&mut current).trim_end().to_owned());
                current_width = 0;
                if word.trim().is_empty() {
                    continue;
                }
            }
            for c in word.chars() {
                let cw = char_width(c);
                if current_width + cw > width && current_width > 0 {
                    out.push(std::mem::take(&mut current));
                    current_width = 0;
                }
                current.push(c);
                current_width += cw;
            }
        }
        out.push(current);
    }
    out
}

fn char_width(c: char) -> usize {
    if c.is_control() {
        0
    } else {
        c.width().unwrap_or(0)
    }
}

/// Words with the spaces after each.
fn split_keep_spaces(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in line.char_indices() {
        if c == ' ' {
            in_space = true;
        } else if in_space {
            parts.push(&line[start..i]);
            start = i;
            in_space = false;
        }
    }
    if start < line.len() {
        parts.push(&line[start..]);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghij-kl", 5), ["abcde", "fghij", "-kl"]);
        assert_eq!(wrap("a\n\nb", 5), ["a", "", "b"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("日本語テキスト", 6), ["日本語", "テキス", "ト"]);
        assert_eq!(wrap("x", 0), ["x"], "a zero width still makes progress");
    }
}
