//! Checkpoints before a run's first change, in a plain folder and in a git repository, and
//! restoring them: the bytes come back and files the run created are deleted.

use reagent_core::checkpoint::{Checkpoint, Method};
use reagent_protocol::EventKind;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::json;

use super::harness::{files, git, run};

/// The run's changes: edit a.txt, create new/b.txt, and a command creating c.txt.
fn changes() -> ScriptBuilder {
    ScriptBuilder::new()
        .turn(Turn::tool_call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
        ))
        .turn(Turn::tool_call(
            "write_file",
            json!({"path": "new/b.txt", "content": "made\n"}),
        ))
        .turn(Turn::tool_call(
            "run_command",
            json!({"command": "echo made > c.txt && echo changed > keep.txt"}),
        ))
        .turn(Turn::text("Done."))
}

/// The run's checkpoints: before its first change, and as it left the workspace.
fn checkpoints_of(o: &super::harness::Outcome) -> (Checkpoint, Checkpoint) {
    let events: Vec<_> = o
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Checkpoint { .. }))
        .collect();
    assert_eq!(
        events.len(),
        2,
        "one checkpoint before the first change, one at the end"
    );
    // Taken before the first change: before the first tool call started.
    let first_call = o
        .events
        .iter()
        .find(|e| matches!(e.kind, EventKind::ToolCallStarted { .. }))
        .unwrap();
    assert!(events[0].seq < first_call.seq);
    let (start, after) = Checkpoint::from_event(&o.result.run_id, &events[0].kind).unwrap();
    assert!(!after);
    assert_eq!(Some(&start), o.result.checkpoint.as_ref());
    // The end is recorded once the run's work is over: after its last tool result, before
    // `run_finished` (and the guardrail event of an ending such as `unchecked`).
    let last_result = o
        .events
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::ToolResult { .. }))
        .unwrap();
    assert!(last_result.seq < events[1].seq && events[1].seq < o.events.last().unwrap().seq);
    let (end, after) = Checkpoint::from_event(&o.result.run_id, &events[1].kind).unwrap();
    assert!(after);
    assert_eq!(end.id, format!("{}-end", o.result.run_id));
    (start, end)
}

#[tokio::test]
async fn outside_git_the_changed_files_are_copied_and_restoring_deletes_created_ones() {
    let o = run(
        changes(),
        |d| {
            files(
                d,
                &[
                    ("a.txt", "one\ntwo\n"),
                    ("keep.txt", "kept\n"),
                    ("sub/x.bin", "\u{1}\u{2}"),
                ],
            )
        },
        |c| c.verify.checkpoints = true,
    )
    .await;
    assert_eq!(o.file("a.txt"), "ONE\ntwo\n");
    assert_eq!(o.file("c.txt"), "made\n");
    let (checkpoint, end) = checkpoints_of(&o);
    let Method::Files { dir } = &checkpoint.method else {
        panic!("not a git repository: {checkpoint:?}");
    };
    assert!(dir.starts_with(
        o.dir
            .path()
            .canonicalize()
            .unwrap()
            .join(".reagent/checkpoints")
    ));
    let preview = checkpoint.preview().unwrap();
    assert!(
        o.dir.path().join("c.txt").exists(),
        "a preview changes nothing"
    );
    let restored = checkpoint.restore().unwrap();
    assert_eq!(preview, restored);
    assert_eq!(o.file("a.txt"), "one\ntwo\n");
    assert_eq!(o.file("keep.txt"), "kept\n");
    assert_eq!(o.file("sub/x.bin"), "\u{1}\u{2}");
    assert!(!o.dir.path().join("new/b.txt").exists());
    assert!(!o.dir.path().join("c.txt").exists());
    assert_eq!(restored.restored, ["a.txt", "keep.txt"]);
    let mut deleted = restored.deleted.clone();
    deleted.sort();
    assert_eq!(deleted, ["c.txt", "new/b.txt"]);
    // Restoring again finds nothing to do.
    let again = checkpoint.restore().unwrap();
    assert!(
        again.restored.is_empty() && again.deleted.is_empty(),
        "{again:?}"
    );
    // The end state brings the run's work back (a redo).
    end.restore().unwrap();
    assert_eq!(o.file("a.txt"), "ONE\ntwo\n");
    assert_eq!(o.file("new/b.txt"), "made\n");
    assert_eq!(o.file("c.txt"), "made\n");
    assert_eq!(o.file("keep.txt"), "changed\n");
    end.discard().unwrap();
    checkpoint.discard().unwrap();
    assert!(!dir.exists());
    let bogus = Checkpoint {
        method: Method::Files {
            dir: o.dir.path().to_path_buf(),
        },
        ..checkpoint.clone()
    };
    assert!(
        bogus.discard().is_err(),
        "a folder without a manifest is never deleted"
    );
    assert!(o.dir.path().join("a.txt").exists());
}

#[tokio::test]
async fn in_git_a_private_ref_keeps_the_state_and_the_user_s_index_head_and_branches_stay() {
    let o = run(
        changes(),
        |d| {
            git(d, &["init", "-q", "-b", "main"]);
            files(
                d,
                &[
                    ("a.txt", "one\n"),
                    ("keep.txt", "kept\n"),
                    (".gitignore", "*.log\n"),
                ],
            );
            git(d, &["add", "a.txt", ".gitignore"]);
            git(d, &["commit", "-qm", "first"]);
            // Untracked, staged and ignored files the user has when the run starts.
            files(d, &[("a.txt", "one\nstaged\n"), ("notes.log", "ignored\n")]);
            git(d, &["add", "a.txt"]);
        },
        |c| c.verify.checkpoints = true,
    )
    .await;
    let d = o.dir.path();
    let head = git(d, &["rev-parse", "HEAD"]);
    let staged = git(d, &["diff", "--cached"]);
    let (checkpoint, end) = checkpoints_of(&o);
    let Method::Git { reference, commit } = &checkpoint.method else {
        panic!("a git repository: {checkpoint:?}");
    };
    assert_eq!(
        reference,
        &format!("refs/reagent/checkpoints/{}", o.result.run_id)
    );
    assert_eq!(git(d, &["rev-parse", reference]).trim(), commit);
    assert_eq!(git(d, &["show", &format!("{commit}:keep.txt")]), "kept\n");
    assert!(
        !d.join(".reagent").exists(),
        "no copies inside a repository"
    );

    let preview = checkpoint.preview().unwrap();
    assert_eq!(
        o.file("a.txt"),
        "ONE\nstaged\n",
        "a preview changes nothing"
    );
    let restored = checkpoint.restore().unwrap();
    assert_eq!(preview, restored);
    assert_eq!(o.file("a.txt"), "one\nstaged\n");
    assert_eq!(o.file("keep.txt"), "kept\n");
    assert_eq!(o.file("notes.log"), "ignored\n");
    assert!(!d.join("new/b.txt").exists() && !d.join("new").exists());
    assert!(!d.join("c.txt").exists());
    assert_eq!(restored.restored, ["a.txt", "keep.txt"]);
    assert_eq!(restored.deleted, ["c.txt", "new/b.txt"]);
    // The user's HEAD, index and branches are as they were.
    assert_eq!(git(d, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(d, &["diff", "--cached"]), staged);
    assert_eq!(
        git(d, &["branch", "--format=%(refname)"]).trim(),
        "refs/heads/main"
    );
    assert_eq!(
        git(d, &["status", "--porcelain"]),
        "M  a.txt\n?? keep.txt\n"
    );
    // The end state is a commit too; restoring it redoes the run's work.
    end.restore().unwrap();
    assert_eq!(o.file("a.txt"), "ONE\nstaged\n");
    assert_eq!(o.file("c.txt"), "made\n");
    assert_eq!(git(d, &["diff", "--cached"]), staged);
    let refs = git(d, &["for-each-ref", "--format=%(refname)", "refs/reagent/"]);
    assert_eq!(refs.lines().count(), 2, "{refs}");
    end.discard().unwrap();
    checkpoint.discard().unwrap();
    assert_eq!(git(d, &["for-each-ref", "refs/reagent/"]), "");
}

#[tokio::test]
async fn a_run_that_changes_nothing_takes_no_checkpoint() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
            .turn(Turn::text("It says one.")),
        |d| files(d, &[("a.txt", "one\n")]),
        |c| c.verify.checkpoints = true,
    )
    .await;
    assert!(o.result.checkpoint.is_none());
    assert!(o.events_of("checkpoint").is_empty());
    assert!(!o.dir.path().join(".reagent").exists());
}

#[test]
fn a_library_user_checkpoints_a_turn_and_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), &[("a.txt", "before\n")]);
    let elsewhere = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::take(dir.path(), "turn-1", Some(elsewhere.path())).unwrap();
    checkpoint.before_change(Some("a.txt")).unwrap();
    checkpoint.before_change(Some("b.txt")).unwrap();
    std::fs::write(dir.path().join("a.txt"), "after\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "new\n").unwrap();
    // A path not plainly beneath the workspace: everything is copied (once).
    checkpoint.before_change(Some("../outside.txt")).unwrap();
    std::fs::write(dir.path().join("c.txt"), "also new\n").unwrap();
    let restored = checkpoint.restore().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "before\n"
    );
    assert!(!dir.path().join("b.txt").exists());
    assert!(!dir.path().join("c.txt").exists());
    assert_eq!(
        (restored.restored, restored.deleted),
        (
            vec!["a.txt".to_owned()],
            vec!["b.txt".to_owned(), "c.txt".to_owned()]
        )
    );
    assert!(!dir.path().join(".reagent").exists());
    checkpoint.discard().unwrap();
    assert!(!elsewhere.path().join("turn-1").exists());
    assert!(Checkpoint::take(dir.path(), "../x", None).is_err());
}

#[tokio::test]
async fn a_checkpoint_that_cannot_be_taken_is_said_and_the_run_goes_on() {
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let dir = blocker.path().to_path_buf();
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "x\n"}),
            ))
            .turn(Turn::text("Done.")),
        |_| {},
        move |c| {
            c.verify.checkpoints = true;
            // A file where the folder of copies should go.
            c.verify.checkpoint_dir = Some(dir);
        },
    )
    .await;
    assert_eq!(o.file("a.txt"), "x\n");
    assert!(o.result.checkpoint.is_none());
    assert!(o.events_of("checkpoint").is_empty());
    let warned: Vec<_> = o
        .events_of("guardrail")
        .into_iter()
        .filter(|g| g["guardrail"] == "checkpoint")
        .collect();
    assert_eq!(warned.len(), 1, "said once: {warned:?}");
    assert_eq!(warned[0]["action"], "warn");
    assert!(warned[0]["detail"]
        .as_str()
        .unwrap()
        .contains("cannot restore this run"));
}

/// What an interactive console's `/undo` does with the library: the session's snapshot before a
/// turn and the turn's checkpoint give back the conversation and the files.
#[tokio::test]
async fn a_turn_is_undone_with_its_checkpoint_and_the_snapshot_before_it() {
    use std::sync::Arc;
    use std::time::Duration;

    use reagent_core::{Agent, AgentConfig, Session};
    use reagent_protocol::{CancellationToken, Outcome};
    use reagent_providers::ollama::OllamaProvider;
    use reagent_testkit::ScriptedOllama;
    use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};

    use super::harness::{client, recording_sink, MODEL};

    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "first\n"}),
            ))
            .turn(Turn::text("Wrote a.txt."))
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "second\n"}),
            ))
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "b.txt", "content": "new\n"}),
            ))
            .turn(Turn::text("Changed a.txt, added b.txt."))
            .turn(Turn::text("Understood: a.txt stays first.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
    let mut config = AgentConfig::new(MODEL);
    config.verify.checkpoints = true;
    let tools = Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default()));
    let agent = Arc::new(Agent::new(Arc::new(provider), tools, config));
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    let mut session = Session::new(agent.clone(), workspace.clone());
    let cancel = CancellationToken::new();
    let (sink, _) = recording_sink();
    session.run("write a.txt", &sink, &cancel).await;

    // The turn to undo.
    let before = session.snapshot();
    let messages_before = session.messages().len();
    let (sink, _) = recording_sink();
    let turn = session.run("now change it", &sink, &cancel).await;
    assert_eq!(turn.outcome, Outcome::Unchecked);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "new\n"
    );
    assert!(session.messages().len() > messages_before);

    // `/undo`: the files, then the conversation.
    let restored = turn
        .checkpoint
        .expect("the turn changed files")
        .restore()
        .unwrap();
    assert_eq!(
        (restored.restored, restored.deleted),
        (vec!["a.txt".to_owned()], vec!["b.txt".to_owned()])
    );
    let mut session = Session::resume(agent, workspace, before).unwrap();
    assert_eq!(session.messages().len(), messages_before);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "first\n"
    );
    assert!(!dir.path().join("b.txt").exists());

    // The conversation goes on from before the undone turn.
    let (sink, _) = recording_sink();
    let next = session.run("keep a.txt as it is", &sink, &cancel).await;
    assert_eq!(next.answer, "Understood: a.txt stays first.");
    let sent = server.requests().last().unwrap()["messages"].to_string();
    assert!(
        !sent.contains("now change it"),
        "the undone turn is gone: {sent}"
    );
}

#[test]
fn a_workspace_below_the_top_of_a_repository_restores_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    files(top, &[("top.txt", "top\n"), ("sub/a.txt", "one\n")]);
    git(top, &["init", "-q"]);
    git(top, &["add", "."]);
    git(top, &["commit", "-qm", "first"]);
    let ws = top.join("sub");
    let checkpoint = Checkpoint::take(&ws, "sub-run", None).unwrap();
    files(&ws, &[("a.txt", "changed\n"), ("deep/new.txt", "new\n")]);
    // The person changes (and stages) a file outside the workspace meanwhile.
    files(top, &[("top.txt", "mine\n")]);
    git(top, &["add", "top.txt"]);
    let restored = checkpoint.restore().unwrap();
    assert_eq!(restored.restored, ["a.txt"]);
    assert_eq!(restored.deleted, ["deep/new.txt"]);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(!ws.join("deep").exists());
    assert_eq!(
        std::fs::read_to_string(top.join("top.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(git(top, &["status", "--porcelain"]), "M  top.txt\n");
}

#[tokio::test]
async fn in_git_an_ignored_file_the_run_writes_is_copied_and_restored_too() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "notes.log", "content": "overwritten\n"}),
            ))
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "new.log", "content": "new\n"}),
            ))
            .turn(Turn::text("Done.")),
        |d| {
            files(d, &[(".gitignore", "*.log\n"), ("notes.log", "mine\n")]);
            git(d, &["init", "-q"]);
            git(d, &["add", ".gitignore"]);
            git(d, &["commit", "-qm", "first"]);
        },
        |c| c.verify.checkpoints = true,
    )
    .await;
    let (checkpoint, end) = checkpoints_of(&o);
    let copies = o
        .dir
        .path()
        .join(".git/reagent-checkpoints")
        .join(&checkpoint.id);
    assert!(copies.join("manifest.json").is_file());
    let restored = checkpoint.restore().unwrap();
    assert_eq!(o.file("notes.log"), "mine\n");
    assert!(!o.dir.path().join("new.log").exists());
    assert_eq!(
        (restored.restored, restored.deleted),
        (vec!["notes.log".to_owned()], vec!["new.log".to_owned()])
    );
    assert_eq!(git(o.dir.path(), &["status", "--porcelain"]), "");
    checkpoint.discard().unwrap();
    end.discard().unwrap();
    assert!(!copies.exists());
}
