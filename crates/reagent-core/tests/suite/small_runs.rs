//! A small model's task that asks to run a command it quotes (issue 25): the command is run
//! for it before its first turn, and an answer that leaves out what it printed is asked for
//! once more.

use reagent_core::ToolMode;
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::json;

use super::harness::{files, run_task};

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
        |c| {
            c.model = "qwen2.5-coder:1.5b".into();
            c.tool_mode = ToolMode::Native;
        },
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
        |c| {
            c.model = "qwen3:8b".into();
            c.tool_mode = ToolMode::Native;
        },
    )
    .await;
    assert_eq!(o.result.answer, "Executed the script.");
    assert_eq!(o.requests.len(), 1);
    let messages = o.requests[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "no call made for it: {messages:?}");
}
