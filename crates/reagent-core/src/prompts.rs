//! Every text reagent itself puts in front of the model. The system prompt is stable for the
//! whole run (no timestamps), so a server's prompt cache keeps working.

use std::sync::Arc;

use reagent_protocol::{Message, Role, ToolCall, ToolSpec};
use reagent_tools::{ToolResult, WorkspaceFiles};
use serde_json::Value;

use crate::answer_focus;
use crate::config::ToolMode;
use crate::tool_mode;
use crate::workspace_view::WorkspaceView;

const BASE_SYSTEM_PROMPT: &str = "You are reagent, an agent that completes tasks in a workspace \
directory by using tools. Paths are relative to the workspace. Act, do not narrate: use a tool \
whenever you need information or want to change something. Read files before editing them. \
When the task is done, call task_complete with a short summary, or answer in plain text.";

/// Asked when a budget runs out.
pub(crate) const FINAL_ANSWER_REQUEST: &str = "You have run out of budget. Do not call any more \
tools. Give your final answer now, based on what you have found so far.";

/// Results restated for the plain-text final question stay under this size.
const RESTATED_RESULTS_MAX_BYTES: usize = 6_000;

/// The system prompt for a run; `files` (the workspace's first files) are listed in the
/// constrained mode, whose example calls `example_tool`.
pub(crate) fn system_prompt(
    custom: Option<&str>,
    mode: ToolMode,
    specs: &[ToolSpec],
    example_tool: &str,
    hint: Option<&str>,
    files: Option<&WorkspaceFiles>,
) -> String {
    let mut prompt = custom.unwrap_or(BASE_SYSTEM_PROMPT).to_owned();
    if let Some(hint) = hint {
        prompt.push(' ');
        prompt.push_str(hint);
    }
    match mode {
        ToolMode::Constrained => {
            prompt.push_str("\n\n");
            prompt.push_str(&tool_mode::constrained_instructions(
                specs,
                example_tool,
                files,
            ));
        }
        ToolMode::Prompt => {
            prompt.push_str("\n\n");
            prompt.push_str(&tool_mode::prompt_instructions(specs));
        }
        ToolMode::Native | ToolMode::Auto => {}
    }
    prompt
}

/// A nudge after an empty or narrating reply.
pub(crate) fn nudge(reason: &str, mode: ToolMode) -> String {
    let how = match mode {
        ToolMode::Constrained => {
            "Reply with a tool call JSON object now, or with {\"final_answer\": ...}."
        }
        ToolMode::Prompt => "Write the <tool_call> now, or give your final answer.",
        ToolMode::Native | ToolMode::Auto => "Call the tool now, or give your final answer.",
    };
    match reason {
        "empty_reply" => format!("Your reply was empty. {how}"),
        _ => format!("Do not describe what you will do; do it. {how}"),
    }
}

/// The hint after a first repetition.
pub(crate) fn repetition_hint(detail: &str) -> String {
    format!(
        "Note: {detail}. Repeating it will not give a different result. Try something different, \
         or call task_complete if you are done."
    )
}

/// The message carrying a tool result back: a `tool` message with the JSON result in native
/// mode; in the text modes a user message with the result in plain text under a one-line
/// label (see [`plain_tool_result`]), since small models answer from plain text and not from
/// a JSON envelope.
pub(crate) fn tool_result_message(
    mode: ToolMode,
    call: &ToolCall,
    args: &Value,
    result: &ToolResult,
    result_json: String,
) -> Message {
    match mode {
        ToolMode::Native | ToolMode::Auto => Message::tool_result(call, result_json),
        ToolMode::Constrained | ToolMode::Prompt => {
            let mut m = Message::user(plain_tool_result(&call.name, args, result));
            m.tool_name = Some(call.name.clone());
            m
        }
    }
}

/// A tool result as the JSON the model reads in native mode and the `tool_result` event carries:
/// `{"ok":true,"output":…}` or `{"ok":false,"error":…}` (the text of [`ToolResult::to_json`]),
/// written straight from the result rather than through a copied `Value`.
pub(crate) fn tool_result_json(result: &ToolResult) -> String {
    #[derive(serde::Serialize)]
    struct ResultJson<'a> {
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a str>,
    }
    let borrowed = match result {
        ToolResult::Ok { output, .. } => ResultJson {
            ok: true,
            output: Some(output),
            error: None,
        },
        ToolResult::Err { error } => ResultJson {
            ok: false,
            output: None,
            error: Some(error),
        },
    };
    // Serializing borrowed strings and a `Value` cannot fail; the fallback is for form's sake.
    serde_json::to_string(&borrowed).unwrap_or_else(|_| result.to_json().to_string())
}

/// A tool result as plain text: one line saying what it is ("The file notes.txt contains:"),
/// then the output as it is. A failure reads "Error from read_file: ...".
pub(crate) fn plain_tool_result(name: &str, args: &Value, result: &ToolResult) -> String {
    let arg = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    match result {
        ToolResult::Err { error } => format!("{ERROR_LABEL}{name}: {error}"),
        ToolResult::Ok { output, .. } => {
            let text = match output {
                Value::String(s) => s.trim_end().to_owned(),
                other => other.to_string(),
            };
            let label = match name {
                "read_file" => match args.get("start_line").and_then(Value::as_u64) {
                    Some(start) if start > 1 => {
                        format!("The file {}, from line {start}, contains:", arg("path"))
                    }
                    _ => match whole_file_lines(&text) {
                        Some(n) => format!("The file {} has {}:", arg("path"), count(n, "line")),
                        None => format!("The file {} contains:", arg("path")),
                    },
                },
                "list_directory" => {
                    let path = arg("path");
                    let path = if path.is_empty() { "." } else { path };
                    let recursive = args.get("recursive").and_then(Value::as_bool) == Some(true);
                    match listed_entries(&text).filter(|_| !recursive) {
                        Some((files, 0)) => {
                            format!("The folder {path} holds {}:", count(files, "file"))
                        }
                        Some((files, folders)) => format!(
                            "The folder {path} holds {} and {}:",
                            count(files, "file"),
                            count(folders, "folder")
                        ),
                        None => format!("The folder {path} contains:"),
                    }
                }
                "find_files" => format!("Files matching {}:", arg("pattern")),
                "grep_search" => match matched_files(&text)[..] {
                    [] => format!("Lines matching {}:", arg("pattern")),
                    ref files => format!("{} is found in {}:", arg("pattern"), files.join(", ")),
                },
                "run_command" => {
                    // "exit code 0\n--- stdout ---\n391" reads as "exit code 0" to a weak
                    // model: a clean run is given as what it printed, nothing else.
                    if let Some(stdout) = clean_stdout(&text) {
                        return format!("The command `{}` printed:\n{stdout}", arg("command"));
                    }
                    format!("The command `{}` printed:", arg("command"))
                }
                _ => format!("Result of {name}:"),
            };
            if text.is_empty() {
                format!("{label} (nothing)")
            } else {
                format!("{label}\n{text}")
            }
        }
    }
}

/// The standard output of a `run_command` result that exited 0 and wrote only to it.
fn clean_stdout(output: &str) -> Option<&str> {
    let stdout = output.strip_prefix("exit code 0\n--- stdout ---\n")?;
    (!stdout.contains("\n--- stderr ---\n")).then(|| stdout.trim_end())
}

/// The files named by `grep_search`'s `path:line: text` lines, each once, in order.
fn matched_files(output: &str) -> Vec<&str> {
    let mut files: Vec<&str> = Vec::new();
    for line in output.lines() {
        let Some((path, rest)) = line.split_once(':') else {
            continue;
        };
        let numbered = rest
            .split_once(": ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

/// "1 line", "5 lines".
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The number of lines of a `read_file` output that holds the whole file (no "[showing lines
/// …]" note; the tool's trailing notes not counted); `None` for a partial page.
fn whole_file_lines(output: &str) -> Option<usize> {
    if output.contains("\n[showing lines ") {
        return None;
    }
    let is_note = |line: &str| {
        line.starts_with("[note: this file has ") || line.contains(" long line(s) were cut at ")
    };
    let notes = output.lines().rev().take_while(|l| is_note(l)).count();
    Some(output.lines().count() - notes)
}

/// The files and folders of a complete `list_directory` listing (folders end with `/`);
/// `None` when the listing was cut or is empty.
fn listed_entries(output: &str) -> Option<(usize, usize)> {
    if output.is_empty() || output.contains("\n[listing cut") || output.contains("\n[folders ") {
        return None;
    }
    if output == "(empty directory)" {
        return None;
    }
    let folders = output.lines().filter(|l| l.ends_with('/')).count();
    Some((output.lines().count() - folders, folders))
}

/// How a failed call's plain result begins.
const ERROR_LABEL: &str = "Error from ";

/// A fresh, plain question for a weak model: the task, the workspace's folders, each distinct
/// tool result once, in plain text under its label (only the successful ones, when there are
/// any), then — when those found nothing to answer from (no file read, search match or command
/// output) — the workspace's other small files (`view`). Measured with SmolLM2-135M: given
/// the JSON envelope, repeated once per identical call, it answers nonsense; given the task and
/// then the plain results, it answers from them (3 of 3 small tasks, where the results followed
/// by a short question got 1 of 3; BENCHMARKS.md). Everything restated stays within
/// [`RESTATED_RESULTS_MAX_BYTES`], the tool results first.
pub(crate) fn restated_question(
    task: &str,
    history: &[Arc<Message>],
    view: &WorkspaceView,
) -> Vec<Message> {
    let shown = restated_material(task, history, view);
    let mut sections: Vec<&str> = vec![task.trim()];
    if !view.overview.is_empty() {
        sections.push(&view.overview);
    }
    sections.extend(shown);
    vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user(sections.join("\n\n")),
    ]
}

/// What [`narrow_question`] asks under the task.
pub(crate) const NARROW_INSTRUCTION: &str = "Answer in a few words. Do not repeat the files.";

/// The question asked once more when the answer to [`restated_question`] was mostly a copy of
/// it: only the restated files and results that share a word with the task (all of them when
/// none does), no folder overview, and the task last, with the answer asked for in a few words.
pub(crate) fn narrow_question(
    task: &str,
    history: &[Arc<Message>],
    view: &WorkspaceView,
) -> Vec<Message> {
    let shown = restated_material(task, history, view);
    let keywords = answer_focus::keywords(task);
    let relevant: Vec<&str> = shown
        .iter()
        .copied()
        .filter(|s| answer_focus::relevance(&keywords, s) > 0)
        .collect();
    let mut sections = if relevant.is_empty() { shown } else { relevant };
    let question = format!("Question: {}\n{NARROW_INSTRUCTION}", task.trim());
    sections.push(&question);
    vec![
        Message::system("You are a helpful assistant. Answer the question in a few words."),
        Message::user(sections.join("\n\n")),
    ]
}

/// The distinct tool results (only the successful ones, when there are any), then, when none
/// of them found anything ([`is_informative`]), the workspace's other small files, within
/// [`RESTATED_RESULTS_MAX_BYTES`] (the results first), those sharing more words with the task
/// first. Measured with SmolLM2-135M (BENCHMARKS.md, third round): once it picks the fitting
/// tool, the other files only offer it distractors (`100` from `a/value.txt` for the number in
/// `a/b/c/value.txt`, which it had read).
fn restated_material<'a>(
    task: &str,
    history: &'a [Arc<Message>],
    view: &'a WorkspaceView,
) -> Vec<&'a str> {
    let mut results: Vec<&str> = Vec::new();
    let mut errors: Vec<&str> = Vec::new();
    let mut budget = RESTATED_RESULTS_MAX_BYTES.saturating_sub(view.overview.len());
    for m in history.iter().rev() {
        let is_result = m.role == Role::Tool || (m.role == Role::User && m.tool_name.is_some());
        let text = m.content.as_str();
        let known = results.contains(&text) || errors.contains(&text);
        if !is_result || known || text.len() > budget {
            continue;
        }
        budget -= text.len();
        if text.starts_with(ERROR_LABEL) {
            errors.push(text);
        } else {
            results.push(text);
        }
    }
    let informative = history.iter().any(|m| is_informative(m));
    let mut shown = if results.is_empty() { errors } else { results };
    shown.reverse();
    // The model's own findings answer the question; the rest of the workspace, with its
    // distractors, is shown only when it found nothing.
    let files: &[String] = if informative { &[] } else { &view.files };
    for file in files {
        let already = shown.iter().any(|r| r.trim_end() == file.trim_end());
        if !already && file.len() <= budget {
            budget -= file.len();
            shown.push(file);
        }
    }
    answer_focus::most_relevant_first(task, &mut shown);
    shown
}

/// Whether `m` is a successful result that found something: a file read, search matches or a
/// command's output (a listing, a write or an empty search finds nothing to answer from).
fn is_informative(m: &Message) -> bool {
    let finds = matches!(
        m.tool_name.as_deref(),
        Some("read_file" | "grep_search" | "find_files" | "run_command")
    );
    let text = m.content.as_str();
    finds
        && !text.starts_with(ERROR_LABEL)
        && !text.ends_with("(nothing)")
        && !text.contains("\nno matches for ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn result_json_is_the_text_of_to_json() {
        let results = [
            ToolResult::ok("line one\n\"quoted\" \u{1F600}\tend".to_owned()),
            ToolResult::Ok {
                output: json!({"entries": [{"name": "a", "size": 3}], "truncated": false}),
                changed: vec!["a".into()],
            },
            ToolResult::ok(String::new()),
            ToolResult::err("no such file: \"x\""),
        ];
        for r in &results {
            assert_eq!(tool_result_json(r), r.to_json().to_string());
        }
    }

    #[test]
    fn results_are_labelled_plain_text_and_errors_say_so() {
        let ok = |s: &str| ToolResult::ok(s.to_owned());
        assert_eq!(
            plain_tool_result("read_file", &json!({"path": "notes.txt"}), &ok("orchid\n")),
            "The file notes.txt has 1 line:\norchid"
        );
        assert_eq!(
            plain_tool_result(
                "read_file",
                &json!({"path": "big.log"}),
                &ok("a\nb\n[showing lines 1-2; the file has more lines; call read_file with start_line=3 to continue]")
            ),
            "The file big.log contains:\na\nb\n[showing lines 1-2; the file has more lines; call read_file with start_line=3 to continue]"
        );
        assert_eq!(
            plain_tool_result(
                "read_file",
                &json!({"path": "l.txt"}),
                &ok("a\nb\nc\n[note: this file has 2 hard links; the same data may exist outside the workspace]")
            ),
            "The file l.txt has 3 lines:\na\nb\nc\n[note: this file has 2 hard links; the same data may exist outside the workspace]"
        );
        assert_eq!(
            plain_tool_result(
                "read_file",
                &json!({"path": "a.log", "start_line": 40}),
                &ok("x")
            ),
            "The file a.log, from line 40, contains:\nx"
        );
        assert_eq!(
            plain_tool_result("list_directory", &json!({}), &ok("a.txt\nsrc/")),
            "The folder . holds 1 file and 1 folder:\na.txt\nsrc/"
        );
        assert_eq!(
            plain_tool_result("list_directory", &json!({"path": "p"}), &ok("a.jpg\nb.jpg")),
            "The folder p holds 2 files:\na.jpg\nb.jpg"
        );
        assert_eq!(
            plain_tool_result(
                "list_directory",
                &json!({"path": "p", "recursive": true}),
                &ok("a/\na/b.txt")
            ),
            "The folder p contains:\na/\na/b.txt"
        );
        assert_eq!(
            plain_tool_result("list_directory", &json!({}), &ok("(empty directory)")),
            "The folder . contains:\n(empty directory)"
        );
        let command = json!({"command": "sh code.sh"});
        assert_eq!(
            plain_tool_result(
                "run_command",
                &command,
                &ok("exit code 0\n--- stdout ---\n391\n")
            ),
            "The command `sh code.sh` printed:\n391"
        );
        assert_eq!(
            plain_tool_result(
                "run_command",
                &command,
                &ok("exit code 0\n--- stdout ---\n1\n--- stderr ---\nwarn\n")
            ),
            "The command `sh code.sh` printed:\nexit code 0\n--- stdout ---\n1\n--- stderr ---\nwarn"
        );
        assert_eq!(
            plain_tool_result("run_command", &command, &ok("exit code 0\n(no output)")),
            "The command `sh code.sh` printed:\nexit code 0\n(no output)"
        );
        assert_eq!(
            plain_tool_result(
                "grep_search",
                &json!({"pattern": "INVOICE"}),
                &ok("letters/two.txt:1: Please pay INVOICE 7781.\nb.txt:12: INVOICE\nletters/two.txt:3: x")
            ),
            "INVOICE is found in letters/two.txt, b.txt:\n\
             letters/two.txt:1: Please pay INVOICE 7781.\nb.txt:12: INVOICE\nletters/two.txt:3: x"
        );
        assert_eq!(
            plain_tool_result(
                "grep_search",
                &json!({"pattern": "x"}),
                &ok("no matches for x")
            ),
            "Lines matching x:\nno matches for x"
        );
        assert_eq!(
            plain_tool_result("grep_search", &json!({"pattern": "ERROR"}), &ok("")),
            "Lines matching ERROR: (nothing)"
        );
        assert_eq!(
            plain_tool_result("custom", &json!({}), &ToolResult::ok(json!({"n": 1}))),
            "Result of custom:\n{\"n\":1}"
        );
        assert_eq!(
            plain_tool_result("read_file", &json!({}), &ToolResult::err("no such file")),
            "Error from read_file: no such file"
        );
    }

    fn result(text: &str) -> Arc<Message> {
        let mut m = Message::user(text);
        m.tool_name = Some("read_file".into());
        Arc::new(m)
    }

    #[test]
    fn restated_results_appear_once_and_successes_win_over_errors() {
        let history = vec![
            Arc::new(Message::system("s")),
            Arc::new(Message::user(
                "Read the file a.txt and tell me its first line.",
            )),
            result("Error from read_file: no such file or directory: ..."),
            result("The file a.txt contains:\nfirst"),
            result("The file a.txt contains:\nfirst"),
            result("The file b.txt contains:\nsecond"),
        ];
        let task = "Read the file a.txt and tell me its first line.";
        let q = restated_question(task, &history, &WorkspaceView::default());
        assert_eq!(q.len(), 2);
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             The file a.txt contains:\nfirst\n\nThe file b.txt contains:\nsecond"
        );
        let q = restated_question(task, &history[..3], &WorkspaceView::default());
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             Error from read_file: no such file or directory: ..."
        );
    }

    fn result_of(tool: &str, text: &str) -> Arc<Message> {
        let mut m = Message::user(text);
        m.tool_name = Some(tool.into());
        Arc::new(m)
    }

    #[test]
    fn the_workspace_s_files_follow_only_when_the_model_found_nothing_itself() {
        let view = WorkspaceView {
            overview: "The workspace holds 2 files: a.txt, b.txt.".into(),
            files: vec![
                "The file a.txt contains:\nfirst".into(),
                "The file b.txt contains:\nsecond".into(),
                "x".repeat(RESTATED_RESULTS_MAX_BYTES),
            ],
        };
        let ask = |result: Arc<Message>| {
            let history = vec![Arc::new(Message::user("How many files?")), result];
            restated_question("How many files?", &history, &view)[1]
                .content
                .clone()
        };
        // A listing, an empty search or an error found nothing to answer from: the files
        // follow (those that fit).
        assert_eq!(
            ask(result_of(
                "list_directory",
                "The folder . holds 2 files:\na.txt\nb.txt"
            )),
            "How many files?\n\nThe workspace holds 2 files: a.txt, b.txt.\n\n\
             The folder . holds 2 files:\na.txt\nb.txt\n\n\
             The file a.txt contains:\nfirst\n\nThe file b.txt contains:\nsecond"
        );
        for nothing in [
            result_of("grep_search", "Lines matching z:\nno matches for z"),
            result_of("grep_search", "Lines matching z: (nothing)"),
            result_of("read_file", "Error from read_file: no such file"),
        ] {
            assert!(ask(nothing).ends_with("The file b.txt contains:\nsecond"));
        }
        // A file read (or search matches, or a command's output) is what the answer rests on:
        // the other files, with their distractors, are left out.
        assert_eq!(
            ask(result_of("read_file", "The file b.txt contains:\nsecond")),
            "How many files?\n\nThe workspace holds 2 files: a.txt, b.txt.\n\n\
             The file b.txt contains:\nsecond"
        );
        for found in [
            result_of("grep_search", "Lines matching s:\nb.txt:1: second"),
            result_of("run_command", "The command `ls` printed:\na.txt"),
        ] {
            assert!(!ask(found).contains("The file a.txt"));
        }
    }

    #[test]
    fn files_sharing_the_task_s_words_come_first_and_the_narrow_question_keeps_only_them() {
        let view = WorkspaceView {
            overview: "The workspace holds 3 files: a.txt, b.txt, c.txt.".into(),
            files: vec![
                "The file a.txt has 1 line:\nThe cat sleeps.".into(),
                "The file b.txt has 1 line:\nA penguin waddles by.".into(),
                "The file c.txt has 1 line:\nThe dog barks.".into(),
            ],
        };
        let task = "Which file mentions a penguin?";
        let q = restated_question(task, &[], &view);
        assert_eq!(
            q[1].content,
            "Which file mentions a penguin?\n\nThe workspace holds 3 files: a.txt, b.txt, c.txt.\n\n\
             The file b.txt has 1 line:\nA penguin waddles by.\n\n\
             The file a.txt has 1 line:\nThe cat sleeps.\n\nThe file c.txt has 1 line:\nThe dog barks."
        );
        let narrow = narrow_question(task, &[], &view);
        assert_eq!(
            narrow[1].content,
            "The file b.txt has 1 line:\nA penguin waddles by.\n\n\
             Question: Which file mentions a penguin?\nAnswer in a few words. Do not repeat the files."
        );
    }
}
