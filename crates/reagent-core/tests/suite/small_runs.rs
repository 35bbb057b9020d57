//! A small model's task that asks to run a command it quotes (issue 25): the command is run
//! for it before its first turn, and an answer that leaves out what it printed is asked for
//! once more.

use reagent_core::{AgentConfig, ToolMode};
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::json;

use super::harness::{files, run_task};

/// The model `name` calling tools natively.
fn native(name: &'static str) -> impl FnOnce(&mut AgentConfig) {
    move |c| {
        c.model = name.into();
        c.tool_mode = ToolMode::Native;
    }
}

const TASK: &str = "Execute `sh summary.sh` and report the line it prints.";

#[tokio::test]
async fn the_quoted_command_is_run_first_and_an_answer_without_its_output_is_asked_again() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "task_complete",
                json!({"summary": "Executed the script and reported its line."}),
            ))
            .turn(Turn::text("It printed: 3 csv files"))
            .turn(Turn::text("never asked")),
        TASK,
        |dir| files(dir, &[("summary.sh", "echo \"3 csv files\"\n")]),
        native("qwen2.5-coder:1.5b"),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "It printed: 3 csv files");
    // The first request holds the run: the call (layer `preload`), then its output.
    let messages = o.requests[0]["messages"].as_array().unwrap();
    let call = &messages[2]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "run_command", "{messages:?}");
    assert_eq!(
        call["arguments"]["command"], "sh summary.sh",
        "{messages:?}"
    );
    let output = messages[3]["content"].as_str().unwrap();
    assert!(output.contains("3 csv files"), "{output}");
    assert_eq!(
        o.events_of("assistant_message")[0]["parse_layer"],
        "preload"
    );
    // The answer without the line is asked for once more.
    assert_eq!(o.requests.len(), 2);
    let last = o.requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("does not say what the command printed"),
        "{last}"
    );
}

#[tokio::test]
async fn a_capable_model_runs_its_own_commands_and_keeps_its_answer() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "task_complete",
                json!({"summary": "Executed the script."}),
            ))
            .turn(Turn::text("never asked")),
        TASK,
        |dir| files(dir, &[("summary.sh", "echo \"3 csv files\"\n")]),
        native("qwen3:8b"),
    )
    .await;
    assert_eq!(o.result.answer, "Executed the script.");
    assert_eq!(o.requests.len(), 1);
    let messages = o.requests[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "no call made for it: {messages:?}");
}

/// hosts.ini of 400 lines, `backup_host_old` near the top and `backup_host` near the end.
fn hosts(dir: &std::path::Path) {
    let mut text = String::from("[servers]\n");
    for i in 0..400 {
        match i {
            97 => text.push_str("backup_host_old = vault-01.internal\n"),
            389 => text.push_str("backup_host = vault-03.internal\n"),
            _ => text.push_str(&format!("worker_{i:04} = {}\n", 10_000 + i)),
        }
    }
    files(dir, &[("hosts.ini", &text)]);
}

#[tokio::test]
async fn a_lookup_is_searched_first_in_plain_text_and_a_vague_answer_asked_again() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(
                "I looked up backup_host in hosts.ini and found its value.",
            ))
            .turn(Turn::text("backup_host is vault-03.internal"))
            .turn(Turn::text("never asked")),
        "Look up backup_host in the big file hosts.ini and tell me its value.",
        hosts,
        native("qwen2.5-coder:1.5b"),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "backup_host is vault-03.internal");
    let messages = o.requests[0]["messages"].as_array().unwrap();
    let call = &messages[2]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "grep_search", "{messages:?}");
    assert_eq!(call["arguments"]["pattern"], "backup_host");
    assert_eq!(call["arguments"]["word"], true);
    assert_eq!(call["arguments"]["path"], "hosts.ini");
    // The identifier is searched as a whole word (not `backup_host_old`), and the result
    // reaches the model as plain text under a label; the event keeps the JSON.
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(
        messages[3]["content"],
        "backup_host is found in hosts.ini:\nhosts.ini:391: backup_host = vault-03.internal"
    );
    let event = &o.events_of("tool_result")[0];
    assert!(
        event["output"]
            .as_str()
            .unwrap()
            .starts_with("{\"ok\":true"),
        "{event}"
    );
    // The answer without the value is asked for once more.
    assert_eq!(o.requests.len(), 2);
    let last = o.requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("does not say what the search found"),
        "{last}"
    );
}

#[tokio::test]
async fn a_lookup_that_asks_for_a_file_gets_an_answer_turn_for_its_content() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text("2"))
            .turn(Turn::text("never asked")),
        "How many lines in build.log mention WARNING? Put only the count into warnings.txt.",
        |dir| {
            files(
                dir,
                &[("build.log", "ok\nWARNING: a\nWARNING: b\nWARNINGS off\n")],
            )
        },
        native("qwen2.5-coder:1.5b"),
    )
    .await;
    // The file changed and nothing checked it.
    assert_eq!(o.result.outcome, Outcome::Unchecked, "{:?}", o.result.error);
    assert_eq!(o.file("warnings.txt"), "2\n");
    assert_eq!(o.requests.len(), 1);
    let request = &o.requests[0];
    // The answer turn: no tools, a system prompt that asks for the file's content only, and
    // the search's result with its count of lines (`WARNINGS` is not the word).
    assert!(
        request["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{request}"
    );
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("```warnings.txt"), "{system}");
    let result = request["messages"][3]["content"].as_str().unwrap();
    assert!(
        result.starts_with("WARNING is found on 2 lines, in build.log:"),
        "{result}"
    );
    assert_eq!(o.result.answer, "Changed warnings.txt.");
}

#[tokio::test]
async fn a_copy_of_the_search_made_for_the_model_is_not_run_again() {
    let copy = Turn::tool_call(
        "grep_search",
        json!({"pattern": "backup_host", "word": true, "path": "hosts.ini"}),
    );
    let o = run_task(
        ScriptBuilder::new()
            .turn(copy)
            .turn(Turn::text("vault-03.internal"))
            .turn(Turn::text("never asked")),
        "Look up backup_host in the big file hosts.ini and tell me its value.",
        hosts,
        native("qwen2.5-coder:0.5b"),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "vault-03.internal");
    // Only the search made before the first turn ran.
    assert_eq!(o.events_of("tool_call").len(), 1);
    let nudge = &o.events_of("nudge")[0];
    assert_eq!(nudge["reason"], "preload_copy", "{nudge}");
    let replies = o.events_of("assistant_message");
    assert_eq!(replies[1]["parse_layer"], "preload_copy", "{replies:?}");
}
