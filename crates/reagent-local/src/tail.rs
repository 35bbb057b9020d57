//! A bounded buffer of a process's last output lines, shared between the thread or task that
//! reads the pipe and whoever reports an error.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The last `cap` lines written, cheap to clone (all clones share the lines).
#[derive(Debug, Clone)]
pub(crate) struct Tail {
    lines: Arc<Mutex<VecDeque<String>>>,
    cap: usize,
}

impl Tail {
    /// An empty tail keeping at most `cap` lines.
    pub(crate) fn new(cap: usize) -> Self {
        Tail {
            lines: Arc::new(Mutex::new(VecDeque::with_capacity(cap))),
            cap,
        }
    }

    /// Append one line (control characters other than tabs are dropped).
    pub(crate) fn push(&self, line: &str) {
        let clean: String = line
            .trim_end()
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect();
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == self.cap {
                lines.pop_front();
            }
            lines.push_back(clean);
        }
    }

    /// The kept lines, joined by newlines (`(no output)` when there are none).
    pub(crate) fn text(&self) -> String {
        match self.lines.lock() {
            Ok(lines) if !lines.is_empty() => lines.iter().cloned().collect::<Vec<_>>().join("\n"),
            _ => "(no output)".to_owned(),
        }
    }

    /// Whether any kept line contains `needle`.
    pub(crate) fn contains(&self, needle: &str) -> bool {
        self.lines
            .lock()
            .map(|lines| lines.iter().any(|l| l.contains(needle)))
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_lines_and_strips_control_characters() {
        let t = Tail::new(2);
        assert_eq!(t.text(), "(no output)");
        t.push("one\n");
        t.push("two\x1b[0m");
        t.push("three\r\n");
        assert_eq!(t.text(), "two[0m\nthree");
        assert!(t.contains("three"));
        assert!(!t.contains("one"));
    }
}
