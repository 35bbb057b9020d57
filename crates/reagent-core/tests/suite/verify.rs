//! Verification checks when the model ends a run (each branch of the outcome), `auto`, and the
//! endings that are not `completed` although the model says it is done.

use reagent_core::verify::Check;
use reagent_core::AgentConfig;
use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::{json, Value};

use super::harness::{files, run, run_task};

fn checks(config: &mut AgentConfig, written: &[&str], retries: u32) {
    config.verify.checks = written
        .iter()
        .map(|c| c.parse::<Check>().unwrap())
        .collect();
    config.verify.retries = retries;
}

fn write(path: &str, content: &str) -> Turn {
    Turn::tool_call("write_file", json!({"path": path, "content": content}))
}

/// (round, check, passed) of each `verification_check` event.
fn rounds(events: &[Value]) -> Vec<(u64, String, bool)> {
    events
        .iter()
        .map(|e| {
            (
                e["round"].as_u64().unwrap(),
                e["check"].as_str().unwrap().to_owned(),
                e["passed"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn checks_that_pass_the_first_time_end_the_run_verified() {
    let o = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "hello\n"))
            .turn(Turn::text("Wrote a.txt."))
            .turn(Turn::text("never asked")),
        |_| {},
        |c| {
            checks(
                c,
                &[
                    "file_exists:a.txt",
                    "file_contains:a.txt:hello",
                    "command:grep -q hello a.txt",
                ],
                2,
            )
        },
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Verified, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "Wrote a.txt.");
    assert_eq!(o.requests.len(), 2);
    let events = o.events_of("verification_check");
    assert_eq!(
        rounds(&events),
        vec![
            (1, "file_exists:a.txt".to_owned(), true),
            (1, "file_contains:a.txt:hello".to_owned(), true),
            (1, "command:grep -q hello a.txt".to_owned(), true),
        ]
    );
    assert!(
        events[2]["output"]
            .as_str()
            .unwrap()
            .contains("exit code 0"),
        "{events:?}"
    );
    assert_eq!(o.result.checks.len(), 3);
    assert!(o.result.outcome.is_success());
}

#[tokio::test]
async fn a_failing_check_goes_back_to_the_model_which_fixes_it_and_the_run_is_verified() {
    let o = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "helo\n"))
            .turn(Turn::text("Wrote a.txt."))
            .turn(write("a.txt", "hello\n"))
            .turn(Turn::text("Fixed the typo."))
            .turn(Turn::text("never asked")),
        |_| {},
        |c| checks(c, &["tests:grep hello a.txt"], 2),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Verified);
    assert_eq!(o.result.answer, "Fixed the typo.");
    assert_eq!(o.file("a.txt"), "hello\n");
    assert_eq!(
        rounds(&o.events_of("verification_check")),
        vec![
            (1, "tests:grep hello a.txt".to_owned(), false),
            (2, "tests:grep hello a.txt".to_owned(), true),
        ]
    );
    // The failure went back as a user message with the command's status.
    let told = o
        .events_of("user_message")
        .into_iter()
        .find(|m| m["reason"] == "verification_failed")
        .expect("a verification_failed message");
    let text = told["content"].as_str().unwrap();
    assert!(
        text.contains("Check `tests:grep hello a.txt` failed"),
        "{text}"
    );
    assert!(text.contains("exit code 1"), "{text}");
    let sent = o.messages(2);
    assert_eq!(sent.last().unwrap()["content"].as_str(), Some(text));
}

#[tokio::test]
async fn checks_still_failing_after_the_retries_end_the_run_verification_failed() {
    let o = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "helo\n"))
            .turn(Turn::text("Done."))
            .turn(Turn::text("Still done."))
            .turn(Turn::text("never asked")),
        |_| {},
        |c| checks(c, &["file_contains:a.txt:hello", "command:false"], 1),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::VerificationFailed);
    assert_eq!(o.result.answer, "Still done.");
    // One round when the model ended the run, one after its single retry.
    assert_eq!(o.requests.len(), 3);
    let r = rounds(&o.events_of("verification_check"));
    assert_eq!(r.len(), 4);
    assert!(r.iter().all(|(_, _, passed)| !passed), "{r:?}");
    assert_eq!(r[3].0, 2);
    assert!(!o.result.outcome.is_success());
}

#[tokio::test]
async fn some_checks_passing_end_the_run_partial_pass() {
    let o = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "alpha\n"))
            .turn(Turn::text("Done.")),
        |_| {},
        |c| {
            checks(
                c,
                &["file_contains:a.txt:alpha", "file_contains:a.txt:beta"],
                0,
            )
        },
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::PartialPass);
    let passed: Vec<bool> = o.result.checks.iter().map(|c| c.passed).collect();
    assert_eq!(passed, [true, false]);
    assert!(
        o.result.checks[1].output.contains("does not contain"),
        "{:?}",
        o.result.checks
    );
}

#[tokio::test]
async fn auto_runs_the_command_the_task_says_must_pass() {
    let task = "Create ok.txt holding yes so that `sh check.sh` passes.";
    let o = run_task(
        ScriptBuilder::new()
            .turn(write("ok.txt", "yes\n"))
            .turn(Turn::text("Created ok.txt.")),
        task,
        |d| files(d, &[("check.sh", "grep -q yes ok.txt\n")]),
        |c| checks(c, &["auto"], 2),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Verified);
    assert_eq!(
        rounds(&o.events_of("verification_check")),
        vec![(1, "tests:sh check.sh".to_owned(), true)]
    );
}

#[tokio::test]
async fn auto_without_a_quoted_command_checks_nothing_and_an_edit_ends_unchecked() {
    let o = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "x\n"))
            .turn(Turn::text("Wrote a.txt.")),
        |_| {},
        |c| checks(c, &["auto"], 2),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Unchecked);
    assert!(o.events_of("verification_check").is_empty());
    let g = o.events_of("guardrail");
    assert_eq!(g.len(), 2, "{g:?}");
    assert_eq!(
        (&g[0]["guardrail"], &g[0]["action"]),
        (&json!("unchecked"), &json!("warn"))
    );
    assert!(
        g[0]["detail"]
            .as_str()
            .unwrap()
            .contains("auto checks nothing"),
        "{g:?}"
    );
    assert_eq!(g.last().unwrap()["guardrail"], "unchecked", "{g:?}");
    assert!(g.last().unwrap()["detail"]
        .as_str()
        .unwrap()
        .contains("a.txt"));
}

#[tokio::test]
async fn without_checks_an_edit_is_completed_only_when_a_later_command_checked_it() {
    let command = |c: &str| Turn::tool_call("run_command", json!({"command": c}));
    let read = || Turn::tool_call("read_file", json!({"path": "a.txt"}));
    let cases = [
        (
            "an edit, then a command that succeeds",
            vec![write("a.txt", "x\n"), command("grep -q x a.txt")],
            Outcome::Completed,
        ),
        (
            "a command, then an edit",
            vec![command("true"), write("a.txt", "x\n")],
            Outcome::Unchecked,
        ),
        (
            "an edit, then a command that fails",
            vec![write("a.txt", "x\n"), command("false")],
            Outcome::Unchecked,
        ),
        ("no edit", vec![read()], Outcome::Completed),
    ];
    for (what, calls, outcome) in cases {
        let o = run(
            ScriptBuilder::new().turns(calls).turn(Turn::text("Done.")),
            |d| files(d, &[("a.txt", "hi\n")]),
            |_| {},
        )
        .await;
        assert_eq!(o.result.outcome, outcome, "{what}");
    }
}

#[tokio::test]
async fn a_run_whose_every_call_failed_ends_no_progress() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "missing.txt"})))
            .turn(Turn::tool_call("read_file", json!({"path": "gone.txt"})))
            .turn(Turn::text("The file holds the settings you asked about.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::NoProgress);
}

#[tokio::test]
async fn an_answer_copied_from_a_tool_error_ends_copied_error() {
    // One call succeeds (so it is not no_progress); the answer repeats the failed one's error.
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("list_directory", json!({"path": "."})))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "echo 'fatal: no config found' >&2; exit 3"}),
            ))
            .turn(Turn::text("fatal: no config found")),
        |d| files(d, &[("a.txt", "hi\n")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::CopiedError);
    let g = o.events_of("guardrail");
    assert_eq!(g.last().unwrap()["guardrail"], "copied_error", "{g:?}");
    assert_eq!(o.result.answer, "fatal: no config found");
}

#[tokio::test]
async fn git_clean_passes_on_an_unchanged_work_tree_and_names_what_a_run_left() {
    let repo = |d: &std::path::Path| {
        files(d, &[("a.txt", "one\n")]);
        super::harness::git(d, &["init", "-q"]);
        super::harness::git(d, &["add", "a.txt"]);
        super::harness::git(d, &["commit", "-qm", "first"]);
    };
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
            .turn(Turn::text("It says one.")),
        repo,
        |c| checks(c, &["git_clean"], 0),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Verified, "{:?}", o.result.checks);

    let o = run(
        ScriptBuilder::new()
            .turn(write("junk.txt", "x\n"))
            .turn(Turn::text("Done.")),
        repo,
        |c| checks(c, &["git_clean"], 0),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::VerificationFailed);
    assert!(
        o.result.checks[0].output.contains("?? junk.txt"),
        "{:?}",
        o.result.checks
    );

    // Outside a repository the check fails and says why.
    let o = run(
        ScriptBuilder::new().turn(Turn::text("Nothing to do.")),
        |_| {},
        |c| checks(c, &["git_clean", "file_exists:missing.txt"], 0),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::VerificationFailed);
    assert!(
        o.result.checks[0].output.contains("not in a git work tree"),
        "{:?}",
        o.result.checks
    );
    assert!(
        o.result.checks[1].output.contains("missing.txt"),
        "{:?}",
        o.result.checks
    );
}

#[tokio::test]
async fn an_error_the_task_asks_for_is_an_answer() {
    let o = super::harness::run_task(
        ScriptBuilder::new()
            .turn(Turn::tool_call("list_directory", json!({"path": "."})))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "echo 'fatal: no config found' >&2; exit 3"}),
            ))
            .turn(Turn::text("fatal: no config found")),
        "Run the tool and tell me which error it gives.",
        |d| files(d, &[("a.txt", "hi\n")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
}

/// Replay `o`'s recording through today's loop; the report.
async fn replayed(o: &super::harness::Outcome) -> reagent_core::ReplayReport {
    let specs = reagent_tools::ToolRegistry::workspace_tools(&Default::default()).specs();
    let workspace = std::sync::Arc::new(reagent_tools::Workspace::open(o.dir.path()).unwrap());
    let config = AgentConfig::new(super::harness::MODEL);
    reagent_core::replay(&o.events, config, &specs, workspace)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_verified_run_and_an_unchecked_one_replay_without_a_difference() {
    let verified = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "helo\n"))
            .turn(Turn::text("Wrote a.txt."))
            .turn(write("a.txt", "hello\n"))
            .turn(Turn::text("Fixed the typo.")),
        |_| {},
        |c| checks(c, &["tests:grep hello a.txt", "file_exists:a.txt"], 2),
    )
    .await;
    assert_eq!(verified.result.outcome, Outcome::Verified);
    // The recorded results stand in for the checks: the workspace now passes them all, yet
    // the replay fails the first round as the recording did.
    let report = replayed(&verified).await;
    assert_eq!(report.divergence, None, "{report:?}");
    assert!(report.decisions >= 5, "{report:?}");

    let unchecked = run(
        ScriptBuilder::new()
            .turn(write("a.txt", "x\n"))
            .turn(Turn::text("Wrote a.txt.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(unchecked.result.outcome, Outcome::Unchecked);
    let report = replayed(&unchecked).await;
    assert_eq!(report.divergence, None, "{report:?}");
}
