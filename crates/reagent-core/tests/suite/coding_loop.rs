//! What the loop does for a model that can call tools but is weak at coding (issue 25): the
//! workspace listed up front, the files the task names read before the first turn, edits
//! written as text (and a new file's content) applied through the tool path, a call object
//! naming no tool read as the tool its arguments fit, a call written as `name({...})` read as the call, a
//! call naming a file answered with the tools, and a capable model in the constrained mode kept
//! off the weak-model heuristics.

use reagent_core::{AgentConfig, ModelProfile, ToolMode};
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::{json, Value};

use super::harness::{files, run_task};

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TASK: &str = "Fix the bug in calc.py so that add returns the sum.";

fn calc(dir: &std::path::Path) {
    files(dir, &[("calc.py", CALC), ("test_calc.py", "import calc\n")]);
}

/// A small model that calls tools (its name says 0.5B): the loop guards its edits. Its
/// profile turns the edit turns off: these tests are about the tool loop a small model falls
/// back to (the edit turns are `edit_turns.rs`'s).
fn small(c: &mut AgentConfig) {
    c.model = "qwen2.5-coder:0.5b".into();
    c.tool_mode = ToolMode::Native;
    c.profiles = vec![ModelProfile {
        matches: "qwen2.5-coder".into(),
        edits_as_text: Some(false),
        ..ModelProfile::default()
    }];
}

fn system(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_small_workspace_is_listed_up_front_in_every_mode() {
    for mode in [ToolMode::Native, ToolMode::Prompt] {
        let o = run_task(
            ScriptBuilder::new().turn(Turn::text("Nothing to do.")),
            TASK,
            calc,
            |c| c.tool_mode = mode,
        )
        .await;
        let prompt = system(&o.requests[0]);
        assert!(
            prompt.ends_with("Files in the workspace:\n- calc.py\n- test_calc.py"),
            "{mode:?}: {prompt}"
        );
    }
    // A workspace larger than the list is not listed in part outside the constrained mode.
    let many: Vec<(String, String)> = (0..60)
        .map(|i| (format!("f{i:02}.txt"), "x\n".into()))
        .collect();
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text("Nothing to do.")),
        TASK,
        |dir| {
            let refs: Vec<(&str, &str)> =
                many.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
            files(dir, &refs)
        },
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    assert!(!system(&o.requests[0]).contains("Files in the workspace"));
}

/// The files a small model's task names are read for it before its first turn, as its own
/// `read_file` calls in the history (layer `preload`); its blind edit with the wrong old text
/// is answered by `edit_file` with the file's text, and the next one is made.
#[tokio::test]
async fn the_files_the_task_names_are_read_before_a_small_model_s_first_turn() {
    let wrong =
        json!({"path": "calc.py", "old_string": "return a-b", "new_string": "return a + b"});
    let right =
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"});
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("edit_file", wrong))
            .turn(Turn::tool_call("edit_file", right))
            .turn(Turn::text("Fixed: add returns a + b.")),
        "Fix the bug in calc.py (test_calc.py shows it) so that add returns the sum.",
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    // The first request already holds the reads: the call, then its result.
    let messages = o.requests[0]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool"],
        "{messages:?}"
    );
    let calls = &messages[2]["tool_calls"];
    assert_eq!(calls[0]["function"]["name"], "read_file", "{calls}");
    assert_eq!(
        calls[1]["function"]["arguments"]["path"], "test_calc.py",
        "{calls}"
    );
    let shown = messages[3]["content"].as_str().unwrap();
    assert!(shown.contains("return a - b"), "{shown}");
    let replies = o.events_of("assistant_message");
    assert_eq!(replies[0]["parse_layer"], "preload", "{replies:?}");
    assert_eq!(replies[0]["iteration"], 0);
    // The model's own wrong edit is refused by the tool with the file's text.
    let results = o.events_of("tool_result");
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(results[2]["ok"], false);
    let refused = results[2]["output"].as_str().unwrap();
    assert!(refused.contains("return a - b"), "{refused}");
    assert_eq!(results[3]["ok"], true, "{results:?}");
    assert_eq!(o.result.iterations, 3);
}

#[tokio::test]
async fn a_capable_model_and_a_task_naming_no_file_get_no_reads_up_front() {
    for (task, config) in [
        (
            TASK,
            (|c: &mut AgentConfig| c.tool_mode = ToolMode::Native) as fn(&mut AgentConfig),
        ),
        ("Fix the bug in the adder.", small),
    ] {
        let o = run_task(
            ScriptBuilder::new().turn(Turn::text("Nothing to do.")),
            task,
            calc,
            config,
        )
        .await;
        assert_eq!(
            o.requests[0]["messages"].as_array().unwrap().len(),
            2,
            "{task}"
        );
        assert!(o.events_of("tool_call").is_empty(), "{task}");
    }
}

/// Qwen2.5-Coder-0.5B's first replies on the held-out coding suite: a call object naming the
/// task instead of a tool, its arguments an `edit_file` call's (`file_path` for `path`), or
/// naming the tool in an argument. Read as that tool's call.
#[tokio::test]
async fn a_call_object_naming_no_tool_whose_arguments_fit_one_tool_is_that_call() {
    let replies = [
        "{\n  \"name\": \"repair_calc\",\n  \"arguments\": {\n    \"file_path\": \"calc.py\",\n    \"old_string\": \"return a - b\",\n    \"new_string\": \"return a + b\",\n    \"replace_all\": false\n  }\n}",
        "{\"name\": \"update_add\", \"arguments\": {\"version\": \"2\", \"tool\": \"edit_file\", \"path\": \"calc.py\", \"old_string\": \"return a - b\", \"new_string\": \"return a + b\"}}",
    ];
    for reply in replies {
        let o = run_task(
            ScriptBuilder::new()
                .turn(Turn::text(reply))
                .turn(Turn::text("Fixed.")),
            "Fix the bug in the adder.",
            calc,
            small,
        )
        .await;
        assert_eq!(
            o.file("calc.py"),
            "def add(a, b):\n    return a + b\n",
            "{reply}"
        );
        assert_eq!(
            o.events_of("assistant_message")[0]["parse_layer"],
            "call_object"
        );
        // An edit nothing checked afterwards: an honest ending, not `completed`.
        assert_eq!(o.result.outcome, Outcome::Unchecked);
    }
    // Arguments that fit no tool, or a capable model's object: answered with the tools.
    for (reply, config) in [
        (
            "{\"name\": \"set_limit\", \"arguments\": {\"http.retries\": 5}}",
            small as fn(&mut AgentConfig),
        ),
        (replies[0], |c: &mut AgentConfig| {
            c.tool_mode = ToolMode::Native
        }),
    ] {
        let o = run_task(
            ScriptBuilder::new()
                .turn(Turn::text(reply))
                .turn(Turn::text("I will stop here.")),
            "Fix the bug in the adder.",
            calc,
            config,
        )
        .await;
        assert_eq!(o.file("calc.py"), CALC);
        let nudge = o.events_of("user_message");
        assert!(
            nudge[0]["content"]
                .as_str()
                .unwrap()
                .contains("is not a tool"),
            "{nudge:?}"
        );
    }
}

/// The 0.5B answered "…Put only the count into warnings.txt." with `3`: the content of the one
/// new file the task names is written there, through the tool path.
#[tokio::test]
async fn content_answered_for_the_new_file_the_task_names_is_written() {
    let log = "WARNING a\nok\nWARNING b\n";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text("2"))
            .turn(Turn::text("The count is in warnings.txt.")),
        "How many lines in build.log mention WARNING? Put only the count into warnings.txt.",
        |dir| files(dir, &[("build.log", log)]),
        small,
    )
    .await;
    assert_eq!(o.file("warnings.txt"), "2\n");
    let replies = o.events_of("assistant_message");
    assert_eq!(replies[1]["parse_layer"], "text_edit", "{replies:?}");
    assert_eq!(o.result.answer, "The count is in warnings.txt.");
}

#[tokio::test]
async fn a_whole_file_written_as_text_is_applied_as_a_write_and_reported_like_a_call() {
    let reply = "The subtraction is the bug. Here is the corrected `calc.py`:\n\n```python\ndef add(a, b):\n    return a + b\n```";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "calc.py"})))
            .turn(Turn::text(reply))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "grep -c 'a + b' calc.py"}),
            ))
            .turn(Turn::text("calc.py now adds.")),
        TASK,
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result);
    let calls = o.events_of("tool_call");
    assert_eq!(calls[2]["name"], "write_file", "{calls:?}");
    assert_eq!(calls[2]["ok"], true);
    let replies = o.events_of("assistant_message");
    assert_eq!(replies[2]["parse_layer"], "text_edit", "{replies:?}");
    assert_eq!(o.result.files_changed, ["calc.py"]);
    // The model sees its reply as a call and the write's result after it.
    let third = &o.requests[2]["messages"];
    let last = third.as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "tool", "{last}");
}

#[tokio::test]
async fn search_replace_blocks_are_applied_as_edits() {
    let reply = "calc.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "calc.py"})))
            .turn(Turn::text(reply))
            .turn(Turn::text("Done.")),
        TASK,
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    assert_eq!(o.events_of("tool_call")[2]["name"], "edit_file");
}

#[tokio::test]
async fn a_reply_that_only_shows_code_is_an_answer() {
    let reply = "You can run it like this:\n```sh\npython3 calc.py\n```";
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text(reply)),
        "How do I run calc.py?",
        calc,
        small,
    )
    .await;
    assert_eq!(o.result.answer, reply);
    assert_eq!(o.file("calc.py"), CALC);
    // Only the read of the file the question names, before the first turn.
    let calls = o.events_of("tool_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["name"], "read_file");
}

/// Qwen2.5-Coder-1.5B ended the coding suite's run-sum task with this text (content, not
/// tags): it is the call.
#[tokio::test]
async fn task_complete_written_as_a_function_ends_the_run_with_its_summary() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "echo 1157"}),
            ))
            .turn(Turn::text(
                "task_complete({\"summary\": \"The script prints 1157.\"})",
            )),
        "Run `echo 1157` and tell me the number it prints.",
        |dir| files(dir, &[("total.py", "print(1157)\n")]),
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "The script prints 1157.");
}

#[tokio::test]
async fn a_call_naming_a_file_is_told_it_is_a_file_and_given_the_tools() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("calc.py", json!({})))
            .turn(Turn::text("I could not.")),
        TASK,
        calc,
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    let result = &o.events_of("tool_result")[0];
    let error = result["output"].as_str().unwrap();
    assert!(
        error.contains("`calc.py` is not a tool: calc.py is a file of the workspace"),
        "{error}"
    );
    assert!(error.contains("Valid tools: "), "{error}");
    assert!(error.contains("read_file"), "{error}");
}

/// A server that offers a JSON Schema but no tools puts any model in the constrained mode;
/// only a very small model's profile brings the weak-model heuristics: a capable model's tools
/// are listed in the schema's order (not ranked by the task's words) and its own answer kept.
#[tokio::test]
async fn a_capable_model_in_the_constrained_mode_keeps_the_standard_loop() {
    let task = "Run `ls` and write what it prints to out.txt";
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text(r#"{"final_answer": "nothing to do"}"#)),
        task,
        calc,
        |c| c.tool_mode = ToolMode::Constrained,
    )
    .await;
    assert_eq!(o.result.answer, "nothing to do");
    assert_eq!(o.requests.len(), 1, "no plain question afterwards");
    let prompt = system(&o.requests[0]);
    assert!(
        prompt.contains("You can use these tools:\n- find_files: "),
        "{prompt}"
    );
    assert!(
        prompt.contains("\"tool\": \"read_file\""),
        "a read_file example: {prompt}"
    );
}

#[tokio::test]
async fn a_capable_model_s_blind_edit_is_made_and_its_code_blocks_stay_text() {
    let right =
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"});
    let shown = "Here is the corrected `calc.py`:\n```python\ndef add(a, b):\n    return 0\n```";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("edit_file", right))
            .turn(Turn::text(shown)),
        TASK,
        calc,
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    assert_eq!(o.events_of("tool_call").len(), 1);
    assert_eq!(o.result.answer, shown);
}

/// Qwen2.5-Coder-0.5B's first replies on the coding suite (llama-server `--jinja`, seed 1):
/// call objects naming a file or a word of the task instead of a tool. Each is answered with
/// the tools instead of ending the run as its answer.
#[tokio::test]
async fn a_call_object_naming_no_tool_is_answered_with_the_tools() {
    let replies = [
        ("report.py", "```json\n{\"name\": \"report.py\", \"arguments\": {\"summary\": \"Report the total of the report.py file.\"}}\n```"),
        ("debug", "{\"name\": \"debug\", \"arguments\": false}"),
    ];
    for (name, reply) in replies {
        let o = run_task(
            ScriptBuilder::new()
                .turn(Turn::text(reply))
                .turn(Turn::text("I will stop here.")),
            "report.py does not run. Fix it.",
            |dir| files(dir, &[("report.py", "def main()\n    pass\n")]),
            small,
        )
        .await;
        assert_eq!(o.result.answer, "I will stop here.", "{name}");
        let nudge = o.events_of("user_message");
        let text = nudge[0]["content"].as_str().unwrap();
        assert!(text.contains(&format!("`{name}`")), "{text}");
        assert!(text.contains("read_file"), "{text}");
    }
    // A name that is a file without its extension is pointed to the file (the 0.5B's first
    // reply on fix-add, seen again after the nudge above was in place).
    let reply = "{\n  \"name\": \"test_calc\",\n  \"arguments\": {\n    \"python3 -m unittest test_calc\": \"Running tests...\"\n  }\n}";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(reply))
            .turn(Turn::text("I will stop here.")),
        "Run `python3 -m unittest test_calc`.",
        |dir| files(dir, &[("test_calc.py", "")]),
        small,
    )
    .await;
    let nudge = o.events_of("user_message");
    let text = nudge[0]["content"].as_str().unwrap();
    assert!(
        text.contains(r#"test_calc.py is a file of the workspace. To read it, call read_file: {"name":"read_file","arguments":{"path":"test_calc.py"}}"#),
        "{text}"
    );
}

/// Qwen2.5-Coder-0.5B ended a run with a call object whose arguments stand beside its name.
#[tokio::test]
async fn a_call_object_with_its_arguments_beside_the_name_is_the_call() {
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text(
            "\n{\"name\": \"task_complete\", \"summary\": \"total.py prints 1157.\"}",
        )),
        "Tell me what total.py prints.",
        calc,
        small,
    )
    .await;
    assert_eq!(o.result.answer, "total.py prints 1157.");
    assert_eq!(
        o.events_of("assistant_message")[0]["parse_layer"],
        "call_object"
    );
}

/// The 0.5B wrote the same call object naming no tool after each nudge (coding suite,
/// syntax-colon): the run ends `no_progress`, not `completed` with the JSON as its answer.
#[tokio::test]
async fn a_call_object_repeated_after_the_nudges_ends_no_progress() {
    let reply =
        "{\"name\": \"report.py does not run\", \"arguments\": {\"report.py\": \"SyntaxError\"}}";
    let o = run_task(
        ScriptBuilder::new().turns([Turn::text(reply), Turn::text(reply), Turn::text(reply)]),
        "report.py does not run. Fix it.",
        |dir| files(dir, &[("report.py", "def main()\n    pass\n")]),
        small,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::NoProgress);
    assert_eq!(o.events_of("nudge").len(), 2);
}

/// Qwen2.5-Coder-0.5B wrote the same two `read_file` calls 30 times each in one reply
/// (held-out suite, h-fix-celsius): each distinct call runs once, and the history keeps one.
#[tokio::test]
async fn a_call_repeated_within_one_reply_runs_once() {
    let mut reply = Turn::default();
    for _ in 0..3 {
        reply = reply
            .with_call("read_file", json!({"path": "calc.py"}))
            .with_call("read_file", json!({"path": "test_calc.py"}));
    }
    let o = run_task(
        ScriptBuilder::new()
            .turn(reply)
            .turn(Turn::text("add subtracts.")),
        "What is wrong with the adder?",
        calc,
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    let calls = o.events_of("tool_call");
    assert_eq!(calls.len(), 2, "{calls:?}");
    let second = o.requests[1]["messages"].as_array().unwrap();
    let kept = second[2]["tool_calls"].as_array().unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(
        second.len(),
        5,
        "system, user, the reply, two results: {second:?}"
    );
}

/// The 0.5B answered h-fix-celsius with the JSON of a `read_file` result, and the 1.5B echoed
/// a `<tool_response>`: not an answer. Nudged, and when it goes on, `no_progress`.
#[tokio::test]
async fn a_reply_echoing_a_tool_result_is_nudged_and_not_an_answer() {
    let echo = "{\"ok\":true,\"output\":\"def add(a, b):\\n    return a - b\\n\"}";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "calc.py"})))
            .turn(Turn::text(echo))
            .turn(Turn::text(format!(
                "<tool_response>\n{echo}\n</tool_response>"
            )))
            .turn(Turn::text(echo)),
        "What is wrong with the adder?",
        calc,
        |c| c.tool_mode = ToolMode::Native,
    )
    .await;
    let nudges = o.events_of("nudge");
    assert_eq!(nudges.len(), 2, "{nudges:?}");
    assert_eq!(nudges[0]["reason"], "result_echo");
    assert_eq!(o.result.outcome, Outcome::NoProgress);
}

/// The 0.5B followed its one real call with a call of every tool in the prompt's order,
/// `task_complete` last (held-out suite, h-run-product): a small model's reply runs its first
/// tool's calls only, and the run goes on with their results.
#[tokio::test]
async fn a_small_model_s_reply_runs_only_its_first_tool_s_calls() {
    let edit =
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"});
    let reply = Turn::tool_call("edit_file", edit)
        .with_call(
            "find_files",
            json!({"pattern": "*.py", "path": "workspace"}),
        )
        .with_call("task_complete", json!({"summary": "Finished, 0 errors"}));
    let o = run_task(
        ScriptBuilder::new()
            .turn(reply)
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "grep -c 'a + b' calc.py"}),
            ))
            .turn(Turn::text("add now returns the sum.")),
        "Fix the bug in the adder.",
        calc,
        small,
    )
    .await;
    let names: Vec<String> = o
        .events_of("tool_call")
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["edit_file", "run_command"]);
    assert_eq!(o.result.answer, "add now returns the sum.");
    let kept = &o.requests[1]["messages"][2]["tool_calls"];
    assert_eq!(kept.as_array().unwrap().len(), 1, "{kept}");
}

/// Qwen2.5-Coder-1.5B, shown pick.py, answered "Fixed the largest function in pick.py."
/// without an edit: a small model that ends a task asking for a change without one is asked
/// once to make it; a question is answered at once.
#[tokio::test]
async fn a_small_model_claiming_a_change_it_did_not_make_is_asked_once_to_make_it() {
    let edit =
        json!({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"});
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text("Fixed the adder."))
            .turn(Turn::tool_call("edit_file", edit))
            .turn(Turn::text("Done.")),
        "Fix the bug in the adder.",
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    let nudges = o.events_of("user_message");
    assert_eq!(nudges.len(), 1, "{nudges:?}");
    assert!(nudges[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("No file has been changed yet"));
    assert_eq!(o.result.answer, "Done.");
    // Asked once only: a second claim ends the run.
    let o = run_task(
        ScriptBuilder::new().turns([Turn::text("Fixed."), Turn::text("Fixed it.")]),
        "Fix the bug in the adder.",
        calc,
        small,
    )
    .await;
    assert_eq!(o.result.answer, "Fixed it.");
    assert_eq!(o.requests.len(), 2);
    // A question asks for no change.
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text("It subtracts.")),
        "What does the adder in calc.py do wrong?",
        calc,
        small,
    )
    .await;
    assert_eq!(o.requests.len(), 1);
    assert_eq!(o.result.answer, "It subtracts.");
}

/// The 1.5B answered "What does `python3 calc.py` print? Run it and tell me." with
/// "Executed `python3 calc.py` and printed the result." without running it.
#[tokio::test]
async fn a_small_model_that_did_not_run_the_command_its_task_names_is_asked_to() {
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text("Executed it."))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "echo 42"}),
            ))
            .turn(Turn::text("It prints 42.")),
        "What does `echo 42` print? Run it and tell me.",
        calc,
        small,
    )
    .await;
    let nudges = o.events_of("user_message");
    assert_eq!(nudges.len(), 1, "{nudges:?}");
    assert!(nudges[0]["content"]
        .as_str()
        .unwrap()
        .starts_with("No command has been run yet"));
    assert_eq!(o.result.answer, "It prints 42.");
}

/// The 1.5B wrote the implemented function in a fenced block naming its file, beside a
/// `task_complete` call (h-impl-initials): the edit is made instead of ending the run, and the
/// model ends it after seeing the result.
#[tokio::test]
async fn a_small_model_s_file_written_as_text_beside_task_complete_is_made_first() {
    let reply = Turn::text(
        "Here is the updated code for add() in calc.py:\n\n```python\ndef add(a, b):\n    return a + b\n```",
    )
    .with_call("task_complete", json!({"summary": "Fixed add."}));
    let o = run_task(
        ScriptBuilder::new().turn(reply).turn(Turn::tool_call(
            "task_complete",
            json!({"summary": "Fixed add."}),
        )),
        "Fix the bug in the adder.",
        calc,
        small,
    )
    .await;
    assert_eq!(o.file("calc.py"), "def add(a, b):\n    return a + b\n");
    let calls = o.events_of("tool_call");
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["write_file", "task_complete"]);
    assert_eq!(o.result.answer, "Fixed add.");
    assert_eq!(o.requests.len(), 2);
}
