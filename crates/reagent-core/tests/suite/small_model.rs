//! What the loop does for a very small model (issue 15): tool results in plain text, the plain
//! restated question at the first identical repeat in the constrained mode, the workspace's
//! files in the constrained prompt and schema, degenerate output cut, and an answer on nothing
//! but failed calls reported as `no_progress`.

use reagent_core::{AgentConfig, ModelProfile, ToolMode};
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::{json, Value};

use super::harness::{files, run, run_task};

const NOTES: &str = "orchid\nsecond line\nthird line\n";

fn constrained_call(path: &str) -> Turn {
    Turn::text(json!({"tool": "read_file", "arguments": {"path": path}}).to_string())
}

/// The constrained mode with a weak model's profile: runs end with the plain question.
fn weak_constrained(c: &mut AgentConfig) {
    c.tool_mode = ToolMode::Constrained;
    c.profiles = vec![ModelProfile {
        matches: c.model.clone(),
        plain_final_question: true,
        ..ModelProfile::default()
    }];
}

fn content(message: &Value) -> &str {
    message["content"].as_str().unwrap()
}

#[tokio::test]
async fn constrained_mode_asks_the_plain_question_at_the_first_identical_repeat() {
    let o = run(
        ScriptBuilder::new()
            .turn(constrained_call("notes.txt"))
            .turn(constrained_call("notes.txt"))
            .turn(Turn::text("The first line is orchid.")),
        |dir| files(dir, &[("notes.txt", NOTES), ("other.md", "# other\n")]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "The first line is orchid.");
    assert_eq!(o.requests.len(), 3, "two calls, then the plain question");

    // The result went back as plain text under a label, not in a JSON envelope.
    let second = o.messages(1);
    assert_eq!(
        content(second.last().unwrap()),
        "The file notes.txt has 3 lines:\norchid\nsecond line\nthird line"
    );
    // The repeat is caught at once, not after three calls.
    let guard = o.events_of("guardrail");
    assert_eq!(guard[0]["guardrail"], "repetition", "{guard:?}");
    assert_eq!(guard[0]["action"], "final_answer");
    assert!(guard[0]["detail"].as_str().unwrap().contains("2 times"));
    // The question: a fresh conversation, the task, the result once (the file read is what
    // the answer rests on: the other file and the workspace's overview are left out); no
    // schema.
    let question = o.messages(2);
    assert_eq!(question.len(), 2);
    assert_eq!(question[0]["role"], "system");
    assert_eq!(
        content(&question[1]),
        "do the task\n\nThe file notes.txt has 3 lines:\norchid\nsecond line\nthird line"
    );
    assert!(
        o.requests[2].get("format").is_none(),
        "the answer is free text"
    );
}

#[tokio::test]
async fn constrained_prompt_lists_the_files_and_the_schema_allows_only_them() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "done inside JSON"}"#))
            .turn(Turn::text("Done.")),
        |dir| {
            files(
                dir,
                &[("notes.txt", NOTES), ("src/config.toml", "port = 8080\n")],
            )
        },
        weak_constrained,
    )
    .await;
    // An answer written inside the JSON shape is asked again as a plain question.
    assert_eq!(o.result.answer, "Done.");
    assert_eq!(o.requests.len(), 2);
    assert!(o.requests[1].get("format").is_none());
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(
        system.contains("Files in the workspace:\n- notes.txt\n- src/config.toml\n"),
        "{system}"
    );
    assert!(
        !system.contains("\"path\": \"...\""),
        "no literal example path"
    );
    let choices = o.requests[0]["format"]["oneOf"].as_array().unwrap().clone();
    // The tools that only read come first, in the schema and in the prompt: a model that
    // picks by position falls on one that cannot change the workspace.
    let order: Vec<&str> = choices
        .iter()
        .map(|c| {
            c["properties"]["tool"]["const"]
                .as_str()
                .unwrap_or("final_answer")
        })
        .collect();
    assert_eq!(
        order,
        [
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "task_complete",
            "edit_file",
            "run_command",
            "write_file",
            "final_answer"
        ]
    );
    let listed = |tool: &str| system.find(&format!("- {tool}: ")).unwrap();
    assert!(listed("read_file") < listed("edit_file"));
    assert!(listed("task_complete") < listed("write_file"));
    let path_of = |tool: &str| {
        choices
            .iter()
            .find(|c| c["properties"]["tool"]["const"] == tool)
            .unwrap()["properties"]["arguments"]["properties"]["path"]
            .clone()
    };
    assert_eq!(
        path_of("read_file")["enum"],
        json!(["notes.txt", "src/config.toml"])
    );
    assert_eq!(
        path_of("edit_file")["enum"],
        json!(["notes.txt", "src/config.toml"])
    );
    assert!(
        path_of("write_file").get("enum").is_none(),
        "new files stay possible"
    );
    assert!(path_of("list_directory").get("enum").is_none());
}

#[tokio::test]
async fn a_large_workspace_is_listed_in_part_and_paths_stay_free() {
    let many: Vec<(String, String)> = (0..60)
        .map(|i| (format!("f{i:02}.txt"), format!("{i}\n")))
        .collect();
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "done"}"#))
            .turn(Turn::text("done")),
        |dir| {
            let refs: Vec<(&str, &str)> =
                many.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            files(dir, &refs)
        },
        weak_constrained,
    )
    .await;
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(
        system.contains("- f49.txt\n(and more; use find_files to search)"),
        "{system}"
    );
    assert!(!system.contains("f50.txt"));
    // Too many files to show in the plain question: only the task is asked again.
    assert_eq!(content(&o.messages(1)[1]), "do the task");
    let read = &o.requests[0]["format"]["oneOf"][3];
    assert_eq!(read["properties"]["tool"]["const"], "read_file");
    assert!(read["properties"]["arguments"]["properties"]["path"]
        .get("enum")
        .is_none());
}

#[tokio::test]
async fn prompt_mode_results_are_plain_and_errors_are_marked_with_the_nearest_paths() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"nots.txt\"}}\n</tool_call>",
            ))
            .turn(Turn::text(
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}\n</tool_call>",
            ))
            .turn(Turn::text("orchid")),
        |dir| files(dir, &[("notes.txt", NOTES)]),
        |c| c.tool_mode = ToolMode::Prompt,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(
        system.contains("User: The file notes.txt has 1 line:\nbuy milk\n"),
        "{system}"
    );
    assert_eq!(
        content(o.messages(1).last().unwrap()),
        "Error from read_file: no such file or directory: nots.txt; the nearest existing \
         paths are: notes.txt"
    );
    assert_eq!(
        content(o.messages(2).last().unwrap()),
        "The file notes.txt has 3 lines:\norchid\nsecond line\nthird line"
    );
}

#[tokio::test]
async fn an_answer_on_failed_calls_only_is_no_progress_and_degenerate_text_is_cut() {
    // SmolLM2-135M: read_file("...") three times, then 1,922 tokens of "1000…0", "completed".
    let o = run(
        ScriptBuilder::new()
            .turn(constrained_call("..."))
            .turn(constrained_call("..."))
            .turn(Turn::text(format!(
                "The error code is 1{}",
                "0".repeat(3000)
            ))),
        |dir| files(dir, &[("big.log", "INFO a\nERROR code=E4711\n")]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::NoProgress);
    assert_eq!(o.result.answer, "The error code is 10");
    // The plain question restated the (only) error once, with the real path named, then the
    // small workspace itself.
    let question = content(&o.messages(2)[1]).to_owned();
    assert_eq!(
        question,
        "do the task\n\nThe workspace holds 1 file: big.log.\n\n\
         Error from read_file: no such file or directory: ...; the nearest \
         existing paths are: big.log\n\nThe file big.log has 2 lines:\nINFO a\nERROR code=E4711"
    );
    let guard: Vec<(String, String)> = o
        .events_of("guardrail")
        .iter()
        .map(|g| {
            (
                g["guardrail"].as_str().unwrap().to_owned(),
                g["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let names: Vec<(&str, &str)> = guard
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("repetition", "final_answer"),
            ("degenerate_output", "cut"),
            ("no_progress", "stop")
        ]
    );
    let finished = o.events_of("run_finished");
    assert_eq!(finished[0]["outcome"], "no_progress");
}

#[tokio::test]
async fn a_success_among_failures_is_still_completed() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "missing.txt"})))
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("orchid")),
        |dir| files(dir, &[("notes.txt", NOTES)]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    // Native mode keeps the structured JSON result in a tool message.
    let msgs = o.messages(2);
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "tool");
    let result: Value = serde_json::from_str(content(last)).unwrap();
    assert_eq!(result["output"], NOTES);
}

#[tokio::test]
async fn a_degenerating_stream_is_stopped_early() {
    // 3,000 zeros in 4-character chunks 5 ms apart: about 3.75 s if read to the end.
    let o = run(
        ScriptBuilder::new().turn(
            Turn::text(format!("The error code is 1{}", "0".repeat(3000)))
                .with_chunk_chars(4)
                .with_chunk_delay(std::time::Duration::from_millis(5)),
        ),
        |_| {},
        |c| c.stream = true,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "no call was made");
    assert_eq!(o.result.answer, "The error code is 10");
    let response = &o.events_of("llm_response")[0];
    assert_eq!(response["finish_reason"], "degenerate");
    let streamed = response["completion_tokens"].as_u64().unwrap();
    assert!(
        (30..200).contains(&streamed),
        "stopped after ~{streamed} tokens of 750"
    );
    let guard = o.events_of("guardrail");
    assert_eq!(guard.len(), 1, "{guard:?}");
    assert_eq!(guard[0]["guardrail"], "degenerate_output");
}

#[tokio::test]
async fn only_a_weak_model_profile_turns_the_final_answer_into_the_plain_question() {
    let script = || {
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "orchid, from JSON"}"#))
            .turn(Turn::text("orchid, in words"))
    };
    let notes = |dir: &std::path::Path| files(dir, &[("notes.txt", NOTES)]);
    // A model with no such profile keeps the answer it wrote in the JSON shape: one call.
    let strong = run(script(), notes, |c| c.tool_mode = ToolMode::Constrained).await;
    assert_eq!(strong.result.outcome, Outcome::Completed);
    assert_eq!(strong.result.answer, "orchid, from JSON");
    assert_eq!(strong.requests.len(), 1);
    // SmolLM2's built-in profile asks the plain question (no schema) and keeps that answer.
    let weak = run(script(), notes, |c| {
        c.tool_mode = ToolMode::Constrained;
        c.model = "SmolLM2-135M-Instruct".into();
    })
    .await;
    assert_eq!(weak.result.outcome, Outcome::Completed);
    assert_eq!(weak.result.answer, "orchid, in words");
    assert_eq!(weak.requests.len(), 2);
    assert!(weak.requests[1].get("format").is_none());
}

#[tokio::test]
async fn an_answer_that_copies_the_restated_files_is_asked_once_more_narrowly() {
    let echo = "The workspace holds 2 files: notes.txt, other.md. The file notes.txt has 3 lines: \
                orchid second line third line";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "x"}"#))
            .turn(Turn::text(echo))
            .turn(Turn::text("orchid"))
            .turn(Turn::text("never asked")),
        |dir| files(dir, &[("notes.txt", NOTES), ("other.md", "# other\n")]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "orchid");
    assert_eq!(o.requests.len(), 3, "one narrow question, not more");
    let narrow = o.messages(2);
    assert_eq!(narrow.len(), 2);
    assert_eq!(
        content(&narrow[1]),
        "The file notes.txt has 3 lines:\norchid\nsecond line\nthird line\n\n\
         The file other.md has 1 line:\n# other\n\n\
         Question: do the task\nAnswer in a few words. Do not repeat the files."
    );
    assert!(o.requests[2].get("format").is_none());
    let guard = o.events_of("guardrail");
    assert_eq!(guard.len(), 1, "{guard:?}");
    assert_eq!(guard[0]["guardrail"], "echoed_answer");
    assert_eq!(guard[0]["action"], "retry");
}

#[tokio::test]
async fn a_narrow_reply_echoing_the_question_gives_the_answer_below_it() {
    let echo = "The workspace holds 1 file: notes.txt. The file notes.txt has 3 lines: \
                orchid second line third line";
    let narrow = "The file notes.txt has 3 lines:\norchid\nsecond line\nthird line\n\n\
                  Question: do the task\nAnswer: orchid\n\nThe file notes.txt has 3 lines:";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "x"}"#))
            .turn(Turn::text(echo))
            .turn(Turn::text(narrow))
            .turn(Turn::text("never asked")),
        |dir| files(dir, &[("notes.txt", NOTES)]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "orchid");
    assert_eq!(o.requests.len(), 3);
}

#[tokio::test]
async fn a_narrow_answer_that_degenerates_leaves_the_copied_answer() {
    // What SmolLM2-135M did once: asked narrowly, a fence and then a column of `#` lines.
    let echo = "The workspace holds 1 file: notes.txt. The file notes.txt has 3 lines: \
                orchid second line third line";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(r#"{"final_answer": "x"}"#))
            .turn(Turn::text(echo))
            .turn(Turn::text(format!(
                "The file holds:\n\n```\n{}",
                "#\n".repeat(500)
            )))
            .turn(Turn::text("never asked")),
        |dir| files(dir, &[("notes.txt", NOTES)]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, echo);
    assert_eq!(o.requests.len(), 3);
    let guard = o.events_of("guardrail");
    let names: Vec<&str> = guard
        .iter()
        .map(|g| g["guardrail"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echoed_answer", "degenerate_output"]);
}

/// SmolLM2's built-in profile in the constrained mode (plain question, narrowed schema).
fn smollm2_constrained(c: &mut AgentConfig) {
    c.tool_mode = ToolMode::Constrained;
    c.model = "SmolLM2-135M-Instruct".into();
}

/// The tool names of a constrained schema, in order.
fn schema_tools(request: &Value) -> Vec<String> {
    request["format"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["properties"]["tool"]["const"]
                .as_str()
                .unwrap_or("final_answer")
                .to_owned()
        })
        .collect()
}

/// The argument schema of `tool` in a constrained request.
fn arguments_of(request: &Value, tool: &str) -> Value {
    request["format"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["properties"]["tool"]["const"] == tool)
        .unwrap()["properties"]["arguments"]
        .clone()
}

#[tokio::test]
async fn the_tool_the_task_names_is_listed_and_shown_first_and_the_run_ends_once_its_file_changed()
{
    let task = "Replace the word draft with final in both one.txt and two.txt.";
    let edit = |path: &str| {
        Turn::text(
            json!({"tool": "edit_file", "arguments": {"path": path, "old_string": "draft", "new_string": "final"}})
                .to_string(),
        )
    };
    let o = run_task(
        ScriptBuilder::new()
            .turn(edit("one.txt"))
            .turn(edit("two.txt"))
            .turn(Turn::text("Both files now say final."))
            .turn(Turn::text("never asked")),
        task,
        |dir| {
            files(
                dir,
                &[("one.txt", "status: draft\n"), ("two.txt", "this draft\n")],
            )
        },
        smollm2_constrained,
    )
    .await;
    // The edits are right, but nothing checked them (no --verify, no command after them).
    assert_eq!(o.result.outcome, Outcome::Unchecked);
    assert_eq!(o.result.answer, "Both files now say final.");
    assert_eq!(o.file("one.txt"), "status: final\n");
    assert_eq!(o.file("two.txt"), "this final\n");
    // Two edits, then at once the plain question: every file the task names was changed.
    assert_eq!(o.requests.len(), 3);
    assert!(o.requests[2].get("format").is_none());

    // The prompt lists edit_file first and its example calls it; the schema keeps its order.
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(
        system.contains("You can use these tools:\n- edit_file: "),
        "{system}"
    );
    assert!(system.contains(
        r#"Example: {"tool": "edit_file", "arguments": {"path": "<file named in the task>", "old_string": "<text in the file to change>", "new_string": "<the new text the task gives>"}}"#
    ));
    assert_eq!(schema_tools(&o.requests[0])[3], "read_file");

    // old_string is the text the task names that the file holds, new_string the one it
    // names that the file lacks: one branch per file.
    let first = arguments_of(&o.requests[0], "edit_file");
    let branches = first["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 2, "{first}");
    assert_eq!(
        branches[0]["properties"]["path"]["enum"],
        json!(["one.txt"])
    );
    assert_eq!(
        branches[0]["properties"]["old_string"]["enum"],
        json!(["draft"])
    );
    assert_eq!(
        branches[0]["properties"]["new_string"]["enum"],
        json!(["final"])
    );
    assert_eq!(
        branches[1]["properties"]["path"]["enum"],
        json!(["two.txt"])
    );
    // After one.txt changed, only two.txt is offered for editing.
    let second = arguments_of(&o.requests[1], "edit_file");
    let branches = second["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 1, "{second}");
    assert_eq!(
        branches[0]["properties"]["path"]["enum"],
        json!(["two.txt"])
    );
}

#[tokio::test]
async fn a_new_file_s_path_is_one_the_task_names_and_the_run_ends_once_it_is_written() {
    let task = "Create a file named notes.txt inside the src folder with the text: checked";
    let o = run_task(
        ScriptBuilder::new()
            .turn(Turn::text(
                json!({"tool": "write_file", "arguments": {"path": "src/notes.txt", "content": "checked"}})
                    .to_string(),
            ))
            .turn(Turn::text("Done: src/notes.txt says checked."))
            .turn(Turn::text("never asked")),
        task,
        |dir| files(dir, &[("src/main.c", "int main(void) { return 0; }\n")]),
        smollm2_constrained,
    )
    .await;
    // Nothing checked the new file (no --verify, no command after it).
    assert_eq!(o.result.outcome, Outcome::Unchecked);
    assert_eq!(o.file("src/notes.txt"), "checked");
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(system.contains("You can use these tools:\n- write_file: "));
    let write = arguments_of(&o.requests[0], "write_file");
    assert_eq!(
        write["properties"]["path"]["enum"],
        json!(["notes.txt", "src/notes.txt"])
    );
    // The content is the text the task gives (what follows its colon), nothing else: not
    // the folder it names, nor its other words.
    assert_eq!(write["properties"]["content"]["enum"], json!(["checked"]));
    let read = arguments_of(&o.requests[0], "read_file");
    assert_eq!(read["properties"]["path"]["enum"], json!(["src/main.c"]));
    // Optional arguments are left out for a weak model (it fills them with junk).
    assert!(read["properties"].get("start_line").is_none(), "{read}");
    // The file the task names was written: the plain question comes next.
    assert_eq!(o.requests.len(), 2);
    assert!(o.requests[1].get("format").is_none());
}

#[tokio::test]
async fn a_model_without_the_narrowing_profile_keeps_free_arguments() {
    let task = "Replace the word draft with final in one.txt.";
    let o = run_task(
        ScriptBuilder::new().turn(Turn::text(r#"{"final_answer": "done"}"#)),
        task,
        |dir| files(dir, &[("one.txt", "status: draft\n")]),
        |c| c.tool_mode = ToolMode::Constrained,
    )
    .await;
    assert_eq!(o.result.answer, "done");
    // The list is not ranked by the task's words (the weak-model policy's measure): the tools
    // that only read come first, as in the schema; and no argument is narrowed beyond the
    // existing paths.
    let system = content(&o.messages(0)[0]).to_owned();
    assert!(
        system.contains("You can use these tools:\n- find_files: "),
        "{system}"
    );
    let edit = arguments_of(&o.requests[0], "edit_file");
    assert!(edit.get("oneOf").is_none(), "{edit}");
    assert_eq!(
        edit["properties"]["old_string"],
        json!({"type": "string", "description": "Exact text to find"})
    );
    assert!(
        arguments_of(&o.requests[0], "write_file")["properties"]["path"]
            .get("enum")
            .is_none()
    );
    assert!(arguments_of(&o.requests[0], "read_file")["properties"]
        .get("start_line")
        .is_some());
}

#[tokio::test]
async fn a_file_written_in_the_constrained_mode_can_be_read_from_the_next_step_on() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(
                json!({"tool": "write_file", "arguments": {"path": "new.txt", "content": "fresh"}})
                    .to_string(),
            ))
            .turn(constrained_call("new.txt"))
            .turn(constrained_call("new.txt"))
            .turn(Turn::text("new.txt says fresh.")),
        |dir| files(dir, &[("old.txt", "x\n")]),
        weak_constrained,
    )
    .await;
    assert_eq!(o.result.answer, "new.txt says fresh.");
    let read_path =
        |i: usize| arguments_of(&o.requests[i], "read_file")["properties"]["path"]["enum"].clone();
    assert_eq!(read_path(0), json!(["old.txt"]));
    assert_eq!(read_path(1), json!(["new.txt", "old.txt"]));
    let results = o.events_of("tool_result");
    assert_eq!(results[1]["ok"], true, "{results:?}");
}
