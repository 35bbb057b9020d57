//! Lookup tasks of a small model: a task that asks to find, count or look something up and
//! names the text to look for (an identifier such as `session_timeout`, a code such as
//! `SKU-4471`, a marker in capitals such as `ERROR` or `TODO`) gets that text searched for
//! before its first turn (`session::preload`), where the file or folder it names is searched.
//!
//! On the coding suite's grep and long-file tasks Qwen2.5-Coder-1.5B searched for the whole
//! question ("ERROR about a full disk" in `src/**/*.rs`), wrote the matching line numbers
//! where it was asked for their count, or counted lines of a file shown whole wrongly;
//! given the search's result, labelled with its count of lines, it only has to read it off.

use super::has_word;

/// Words of a task that ask for a lookup (a question mark asks too).
const LOOKUP_WORDS: [&str; 10] = [
    "count", "find", "which", "how", "search", "look", "lookup", "locate", "contain", "contains",
];

/// Words in capitals that name a format or a kind of file, not a text to look for.
const NOT_MARKERS: [&str; 10] = [
    "CSV", "JSON", "TOML", "YAML", "INI", "XML", "HTML", "API", "URL", "HTTP",
];

/// What a lookup task searches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lookup {
    /// The text searched for, as a whole word (`backup_host`, not `backup_host_old`).
    pub(crate) pattern: String,
    /// The glob of the files searched, when the task names their kind (`.py files`: `*.py`).
    pub(crate) include: Option<String>,
}

/// The search a lookup task asks for (see the module's docs), or `None` when `task` asks no
/// lookup or names no text to look for.
pub(crate) fn lookup(task: &str) -> Option<Lookup> {
    if !task.contains('?') && !has_word(task, &LOOKUP_WORDS) {
        return None;
    }
    let words: Vec<&str> = crate::session::edits::named_paths(task)
        .map(|(_, w)| w)
        .collect();
    let pattern = words
        .iter()
        .find(|w| is_identifier(w) || is_code(w))
        .or_else(|| words.iter().find(|w| is_marker(w)))?;
    let include = words.windows(2).find_map(|pair| {
        let ext = pair[0]
            .strip_prefix('*')
            .unwrap_or(pair[0])
            .strip_prefix('.')?;
        let of_files = matches!(pair[1], "file" | "files");
        (of_files && !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphanumeric()))
            .then(|| format!("*.{ext}"))
    });
    Some(Lookup {
        pattern: (*pattern).to_owned(),
        include,
    })
}

/// Whether `answer` holds none of the words of `found` (a search's result) that `task` does
/// not already hold: an answer that says it found the value without giving it. Words are
/// split at spaces and at `:`, `=`, `,` and quotes, and a line's `path:line:` is left out,
/// so `hosts.ini:390: backup_host = vault-03.internal` gives `vault-03.internal`.
pub(crate) fn leaves_out(answer: &str, found: &str, task: &str) -> bool {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | ',' | '"' | '\'' | '`'))
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect()
    };
    // The lines as found, without `grep_search`'s `path:line:` in front.
    let lines: Vec<&str> = found
        .lines()
        .map(|line| crate::prompts::grep_match(line).map_or(line, |(_, text)| text))
        .collect();
    let (asked, said) = (words(task), words(answer));
    let mut new = words(&lines.join("\n"))
        .into_iter()
        .filter(|w| !asked.contains(w))
        .peekable();
    new.peek().is_some() && !new.any(|w| said.contains(&w))
}

/// `session_timeout`, `parse_date`: letters, digits and underscores, with an underscore
/// between letters.
fn is_identifier(word: &str) -> bool {
    let parts: Vec<&str> = word.split('_').collect();
    parts.len() > 1
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && parts
            .iter()
            .filter(|p| p.chars().any(|c| c.is_ascii_alphabetic()))
            .count()
            >= 2
}

/// `SKU-4471`: letters and digits joined by a hyphen.
fn is_code(word: &str) -> bool {
    word.contains('-')
        && !word.starts_with('-')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

/// `ERROR`, `TODO`: three or more capital letters, not the name of a format.
fn is_marker(word: &str) -> bool {
    word.len() >= 3 && word.chars().all(|c| c.is_ascii_uppercase()) && !NOT_MARKERS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(task: &str) -> Option<(String, Option<String>)> {
        lookup(task).map(|l| (l.pattern, l.include))
    }

    #[test]
    fn a_lookup_searches_for_the_identifier_code_or_marker_the_task_names() {
        let cases = [
            (
                "settings.conf is very long. What value does it give session_timeout?",
                "session_timeout",
            ),
            (
                "inventory.csv has hundreds of rows. What is the price of SKU-4471?",
                "SKU-4471",
            ),
            (
                "Count the lines of app.log that contain ERROR and write just that number to \
                 error_count.txt.",
                "ERROR",
            ),
            (
                "Which file defines the function parse_date? Write its path (for example \
                 lib/x.py) to answer.txt.",
                "parse_date",
            ),
            (
                "One file under config/ contains the key api_token. Write that file's path \
                 (like config/x.cfg) to found.txt.",
                "api_token",
            ),
        ];
        for (task, pattern) in cases {
            assert_eq!(found(task), Some((pattern.to_owned(), None)), "{task}");
        }
        assert_eq!(
            found("Find which .py files under src contain the word TODO and write their paths."),
            Some(("TODO".to_owned(), Some("*.py".to_owned())))
        );
    }

    #[test]
    fn an_answer_without_any_word_the_search_found_leaves_it_out() {
        let task = "Look up backup_host in the big file hosts.ini and tell me its value.";
        let found = "hosts.ini:98: backup_host_old = vault-01.internal\n\
                     hosts.ini:390: backup_host = vault-03.internal";
        let vague = "I have successfully looked up `backup_host` in the `hosts.ini` file and \
                     found its value.";
        assert!(leaves_out(vague, found, task));
        assert!(!leaves_out(
            "backup_host is vault-03.internal.",
            found,
            task
        ));
        // A result with nothing beyond the task's words asks nothing.
        assert!(!leaves_out("Done.", "hosts.ini: backup_host", task));
        // The line number a search gives is not what was found.
        let found = "inventory.csv:592: SKU-4471,blue kettle,12.75";
        let task = "inventory.csv has hundreds of rows. What is the price of SKU-4471?";
        assert!(leaves_out(
            "Found SKU-4471 in inventory.csv at line 592",
            found,
            task
        ));
        assert!(!leaves_out("12.75", found, task));
    }

    #[test]
    fn changes_formats_and_tasks_without_a_text_to_look_for_are_no_lookup() {
        for task in [
            // No lookup asked: a change.
            "Rename the constant MAX_RETRY to MAX_RETRIES in every file that uses it.",
            "Set pool_size in the [database] section of app.toml to 20.",
            // A question, but nothing named to look for.
            "According to manual.md, on which port does the admin console listen?",
            "data.txt actually holds CSV. Which columns does it have?",
            // A word inside an identifier asks nothing.
            "Implement count_words in words.py (see its docstring).",
            // A file name is not a text to look for.
            "Which function does main_app.py call first?",
        ] {
            assert_eq!(found(task), None, "{task}");
        }
    }
}
