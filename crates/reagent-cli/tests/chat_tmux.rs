//! `reagent chat` in a real terminal: tmux runs it in an 80×24 pane (send-keys types,
//! capture-pane reads the screen) against a scripted Ollama: the welcome names the provider,
//! a reply lands in the conversation, a command the rules mark `ask` shows an inline approval
//! whose early keys are ignored and whose answer runs it, Ctrl-C cancels nothing when idle and
//! quits when pressed twice, leaving the terminal usable; in read-only mode writes show their
//! diff and a denial's note reaches the model, `/diff`, `/undo`, `/rename` + `/sessions`, the
//! `/model` picker and `/provider`. Once against the real embedded model (llama-server with
//! SmolLM2): a question answered through a tool call.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, ScriptedOpenAi, Turn};
use serde_json::json;

/// A tmux server of its own (its socket in the test's directory), killed at the end.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-S", &self.socket])
            .args(args)
            .output()
            .expect("tmux is needed for this test (scripts/install-test-deps.sh installs it)")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "chat"];
        args.extend(keys);
        assert!(self.cmd(&args).status.success());
    }

    /// Type `text`, then Enter as a person would: not within the paste-burst gap (an Enter
    /// right after a character is a pasted new line).
    async fn line(&self, text: &str) {
        self.keys(&["-l", text]);
        tokio::time::sleep(Duration::from_millis(60)).await;
        self.keys(&["Enter"]);
    }

    fn screen(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-J", "-t", "chat", "-S", "-200"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the pane (with its scrollback) shows `text`.
    async fn wait_for(&self, text: &str) -> String {
        self.wait_within(text, Duration::from_secs(30)).await
    }

    /// Wait up to `limit` until the pane (with its scrollback) shows `text`.
    async fn wait_within(&self, text: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < limit,
                "the pane never showed {text:?}:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

/// `reagent chat` against `server` in a tmux pane, with `config` as reagent.toml.
fn chat_in_tmux(dir: &Path, server: &ScriptedOllama, config: &str) -> (Tmux, std::path::PathBuf) {
    let ws = dir.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(dir.join("reagent.toml"), config).unwrap();
    let command = format!(
        "{} chat --model m --host {} --workspace {} --store {}",
        env!("CARGO_BIN_EXE_reagent"),
        server.base_url(),
        ws.display(),
        dir.join("store.db").display(),
    );
    (start(dir, &command), ws)
}

fn start(dir: &Path, command: &str) -> Tmux {
    let tmux = Tmux {
        socket: dir.join("tmux.sock").display().to_string(),
    };
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "chat",
        "-x",
        "80",
        "-y",
        "24",
        "-c",
        &dir.display().to_string(),
        &format!(
            "env HOME={} NO_COLOR=1 {command}; echo CHAT-EXITED $?; sleep 30",
            dir.display()
        ),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tmux
}

#[tokio::test]
async fn a_conversation_with_an_approval_in_a_real_terminal() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("Hello from the model."))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "touch approved"}),
            ))
            .turn(Turn::text("The file is made.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, ws) = chat_in_tmux(
        dir.path(),
        &server,
        "[[sandbox.rules]]\nprefix = \"touch\"\naction = \"ask\"\n",
    );
    let welcome = tmux.wait_for("Type a message").await;
    assert!(welcome.contains("sent to the ollama provider"), "{welcome}");
    assert!(welcome.contains("a server on this machine"), "{welcome}");
    // The status line is drawn right after the welcome goes to the scrollback.
    tmux.wait_for("m @ ollama").await;

    tmux.line("hi there").await;
    let screen = tmux.wait_for("Hello from the model.").await;
    assert!(screen.contains("› hi there"), "{screen}");

    // Keys typed before the prompt appears are not the answer.
    tmux.line("make the file").await;
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("run this command?").await;
    assert!(
        screen.contains("touch approved"),
        "the exact command: {screen}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !ws.join("approved").exists(),
        "the key typed ahead did not approve"
    );
    assert!(tmux.screen().contains("run this command?"), "still asking");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("The file is made.").await;
    assert!(ws.join("approved").exists(), "approved once, it ran");
    assert!(screen.contains("allow_once: touch approved"), "{screen}");

    // The early key went to the input instead; Ctrl-C clears it, then asks before quitting.
    assert!(screen.contains("› y"), "{screen}");
    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("press Ctrl-C again").await;
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("CHAT-EXITED 0").await;
    // The conversation stayed in the terminal's scrollback, as text.
    assert!(screen.contains("Hello from the model."), "{screen}");
}

#[tokio::test]
async fn a_cancelled_turn_new_and_a_server_that_drops_mid_reply() {
    let slow = "one two three four five six seven eight nine ten eleven twelve thirteen";
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(
                Turn::text(slow)
                    .with_chunk_chars(4)
                    .with_chunk_delay(Duration::from_millis(300)),
            )
            .turn(Turn::text("Fresh start.").with_chunk_chars(3))
            .turn(
                Turn::text("This reply breaks off here")
                    .with_chunk_chars(5)
                    .with_cut_after(2),
            )
            .turn(Turn::text("Recovered after the retry.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, _) = chat_in_tmux(dir.path(), &server, "max_retries = 0\n");
    tmux.wait_for("Type a message").await;

    // Ctrl-C while the reply streams: the turn ends, the partial reply stays, the chat goes on.
    tmux.line("count slowly").await;
    tmux.wait_for("one two").await;
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("turn cancelled").await;
    assert!(screen.contains("[reply cut short]"), "{screen}");
    assert!(!screen.contains("thirteen"), "it was cut: {screen}");

    tmux.line("/new").await;
    tmux.wait_for("new session").await;
    tmux.line("hello again").await;
    tmux.wait_for("Fresh start.").await;
    let sent = server.requests();
    let users: Vec<&str> = sent[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["hello again"], "/new started a new conversation");

    // Shrink, then grow: the live area is laid out again at once, with no stale copy.
    for (cols, rows) in [("60", "16"), ("100", "30")] {
        assert!(tmux
            .cmd(&["resize-window", "-t", "chat", "-x", cols, "-y", rows])
            .status
            .success());
        tokio::time::sleep(Duration::from_millis(500)).await;
        let out = tmux.cmd(&["capture-pane", "-p", "-t", "chat"]);
        let visible = String::from_utf8_lossy(&out.stdout).into_owned();
        let statuses: Vec<&str> = visible
            .lines()
            .filter(|l| l.contains("m @ ollama"))
            .collect();
        assert_eq!(
            statuses.len(),
            1,
            "{cols}x{rows}: one status line: {visible}"
        );
        assert!(
            statuses[0].trim_end().chars().count() <= cols.parse().unwrap(),
            "{visible}"
        );
    }

    // The server drops mid-reply: a dialog offers retry; the partial reply is kept.
    tmux.line("go on").await;
    let screen = tmux.wait_for("server failed").await;
    assert!(screen.contains("[r] retry"), "{screen}");
    tmux.keys(&["r"]);
    let screen = tmux.wait_for("Recovered after the retry.").await;
    assert!(
        screen.contains("This reply"),
        "the partial reply was kept: {screen}"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("CHAT-EXITED 0").await;
}

/// The text of every user message and tool result of `request` (a request to the server).
fn sent_text(request: &serde_json::Value) -> String {
    request["messages"].to_string()
}

#[tokio::test]
async fn writes_asked_with_their_diff_a_note_to_the_model_diff_and_undo() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "edit_file",
                json!({"path": "notes.txt", "old_string": "three", "new_string": "3"}),
            ))
            .turn(Turn::text("Understood, the words stay."))
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "notes.txt", "content": "one\nTWO\nthree\n"}),
            ))
            .turn(Turn::text("Capitalized it."))
            .turn(Turn::text("Back where we were.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, ws) = chat_in_tmux(dir.path(), &server, "");
    std::fs::write(ws.join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    tmux.wait_for("Type a message").await;
    tmux.line("/approvals read-only").await;
    tmux.wait_for("every write shows its diff").await;

    // A denied edit: its diff on screen, the note reaches the model, the file is unchanged.
    tmux.line("shorten the numbers").await;
    let screen = tmux.wait_for("write this file?").await;
    assert!(
        screen.contains("+++ b/notes.txt"),
        "the diff is shown: {screen}"
    );
    // Longer than the pane: the rest is said and scrolls into view.
    assert!(screen.contains("2 below"), "{screen}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&["PgDn"]);
    let screen = tmux.wait_for("+3").await;
    assert!(screen.contains("-three"), "the diff scrolled: {screen}");
    tmux.keys(&["d"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    tmux.line("keep the words").await;
    tmux.wait_for("Understood, the words stay.").await;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    let requests = server.requests();
    let after_denial = sent_text(&requests[1]);
    assert!(
        after_denial.contains("the user denied it and says: keep the words"),
        "the note reached the model: {after_denial}"
    );

    // An allowed write: the whole diff on screen, then the file changes.
    tmux.line("capitalize two").await;
    tmux.wait_for("capitalize two").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&["PgDn"]);
    let screen = tmux.wait_for("+TWO").await;
    assert!(screen.contains("-two"), "{screen}");
    tmux.keys(&["y"]);
    tmux.wait_for("Capitalized it.").await;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );

    // Each question (with its diff) and answer (with its note) is an event in the store.
    let out = Command::new("sqlite3")
        .arg(dir.path().join("store.db"))
        .arg("SELECT type, json FROM events WHERE type LIKE 'approval_%' ORDER BY ts, seq")
        .output()
        .expect("sqlite3 is needed for this test (scripts/install-test-deps.sh installs it)");
    let stored = String::from_utf8_lossy(&out.stdout).into_owned();
    let kinds: Vec<&str> = stored
        .lines()
        .filter_map(|l| l.split('|').next())
        .filter(|k| k.starts_with("approval_"))
        .collect();
    assert_eq!(
        kinds,
        [
            "approval_requested",
            "approval_decided",
            "approval_requested",
            "approval_decided"
        ],
        "{stored}"
    );
    assert!(stored.contains("keep the words"), "the note: {stored}");
    assert!(stored.contains("+TWO"), "the diff: {stored}");

    // `/diff`: the session's changes.
    tmux.line("/diff").await;
    let screen = tmux.wait_for("+++ b/notes.txt").await;
    assert!(screen.contains("--- a/notes.txt"), "{screen}");
    assert!(screen.contains("+TWO"), "{screen}");

    // `/undo`: the file and the conversation go back to before the last turn.
    tmux.line("/undo").await;
    tmux.wait_for("restored notes.txt").await;
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    tmux.line("where are we").await;
    tmux.wait_for("Back where we were.").await;
    let last = sent_text(server.requests().last().unwrap());
    assert!(last.contains("shorten the numbers"), "{last}");
    assert!(
        !last.contains("capitalize two"),
        "the undone turn is gone: {last}"
    );
    tmux.line("/diff").await;
    tmux.wait_for("no changes in this session").await;

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("CHAT-EXITED 0").await;
}

#[tokio::test]
async fn rename_then_sessions_and_a_model_picked_from_the_server_s_list() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .model(ModelSpec::new("m"))
            .model(ModelSpec::new("coder:7b"))
            .turn(Turn::text("Hello from m."))
            .turn(Turn::text("Hello from the coder.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, _) = chat_in_tmux(dir.path(), &server, "");
    tmux.wait_for("Type a message").await;
    tmux.line("hi").await;
    tmux.wait_for("Hello from m.").await;

    // `/rename`: stored, and `/sessions` shows (and filters by) the name.
    tmux.line("/rename parser work").await;
    tmux.wait_for("is now named").await;
    tmux.line("/sessions parser").await;
    let screen = tmux.wait_for("stored sessions (Enter resumes one").await;
    assert!(
        screen.contains("1 turns  m  \"parser work\""),
        "the listed session shows its name: {screen}"
    );
    // Picked: the same session is resumed (Esc would close the list).
    tokio::time::sleep(Duration::from_millis(100)).await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("resumed session").await;

    // `/model`: the server's models as a list; Down, Enter picks the second.
    tmux.line("/model").await;
    let screen = tmux.wait_for("models of the server").await;
    assert!(screen.contains("m:latest"), "{screen}");
    assert!(screen.contains("coder:7b"), "{screen}");
    tmux.keys(&["Down"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    tmux.keys(&["Enter"]);
    tmux.wait_for("model: coder:7b (the conversation goes on)")
        .await;
    tmux.wait_for("coder:7b @ ollama").await;
    tmux.line("and now?").await;
    tmux.wait_for("Hello from the coder.").await;
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last["model"], "coder:7b", "the next turn uses the pick");
    assert!(
        last["messages"].to_string().contains("Hello from m."),
        "the conversation went on: {last}"
    );

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("CHAT-EXITED 0").await;
}

#[tokio::test]
async fn a_command_denied_with_a_note_then_another_provider() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "touch denied"}),
            ))
            .turn(Turn::text("Understood: no file was made.")),
    )
    .await
    .unwrap();
    let other = ScriptedOpenAi::start(ScriptBuilder::new().turn(Turn::text("Hello from OpenAI.")))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (tmux, ws) = chat_in_tmux(
        dir.path(),
        &server,
        "[[sandbox.rules]]\nprefix = \"touch\"\naction = \"ask\"\n",
    );
    tmux.wait_for("Type a message").await;
    tmux.line("make the file").await;
    tmux.wait_for("run this command?").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    tmux.keys(&["d"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    tmux.line("use the Makefile").await;
    tmux.wait_for("Understood: no file was made.").await;
    assert!(!ws.join("denied").exists());
    let after = server.requests()[1]["messages"].to_string();
    assert!(
        after.contains("the user denied it and says: use the Makefile"),
        "the note reached the model: {after}"
    );

    // `/provider NAME URL`: the next turn goes there, with the conversation so far.
    tmux.line(&format!("/provider openai {}", other.base_url()))
        .await;
    let screen = tmux.wait_for("provider: openai").await;
    assert!(screen.contains("a server on this machine"), "{screen}");
    tmux.wait_for("m @ openai").await;
    tmux.line("and now?").await;
    tmux.wait_for("Hello from OpenAI.").await;
    let sent = other.requests();
    assert_eq!(sent.len(), 1);
    assert!(
        sent[0]["messages"]
            .to_string()
            .contains("Understood: no file was made."),
        "{}",
        sent[0]
    );
    assert_eq!(server.requests().len(), 2, "nothing more went to the first");

    tmux.keys(&["C-c"]);
    tmux.keys(&["C-c"]);
    tmux.wait_for("CHAT-EXITED 0").await;
}

#[tokio::test]
async fn a_question_answered_through_a_tool_call_of_the_embedded_model() {
    let server = support::start_server().await;
    let ws = support::demo_workspace();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("reagent.toml"),
        "[guardrails]\nrepetition_threshold = 2\n",
    )
    .unwrap();
    let command = format!(
        "{} chat --provider openai --base-url {} --model {} --tool-mode constrained \
         --workspace {} --store {} --read-only --num-ctx 4096 --num-predict 128 \
         --temperature 0 --seed 1 --timeout 200 --max-iterations 5",
        env!("CARGO_BIN_EXE_reagent"),
        server.openai_base_url(),
        server.model(),
        ws.path().display(),
        dir.path().join("store.db").display(),
    );
    let tmux = start(dir.path(), &command);
    tmux.wait_for("Type a message").await;
    tmux.line(support::TASK).await;
    // The model reads the file (its content is the only place the name is) and the turn ends.
    let screen = tmux
        .wait_within(support::KEEPER_FACT, support::RUN_LIMIT)
        .await;
    assert!(screen.contains("read_file"), "{screen}");
    assert!(screen.contains("keeper.txt"), "{screen}");
    // Ctrl-C cancels the turn if it still runs, then asks, then quits.
    for _ in 0..6 {
        if tmux.screen().contains("CHAT-EXITED") {
            break;
        }
        tmux.keys(&["C-c"]);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    tmux.wait_for("CHAT-EXITED 0").await;
}
