//! The dashboard in a real browser: Debian's headless Chromium, driven by playwright-core from
//! npm (`tests/dashboard/dashboard.spec.mjs`), against a real server on 127.0.0.1 over a temp
//! SQLite store and a scripted Ollama that replies slowly enough to watch. The spec signs in,
//! checks that the Content-Security-Policy blocks an injected inline script and style (and that
//! the dashboard itself never trips it), starts a run from the form, watches its timeline grow
//! live and its answer stream in, answers its approval from the keyboard, sends a follow-up,
//! cancels a second run, and checks a phone viewport; screenshots
//! go to `target/test-artifacts/dashboard/`. Nothing is skipped: without node, chromium or
//! playwright-core the test fails and says to run `scripts/install-test-deps.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use reagent_sandbox::{CommandRules, RuleDecision};
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::TestServer;

/// The command the first run asks approval for (an `ask` rule matches `echo`).
const COMMAND: &str = "echo dashboard-approved";
/// The first run's answer, streamed into the page as it comes.
const ANSWER: &str = "The notes are read and the check printed dashboard-approved.";
/// The browser spec's own deadline is shorter; this one catches a hung browser.
const SPEC_LIMIT: Duration = Duration::from_secs(240);

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dashboard")
}

/// `target/test-artifacts/NAME`, emptied.
fn artifacts(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory")
        .to_path_buf();
    let dir = target.join("test-artifacts").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Chromium (`$REAGENT_CHROMIUM`, else Debian's `/usr/bin/chromium`), node and playwright-core
/// must be there: a missing one fails the test with what to do.
fn browser_tools() -> (PathBuf, PathBuf) {
    let chromium = std::env::var_os("REAGENT_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        chromium.is_file(),
        "{} not found: install Debian's chromium (scripts/install-test-deps.sh)",
        chromium.display()
    );
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("node not found ({e}): run scripts/install-test-deps.sh"));
    assert!(node.status.success(), "node --version failed");
    let version = String::from_utf8_lossy(&node.stdout).trim().to_owned();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    assert!(
        major >= 20,
        "node {version} is too old: playwright-core needs node 20 or newer"
    );
    let playwright = spec_dir().join("node_modules/playwright-core/package.json");
    assert!(
        playwright.is_file(),
        "playwright-core is not installed in {}: run scripts/install-test-deps.sh",
        spec_dir().display()
    );
    (chromium, spec_dir())
}

/// Run the browser spec `spec` (in tests/dashboard) with `envs` and Chromium; fail with its
/// output unless it passes.
async fn run_spec(spec: &str, envs: &[(&str, String)], shots: &Path) {
    let (chromium, dir) = browser_tools();
    let child = tokio::process::Command::new("node")
        .arg(dir.join(spec))
        .current_dir(&dir)
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .env("DASHBOARD_ARTIFACTS", shots)
        .env("CHROMIUM", &chromium)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let out = tokio::time::timeout(SPEC_LIMIT, child.wait_with_output())
        .await
        .expect("the browser spec finishes in time")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser spec {spec} failed ({}); screenshots in {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status,
        shots.display()
    );
}

/// Replies for: the first run (a read with thinking, a command needing approval, an empty
/// reply that earns a nudge, the answer), its follow-up (a reply cut off by its length, which
/// the truncation guardrail asks again), and a second run whose reply never comes in time (it
/// is cancelled).
fn script() -> ScriptBuilder {
    let step = Duration::from_millis(700);
    ScriptBuilder::new()
        .turn(
            Turn::tool_call("read_file", json!({"path": "notes.txt"}))
                .with_thinking("The notes should say what to check.")
                .with_usage(120, 18)
                .with_delay(step),
        )
        .turn(
            Turn::tool_call("run_command", json!({ "command": COMMAND }))
                .with_usage(260, 22)
                .with_delay(step),
        )
        .turn(Turn::text("").with_usage(300, 1).with_delay(step))
        .turn(
            // Streamed in small pieces, slowly enough to see the reply grow.
            Turn::text(ANSWER)
                .with_usage(330, 25)
                .with_delay(step)
                .with_chunk_chars(4)
                .with_chunk_delay(Duration::from_millis(60)),
        )
        .turn(
            Turn::text("Follow-up answ")
                .with_finish("length")
                .with_usage(380, 4)
                .with_delay(step),
        )
        .turn(
            Turn::text("Follow-up answered: nothing else to do.")
                .with_usage(380, 12)
                .with_delay(step),
        )
        .turn(Turn::text("too late").with_delay(Duration::from_secs(120)))
}

/// A notes file long enough that its read result is folded.
fn notes() -> String {
    (1..=40)
        .map(|n| format!("note {n}: the lighthouse lamp was checked and found in order.\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_drives_runs_in_headless_chromium() {
    let shots = artifacts("dashboard");
    let model = ScriptedOllama::start(script()).await.unwrap();
    let server = TestServer::start_with(|config| {
        config.defaults.tools.command.rules = CommandRules::new(RuleDecision::Allow).ask("echo");
        config.base_urls.push(model.base_url());
    })
    .await;
    std::fs::write(server.workspace.join("notes.txt"), notes()).unwrap();
    run_spec(
        "dashboard.spec.mjs",
        &[
            ("DASHBOARD_URL", server.base.clone()),
            ("DASHBOARD_TOKEN", server.token.clone()),
            (
                "DASHBOARD_WORKSPACE",
                server.workspace.display().to_string(),
            ),
            ("DASHBOARD_MODEL_URL", model.base_url()),
            ("DASHBOARD_COMMAND", COMMAND.to_owned()),
            ("DASHBOARD_ANSWER", ANSWER.to_owned()),
        ],
        &shots,
    )
    .await;

    // What the browser did, as the server recorded it.
    let list: Value = server.get_json("/v1/runs").await;
    let runs = list["runs"].as_array().unwrap();
    let outcomes: Vec<&str> = runs
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["cancelled", "completed", "completed"], "{list}");
    let first = runs[2]["id"].as_str().unwrap();
    let events = server.events(first, None).await;
    let decided: Vec<&Value> = events
        .iter()
        .filter(|e| e.event == "approval_decided")
        .map(|e| &e.data)
        .collect();
    assert_eq!(decided.len(), 1, "one approval, answered");
    assert_eq!(decided[0]["approved"], true);
    assert_eq!(
        runs[1]["session_id"], runs[2]["session_id"],
        "the follow-up"
    );
    for shot in [
        "run-live.png",
        "run-finished.png",
        "runs-desktop.png",
        "run-phone.png",
    ] {
        let len = std::fs::metadata(shots.join(shot))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(
            len > 10_000,
            "screenshot {shot} missing or empty ({len} bytes)"
        );
    }
}

/// The question the experiment's agent asks the operator, and the reply typed in the page.
const QUESTION: &str = "Is anyone watching these cycles?";
const REPLY: &str = "Yes, I am watching from the dashboard.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn experiments_are_followed_and_answered_in_headless_chromium() {
    let shots = artifacts("experiments");
    let step = Duration::from_millis(900);
    let model = ScriptedOllama::start(
        ScriptBuilder::new().turns([
            Turn::tool_call("write", json!({"key": "plan", "value": "watch the sea"}))
                .with_delay(step),
            Turn::text("Cycle one: I wrote a plan.").with_delay(step),
            Turn::tool_call("send_message_to_operator", json!({ "message": QUESTION }))
                .with_delay(step),
            Turn::text("Cycle two: the operator answered.").with_delay(step),
            Turn::text("Cycle three: done watching.").with_delay(step),
        ]),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let config = format!(
        "run_id = \"dash-ui\"\ncycles = 3\n[model]\nprovider = \"ollama\"\nbase_url = \"{}\"\n\
         name = \"m\"\n[operator]\nmode = \"dashboard\"\ntimeout_secs = 120\n",
        model.base_url()
    );
    run_spec(
        "experiments.spec.mjs",
        &[
            ("DASHBOARD_URL", server.base.clone()),
            ("DASHBOARD_TOKEN", server.token.clone()),
            ("EXPERIMENT_CONFIG", config),
            ("EXPERIMENT_QUESTION", QUESTION.to_owned()),
            ("EXPERIMENT_REPLY", REPLY.to_owned()),
        ],
        &shots,
    )
    .await;

    // The reply typed in the page reached the model.
    let requests = model.requests();
    assert_eq!(requests.len(), 5);
    let after_question = requests[3]["messages"].to_string();
    assert!(after_question.contains(REPLY), "{after_question}");
    let detail: Value = server.get_json("/v1/experiments/dash-ui").await;
    assert_eq!(detail["summary"]["status"], "completed");
    for shot in [
        "experiment-live.png",
        "experiment-operator.png",
        "experiment-done.png",
    ] {
        let len = std::fs::metadata(shots.join(shot))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(
            len > 10_000,
            "screenshot {shot} missing or empty ({len} bytes)"
        );
    }
}
