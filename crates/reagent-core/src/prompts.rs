//! Every text reagent itself puts in front of the model. The system prompt is stable for the
//! whole run (no timestamps), so a server's prompt cache keeps working.

use std::sync::Arc;

use reagent_protocol::{Message, Role, ToolCall, ToolSpec};

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

/// The system prompt for a run.
pub(crate) fn system_prompt(
    custom: Option<&str>,
    mode: ToolMode,
    specs: &[ToolSpec],
    hint: Option<&str>,
) -> String {
    let mut prompt = custom.unwrap_or(BASE_SYSTEM_PROMPT).to_owned();
    if let Some(hint) = hint {
        prompt.push(' ');
        prompt.push_str(hint);
    }
    match mode {
        ToolMode::Constrained => {
            prompt.push_str("\n\n");
            prompt.push_str(&tool_mode::constrained_instructions(specs));
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

/// The message carrying a tool result back: a `tool` message in native mode, a user message
/// in the text modes (where chat templates may not know the tool role).
pub(crate) fn tool_result_message(mode: ToolMode, call: &ToolCall, result_json: &str) -> Message {
    match mode {
        ToolMode::Native | ToolMode::Auto => Message::tool_result(call, result_json),
        ToolMode::Constrained | ToolMode::Prompt => {
            let mut m = Message::user(format!("Result of {}: {result_json}", call.name));
            m.tool_name = Some(call.name.clone());
            m
        }
    }
}

/// A fresh, plain question for a weak model: the task and the latest tool results, restated.
pub(crate) fn restated_question(task: &str, history: &[Arc<Message>]) -> Vec<Message> {
    let mut results = Vec::new();
    let mut budget = RESTATED_RESULTS_MAX_BYTES;
    for m in history.iter().rev() {
        let is_result = m.role == Role::Tool || (m.role == Role::User && m.tool_name.is_some());
        if !is_result || m.content.len() > budget {
            continue;
        }
        budget -= m.content.len();
        results.push(m.content.clone());
    }
    results.reverse();
    let mut question = String::from("Here is what the tools returned:\n\n");
    for r in &results {
        question.push_str(r);
        question.push_str("\n\n");
    }
    question.push_str(&format!("Using this, answer in plain text: {task}"));
    vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user(question),
    ]
}
