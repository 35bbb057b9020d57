//! The loop's normal paths: answers, calls, fallbacks, thinking, coercion, streaming.

use reagent_protocol::{Outcome, Role};
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::json;

use super::harness::{files, run};

#[tokio::test]
async fn direct_answer_completes_in_one_iteration() {
    let o = run(
        ScriptBuilder::new().turn(Turn::text("The answer is 42.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "The answer is 42.");
    assert_eq!((o.result.iterations, o.result.tool_calls), (1, 0));
    let req = &o.requests[0];
    assert_eq!(req["stream"], false);
    assert_eq!(req["model"], "qwen3:8b");
    // Always an explicit num_ctx (Ollama truncates silently at its small default otherwise).
    assert!(req["options"]["num_ctx"].as_u64().unwrap() <= 16_384);
    let tools: Vec<&str> = req["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "edit_file",
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "run_command",
            "task_complete",
            "write_file"
        ]
    );
    let started = &o.events_of("run_started")[0];
    assert_eq!(started["tool_mode"], "native");
}

#[tokio::test]
async fn a_call_is_run_and_its_result_fed_back_as_a_tool_message() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("It says hello.")),
        |d| files(d, &[("notes.txt", "hello\n")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.tool_calls, 1);
    let msgs = o.messages(1);
    let assistant = &msgs[msgs.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    let tool = &msgs[msgs.len() - 1];
    assert_eq!(tool["role"], "tool");
    assert_eq!(tool["tool_name"], "read_file");
    let result: serde_json::Value =
        serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    assert_eq!(result, json!({"ok": true, "output": "hello\n"}));
    let call = &o.events_of("tool_call")[0];
    assert_eq!(
        (call["name"].as_str(), call["ok"].as_bool()),
        (Some("read_file"), Some(true))
    );
    assert!(call["duration_ms"].is_u64());
    let resp = &o.events_of("llm_response")[0];
    assert_eq!(resp["parse_layer"], "native");
    assert!(resp["latency_ms"].is_u64());
}

#[tokio::test]
async fn several_calls_in_one_reply_run_in_order() {
    let o = run(
        ScriptBuilder::new()
            .turn(
                Turn::tool_call(
                    "write_file",
                    json!({"path": "out/b.txt", "content": "one\n"}),
                )
                .with_call("read_file", json!({"path": "out/b.txt"})),
            )
            .turn(Turn::text("Wrote and read it.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.tool_calls, 2);
    assert_eq!(o.result.files_changed, vec!["out/b.txt".to_owned()]);
    let msgs = o.messages(1);
    let read = &msgs[msgs.len() - 1];
    assert!(
        read["content"].as_str().unwrap().contains("one\\n"),
        "{read}"
    );
}

#[tokio::test]
async fn json_in_content_is_found_when_there_are_no_native_calls() {
    let text = "I'll read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(text))
            .turn(Turn::text("done")),
        |d| files(d, &[("a.txt", "A")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.tool_calls, 1);
    let layer = o.events_of("llm_response")[0]["parse_layer"].clone();
    assert!(layer.is_string() && layer != "native", "{layer}");
    assert!(o.events_of("tool_call")[0]["ok"].as_bool().unwrap());
}

#[tokio::test]
async fn tool_call_tags_in_content_are_found() {
    let text = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(text))
            .turn(Turn::text("done")),
        |d| files(d, &[("a.txt", "A")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.tool_calls, 1);
    assert_eq!(o.events_of("llm_response")[0]["parse_layer"], "hermes");
}

#[tokio::test]
async fn thinking_is_kept_apart_from_the_answer() {
    let o = run(
        ScriptBuilder::new().turn(Turn::text("<think>The user wants a number.</think>Seven.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.answer, "Seven.");
    let assistant = o
        .result
        .transcript
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(
        assistant.reasoning.as_deref(),
        Some("The user wants a number.")
    );

    let o = run(
        ScriptBuilder::new().turn(Turn::text("Eight.").with_thinking("native thinking")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.answer, "Eight.");
    let assistant = o
        .result
        .transcript
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(assistant.reasoning.as_deref(), Some("native thinking"));
}

#[tokio::test]
async fn string_arguments_are_coerced_to_the_schema_types() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "read_file",
                json!({"path": "a.txt", "start_line": "2", "end_line": "2"}),
            ))
            .turn(Turn::text("done")),
        |d| files(d, &[("a.txt", "one\ntwo\nthree\n")]),
        |_| {},
    )
    .await;
    let call = &o.events_of("tool_call")[0];
    assert_eq!(
        call["arguments"],
        json!({"path": "a.txt", "start_line": 2, "end_line": 2})
    );
    assert_eq!(call["ok"], true);
    let msgs = o.messages(1);
    let content = msgs.last().unwrap()["content"].as_str().unwrap();
    assert!(
        content.contains("two") && !content.contains("three"),
        "{content}"
    );
}

#[tokio::test]
async fn task_complete_ends_the_run_with_its_summary() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "task_complete",
                json!({"summary": "All done."}),
            ))
            .turn(Turn::text("never asked")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "All done.");
    assert_eq!(o.requests.len(), 1);
}

#[tokio::test]
async fn streaming_text_arrives_as_deltas_that_add_up_to_the_answer() {
    let o = run(
        ScriptBuilder::new().turn(Turn::text("Streaming works fine, thank you.")),
        |_| {},
        |c| c.stream = true,
    )
    .await;
    assert_eq!(o.requests[0]["stream"], true);
    let deltas: String = o
        .events_of("text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(o.events_of("text_delta").len() > 1);
    assert_eq!(deltas, "Streaming works fine, thank you.");
    assert_eq!(o.result.answer, deltas);
}

/// Call markup never shows as text, and the text after a call streams as it arrives.
#[tokio::test]
async fn streaming_shows_the_text_around_a_call_but_not_the_call() {
    let text = "Reading.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>\nI will report what it holds.";
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(text))
            .turn(Turn::text("done")),
        |d| files(d, &[("a.txt", "A")]),
        |c| c.stream = true,
    )
    .await;
    assert_eq!(o.result.tool_calls, 1);
    let first_reply: Vec<String> = o
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .take_while(|v| v["type"] != "tool_call")
        .filter(|v| v["type"] == "text_delta")
        .map(|v| v["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        first_reply.concat(),
        "Reading.\n\nI will report what it holds."
    );
    // The sentence after the call came in the server's 6-character pieces as they
    // arrived, not in one block when the reply ended.
    assert!(
        first_reply.iter().all(|d| !d.contains("report what")),
        "{first_reply:?}"
    );
}

/// The scripted multi-step task: read the failing code, fix it, check it, finish.
#[tokio::test]
async fn multi_step_task_fixes_a_file_end_to_end() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("grep_search", json!({"pattern": "fn add"})))
            .turn(Turn::tool_call("read_file", json!({"path": "src/lib.rs"})))
            .turn(Turn::tool_call(
                "edit_file",
                json!({"path": "src/lib.rs", "old_string": "a - b", "new_string": "a + b"}),
            ))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "grep -c 'a + b' src/lib.rs"}),
            ))
            .turn(Turn::tool_call(
                "task_complete",
                json!({"summary": "Fixed add() to use +."}),
            )),
        |d| {
            files(
                d,
                &[(
                    "src/lib.rs",
                    "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
                )],
            )
        },
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "Fixed add() to use +.");
    assert_eq!(
        o.file("src/lib.rs"),
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
    );
    assert_eq!(o.result.files_changed, vec!["src/lib.rs".to_owned()]);
    let calls = o.events_of("tool_call");
    let oks: Vec<bool> = calls.iter().map(|c| c["ok"].as_bool().unwrap()).collect();
    assert_eq!(oks, [true, true, true, true, true], "{calls:?}");
    // The edit's result shows the model a diff.
    let edit_result = o.messages(3).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        edit_result.contains("-    a - b") && edit_result.contains("+    a + b"),
        "{edit_result}"
    );
    // The command saw the fixed file.
    let msgs = o.messages(4);
    assert!(msgs.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains('1'));
}

#[tokio::test]
async fn a_final_answer_asked_for_after_a_budget_streams_too() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
            .turn(Turn::text("The file holds A, and that is all.")),
        |d| files(d, &[("a.txt", "A")]),
        |c| {
            c.stream = true;
            c.budgets.max_tool_calls = Some(1);
        },
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::BudgetExhausted);
    assert_eq!(o.requests[1]["stream"], true);
    let deltas: String = o
        .events_of("text_delta")
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(deltas, "The file holds A, and that is all.");
}

/// One agent asks the server about its model once, not on every run.
#[tokio::test]
async fn an_agent_asks_about_its_model_once() {
    use reagent_core::{Agent, AgentConfig, EventSink};
    use reagent_protocol::CancellationToken;
    use reagent_providers::ollama::OllamaProvider;
    use reagent_testkit::ScriptedOllama;
    use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
    use std::sync::Arc;

    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("First."))
            .turn(Turn::text("Second.")),
    )
    .await
    .unwrap();
    let provider = OllamaProvider::new(
        &server.base_url(),
        super::harness::client(std::time::Duration::from_secs(10)),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agent = Arc::new(Agent::new(
        Arc::new(provider),
        Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default())),
        AgentConfig::new(super::harness::MODEL),
    ));
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    for answer in ["First.", "Second."] {
        let sink = EventSink::new(&reagent_core::new_run_id(), Arc::new(|_| {}));
        let result = agent
            .run(
                workspace.clone(),
                "say it",
                &sink,
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(result.answer, answer);
    }
    let shows = server
        .server()
        .recorded()
        .iter()
        .filter(|r| r.path == "/api/show")
        .count();
    assert_eq!(shows, 1);
}
