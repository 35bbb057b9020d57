//! Interactive approval in a real terminal: a command matching an `ask` rule waits for the
//! person, who allows or denies it. The terminal is a pty made by util-linux `script`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

/// Run `reagent run` inside a pty, typing `answer` at the prompt; checks that reagent exits
/// with `code` and returns the events.
async fn run_in_terminal(answer: &'static str, code: i32) -> (tempfile::TempDir, Vec<Value>) {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "touch approved"}),
            ))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(
        dir.path().join("reagent.toml"),
        "[[sandbox.rules]]\nprefix = \"touch\"\naction = \"ask\"\n",
    )
    .unwrap();
    let events = dir.path().join("events.jsonl");
    let command = format!(
        "{} run --model m --host {} --workspace {} --events {} 'make a file'",
        env!("CARGO_BIN_EXE_reagent"),
        server.base_url(),
        ws.display(),
        events.display()
    );
    let cwd = dir.path().to_path_buf();
    let status = tokio::task::spawn_blocking(move || {
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &command, "/dev/null"])
            .current_dir(&cwd)
            .env("HOME", &cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("util-linux `script` is needed to give reagent a terminal");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(answer.as_bytes()).unwrap();
        let status = child.wait().unwrap();
        drop(stdin);
        status
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(code), "reagent exited with {status}");
    let events = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (dir, events)
}

/// The approval asked and answered, as events: (command asked, decision).
fn approval(events: &[Value]) -> (String, bool) {
    let asked = events
        .iter()
        .find(|e| e["type"] == "approval_requested")
        .expect("an approval_requested event");
    let decided = events
        .iter()
        .find(|e| e["type"] == "approval_decided")
        .expect("an approval_decided event");
    assert_eq!(asked["approval_id"], decided["approval_id"]);
    assert!(asked["seq"].as_u64() < decided["seq"].as_u64());
    (
        asked["command"].as_str().unwrap().to_owned(),
        decided["approved"].as_bool().unwrap(),
    )
}

fn tool_call(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_call")
        .expect("a tool_call event")
}

#[tokio::test]
async fn allowing_at_the_prompt_runs_the_command() {
    let (dir, events) = run_in_terminal("y\n", 0).await;
    assert_eq!(tool_call(&events)["ok"], true, "{events:?}");
    assert_eq!(approval(&events), ("touch approved".to_owned(), true));
    assert!(dir.path().join("ws/approved").exists());
}

#[tokio::test]
async fn denying_at_the_prompt_is_a_tool_error_and_runs_nothing() {
    // The only call was refused, so the model's "done" rests on nothing: no_progress, exit 8.
    let (dir, events) = run_in_terminal("n\n", 8).await;
    let call = tool_call(&events);
    assert_eq!(call["ok"], false);
    assert_eq!(approval(&events), ("touch approved".to_owned(), false));
    assert!(
        call["summary"].as_str().unwrap().contains("denied"),
        "{call}"
    );
    assert!(!dir.path().join("ws/approved").exists());
    assert_eq!(events.last().unwrap()["outcome"], "no_progress");
}
