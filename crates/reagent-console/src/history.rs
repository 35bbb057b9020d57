//! Input history: Up/Down walk the messages sent before (the draft being typed is kept), and
//! Ctrl-R searches them, newest first.

/// The messages sent in this console, oldest first, and where Up/Down are in them.
#[derive(Debug, Clone, Default)]
pub struct InputHistory {
    entries: Vec<String>,
    /// Index into `entries` while walking; `None` at the draft.
    pos: Option<usize>,
    draft: String,
}

impl InputHistory {
    /// A history holding `entries` (oldest first), e.g. the user messages of a resumed session.
    pub fn with_entries(entries: Vec<String>) -> Self {
        InputHistory {
            entries,
            ..Default::default()
        }
    }

    /// Remember a sent message (not a repeat of the last one, not blank) and go back to the draft.
    pub fn push(&mut self, entry: &str) {
        self.pos = None;
        if entry.trim().is_empty() || self.entries.last().is_some_and(|l| l == entry) {
            return;
        }
        self.entries.push(entry.to_owned());
    }

    /// Entry `index` (0 is the oldest).
    pub fn get(&self, index: usize) -> Option<&str> {
        self.entries.get(index).map(String::as_str)
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The older entry (Up) given the text being edited, or `None` at the oldest.
    pub fn older(&mut self, current: &str) -> Option<&str> {
        let next = match self.pos {
            None => {
                self.draft = current.to_owned();
                self.entries.len().checked_sub(1)?
            }
            Some(0) => return None,
            Some(p) => p - 1,
        };
        self.pos = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// The newer entry (Down), the draft after the newest, `None` when already at the draft.
    pub fn newer(&mut self) -> Option<&str> {
        let p = self.pos?;
        if p + 1 < self.entries.len() {
            self.pos = Some(p + 1);
            self.entries.get(p + 1).map(String::as_str)
        } else {
            self.pos = None;
            Some(&self.draft)
        }
    }

    /// Ctrl-R: the newest entry containing `query` (case-insensitive) among the entries older
    /// than `before` (an index; `None` searches them all); its index and text.
    pub fn search(&self, query: &str, before: Option<usize>) -> Option<(usize, &str)> {
        let query = query.to_lowercase();
        let end = before.unwrap_or(self.entries.len()).min(self.entries.len());
        self.entries[..end]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, e)| e.to_lowercase().contains(&query))
            .map(|(i, e)| (i, e.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_and_down_walk_the_history_and_keep_the_draft() {
        let mut h = InputHistory::default();
        assert_eq!(h.older("x"), None, "an empty history");
        h.push("one");
        h.push("two");
        h.push("two");
        h.push("   ");
        assert_eq!(h.len(), 2, "repeats and blanks are not kept");
        assert_eq!(h.older("draft"), Some("two"));
        assert_eq!(h.older("ignored"), Some("one"));
        assert_eq!(h.older("ignored"), None, "at the oldest");
        assert_eq!(h.newer(), Some("two"));
        assert_eq!(h.newer(), Some("draft"), "back to what was being typed");
        assert_eq!(h.newer(), None);
    }

    #[test]
    fn ctrl_r_finds_the_newest_match_then_older_ones() {
        let h = InputHistory::with_entries(vec![
            "fix the Test".into(),
            "list files".into(),
            "run the tests".into(),
        ]);
        assert_eq!(h.search("test", None), Some((2, "run the tests")));
        assert_eq!(h.search("test", Some(2)), Some((0, "fix the Test")));
        assert_eq!(h.search("test", Some(0)), None);
        assert_eq!(h.search("nothing", None), None);
        assert_eq!(
            h.search("files", Some(99)),
            Some((1, "list files")),
            "an index past the end is clamped"
        );
    }
}
