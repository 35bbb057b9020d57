//! `reagent run --verify / --verify-retries / --attempts / --no-checkpoint`, the `[verify]`
//! config section, the exit codes of the verification outcomes and honest endings, and
//! `reagent runs undo` — against a scripted Ollama on 127.0.0.1 and real workspaces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

/// `reagent ARGS` in `root`, with `HOME` there (checkpoint copies then go to
/// `root/.local/share/reagent/checkpoints`).
fn reagent(root: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .current_dir(root)
        .env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", root)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A test's folder: `ws/` (the workspace) and the store `runs.db`.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new(files: &[(&str, &str)]) -> Self {
        let d = Dir(tempfile::tempdir().unwrap());
        std::fs::create_dir(d.ws()).unwrap();
        for (path, content) in files {
            d.write(path, content);
        }
        d
    }

    fn root(&self) -> PathBuf {
        self.0.path().to_path_buf()
    }

    fn ws(&self) -> PathBuf {
        self.0.path().join("ws")
    }

    fn write(&self, path: &str, content: &str) {
        let p = self.ws().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.ws().join(path)).ok()
    }

    fn store(&self) -> String {
        self.0.path().join("runs.db").display().to_string()
    }

    /// `reagent run --json` of `task` against `script` with `extra` flags, recorded in the
    /// folder's store.
    async fn run(&self, script: ScriptBuilder, task: &str, extra: &[&str]) -> Output {
        let mut flags = vec!["--json"];
        flags.extend_from_slice(extra);
        self.run_text(script, task, &flags).await
    }

    /// [`Dir::run`] without `--json`.
    async fn run_text(&self, script: ScriptBuilder, task: &str, extra: &[&str]) -> Output {
        let server = ScriptedOllama::start(script).await.unwrap();
        let mut args: Vec<String> = [
            "run",
            "--model",
            "qwen3:8b",
            "--host",
            &server.base_url(),
            "--workspace",
            &self.ws().display().to_string(),
            "--store",
            &self.store(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(task.into());
        let root = self.root();
        tokio::task::spawn_blocking(move || reagent(&root, &args))
            .await
            .unwrap()
    }

    /// `reagent runs ARGS --store runs.db`.
    fn runs(&self, args: &[&str]) -> Output {
        let mut all: Vec<String> = vec!["runs".into()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.extend(["--store".to_owned(), self.store()]);
        reagent(&self.root(), &all)
    }
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn write(path: &str, content: &str) -> Turn {
    Turn::tool_call("write_file", json!({"path": path, "content": content}))
}

#[tokio::test]
async fn each_verification_outcome_and_honest_ending_has_its_exit_code() {
    let written = |content: &str, answers: &[&str]| {
        let mut script = ScriptBuilder::new().turn(write("a.txt", content));
        for a in answers {
            script = script.turn(Turn::text(*a));
        }
        script
    };
    // (what, script, flags, exit code, outcome, the checks in the JSON result)
    let cases = [
        (
            "all checks pass",
            written("alpha beta\n", &["Done."]),
            &[
                "--verify",
                "file_contains:a.txt:alpha",
                "--verify",
                "command:grep -q beta a.txt",
            ][..],
            0,
            "verified",
            json!([
                {"check": "file_contains:a.txt:alpha", "passed": true},
                {"check": "command:grep -q beta a.txt", "passed": true}
            ]),
        ),
        (
            "one of two passes, no retry",
            written("alpha\n", &["Done."]),
            &[
                "--verify",
                "file_contains:a.txt:alpha",
                "--verify",
                "file_contains:a.txt:beta",
                "--verify-retries",
                "0",
            ][..],
            11,
            "partial_pass",
            json!([
                {"check": "file_contains:a.txt:alpha", "passed": true},
                {"check": "file_contains:a.txt:beta", "passed": false}
            ]),
        ),
        (
            "none passes after one retry the model did not use",
            written("x\n", &["Done.", "Really done."]),
            &[
                "--verify",
                "tests:grep -q alpha a.txt",
                "--verify-retries",
                "1",
            ][..],
            10,
            "verification_failed",
            json!([{"check": "tests:grep -q alpha a.txt", "passed": false}]),
        ),
        (
            "an edit, no check, no command after it",
            written("x\n", &["Done."]),
            &[][..],
            12,
            "unchecked",
            json!([]),
        ),
        (
            "the answer repeats a tool's error",
            ScriptBuilder::new()
                .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
                .turn(Turn::tool_call(
                    "run_command",
                    json!({"command": "echo 'fatal: not a project folder' >&2; exit 2"}),
                ))
                .turn(Turn::text("fatal: not a project folder")),
            &[][..],
            13,
            "copied_error",
            json!([]),
        ),
    ];
    for (what, script, flags, code, outcome, checks) in cases {
        let out = Dir::new(&[("a.txt", "hi\n")])
            .run(script, "do it", flags)
            .await;
        assert_eq!(out.status.code(), Some(code), "{what}: {}", stderr(&out));
        let r = json_of(&out);
        assert_eq!(r["outcome"], outcome, "{what}");
        assert_eq!(r["checks"], checks, "{what}");
    }
}

#[tokio::test]
async fn verify_auto_and_the_config_file_s_verify_section() {
    // auto: the command the task says must pass.
    let d = Dir::new(&[("check.sh", "grep -q yes ok.txt\n")]);
    let out = d
        .run(
            ScriptBuilder::new()
                .turn(write("ok.txt", "yes\n"))
                .turn(Turn::text("Done.")),
            "Create ok.txt so that `sh check.sh` passes.",
            &["--verify", "auto"],
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json_of(&out)["checks"],
        json!([{"check": "tests:sh check.sh", "passed": true}])
    );

    // [verify] in reagent.toml: its checks and retries, replaced by --verify.
    let d = Dir::new(&[]);
    std::fs::write(
        d.root().join("reagent.toml"),
        "[verify]\nchecks = [\"file_exists:a.txt\", \"file_exists:b.txt\"]\nretries = 0\n",
    )
    .unwrap();
    let script = || {
        ScriptBuilder::new()
            .turn(write("a.txt", "x\n"))
            .turn(Turn::text("Done."))
    };
    let out = d.run(script(), "write a.txt", &[]).await;
    assert_eq!(out.status.code(), Some(11), "{}", stderr(&out));
    let out = d
        .run(script(), "write a.txt", &["--verify", "file_exists:a.txt"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A check's command stops at `timeout_secs`.
    std::fs::write(
        d.root().join("reagent.toml"),
        "[verify]\nchecks = [\"command:sleep 5\"]\nretries = 0\ntimeout_secs = 0.3\n",
    )
    .unwrap();
    let out = d.run(script(), "write a.txt", &[]).await;
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let events = d.runs(&["events", json_of(&out)["run_id"].as_str().unwrap()]);
    let check: Value = String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "verification_check")
        .unwrap();
    assert!(
        check["output"]
            .as_str()
            .unwrap()
            .contains("timed out after 300 ms"),
        "{check}"
    );
}

#[tokio::test]
async fn bad_verify_flags_are_usage_errors() {
    let d = Dir::new(&[]);
    for (flags, said) in [
        (&["--verify", "lint:x"][..], "unknown check `lint:x`"),
        (
            &["--verify", "file_contains:a.txt"][..],
            "file_contains:PATH:TEXT",
        ),
        (&["--attempts", "2"][..], "needs checks"),
        (
            &[
                "--attempts",
                "2",
                "--verify",
                "git_clean",
                "--no-checkpoint",
            ][..],
            "needs checkpoints",
        ),
        (&["--attempts", "0"][..], "at least 1"),
    ] {
        let out = d.run(ScriptBuilder::new(), "task", flags).await;
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{flags:?}: {}", stderr(&out));
    }
    std::fs::write(
        d.root().join("reagent.toml"),
        "[verify]\nchecks = [\"nope\"]\n",
    )
    .unwrap();
    let out = d.run(ScriptBuilder::new(), "task", &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown check `nope`"),
        "{}",
        stderr(&out)
    );
}

/// The run's changes for `runs undo`: edit a.txt, create new/b.txt, a command creating c.txt.
fn changes() -> ScriptBuilder {
    ScriptBuilder::new()
        .turn(Turn::tool_call(
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "ONE"}),
        ))
        .turn(write("new/b.txt", "made\n"))
        .turn(Turn::tool_call(
            "run_command",
            json!({"command": "echo made > c.txt"}),
        ))
        .turn(Turn::text("Done."))
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git runs (install git for these tests)");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Run [`changes`], check them, `runs undo --dry-run` (nothing changes), `runs undo`.
async fn changed_and_undone(d: &Dir) {
    let out = d.run(changes(), "change things", &[]).await;
    let r = json_of(&out);
    let id = r["run_id"].as_str().unwrap().to_owned();
    assert_eq!(d.read("a.txt").as_deref(), Some("ONE\n"));
    assert_eq!(d.read("c.txt").as_deref(), Some("made\n"));

    let preview = d.runs(&["undo", &id[..8], "--dry-run"]);
    assert_eq!(preview.status.code(), Some(0), "{}", stderr(&preview));
    assert_eq!(
        d.read("a.txt").as_deref(),
        Some("ONE\n"),
        "a dry run changes nothing"
    );
    let undone = d.runs(&["undo", &id]);
    assert_eq!(undone.status.code(), Some(0), "{}", stderr(&undone));
    assert_eq!(undone.stdout, preview.stdout);
    assert_eq!(
        String::from_utf8_lossy(&undone.stdout),
        "restored a.txt\ndeleted c.txt\ndeleted new/b.txt\n"
    );
    assert!(
        stderr(&undone).contains("restored 1 file(s) and deleted 2"),
        "{}",
        stderr(&undone)
    );
    assert_eq!(d.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(d.read("keep.txt").as_deref(), Some("kept\n"));
    assert!(d.read("new/b.txt").is_none() && d.read("c.txt").is_none());
}

#[tokio::test]
async fn runs_undo_restores_a_plain_folder_from_copies_outside_it() {
    let d = Dir::new(&[("a.txt", "one\n"), ("keep.txt", "kept\n")]);
    changed_and_undone(&d).await;
    // The copies live beside the default store, not in the workspace.
    assert!(!d.ws().join(".reagent").exists());
    assert!(d.root().join(".local/share/reagent/checkpoints").is_dir());
}

#[tokio::test]
async fn runs_undo_restores_a_git_work_tree_from_a_private_ref() {
    let d = Dir::new(&[("a.txt", "one\n"), ("keep.txt", "kept\n")]);
    let ws = d.ws();
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "a.txt"]);
    git(&ws, &["commit", "-qm", "first"]);
    let head = git(&ws, &["rev-parse", "HEAD"]);
    changed_and_undone(&d).await;
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&ws, &["status", "--porcelain"]), "?? keep.txt\n");
    let refs = git(
        &ws,
        &["for-each-ref", "--format=%(refname)", "refs/reagent/"],
    );
    assert_eq!(
        refs.lines().count(),
        2,
        "before the first change and as the run left it: {refs}"
    );
}

#[tokio::test]
async fn runs_undo_refuses_a_run_without_a_checkpoint() {
    let d = Dir::new(&[("a.txt", "one\n")]);
    let out = d
        .run(
            ScriptBuilder::new()
                .turn(write("a.txt", "two\n"))
                .turn(Turn::text("Done.")),
            "change a.txt",
            &["--no-checkpoint"],
        )
        .await;
    let id = json_of(&out)["run_id"].as_str().unwrap().to_owned();
    let undone = d.runs(&["undo", &id]);
    assert_eq!(undone.status.code(), Some(1));
    assert!(
        stderr(&undone).contains("recorded no checkpoint"),
        "{}",
        stderr(&undone)
    );
    assert_eq!(d.read("a.txt").as_deref(), Some("two\n"));
}

#[tokio::test]
async fn attempts_are_runs_of_their_own_and_the_best_one_s_files_are_kept() {
    let d = Dir::new(&[("a.txt", "start\n")]);
    let out = d
        .run(
            ScriptBuilder::new()
                .turn(write("a.txt", "alpha\n"))
                .turn(Turn::text("One."))
                .turn(write("a.txt", "zero\n"))
                .turn(write("junk.txt", "junk\n"))
                .turn(Turn::text("Two."))
                .turn(write("a.txt", "none\n"))
                .turn(Turn::text("Three.")),
            "write a.txt",
            &[
                "--verify",
                "file_contains:a.txt:alpha",
                "--verify",
                "file_contains:a.txt:beta",
                "--verify-retries",
                "0",
                "--attempts",
                "3",
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(11), "{}", stderr(&out));
    let r = json_of(&out);
    assert_eq!(r["outcome"], "partial_pass");
    assert_eq!(r["answer"], "One.");
    let ids: Vec<String> = r["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(r["run_id"], ids[0]);
    assert_eq!(d.read("a.txt").as_deref(), Some("alpha\n"));
    assert!(d.read("junk.txt").is_none());

    // Each attempt is a run in the store; the later ones name the first as their parent.
    let listed = d.runs(&["list", "--json"]);
    let runs: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(runs.len(), 3);
    let events = d.runs(&["events", &ids[2]]);
    let attempt: Value = String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "attempt")
        .unwrap();
    assert_eq!(attempt["number"], 3);
    assert_eq!(attempt["of"], 3);
    assert_eq!(attempt["parent_run_id"], ids[0].as_str());
    // `runs show` tells the attempt, the checkpoints and each check.
    let shown = String::from_utf8_lossy(&d.runs(&["show", &ids[2]]).stdout).into_owned();
    assert!(
        shown.contains(&format!("attempt 3 of 3 (first attempt: run {})", ids[0])),
        "{shown}"
    );
    assert!(
        shown.contains("checkpoint (files, before the first change)"),
        "{shown}"
    );
    assert!(
        shown.contains("checkpoint (files, as the run left it)"),
        "{shown}"
    );
    assert!(
        shown.contains("check file_contains:a.txt:alpha (round 1): failed"),
        "{shown}"
    );
    assert!(
        shown.contains("a.txt does not contain \"alpha\""),
        "{shown}"
    );
    assert!(shown.contains("outcome: verification_failed"), "{shown}");
}

#[tokio::test]
async fn without_json_the_failed_checks_and_the_ending_are_said_on_stderr() {
    let d = Dir::new(&[]);
    let out = d
        .run_text(
            ScriptBuilder::new()
                .turn(write("a.txt", "x\n"))
                .turn(Turn::text("Done.")),
            "write a.txt",
            &[
                "--quiet",
                "--verify",
                "tests:grep -q alpha a.txt",
                "--verify-retries",
                "0",
            ],
        )
        .await;
    assert_eq!(out.status.code(), Some(10));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Done.\n");
    let err = stderr(&out);
    assert!(
        err.contains("reagent: check failed: tests:grep -q alpha a.txt (exit code 1)"),
        "{err}"
    );
    assert!(
        err.contains("reagent: run ended: verification_failed"),
        "{err}"
    );
    let id = err
        .lines()
        .find_map(|l| l.strip_prefix("reagent: to undo its changes: reagent runs undo "))
        .expect("the undo command is said");
    let undone = d.runs(&["undo", id]);
    assert_eq!(undone.status.code(), Some(0), "{}", stderr(&undone));
    assert!(d.read("a.txt").is_none());
}

#[tokio::test]
async fn runs_undo_refuses_to_clobber_a_file_changed_after_the_run_unless_forced() {
    let d = Dir::new(&[("a.txt", "one\n"), ("keep.txt", "kept\n")]);
    let out = d.run(changes(), "change things", &[]).await;
    let id = json_of(&out)["run_id"].as_str().unwrap().to_owned();
    // The person edits a file the run created, after the run.
    d.write("c.txt", "my own notes\n");
    let refused = d.runs(&["undo", &id]);
    assert_eq!(refused.status.code(), Some(1));
    let err = stderr(&refused);
    assert!(
        err.contains("changed after run") && err.contains("c.txt"),
        "{err}"
    );
    assert!(
        !err.contains("a.txt"),
        "a.txt did not change after the run: {err}"
    );
    assert_eq!(
        d.read("c.txt").as_deref(),
        Some("my own notes\n"),
        "nothing restored"
    );
    assert_eq!(d.read("a.txt").as_deref(), Some("ONE\n"));
    let forced = d.runs(&["undo", &id, "--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(d.read("a.txt").as_deref(), Some("one\n"));
    assert!(d.read("c.txt").is_none());
}

#[tokio::test]
async fn runs_delete_drops_the_run_s_checkpoints() {
    let d = Dir::new(&[("a.txt", "one\n")]);
    git(&d.ws(), &["init", "-q"]);
    let out = d
        .run(
            ScriptBuilder::new()
                .turn(write("a.txt", "two\n"))
                .turn(Turn::text("Done.")),
            "change a.txt",
            &[],
        )
        .await;
    let id = json_of(&out)["run_id"].as_str().unwrap().to_owned();
    let refs = || {
        git(
            &d.ws(),
            &["for-each-ref", "--format=%(refname)", "refs/reagent/"],
        )
    };
    assert_eq!(
        refs(),
        format!("refs/reagent/checkpoints/{id}\nrefs/reagent/checkpoints/{id}-end\n")
    );
    let deleted = d.runs(&["delete", &id]);
    assert_eq!(deleted.status.code(), Some(0), "{}", stderr(&deleted));
    assert_eq!(refs(), "");
    assert_eq!(
        d.read("a.txt").as_deref(),
        Some("two\n"),
        "deleting never restores"
    );
}
