//! What a task's own words give the narrowed schema: the paths it names, the texts it states
//! whole, the text it gives for each file, and the texts it names to change and to put instead.
//!
//! Measured with SmolLM2-135M on held-out tasks (BENCHMARKS.md, "Small-task success on held-out tasks"): offered
//! only the task's single words as a new file's content, it wrote `good` for "Save the words
//! good morning into a new file greeting.txt"; offered a free `new_string`, it wrote the
//! example's placeholder ("the new text the task gives") or a garbled copy (`lav=quiet`); offered
//! every line and word of the file as `old_string`, it replaced the line `owner=alice` by `bob`
//! for "Change alice to bob".

/// Words that say what to do, where or how, rather than what to write: trimmed from the ends
/// of a text the task gives, and never a text to change or to put instead.
#[rustfmt::skip]
const INSTRUCTION_WORDS: &[&str] = &[
    "a", "add", "all", "also", "an", "and", "are", "as", "at", "be", "become", "becomes",
    "both", "by", "called", "change", "command", "contain", "containing", "contains", "content",
    "contents", "create", "directory", "do", "does", "each", "edit", "every", "exactly",
    "execute", "file", "files", "fix", "folder", "for", "has", "have", "hold", "holding",
    "holds", "how", "i", "in", "inside", "instead", "into", "is", "it", "its", "just", "line",
    "lines", "make", "me", "my", "name", "named", "need", "new", "not", "now", "number", "of",
    "on", "one", "only", "or", "output", "please", "print", "prints", "put", "rename",
    "replace", "report", "result", "run", "save", "say", "says", "set", "should", "show",
    "single", "so", "store", "swap", "tell", "text", "that", "the", "then", "these", "this",
    "those", "to", "two", "update", "use", "uses", "value", "what", "whose", "with", "word",
    "words", "write", "you", "your",
];

/// Whether `word` only says what to do (see [`INSTRUCTION_WORDS`]), in any case.
pub(super) fn is_instruction(word: &str) -> bool {
    INSTRUCTION_WORDS.contains(&word.to_lowercase().as_str())
}

/// The words of `task` with their case kept: letters, digits and `._-/` inside a word.
pub(super) fn task_words(task: &str) -> impl Iterator<Item = String> + '_ {
    let inner = |c: char| c.is_alphanumeric() || "._-/".contains(c);
    task.split(move |c: char| !inner(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|w| !w.is_empty())
}

/// The task's tokens between white space, without the punctuation around them (`mode=test.`
/// gives `mode=test`, `'fox'` gives `fox`): each one's byte range in `task`, and where its
/// piece of text (punctuation included) ends.
fn tokens(task: &str) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for piece in task.split_whitespace() {
        let start = at + task[at..].find(piece).unwrap_or(0);
        at = start + piece.len();
        let lead = piece.len()
            - piece
                .trim_start_matches(|c: char| !c.is_alphanumeric())
                .len();
        let core = piece.trim_matches(|c: char| !c.is_alphanumeric());
        if !core.is_empty() {
            out.push((start + lead, start + lead + core.len(), at));
        }
    }
    out
}

/// Whether `word` reads as a file path: a `/`, or a name with an extension that has a letter
/// (`notes.txt`, `src/main.c`; not `2.0`).
pub(super) fn is_path_like(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    let extension = name
        .rsplit_once('.')
        .filter(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        .map(|(_, ext)| ext);
    word.contains('/') || extension.is_some_and(|e| e.chars().any(char::is_alphabetic))
}

/// The paths the task names.
pub(super) fn named_paths(task: &str) -> Vec<String> {
    task_words(task).filter(|w| is_path_like(w)).collect()
}

/// The texts a task gives to be written: what it states whole ([`stated_texts`]) unless that
/// names a path ("Make two files: a.txt with …" is no content), then the texts it gives beside
/// the paths ([`given_texts`]), each once; only when it gives none, each of its words. A small
/// task states its content in one of these forms ("with the text: Hello, world", "the number
/// 42", "the words good morning into a new file greeting.txt"). Measured with SmolLM2-135M on
/// held-out tasks (BENCHMARKS.md): offered `done` among the task's other words, it wrote `the`.
pub(super) fn write_texts(task: &str) -> Vec<String> {
    let mut texts: Vec<String> = stated_texts(task)
        .into_iter()
        .filter(|t| task_words(t).all(|w| !is_path_like(&w)))
        .collect();
    for text in given_texts(task) {
        push_once(&mut texts, &text);
    }
    if texts.is_empty() {
        for word in task_words(task) {
            push_once(&mut texts, &word);
        }
    }
    texts
}

/// Push `text`, trimmed, unless it is empty or already there.
fn push_once(texts: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if !text.is_empty() && !texts.iter().any(|t| t == text) {
        texts.push(text.to_owned());
    }
}

/// What `task` holds between pairs of `quote`; a lone quote (an apostrophe) opens nothing.
fn quoted(task: &str, quote: char) -> impl Iterator<Item = &str> {
    let parts: Vec<&str> = task.split(quote).collect();
    let pairs = (parts.len().saturating_sub(1)) / 2;
    // Odd-numbered parts lie between a pair of quotes.
    parts.into_iter().skip(1).step_by(2).take(pairs)
}

/// The texts a task states whole: what follows its first colon and what it quotes (`'…'`,
/// `"…"`, `` `…` ``), each once.
pub(super) fn stated_texts(task: &str) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    if let Some((_, after)) = task.split_once(": ") {
        push_once(&mut texts, after.trim().trim_end_matches('.'));
    }
    for quote in ['\'', '"', '`'] {
        for inside in quoted(task, quote) {
            push_once(&mut texts, inside);
        }
    }
    texts
}

/// The texts the task gives beside the paths it names: each run of words that are neither
/// paths nor instruction words, as written ("Save the words good morning into a new file
/// greeting.txt" gives `good morning`; "left.txt containing west and right.txt containing east"
/// gives `west` and `east`). A run whose quotes or brackets do not pair up is left out.
/// Nothing when the task names no path.
pub(super) fn given_texts(task: &str) -> Vec<String> {
    let tokens = tokens(task);
    if !tokens.iter().any(|&(s, e, _)| is_path_like(&task[s..e])) {
        return Vec::new();
    }
    runs(task, &tokens)
}

/// Each path the task names with the texts given for it ([`given_texts`] of one stretch): the
/// stretch before each path when the task gives a text before its first path ("Write hello
/// into first.txt and world into second.txt"), else the stretch after it ("red.txt with the
/// word cherry and blue.txt with ocean"). Measured with SmolLM2-135M on held-out tasks
/// (BENCHMARKS.md): offered both texts for both files, it wrote them the wrong way round.
pub(super) fn given_per_path(task: &str) -> Vec<(String, Vec<String>)> {
    let tokens = tokens(task);
    let is_path = |&(s, e, _): &(usize, usize, usize)| is_path_like(&task[s..e]);
    let paths: Vec<String> = tokens
        .iter()
        .filter(|t| is_path(t))
        .map(|&(s, e, _)| task[s..e].to_owned())
        .collect();
    let stretches: Vec<Vec<String>> = tokens.split(is_path).map(|st| runs(task, st)).collect();
    let before = stretches.first().is_some_and(|s| !s.is_empty());
    paths
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            let at = if before { i } else { i + 1 };
            (path, stretches.get(at).cloned().unwrap_or_default())
        })
        .collect()
}

/// The runs of `tokens` (of `task`) that are neither paths nor instruction words, as written,
/// each once, those whose quotes or brackets pair up.
fn runs(task: &str, tokens: &[(usize, usize, usize)]) -> Vec<String> {
    let plain = |&(s, e, _): &(usize, usize, usize)| {
        let word = &task[s..e];
        !is_path_like(word) && !is_instruction(word)
    };
    let mut texts: Vec<String> = Vec::new();
    for run in tokens.split(|t| !plain(t)) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        let text = &task[first.0..last.1];
        if pairs_up(text) {
            push_once(&mut texts, text);
        }
    }
    texts
}

/// The commands a task gives to run: what it quotes as code (`` `…` ``), what follows its
/// colon when it asks to run something (`run_asked`) without the instruction words that end
/// it ("Please run: expr 6 \* 7 and tell me the result" gives `expr 6 \* 7`), and a script
/// of the workspace it names run by its interpreter (`sh hello.sh`, `python3 tool.py`), each
/// once. Measured with SmolLM2-135M on held-out tasks (BENCHMARKS.md): with the command free
/// it ran `12 + 30` for "`expr 12 + 30`" and `hello.sh` for "Execute hello.sh with sh".
pub(super) fn commands(task: &str, run_asked: bool, workspace_paths: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for inside in quoted(task, '`') {
        push_once(&mut out, inside);
    }
    if let Some((_, after)) = task.split_once(": ").filter(|_| run_asked) {
        let tokens = tokens(after);
        if let Some(last) = tokens
            .iter()
            .rfind(|&&(s, e, _)| !is_instruction(&after[s..e]))
        {
            push_once(&mut out, after[..last.2].trim_end_matches(['.', ',', ';']));
        }
    }
    for path in named_paths(task)
        .into_iter()
        .filter(|p| workspace_paths.contains(p))
    {
        let runner = match path.rsplit_once('.') {
            Some((_, "sh")) => "sh",
            Some((_, "py")) => "python3",
            _ => continue,
        };
        push_once(&mut out, &format!("{runner} {path}"));
    }
    out
}

/// Whether every quote and bracket in `text` is closed.
fn pairs_up(text: &str) -> bool {
    let even = |q: char| text.matches(q).count().is_multiple_of(2);
    let balanced =
        |open: char, close: char| text.matches(open).count() == text.matches(close).count();
    even('"') && even('`') && balanced('(', ')') && balanced('[', ']') && balanced('{', '}')
}

/// The texts the task names that `file` holds (to be changed), not inside a longer word there
/// (`cat` is not in `catalog`): what it states whole, then its tokens, that are neither
/// instruction words nor paths, each once, in the task's order.
pub(super) fn texts_to_change(task: &str, file: &str) -> Vec<String> {
    candidates(task).filter(|t| holds_whole(file, t)).collect()
}

/// Whether `text` occurs in `file` with no letter or digit joined to it on either side.
fn holds_whole(file: &str, text: &str) -> bool {
    let joined = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    file.match_indices(text).any(|(i, m)| {
        !joined(file[..i].chars().next_back()) && !joined(file[i + m.len()..].chars().next())
    })
}

/// The texts the task names that `file` does not hold, in any case (to be put instead): what
/// it states whole, then its tokens, that are neither instruction words nor paths, each once,
/// in the task's order; a text that quotes both one to change and another to put ("every
/// 'fox' should become 'wolf'") is neither.
pub(super) fn texts_to_put(task: &str, file: &str) -> Vec<String> {
    let lower = file.to_lowercase();
    let old = texts_to_change(task, file);
    let new: Vec<String> = candidates(task)
        .filter(|t| !lower.contains(&t.to_lowercase()))
        .collect();
    let quotes_both = |t: &String| {
        old.iter().any(|o| t.contains(o.as_str()))
            && new.iter().any(|n| n != t && t.contains(n.as_str()))
    };
    new.iter().filter(|t| !quotes_both(t)).cloned().collect()
}

/// [`stated_texts`] and the task's tokens, without instruction words and paths, each once.
fn candidates(task: &str) -> impl Iterator<Item = String> {
    let mut seen: Vec<String> = Vec::new();
    let stated = stated_texts(task);
    let tokens = tokens(task)
        .into_iter()
        .map(|(s, e, _)| task[s..e].to_owned())
        .collect::<Vec<_>>();
    stated
        .into_iter()
        .chain(tokens)
        .filter(|t| !is_instruction(t) && !is_path_like(t))
        .filter(move |t| {
            let new = !seen.contains(t);
            seen.push(t.clone());
            new
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_names_with_an_extension_or_a_slash() {
        assert!(is_path_like("notes.txt") && is_path_like("src/main.c"));
        assert!(is_path_like(".env.example") && is_path_like("Makefile/x"));
        assert!(!is_path_like("2.0") && !is_path_like("end.") && !is_path_like("hello"));
    }

    #[test]
    fn the_texts_to_write_are_what_the_task_states_gives_beside_a_path_or_a_word() {
        assert_eq!(
            write_texts("Create hello.txt with the text: Hello, world"),
            ["Hello, world"]
        );
        // Given no text, each word of the task.
        assert_eq!(
            write_texts("Now write to out.txt"),
            ["Now", "write", "to", "out.txt"]
        );
        assert_eq!(
            write_texts("Create settings.json containing exactly this JSON: {\"debug\": true}")[0],
            "{\"debug\": true}"
        );
        let quoted = write_texts("Add the line 'reviewed' to a.md, don't wait; run `make all`.");
        assert!(quoted.contains(&"reviewed".to_owned()), "{quoted:?}");
        assert!(
            !quoted.iter().any(|t| t.starts_with("t wait")),
            "an apostrophe opens nothing: {quoted:?}"
        );
        assert!(quoted.contains(&"make all".to_owned()), "{quoted:?}");
        assert_eq!(write_texts("Make answer.txt hold the number 42.")[0], "42");
        assert_eq!(
            write_texts("Save the words good morning into a new file greeting.txt")[0],
            "good morning"
        );
        assert!(write_texts("").is_empty());
        // Given a text, the task's other words are not offered.
        let done = write_texts("Write the text done into a new file logs/status.txt");
        assert_eq!(done, ["done"]);
    }

    #[test]
    fn the_text_given_beside_each_path_is_trimmed_of_instruction_words() {
        assert_eq!(
            given_texts("Make two files: red.txt with the word cherry and blue.txt with ocean."),
            ["cherry", "ocean"]
        );
        assert_eq!(
            given_texts("Write hello into first.txt and world into second.txt."),
            ["hello", "world"]
        );
        assert_eq!(
            given_texts("Make a new file code.txt and put the number 7731 in it."),
            ["7731"]
        );
        assert_eq!(
            given_texts("Create a file named hello.txt that contains the text: Hello, world"),
            ["Hello, world"]
        );
        assert!(
            given_texts("Write a haiku about the sea").is_empty(),
            "no path"
        );
        // The colon's text names paths: no content (their own stretches are).
        assert_eq!(
            write_texts("Make two files: red.txt with the word cherry and blue.txt with ocean.")
                [..2],
            ["cherry", "ocean"]
        );
        // A stretch whose brackets do not pair up is no text of its own.
        assert!(given_texts("Create a.json containing {\"key\": [1, 2}").is_empty());
    }

    #[test]
    fn each_path_gets_the_text_given_on_its_side() {
        let pairs = |task: &str| given_per_path(task);
        assert_eq!(
            pairs("Write hello into first.txt and world into second.txt."),
            [
                ("first.txt".to_owned(), vec!["hello".to_owned()]),
                ("second.txt".to_owned(), vec!["world".to_owned()])
            ]
        );
        assert_eq!(
            pairs("Make two files: red.txt with the word cherry and blue.txt with ocean."),
            [
                ("red.txt".to_owned(), vec!["cherry".to_owned()]),
                ("blue.txt".to_owned(), vec!["ocean".to_owned()])
            ]
        );
        assert_eq!(
            pairs("I need a file port.txt that holds 9090"),
            [("port.txt".to_owned(), vec!["9090".to_owned()])]
        );
        assert!(pairs("Write a haiku").is_empty());
    }

    #[test]
    fn commands_are_code_a_colon_s_text_asked_to_run_or_a_named_script() {
        let scripts = ["hello.sh".to_owned(), "tool.py".to_owned()];
        assert_eq!(
            commands("What does the command `expr 12 + 30` print?", true, &[]),
            ["expr 12 + 30"]
        );
        assert_eq!(
            commands("Please run: expr 6 \\* 7 and tell me the result", true, &[]),
            ["expr 6 \\* 7"]
        );
        assert_eq!(
            commands(
                "Execute: echo tangerine-$((40+2)) and tell me the output.",
                true,
                &[]
            ),
            ["echo tangerine-$((40+2))"]
        );
        assert!(commands("Create a.txt with the text: hi", false, &[]).is_empty());
        assert_eq!(
            commands("Execute hello.sh with sh, then tool.py", true, &scripts),
            ["sh hello.sh", "python3 tool.py"]
        );
        assert!(
            commands("Run missing.sh", true, &scripts).is_empty(),
            "not in the workspace"
        );
        assert!(commands("Run the tests", true, &scripts).is_empty());
    }

    #[test]
    fn texts_to_change_are_in_the_file_and_texts_to_put_are_not() {
        let task = "Both web.env and api.env use port 3000. Set it to 4000 in both.";
        assert_eq!(texts_to_change(task, "PORT=3000\nNAME=api\n"), ["3000"]);
        assert_eq!(texts_to_put(task, "PORT=3000\nNAME=api\n"), ["4000"]);
        let task = "In x.ini and y.ini, change level=low to level=high.";
        assert_eq!(texts_to_change(task, "level=low\n"), ["level=low"]);
        assert_eq!(texts_to_put(task, "level=low\n"), ["level=high"]);
        let task = "Edit story.txt: every 'fox' should become 'wolf'.";
        assert_eq!(texts_to_change(task, "The fox ran."), ["fox"]);
        assert_eq!(texts_to_put(task, "The fox ran."), ["wolf"]);
        assert!(texts_to_change("Add a line to a.md", "# A\n").is_empty());
        // Not inside a longer word; a text that is no change of its own stays a replacement.
        assert!(texts_to_change("Replace cat with dog in a.txt", "catalog\n").is_empty());
        let task = "In calc.py, replace 'a - b' with 'a + b'";
        assert_eq!(texts_to_put(task, "return a - b\n"), ["a + b"]);
    }
}
