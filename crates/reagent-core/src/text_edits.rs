//! Edits written as text instead of a tool call, read as the call they stand for.
//!
//! Shown a file, small coding models (Qwen2.5-Coder 0.5B/1.5B) often answer with the corrected
//! file in a fenced block headed by its name, or with aider's search/replace blocks, instead of
//! calling `write_file`/`edit_file`. A reply without calls is read here for:
//!
//! - **search/replace blocks** (aider's format): a file name on its own line, then
//!   `<<<<<<< SEARCH`, the old text, `=======`, the new text, `>>>>>>> REPLACE` (inside a code
//!   fence or not). Each becomes an `edit_file` call (the old text must then match exactly once,
//!   as for any call);
//! - **a whole file in a `<file path="calc.py">…</file>` element** (what an edit turn asks
//!   for): a `write_file` call under the same conditions as a fenced block's;
//! - **a whole file in a fenced block naming it**: the file's path in the fence's info string
//!   (```` ```python calc.py ````, ```` ```calc.py ````, `` ```python:calc.py ``) or alone on the
//!   line before the fence (`calc.py:`, `**calc.py**`, `` `calc.py` ``, `# calc.py`). It becomes
//!   a `write_file` call when the path is a workspace file and the block is not a snippet of it
//!   (at least half its lines), or when the path is new and the task names it.
//!
//!   In an edit turn (`session::edit_turn`), a reply's only block naming no file stands for
//!   the shown file it shares the most lines with (Qwen2.5-Coder-0.5B's ```` ```python ````).
//!   In an edit turn whose task moves files, a block of shell commands (```` ```sh ````)
//!   naming no file becomes a `run_command` call of its lines.
//!
//! - **the content of the one new file the task names** ("Put only the count into
//!   warnings.txt"), answered instead of written: the reply's only fenced block, or a reply
//!   without a fence that is JSON or one short line. It becomes a `write_file` call of that
//!   file (content for a `.json` file must be JSON).
//!
//! The calls run through the same tool path as any other (argument checks, sandbox, approvals,
//! events), so a wrong edit is refused or reported like a tool call's.

use serde_json::{json, Value};

/// One edit read from a reply: the tool and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TextEdit {
    /// `write_file`, `edit_file` or `run_command`.
    pub(crate) tool: &'static str,
    /// The call's arguments.
    pub(crate) arguments: Value,
}

/// What the reader needs to know about the workspace and the task.
pub(crate) trait EditTargets {
    /// The text of the workspace file `path`, or `None` when there is no such text file.
    fn file_text(&self, path: &str) -> Option<String>;
    /// Whether the run's task names `path`.
    fn task_names(&self, path: &str) -> bool;
    /// The one file the task names that does not exist yet and the run has not written (the
    /// file the task asks for), if there is exactly one.
    fn new_output_file(&self) -> Option<String>;
    /// The files an edit turn showed the model (empty outside one): a reply's one block that
    /// names no file stands for the shown file it shares the most lines with.
    fn shown_files(&self) -> &[String];
    /// Whether a block of shell commands naming no file stands for a `run_command` call (an
    /// edit turn whose task moves files, [`crate::weak_model::Policy::moves_files`]).
    fn takes_commands(&self) -> bool {
        false
    }
}

/// Info strings of a fenced block of shell commands.
const SHELL_INFOS: [&str; 5] = ["sh", "bash", "shell", "console", "zsh"];

/// Longest reply without a fence read as a new file's one-line content.
const SHORT_ANSWER_MAX: usize = 200;

/// The edits in `reply`, in order: its search/replace blocks, else its whole-file blocks, else
/// the content of the new file the task names.
pub(crate) fn read_edits(reply: &str, targets: &dyn EditTargets) -> Vec<TextEdit> {
    let replaced = search_replace_blocks(reply, targets);
    if !replaced.is_empty() {
        return replaced;
    }
    // The blocks outside the `<file>` elements (a moving task's commands) come first.
    let (elements, rest) = file_elements(reply, targets);
    let mut written = whole_file_blocks(&rest, targets);
    written.extend(elements);
    if !written.is_empty() {
        return written;
    }
    new_file_content(reply, targets).into_iter().collect()
}

/// `<file path="…">…</file>` elements holding a whole file (the form an edit turn asks for),
/// and the reply with them cut out. A fence wrapped around an element's content is left out.
fn file_elements(reply: &str, targets: &dyn EditTargets) -> (Vec<TextEdit>, String) {
    const OPEN: &str = "<file path=\"";
    let (mut out, mut rest) = (Vec::new(), String::new());
    let mut tail = reply;
    while let Some(start) = tail.find(OPEN) {
        let after = &tail[start + OPEN.len()..];
        let Some((path, body)) = after.split_once("\">") else {
            break;
        };
        let Some(end) = body.find("</file>") else {
            break;
        };
        rest.push_str(&tail[..start]);
        let mut lines: Vec<&str> = body[..end].trim_matches('\n').lines().collect();
        let fenced = lines
            .first()
            .is_some_and(|l| l.trim_start().starts_with("```"))
            && lines.last().is_some_and(|l| l.trim() == "```");
        if fenced && lines.len() >= 2 {
            lines = lines[1..lines.len() - 1].to_vec();
        }
        let mut content = lines.join("\n");
        content.push('\n');
        if whole_file(path, &content, targets) {
            out.push(TextEdit {
                tool: "write_file",
                arguments: json!({"path": path, "content": content}),
            });
        }
        tail = &body[end + "</file>".len()..];
    }
    rest.push_str(tail);
    (out, rest)
}

/// Whether `word` as a whole looks like a file's path (`notes.txt`, `conf/app.json`).
pub(crate) fn looks_like_path(word: &str) -> bool {
    path_in(word) == Some(word)
}

/// The content of the one new file the task names, answered instead of written (see the
/// module's docs).
fn new_file_content(reply: &str, targets: &dyn EditTargets) -> Option<TextEdit> {
    let path = targets.new_output_file()?;
    if crate::prompts::is_result_echo(reply) {
        // A tool's result echoed back is not the file's content.
        return None;
    }
    let lines: Vec<&str> = reply.lines().collect();
    let opens: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim_start().starts_with("```"))
        .collect();
    let content = match opens.as_slice() {
        [open, close] if lines[*close].trim() == "```" => lines[open + 1..*close].join("\n"),
        [] => {
            let t = reply.trim();
            let json = serde_json::from_str::<Value>(t).is_ok();
            let line = !t.contains('\n') && t.len() <= SHORT_ANSWER_MAX;
            if !json && !line {
                return None;
            }
            t.to_owned()
        }
        _ => return None,
    };
    let json_file = path.ends_with(".json");
    if content.trim().is_empty() || json_file && serde_json::from_str::<Value>(&content).is_err() {
        return None;
    }
    Some(TextEdit {
        tool: "write_file",
        arguments: json!({"path": path, "content": format!("{}\n", content.trim_end())}),
    })
}

/// A path-like token of `line`, with the decorations a heading puts around it stripped.
fn path_in(line: &str) -> Option<&str> {
    let t = line
        .trim()
        .trim_start_matches(['#', '*', '`', '>', '-', ' '])
        .trim_end_matches([':', '*', '`', ' ']);
    let t = t.trim_matches(['*', '`', '"', '\'']);
    let plausible = !t.is_empty()
        && !t.contains(char::is_whitespace)
        && t.contains('.')
        && !t.starts_with('.')
        && !t.ends_with('.')
        && t.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    plausible.then_some(t)
}

/// The file a heading line names: the whole line as a path (`calc.py:`), or the one
/// workspace file among its words (``Here is the corrected `calc.py`:``).
fn named_in_line<'a>(line: &'a str, targets: &dyn EditTargets) -> Option<&'a str> {
    path_in(line).or_else(|| {
        let mut files = line
            .split_whitespace()
            .filter_map(path_in)
            .filter(|p| targets.file_text(p).is_some());
        let first = files.next()?;
        files.all(|p| p == first).then_some(first)
    })
}

/// aider's search/replace blocks, each headed by its file's path.
fn search_replace_blocks(reply: &str, targets: &dyn EditTargets) -> Vec<TextEdit> {
    let lines: Vec<&str> = reply.lines().collect();
    let mut out = Vec::new();
    let mut path: Option<&str> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if !line.starts_with("<<<<<<<") {
            if let Some(p) = path_in(line).filter(|p| targets.file_text(p).is_some()) {
                path = Some(p);
            }
            i += 1;
            continue;
        }
        let Some(divider) = (i + 1..lines.len()).find(|&j| lines[j].trim_end() == "=======") else {
            break;
        };
        let Some(end) = (divider + 1..lines.len()).find(|&j| lines[j].starts_with(">>>>>>>"))
        else {
            break;
        };
        let old = lines[i + 1..divider].join("\n");
        let new = lines[divider + 1..end].join("\n");
        if let (Some(path), false) = (path, old.trim().is_empty()) {
            out.push(TextEdit {
                tool: "edit_file",
                arguments: json!({"path": path, "old_string": old, "new_string": new}),
            });
        }
        i = end + 1;
    }
    out
}

/// Fenced blocks that hold a whole file and name it.
fn whole_file_blocks(reply: &str, targets: &dyn EditTargets) -> Vec<TextEdit> {
    let lines: Vec<&str> = reply.lines().collect();
    let fences = lines
        .iter()
        .filter(|l| l.trim_start().starts_with("```"))
        .count();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let Some(close) = (i + 1..lines.len()).find(|&j| lines[j].trim() == "```") else {
            break;
        };
        let named = info
            .split([' ', ':'])
            .chain(info.split("title=").skip(1))
            .find_map(path_in)
            .or_else(|| {
                (0..i)
                    .rev()
                    .map(|j| lines[j])
                    .find(|l| !l.trim().is_empty())
                    .and_then(|l| named_in_line(l, targets))
            });
        let mut body = &lines[i + 1..close];
        let mut named = named.map(str::to_owned);
        if named.is_none() && targets.takes_commands() {
            let info = info.split_whitespace().next().unwrap_or_default();
            if let Some(command) = SHELL_INFOS
                .contains(&info)
                .then(|| commands(body))
                .flatten()
            {
                out.push(TextEdit {
                    tool: "run_command",
                    arguments: json!({ "command": command }),
                });
                i = close + 1;
                continue;
            }
        }
        let edit_turn = !targets.shown_files().is_empty();
        if named.is_none() && edit_turn {
            // A workspace file's path alone on the block's first line names it (the 1.5B's
            // ```` ```python ```` then `banner.py`).
            let first = body.first().and_then(|l| path_in(l));
            if let Some(path) = first.filter(|p| targets.file_text(p).is_some()) {
                named = Some(path.to_owned());
                body = &body[1..];
            }
        }
        let mut content = body.join("\n");
        content.push('\n');
        if named.is_none() && edit_turn && fences == 2 {
            // The one block of an edit turn naming no file: the new file the task asks for,
            // else the shown file it is closest to.
            named = targets
                .new_output_file()
                .or_else(|| closest_shown_file(&content, targets));
        }
        if let Some(path) = named.filter(|p| whole_file(p, &content, targets)) {
            out.push(TextEdit {
                tool: "write_file",
                arguments: json!({"path": path, "content": content}),
            });
        }
        i = close + 1;
    }
    out
}

/// The commands of a shell block, one per line (a `$ ` prompt taken off, comments and blank
/// lines left out), or `None` when it holds none.
fn commands(body: &[&str]) -> Option<String> {
    let lines: Vec<&str> = body
        .iter()
        .map(|l| l.trim())
        .map(|l| l.strip_prefix("$ ").unwrap_or(l))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// The shown file (see [`EditTargets::shown_files`]) that shares the most lines with
/// `content`, when one shares more than the others and at least half of its own.
fn closest_shown_file(content: &str, targets: &dyn EditTargets) -> Option<String> {
    let lines = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let block = lines(content);
    let mut scored: Vec<(usize, &String)> = targets
        .shown_files()
        .iter()
        .filter_map(|path| {
            let own = lines(&targets.file_text(path)?);
            let shared = own.intersection(&block).count();
            (shared > 0 && shared * 2 >= own.len()).then_some((shared, path))
        })
        .collect();
    scored.sort_by_key(|(shared, _)| std::cmp::Reverse(*shared));
    match scored.as_slice() {
        [(best, path), rest @ ..] if rest.first().is_none_or(|(next, _)| next < best) => {
            Some((*path).clone())
        }
        _ => None,
    }
}

/// Whether a block holding `content` stands for a change of the whole of `path`: an existing
/// file of at most twice as many lines (not a snippet of a longer one) that it changes, or a
/// new file the task names.
fn whole_file(path: &str, content: &str, targets: &dyn EditTargets) -> bool {
    let lines = content.lines().count();
    if content.trim().is_empty() {
        return false;
    }
    match targets.file_text(path) {
        Some(existing) => lines * 2 >= existing.lines().count() && existing != content,
        None => targets.task_names(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Files(
        &'static [(&'static str, usize)],
        &'static str,
        Option<&'static str>,
    );

    impl EditTargets for Files {
        /// A file of `n` lines `line 1`, `line 2`...
        fn file_text(&self, path: &str) -> Option<String> {
            let (_, n) = self.0.iter().find(|(p, _)| *p == path)?;
            Some((1..=*n).map(|i| format!("line {i}\n")).collect())
        }
        fn task_names(&self, path: &str) -> bool {
            self.1.contains(path)
        }
        fn new_output_file(&self) -> Option<String> {
            self.2.map(str::to_owned)
        }
        fn shown_files(&self) -> &[String] {
            &[]
        }
    }

    /// [`Files`] shown in an edit turn: `shown`'s files hold the given texts.
    struct Shown(Vec<String>, Vec<(&'static str, &'static str)>);

    impl EditTargets for Shown {
        fn file_text(&self, path: &str) -> Option<String> {
            let (_, text) = self.1.iter().find(|(p, _)| *p == path)?;
            Some((*text).to_owned())
        }
        fn task_names(&self, _: &str) -> bool {
            false
        }
        fn new_output_file(&self) -> Option<String> {
            None
        }
        fn shown_files(&self) -> &[String] {
            &self.0
        }
    }

    /// What Qwen2.5-Coder-0.5B answered in edit turns of the held-out suite: the file
    /// changed, in a fence naming no file.
    #[test]
    fn an_edit_turn_s_one_unnamed_block_is_the_shown_file_it_shares_most_lines_with() {
        let pick = "def largest(numbers):\n    best = numbers[0]\n    for n in numbers:\n        if n < best:\n            best = n\n    return best\n";
        let test =
            "import unittest\nfrom pick import largest\n\nclass T(unittest.TestCase):\n    pass\n";
        let ws = Shown(
            vec!["pick.py".into(), "test_pick.py".into()],
            vec![("pick.py", pick), ("test_pick.py", test)],
        );
        let fixed = pick.replace("n < best", "n > best");
        let edits = read_edits(&format!("```python\n{fixed}```"), &ws);
        assert_eq!(
            edits,
            [TextEdit {
                tool: "write_file",
                arguments: json!({"path": "pick.py", "content": fixed})
            }]
        );
        for reply in [
            // Unchanged: nothing to write.
            format!("```python\n{pick}```"),
            // Two unnamed blocks: which is which is not known.
            format!("```python\n{fixed}```\n```python\n{fixed}```"),
            // Shares too little with any shown file.
            "```python\nprint(1)\n```".to_owned(),
        ] {
            assert_eq!(read_edits(&reply, &ws), [], "{reply}");
        }
        // Outside an edit turn an unnamed block is no edit.
        let fixed_calc = "```python\nline 1\nline 2\nline 3 changed\n```";
        assert_eq!(read_edits(fixed_calc, &WS), []);
    }

    /// [`Shown`] in an edit turn whose task moves files.
    struct Moving(Shown);

    impl EditTargets for Moving {
        fn file_text(&self, path: &str) -> Option<String> {
            self.0.file_text(path)
        }
        fn task_names(&self, path: &str) -> bool {
            self.0.task_names(path)
        }
        fn new_output_file(&self) -> Option<String> {
            None
        }
        fn shown_files(&self) -> &[String] {
            self.0.shown_files()
        }
        fn takes_commands(&self) -> bool {
            true
        }
    }

    /// Qwen2.5-Coder's `<file>` elements: shown the files this way and asked for them back
    /// whole, the 1.5B made 25 and the 0.5B 15 of the coding suite's 28 edit tasks, against
    /// 19 and 10 in fences (`benches/edit_formats.py`).
    #[test]
    fn file_elements_are_whole_file_writes_and_leave_the_rest_to_the_blocks() {
        let calc = "line 1\nline 2\nline 3 changed\n";
        let reply = format!(
            "Here:\n<file path=\"calc.py\">\n{calc}</file>\n<file path=\"out.json\">\n```json\n{{}}\n```\n</file>"
        );
        assert_eq!(
            read_edits(&reply, &WS),
            [
                TextEdit {
                    tool: "write_file",
                    arguments: json!({"path": "calc.py", "content": calc})
                },
                TextEdit {
                    tool: "write_file",
                    arguments: json!({"path": "out.json", "content": "{}\n"})
                },
            ]
        );
        // A file the task does not name and the workspace does not hold, a snippet of a long
        // file, or an unclosed element: no edit.
        for reply in [
            "<file path=\"other.py\">\nx = 1\n</file>",
            "<file path=\"long.py\">\nline 1\n</file>",
            "<file path=\"calc.py\">\nline 1\n",
        ] {
            assert_eq!(read_edits(reply, &WS), [], "{reply}");
        }
        // A moving turn's commands come first, then the elements.
        let loader = "import json\n";
        let moving = Moving(Shown(vec!["loader.py".into()], vec![("loader.py", loader)]));
        let reply = "<file path=\"loader.py\">\nimport json, os\n</file>\n```sh\nmv a b\n```";
        let tools: Vec<&str> = read_edits(reply, &moving).iter().map(|e| e.tool).collect();
        assert_eq!(tools, ["run_command", "write_file"]);
    }

    #[test]
    fn a_moving_edit_turn_s_shell_block_is_a_command_and_its_file_blocks_are_writes() {
        let loader = "import json\nprint(json.load(open('conf/old.json'))['a'])\n";
        let shown = || Shown(vec!["loader.py".into()], vec![("loader.py", loader)]);
        let new_loader = loader.replace("old.json", "settings.json");
        let reply = format!(
            "```sh\n# rename it\n$ mv conf/old.json conf/settings.json\n\n```\n\
             ```loader.py\n{new_loader}```"
        );
        assert_eq!(
            read_edits(&reply, &Moving(shown())),
            [
                TextEdit {
                    tool: "run_command",
                    arguments: json!({"command": "mv conf/old.json conf/settings.json"})
                },
                TextEdit {
                    tool: "write_file",
                    arguments: json!({"path": "loader.py", "content": new_loader})
                },
            ]
        );
        // Outside a moving edit turn the shell block is no command.
        let edits = read_edits(&reply, &shown());
        assert!(edits.iter().all(|e| e.tool == "write_file"), "{edits:?}");
        // A block of comments only runs nothing.
        assert_eq!(read_edits("```bash\n# nothing\n```", &Moving(shown())), []);
    }

    const WS: Files = Files(
        &[("calc.py", 3), ("long.py", 40)],
        "Fix calc.py; write out.json",
        None,
    );

    /// What Qwen2.5-Coder-0.5B answered to "Make a file scores.json…", "…as TOML in
    /// new.toml…" and "…Put only the count into warnings.txt." (held-out coding suite).
    #[test]
    fn content_answered_for_the_new_file_the_task_names_is_written_there() {
        let cases = [
            (
                "scores.json",
                "{\n  \"mira\": 12,\n  \"jon\": 7\n}",
                "{\n  \"mira\": 12,\n  \"jon\": 7\n}\n",
            ),
            (
                "new.toml",
                "```toml\n[cache]\nsize = 1000\n```",
                "[cache]\nsize = 1000\n",
            ),
            ("warnings.txt", "3", "3\n"),
            ("warnings.txt", "Here it is:\n```\n3\n```\nDone.", "3\n"),
        ];
        for (path, reply, content) in cases {
            let ws = Files(&[("calc.py", 3)], "", Some(path));
            assert_eq!(
                read_edits(reply, &ws),
                [TextEdit {
                    tool: "write_file",
                    arguments: json!({"path": path, "content": content})
                }],
                "{reply}"
            );
        }
        // Not content: prose over a line, two fences, text for a JSON file, no new file named.
        for (new, reply) in [
            (
                Some("out.txt"),
                "I counted the lines.\nThere are 3 of them.",
            ),
            (Some("out.txt"), "```\n1\n```\nor\n```\n2\n```"),
            (Some("out.json"), "mira 12"),
            // A tool's result echoed back (the 0.5B on h-create-toml-from-ini).
            (
                Some("new.toml"),
                "{\"ok\":true,\"output\":\"[cache]\\nsize = 256\\n\"}",
            ),
            (None, "3"),
        ] {
            let ws = Files(&[("calc.py", 3)], "", new);
            assert_eq!(read_edits(reply, &ws), [], "{reply}");
        }
    }

    /// The shape Qwen2.5-Coder answers in when shown calc.py: the corrected file in a fence,
    /// its name on the line before.
    #[test]
    fn a_whole_file_in_a_fence_named_before_or_in_the_info_string_is_a_write() {
        let reply = "Here is the corrected file.\n\n**calc.py**\n```python\ndef add(a, b):\n    return a + b\n```\nThis fixes the bug.";
        let edits = read_edits(reply, &WS);
        assert_eq!(
            edits,
            [TextEdit {
                tool: "write_file",
                arguments: json!({"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"})
            }]
        );
        for reply in [
            "```python calc.py\nx = 1\ny = 2\n```",
            "```calc.py\nx = 1\ny = 2\n```",
            "```python:calc.py\nx = 1\ny = 2\n```",
            "`calc.py`:\n\n```\nx = 1\ny = 2\n```",
            "Here is the corrected `calc.py`:\n```python\nx = 1\ny = 2\n```",
        ] {
            let edits = read_edits(reply, &WS);
            assert_eq!(edits.len(), 1, "{reply}");
            assert_eq!(edits[0].arguments["path"], "calc.py", "{reply}");
        }
    }

    #[test]
    fn snippets_unnamed_blocks_and_unknown_files_are_not_edits() {
        for reply in [
            // Two lines of a 40-line file: a snippet, not the file.
            "long.py:\n```python\nx = 1\ny = 2\n```",
            // No name.
            "```python\nx = 1\n```",
            // A file that is not in the workspace and that the task does not name.
            "other.py:\n```python\nx = 1\n```",
            // A fence left open.
            "calc.py:\n```python\nx = 1\n",
            // Prose before the fence that is not a name.
            "Run this:\n```sh\npython3 calc.py\n```",
            // The file as it is: nothing to change.
            "calc.py:\n```\nline 1\nline 2\nline 3\n```",
        ] {
            assert_eq!(read_edits(reply, &WS), [], "{reply}");
        }
        // A new file the task names is written.
        let edits = read_edits("out.json\n```json\n{\"a\": 1}\n```", &WS);
        assert_eq!(edits[0].arguments["path"], "out.json");
    }

    #[test]
    fn search_replace_blocks_are_edits_of_the_file_named_before_them() {
        let reply = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n";
        assert_eq!(
            read_edits(reply, &WS),
            [TextEdit {
                tool: "edit_file",
                arguments: json!({"path": "calc.py", "old_string": "    return a - b", "new_string": "    return a + b"})
            }]
        );
        // Without a file name, or with an empty search part, nothing is read.
        assert_eq!(
            read_edits("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE", &WS),
            []
        );
        assert_eq!(
            read_edits("calc.py\n<<<<<<< SEARCH\n=======\nb\n>>>>>>> REPLACE", &WS),
            []
        );
    }
}
