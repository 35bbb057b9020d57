//! Every text reagent itself puts in front of the model. The system prompt is stable for the
//! whole run (no timestamps), so a server's prompt cache keeps working.

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

/// Results restated for the plain-text final question stay under this size.
const RESTATED_RESULTS_MAX_BYTES: usize = 6_000;

/// The system prompt for a run; `files` (the workspace's first files) are listed in the
/// constrained mode.
pub(crate) fn system_prompt(
    custom: Option<&str>,
    mode: ToolMode,
    specs: &[ToolSpec],
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
            prompt.push_str(&tool_mode::constrained_instructions(specs, files));
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
            let label = match name {
                "read_file" => match args.get("start_line").and_then(Value::as_u64) {
                    Some(start) if start > 1 => {
                        format!("The file {}, from line {start}, contains:", arg("path"))
                    }
                    _ => format!("The file {} contains:", arg("path")),
                },
                "list_directory" => {
                    let path = arg("path");
                    let path = if path.is_empty() { "." } else { path };
                    format!("The folder {path} contains:")
                }
                "find_files" => format!("Files matching {}:", arg("pattern")),
                "grep_search" => format!("Lines matching {}:", arg("pattern")),
                "run_command" => format!("The command `{}` printed:", arg("command")),
                _ => format!("Result of {name}:"),
            };
            let text = match output {
                Value::String(s) => s.trim_end().to_owned(),
                other => other.to_string(),
            };
            if text.is_empty() {
                format!("{label} (nothing)")
            } else {
                format!("{label}\n{text}")
            }
        }
    }
}

/// How a failed call's plain result begins.
const ERROR_LABEL: &str = "Error from ";

/// A fresh, plain question for a weak model: the task, then each distinct tool result once, in
/// plain text under its label (only the successful ones, when there are any). Measured with
/// SmolLM2-135M: given the JSON envelope, repeated once per identical call, it answers
/// nonsense; given the task and then the plain results, it answers from them (3 of 3 small
/// tasks, where the results followed by a short question got 1 of 3; BENCHMARKS.md).
pub(crate) fn restated_question(task: &str, history: &[Arc<Message>]) -> Vec<Message> {
    let mut results: Vec<&str> = Vec::new();
    let mut errors: Vec<&str> = Vec::new();
    let mut budget = RESTATED_RESULTS_MAX_BYTES;
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
    let mut shown = if results.is_empty() { errors } else { results };
    shown.reverse();
    let mut question = task.trim().to_owned();
    for r in &shown {
        question.push_str("\n\n");
        question.push_str(r);
    }
    vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user(question),
    ]
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
            "The file notes.txt contains:\norchid"
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
            "The folder . contains:\na.txt\nsrc/"
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
        let q = restated_question(task, &history);
        assert_eq!(q.len(), 2);
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             The file a.txt contains:\nfirst\n\nThe file b.txt contains:\nsecond"
        );
        let q = restated_question(task, &history[..3]);
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             Error from read_file: no such file or directory: ..."
        );
    }
}
