//! A small model's edit turns (issue 25): a change task in a small workspace shows the files
//! after the task and asks for the changed ones whole in fences, with no tools offered; the
//! blocks are written through the tool path and end the run, a failing check goes back for
//! another edit turn, and a reply without an edit turns the run into the tool loop. A task that
//! moves files also gets its `sh` block run.

use reagent_core::verify::Check;
use reagent_core::{AgentConfig, ToolMode};
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::Value;

use super::harness::{files, run_task};

const CALC: &str = "def add(a, b):\n    return a - b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n";
const TASK: &str = "Fix the bug in calc.py so that add returns the sum.";

fn calc(dir: &std::path::Path) {
    files(
        dir,
        &[
            ("calc.py", CALC),
            ("test_calc.py", "import calc\n"),
            ("empty.py", ""),
        ],
    );
}

/// A small model that calls tools (its name says 1.5B).
fn small(c: &mut AgentConfig) {
    c.model = "qwen2.5-coder:1.5b".into();
    c.tool_mode = ToolMode::Native;
}

fn message(request: &Value, i: usize) -> String {
    request["messages"][i]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn offers_tools(request: &Value) -> bool {
    request["tools"].as_array().is_some_and(|t| !t.is_empty())
}

#[tokio::test]
async fn a_small_model_s_change_is_asked_for_as_whole_files_and_written() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(format!(
                "<file path=\"calc.py\">\n{FIXED}</file>"
            )))
            .turn(Turn::text("never asked")),
        TASK,
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), FIXED);
    assert_eq!(o.requests.len(), 1, "the written edit ends the run");
    let first = &o.requests[0];
    assert!(!offers_tools(first), "{first}");
    let system = message(first, 0);
    assert!(system.contains("complete new content"), "{system}");
    assert!(
        system.contains("<file path=\"calc.py\">...</file>"),
        "the example is a shown file: {system}"
    );
    // The task, then every non-empty file of the small workspace as a `<file>` element.
    assert_eq!(
        message(first, 1),
        format!(
            "{TASK}\n\nThe files:\n\n<file path=\"calc.py\">\n{CALC}</file>\n\n\
             <file path=\"test_calc.py\">\nimport calc\n</file>\n"
        )
    );
    let calls = o.events_of("tool_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "write_file");
    let replies = o.events_of("assistant_message");
    assert_eq!(replies[0]["parse_layer"], "text_edit", "{replies:?}");
    // Written and checked by nothing: not `completed`.
    assert_eq!(o.result.outcome, Outcome::Unchecked);
    assert_eq!(o.result.answer, "Changed calc.py.");
}

#[tokio::test]
async fn a_failing_check_goes_back_for_another_edit_turn() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(format!(
                "```python\n{}```",
                CALC.replace("a - b", "b - a")
            )))
            .turn(Turn::text(format!("```calc.py\n{FIXED}```")))
            .turn(Turn::text("never asked")),
        TASK,
        calc,
        |c| {
            small(c);
            c.verify.checks = vec!["command:grep -q 'a + b' calc.py".parse::<Check>().unwrap()];
        },
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Verified, "{:?}", o.result.error);
    assert_eq!(o.file("calc.py"), FIXED);
    assert_eq!(o.requests.len(), 2);
    // The unnamed block of the first reply was the shown calc.py; the second turn is an edit
    // turn too, with the check's failure after the first reply's edit.
    let second = &o.requests[1];
    assert!(!offers_tools(second), "{second}");
    assert!(message(second, 0).contains("complete new content"));
    let last = second["messages"].as_array().unwrap().last().unwrap();
    let failed = last["content"].as_str().unwrap();
    assert!(failed.contains("verification checks failed"), "{failed}");
    let checks = o.events_of("verification_check");
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert_eq!(checks[0]["passed"], false);
    assert_eq!(checks[1]["passed"], true);
}

#[tokio::test]
async fn a_reply_without_an_edit_is_asked_again_once_then_the_tool_loop_takes_over() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text("The bug is the minus sign."))
            .turn(Turn::text("It should be a plus."))
            .turn(Turn::tool_call(
                "edit_file",
                serde_json::json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
            ))
            .turn(Turn::text("Fixed.")),
        TASK,
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), FIXED);
    assert_eq!(o.requests.len(), 4);
    // Asked again for the files, in an edit turn, the example path the file the task names.
    let second = &o.requests[1];
    assert!(!offers_tools(second), "{second}");
    let asked = second["messages"].as_array().unwrap().last().unwrap();
    assert!(
        asked["content"]
            .as_str()
            .unwrap()
            .contains("<file path=\"calc.py\">"),
        "{asked}"
    );
    assert_eq!(o.events_of("nudge")[0]["reason"], "no_edit");
    // After the second answer without an edit: the tools, the run's own system prompt, the
    // files still shown after the task, and the request to make the change.
    let third = &o.requests[2];
    assert!(offers_tools(third), "{third}");
    assert!(message(third, 0).contains("by using tools"), "{third}");
    assert!(
        message(third, 1).contains("<file path=\"calc.py\">\n"),
        "{third}"
    );
    let nudge = third["messages"].as_array().unwrap().last().unwrap();
    assert!(
        nudge["content"]
            .as_str()
            .unwrap()
            .contains("No file has been changed yet"),
        "{nudge}"
    );
    assert!(offers_tools(&o.requests[3]));
}

#[tokio::test]
async fn questions_and_capable_models_keep_the_tool_loop() {
    for (task, model) in [
        (
            "How many functions does calc.py define? Put the count into n.txt.",
            "qwen2.5-coder:1.5b",
        ),
        (TASK, "qwen3:8b"),
    ] {
        let o = run_task(
            ScriptBuilder::new().turn(Turn::text("Nothing to do.")),
            task,
            calc,
            |c| {
                c.model = model.into();
                c.tool_mode = ToolMode::Native;
            },
        )
        .await;
        let first = &o.requests[0];
        assert!(offers_tools(first), "{task} {model}: {first}");
        assert!(!message(first, 1).contains("The files:"), "{task} {model}");
    }
}

#[tokio::test]
async fn a_task_that_moves_files_gets_its_shell_block_run() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(
                "```sh\nmkdir -p archive\nmv notes1.txt archive/\n```",
            ))
            .turn(Turn::text("never asked")),
        "Move notes1.txt into the archive folder. Keep todo.txt where it is.",
        |dir| files(dir, &[("notes1.txt", "first\n"), ("todo.txt", "todo\n")]),
        small,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.file("archive/notes1.txt"), "first\n");
    assert!(!o.dir.path().join("notes1.txt").exists());
    assert_eq!(o.file("todo.txt"), "todo\n");
    assert_eq!(o.requests.len(), 1, "the commands that ran end the run");
    let system = message(&o.requests[0], 0);
    assert!(system.contains("```sh"), "{system}");
    assert!(!offers_tools(&o.requests[0]));
    assert_eq!(
        o.result.answer,
        "Ran `mkdir -p archive; mv notes1.txt archive/`."
    );
    let call = &o.events_of("tool_call")[0];
    assert_eq!(call["name"], "run_command", "{call}");
    assert_eq!(
        o.events_of("assistant_message")[0]["parse_layer"],
        "text_edit"
    );
}

#[tokio::test]
async fn a_shell_block_of_a_task_that_moves_nothing_runs_nothing() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(format!(
                "```sh\nrm calc.py\n```\n```calc.py\n{FIXED}```"
            )))
            .turn(Turn::text("never asked")),
        TASK,
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), FIXED);
    assert!(o
        .events_of("tool_call")
        .iter()
        .all(|c| c["name"] == "write_file"));
}

#[tokio::test]
async fn in_an_empty_workspace_the_example_is_the_file_the_task_asks_for() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(
                "<file path=\"scores.json\">\n{\"mira\": 12}\n</file>",
            ))
            .turn(Turn::text("never asked")),
        "Make a file scores.json holding a JSON object: mira 12.",
        |_| {},
        small,
    )
    .await;
    let system = message(&o.requests[0], 0);
    assert!(system.contains("<file path=\"scores.json\">"), "{system}");
    assert_eq!(o.file("scores.json"), "{\"mira\": 12}\n");
}
