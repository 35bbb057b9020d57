//! Every text reagent itself puts in front of the model. The system prompt is stable for the
//! whole run (no timestamps), so a server's prompt cache keeps working.

use std::collections::HashMap;
use std::sync::Arc;

use reagent_protocol::{Message, Role, ToolCall, ToolSpec};
use reagent_tools::{ToolResult, WorkspaceFiles};
use serde_json::Value;

use crate::config::ToolMode;
use crate::tool_mode;

const BASE_SYSTEM_PROMPT: &str = "You are reagent, an agent that completes tasks in a workspace \
directory by using tools. Paths are relative to the workspace. Act, do not narrate: use a tool \
whenever you need information or want to change something. Read files before editing them. \
When the task is done, call task_complete with a short summary, or answer in plain text.";

/// Asked when a budget runs out.
pub(crate) const FINAL_ANSWER_REQUEST: &str = "You have run out of budget. Do not call any more \
tools. Give your final answer now, based on what you have found so far.";

/// The system prompt for a run; `files` (the workspace's first files) are listed in the
/// constrained mode, whose example calls `example_tool`, and in the other modes when they are
/// the whole workspace: a model shown the real paths up front does not invent them
/// (Qwen2.5-Coder guessed `src/test_app.py` for `test_app.py`, issue 25).
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
    if mode != ToolMode::Constrained {
        let whole = files.filter(|f| !f.more);
        prompt.push_str(tool_mode::file_listing(whole).trim_end());
    }
    prompt
}

/// What a nudge asks for, in the run's tool mode.
fn act_now(mode: ToolMode) -> &'static str {
    match mode {
        ToolMode::Constrained => {
            "Reply with a tool call JSON object now, or with {\"final_answer\": ...}."
        }
        ToolMode::Prompt => "Write the <tool_call> now, or give your final answer.",
        ToolMode::Native | ToolMode::Auto => "Call the tool now, or give your final answer.",
    }
}

/// A nudge after a reply whose tool call could not be read: the parser's reason, then what
/// to do.
pub(crate) fn unread_call_nudge(why: &str, mode: ToolMode) -> String {
    format!(
        "Your tool call could not be read ({why}). Write it again, complete and well-formed. {}",
        act_now(mode)
    )
}

/// Whether `text` is nothing but tools' results as the loop writes them (`{"ok": …,
/// "output": …}`, one or several, perhaps inside a template's `<tool_response>` tags), echoed
/// by the model instead of an answer (the Qwen2.5-Coder models did so on the coding suite, also
/// as `{"output": …}` alone).
pub(crate) fn is_result_echo(text: &str) -> bool {
    // Every reply without calls passes here: prose is told apart without parsing or copying.
    let start = text.trim_start();
    if !start.starts_with('{') && !start.starts_with("<tool_response>") {
        return false;
    }
    let t = text
        .replace("<tool_response>", "")
        .replace("</tool_response>", "");
    let mut values = serde_json::Deserializer::from_str(t.trim()).into_iter::<Value>();
    let mut any = false;
    let all = values.all(|v| {
        any = true;
        v.ok()
            .and_then(|v| v.as_object().cloned())
            .is_some_and(|o| {
                !o.is_empty()
                    && o.contains_key("ok") | o.contains_key("output")
                    && o.keys()
                        .all(|k| matches!(k.as_str(), "ok" | "output" | "error"))
            })
    });
    any && all
}

/// A nudge after an empty, narrating or echoing reply.
pub(crate) fn nudge(reason: &str, mode: ToolMode) -> String {
    let how = act_now(mode);
    match reason {
        "empty_reply" => format!("Your reply was empty. {how}"),
        "result_echo" => format!("That is the tool's result, not your answer. {how}"),
        "preload_copy" => "That call was already made for you, and its result is above. Do not \
                           call it again: answer the task from that result now."
            .to_owned(),
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

/// The message that gives failing checks back to the model.
pub(crate) fn verification_failed(results: &[crate::verify::CheckResult]) -> String {
    let failed: Vec<&crate::verify::CheckResult> = results.iter().filter(|r| !r.passed).collect();
    let mut text = format!(
        "You ended the task, but {} of {} verification checks failed. Fix what they report, \
         then finish again.\n",
        failed.len(),
        results.len()
    );
    for r in failed {
        text.push_str(&format!(
            "\nCheck `{}` failed:\n{}\n",
            r.check,
            r.output.trim_end()
        ));
    }
    text
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

/// A native conversation's tool results rewritten as plain text (see [`plain_tool_result`]),
/// still as `tool` messages, for a model that copies the JSON envelope into its answers
/// ([`crate::weak_model::Policy::plain_tool_results`]). Each result is relabelled with the
/// arguments of the call it answers; a result that is not the JSON of a tool result (already
/// plain) is left as it is.
pub(crate) fn plain_tool_messages(messages: &mut [Arc<Message>]) {
    let mut arguments: HashMap<String, Value> = HashMap::new();
    for message in messages.iter_mut() {
        if message.role == Role::Assistant {
            for call in &message.tool_calls {
                arguments.insert(call.id.clone(), call.arguments.clone());
            }
            continue;
        }
        let (Role::Tool, Some(name)) = (message.role, message.tool_name.as_deref()) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<Value>(&message.content) else {
            continue;
        };
        if json.get("ok").and_then(Value::as_bool).is_none() {
            continue;
        }
        let args = message
            .tool_call_id
            .as_ref()
            .and_then(|id| arguments.get(id))
            .unwrap_or(&Value::Null);
        let text = plain_tool_result(name, args, &ToolResult::from_json(&json));
        Arc::make_mut(message).content = text;
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
                "grep_search" => match matched_lines(&text) {
                    (_, files) if files.is_empty() => format!("Lines matching {}:", arg("pattern")),
                    (1, files) => format!("{} is found in {}:", arg("pattern"), files.join(", ")),
                    (lines, files) => format!(
                        "{} is found on {}, in {}:",
                        arg("pattern"),
                        count(lines, "line"),
                        files.join(", ")
                    ),
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
pub(crate) fn clean_stdout(output: &str) -> Option<&str> {
    let stdout = output.strip_prefix("exit code 0\n--- stdout ---\n")?;
    (!stdout.contains("\n--- stderr ---\n")).then(|| stdout.trim_end())
}

/// The number of `grep_search`'s `path:line: text` lines, and the files they name, each once,
/// in order.
fn matched_lines(output: &str) -> (usize, Vec<&str>) {
    let mut files: Vec<&str> = Vec::new();
    let mut lines = 0;
    for (path, _) in output.lines().filter_map(grep_match) {
        lines += 1;
        if !files.contains(&path) {
            files.push(path);
        }
    }
    (lines, files)
}

/// A `grep_search` output line `path:line: text` as its path and text; `None` for any other
/// line (a note, a truncation).
pub(crate) fn grep_match(line: &str) -> Option<(&str, &str)> {
    let (path, rest) = line.split_once(':')?;
    let (n, text) = rest.split_once(": ")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some((path, text))
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
pub(crate) const ERROR_LABEL: &str = "Error from ";

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
                ends_run: false,
            },
            ToolResult::ok(String::new()),
            ToolResult::err("no such file: \"x\""),
        ];
        for r in &results {
            assert_eq!(tool_result_json(r), r.to_json().to_string());
        }
    }

    #[test]
    fn tool_results_echoed_back_are_told_from_answers() {
        for echo in [
            r#"{"ok":true,"output":"A = 1\n"}"#,
            "{\"ok\":true,\"output\":\"a\"}\n{\"ok\":false,\"error\":\"b\"}",
            "<tool_response>\n{\"ok\":true,\"output\":\"x\"}\n</tool_response>",
            "\n{\"output\":\"name: billing\\n\"}\n\n",
        ] {
            assert!(is_result_echo(echo), "{echo}");
        }
        for answer in [
            "3",
            "The host is db-2.",
            r#"{"mira": 12, "jon": 7}"#,
            r#"{"ok": true, "output": "x"} and more words"#,
            "{}",
            "",
        ] {
            assert!(!is_result_echo(answer), "{answer}");
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
            "INVOICE is found on 3 lines, in letters/two.txt, b.txt:\n\
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
}
