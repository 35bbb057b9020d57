//! `reagent chat` without a terminal (line mode): a message per stdin line, replies on stdout,
//! tool calls on stderr, `--json` one object per turn; follow-ups continue the conversation,
//! the chat is a stored session that `--resume` continues, `/workflow` adds its Markdown to the
//! system prompt until `/new`, a server that drops mid-reply ends only that turn, and `/diff`
//! and `/undo` go back turn by turn. Against a
//! scripted Ollama on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

/// A workspace with a file, and a store file beside it.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        std::fs::write(dir.path().join("ws/notes.txt"), "the answer is 42\n").unwrap();
        Setup { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `reagent chat` with `extra` flags and `input` on stdin (a pipe, not a terminal).
    async fn chat(&self, server: &ScriptedOllama, extra: &[&str], input: &str) -> Output {
        let mut args: Vec<String> = vec![
            "chat".into(),
            "--model".into(),
            "m".into(),
            "--host".into(),
            server.base_url(),
            "--workspace".into(),
            self.ws().display().to_string(),
            "--store".into(),
            self.dir.path().join("store.db").display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let (cwd, input) = (self.dir.path().to_path_buf(), input.to_owned());
        tokio::task::spawn_blocking(move || run(&args, &cwd, &input))
            .await
            .unwrap()
    }
}

fn run(args: &[String], cwd: &Path, input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .current_dir(cwd)
        .env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env("HOME", cwd)
        .env("XDG_CONFIG_HOME", cwd.join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn turns(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!(
                    "not JSON ({e}): {l}\nstderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect()
}

/// The system prompt and the user messages of a recorded request.
fn system_and_users(request: &Value) -> (String, Vec<String>) {
    let messages = request["messages"].as_array().unwrap();
    let system = messages
        .iter()
        .find(|m| m["role"] == "system")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .unwrap_or_default();
    let users = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    (system, users)
}

#[tokio::test]
async fn json_gives_one_object_per_turn_and_follow_ups_continue_the_conversation() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("The notes say 42."))
            .turn(Turn::text("Half of it is 21.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let out = setup
        .chat(
            &server,
            &["--json"],
            "what do the notes say?\n\nand half of it?\n",
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let turns = turns(&out);
    assert_eq!(turns.len(), 2, "one object per turn, blank lines skipped");
    assert_eq!(turns[0]["turn"], 1);
    assert_eq!(turns[0]["message"], "what do the notes say?");
    assert_eq!(turns[0]["outcome"], "completed");
    assert_eq!(turns[0]["answer"], "The notes say 42.");
    assert_eq!(turns[0]["tool_calls"][0]["name"], "read_file");
    assert_eq!(turns[0]["tool_calls"][0]["ok"], true);
    assert_eq!(turns[1]["answer"], "Half of it is 21.");
    assert_eq!(turns[1]["tool_calls"], json!([]));
    assert_eq!(
        turns[0]["session_id"], turns[1]["session_id"],
        "one session"
    );
    assert_ne!(turns[0]["run_id"], turns[1]["run_id"], "a run per turn");
    // The follow-up was sent with the whole conversation, the tool result included.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let (_, users) = system_and_users(&requests[2]);
    assert_eq!(users, ["what do the notes say?", "and half of it?"]);
    let sent = requests[2]["messages"].to_string();
    assert!(sent.contains("the answer is 42"), "{sent}");
}

#[tokio::test]
async fn plain_line_mode_writes_replies_to_stdout_and_tool_calls_to_stderr() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("It says 42.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let out = setup
        .chat(
            &server,
            &[],
            "read the notes\n/export html report.html\n/export md notes.md\n",
        )
        .await;
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(stdout, "It says 42.\n", "only the reply on stdout");
    let html = std::fs::read_to_string(setup.dir.path().join("report.html"))
        .unwrap_or_else(|e| panic!("report.html: {e}; stderr: {stderr}"));
    assert!(
        html.contains("<html") && html.contains("read_file"),
        "{html}"
    );
    let md = std::fs::read_to_string(setup.dir.path().join("notes.md")).unwrap();
    assert!(
        md.contains("## You\n\nread the notes") && md.contains("It says 42."),
        "{md}"
    );
    assert!(stderr.contains("[tool] read_file"), "{stderr}");
    assert!(
        stderr.contains("sent to the ollama provider at http://127.0.0.1")
            && stderr.contains("a server on this machine"),
        "the welcome says where tool results go: {stderr}"
    );
}

#[tokio::test]
async fn a_chat_is_a_stored_session_that_resume_continues() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("Noted: blue."))
            .turn(Turn::text("You said blue.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let first = setup
        .chat(&server, &["--json"], "my favourite colour is blue\n")
        .await;
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let session = turns(&first)[0]["session_id"].as_str().unwrap().to_owned();
    let listed = setup.chat(&server, &["--json"], "/sessions\n").await;
    assert!(
        String::from_utf8_lossy(&listed.stderr).contains(&session[..12]),
        "/sessions lists it: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let found = setup.chat(&server, &["--json"], "/search colour\n").await;
    assert!(
        String::from_utf8_lossy(&found.stderr).contains("my favourite colour is blue"),
        "/search finds the message: {}",
        String::from_utf8_lossy(&found.stderr)
    );
    let second = setup
        .chat(&server, &["--json", "--resume", &session], "what colour?\n")
        .await;
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let turn = &turns(&second)[0];
    assert_eq!(turn["session_id"], session.as_str());
    assert_eq!(turn["answer"], "You said blue.");
    let (_, users) = system_and_users(&server.requests()[1]);
    assert_eq!(users, ["my favourite colour is blue", "what colour?"]);
}

#[tokio::test]
async fn a_workflow_augments_the_system_prompt_until_new() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("Reviewing."))
            .turn(Turn::text("Still reviewing."))
            .turn(Turn::text("Plain again.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let workflows = setup.ws().join(".reagent/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::write(
        workflows.join("review.md"),
        "Review the change for missing tests. WORKFLOW-MARKER\n",
    )
    .unwrap();
    let out = setup
        .chat(
            &server,
            &["--json"],
            "/workflow review look at notes.txt\nanything else?\n/workflow nosuch\n/new\nhello\n",
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let turns = turns(&out);
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[0]["message"], "look at notes.txt");
    let requests = server.requests();
    let (system, _) = system_and_users(&requests[0]);
    assert!(system.contains("WORKFLOW-MARKER"), "{system}");
    let (system, users) = system_and_users(&requests[1]);
    assert!(system.contains("WORKFLOW-MARKER"), "kept for the follow-up");
    assert_eq!(users.len(), 2);
    let (system, users) = system_and_users(&requests[2]);
    assert!(
        !system.contains("WORKFLOW-MARKER"),
        "/new leaves agentic mode"
    );
    assert_eq!(users, ["hello"], "/new starts a new conversation");
    assert_ne!(turns[1]["session_id"], turns[2]["session_id"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no workflows named 'nosuch'"), "{stderr}");
}

#[tokio::test]
async fn a_server_that_drops_mid_reply_ends_only_that_turn() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("This reply is long and will be cut off early").with_cut_after(2))
            .turn(Turn::text("Back again.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    // No retry: the drop is seen by the turn.
    std::fs::write(setup.dir.path().join("reagent.toml"), "max_retries = 0\n").unwrap();
    let out = setup.chat(&server, &["--json"], "first\nsecond\n").await;
    let turns = turns(&out);
    assert_eq!(turns.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(turns[0]["outcome"], "completed", "{}", turns[0]);
    assert_eq!(turns[1]["outcome"], "completed");
    assert_eq!(turns[1]["answer"], "Back again.");
}

#[tokio::test]
async fn model_and_resume_commands_keep_or_switch_the_conversation() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("First."))
            .turn(Turn::text("Second, from the other model."))
            .turn(Turn::text("Read-only now."))
            .turn(Turn::text("Third, after /resume.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let first = setup
        .chat(
            &server,
            &["--json"],
            "remember 7\n/model other\n/tools disable run_command\n/tools enable nosuch\n/tools\nwhat number?\n/approvals read-only\nand now?\n",
        )
        .await;
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let turns = turns(&first);
    assert_eq!(turns.len(), 3);
    assert_eq!(
        turns[0]["session_id"], turns[1]["session_id"],
        "same conversation"
    );
    let requests = server.requests();
    assert_eq!(requests[0]["model"], "m");
    assert_eq!(requests[1]["model"], "other", "/model switched the model");
    let (_, users) = system_and_users(&requests[1]);
    assert_eq!(users, ["remember 7", "what number?"]);
    let offered = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(
        offered(&requests[0]).contains(&"run_command".to_owned()),
        "{}",
        requests[0]
    );
    assert!(
        !offered(&requests[1]).contains(&"run_command".to_owned()),
        "/tools disable: {:?}\n{}",
        offered(&requests[1]),
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(!offered(&requests[1]).is_empty(), "the other tools stay");
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(stderr.contains("no tool named 'nosuch'"), "{stderr}");
    assert!(
        stderr.contains("off run_command") && stderr.contains("on  read_file"),
        "{stderr}"
    );

    let session = turns[0]["session_id"].as_str().unwrap().to_owned();
    let input = format!("/resume {}\nand now?\n", &session[..10]);
    let second = setup.chat(&server, &["--json"], &input).await;
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("resumed session {session}")),
        "{stderr}"
    );
    let turn = &self::turns(&second)[0];
    assert_eq!(turn["session_id"], session.as_str());
    let (_, users) = system_and_users(&server.requests()[3]);
    assert_eq!(
        users,
        ["remember 7", "what number?", "and now?", "and now?"]
    );
}

#[tokio::test]
async fn line_mode_diff_and_undo_of_two_turns() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "notes.txt", "content": "the answer is 43\n"}),
            ))
            .turn(Turn::text("Changed it."))
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "new.txt", "content": "fresh\n"}),
            ))
            .turn(Turn::text("Added a file."))
            .turn(Turn::text("Fine.")),
    )
    .await
    .unwrap();
    let setup = Setup::new();
    let out = setup
        .chat(
            &server,
            &[],
            "change the answer\n/diff\nadd a file\n/undo\n/diff\n/undo\n/undo\nhow is it?\n",
        )
        .await;
    let err = String::from_utf8_lossy(&out.stderr);
    // The first /diff: the first turn's change.
    assert!(
        err.contains("-the answer is 42\n+the answer is 43"),
        "{err}"
    );
    // Undone turn by turn: first the created file goes, then the change.
    assert!(err.contains("deleted new.txt"), "{err}");
    assert!(err.contains("restored notes.txt"), "{err}");
    assert!(
        err.contains("nothing to undo"),
        "a third /undo has no turn left: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(setup.ws().join("notes.txt")).unwrap(),
        "the answer is 42\n"
    );
    assert!(!setup.ws().join("new.txt").exists());
    let last = server.requests().last().unwrap()["messages"].to_string();
    assert!(!last.contains("change the answer"), "{last}");
    assert!(!last.contains("add a file"), "{last}");
    assert!(last.contains("how is it?"), "{last}");
}
