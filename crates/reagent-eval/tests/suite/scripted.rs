//! A three-task suite, run in the native mode and the seed-style loop against a scripted Ollama
//! speaking the real wire format: fresh workspaces, checks, the seed loop's text layers, the
//! summary, the report, the saved result, and each run's events handed on under its run id.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_core::{AgentConfig, ToolMode};
use reagent_eval::{render_summary, EvalResult, Harness, HarnessConfig, Mode, Suite};
use reagent_protocol::{CancellationToken, Event, EventKind};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::{ClientOptions, RetryPolicy};
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const SUITE: &str = r#"
name = "mini"

[[task]]
id = "read-flower"
category = "read_answer"
prompt = "Read notes.txt and tell me which flower it names."
files = { "notes.txt" = "The flower is an orchid.\n" }
checks = [{ answer_contains = "orchid" }]

[[task]]
id = "create-hello"
category = "create_file"
prompt = "Create out/hello.txt containing hello."
files = { "out/" = "" }
checks = [{ file_contains = { path = "out/hello.txt", text = "hello" } }, { command = "test -s out/hello.txt" }]

[[task]]
id = "pointer"
category = "follow_pointer"
prompt = "Follow start.txt to the code word."
files = { "start.txt" = "see drawer.txt\n", "drawer.txt" = "heron\n" }
checks = [{ answer_contains = "heron" }]
"#;

/// The scripted server's provider: no retries, a short timeout.
fn provider(server: &ScriptedOllama) -> OllamaProvider {
    OllamaProvider::new(
        &server.base_url(),
        ClientOptions {
            timeout: Duration::from_secs(10),
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        },
    )
    .unwrap()
}

/// `text` saved as a suite file in `dir`, loaded.
fn suite(dir: &std::path::Path, text: &str) -> Suite {
    let path = dir.join("mini.toml");
    std::fs::write(&path, text).unwrap();
    Suite::load(&path).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mini_suite_runs_in_two_modes_and_is_reported() {
    let script = ScriptBuilder::new().turns([
        // native: read-flower passes
        Turn::tool_call("read_file", json!({"path": "notes.txt"})),
        Turn::text("It names an orchid."),
        // native: create-hello passes
        Turn::tool_call("write_file", json!({"path": "out/hello.txt", "content": "hello\n"})),
        Turn::text("Done."),
        // native: pointer fails (wrong answer)
        Turn::text("The code word is sparrow."),
        // seed: the call written in <tool_call> tags
        Turn::text(
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>",
        ),
        Turn::text("An orchid."),
        // seed: the call as a bare JSON object in the text
        Turn::text(
            "{\"name\": \"write_file\", \"arguments\": {\"path\": \"out/hello.txt\", \"content\": \"hello\"}}",
        ),
        Turn::text("Created."),
        // seed: pointer fails (no call, wrong answer)
        Turn::text("I will not look. The code word is unknown."),
    ]);
    let server = ScriptedOllama::start(script).await.unwrap();
    let provider = provider(&server);
    let dir = tempfile::tempdir().unwrap();
    let suite = suite(dir.path(), SUITE);
    let mut config = HarnessConfig::new(AgentConfig::new("smollm2:135m"));
    config.modes = vec![Mode::Tool(ToolMode::Native), Mode::Seed];
    let handed_on: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = handed_on.clone();
    config.event_handler = Some(Arc::new(move |e| sink.lock().unwrap().push(e)));
    let seen = Mutex::new(Vec::new());
    let on_run = |so_far: &EvalResult| {
        let last = so_far.runs.last().unwrap();
        assert_eq!(
            so_far.summary.iter().map(|m| m.overall.runs).sum::<u32>() as usize,
            so_far.runs.len()
        );
        seen.lock().unwrap().push(last.task.clone());
    };
    let result = Harness::new(Arc::new(provider), config)
        .run(&suite, &on_run, &CancellationToken::new())
        .await;

    assert_eq!(
        server.server().remaining_turns(),
        0,
        "every scripted turn was used"
    );
    assert!(
        server.invariant_violations().is_empty(),
        "{:?}",
        server.invariant_violations()
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "read-flower",
            "create-hello",
            "pointer",
            "read-flower",
            "create-hello",
            "pointer"
        ]
    );
    let verdicts: Vec<(&str, &str, bool)> = result
        .runs
        .iter()
        .map(|r| (r.mode.as_str(), r.task.as_str(), r.passed))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("native", "read-flower", true),
            ("native", "create-hello", true),
            ("native", "pointer", false),
            ("seed", "read-flower", true),
            ("seed", "create-hello", true),
            ("seed", "pointer", false),
        ]
    );
    let first = &result.runs[0];
    assert_eq!((first.iterations, first.tool_calls), (2, 1));
    assert_eq!(first.outcome, "completed");
    assert_eq!(first.tool_mode, "native");
    assert_eq!(first.seed, 1);
    assert!(first.prompt_tokens > 0 && first.completion_tokens > 0);
    assert_eq!(first.parse_layers, ["native"]);
    assert_eq!(first.calls.len(), 1);
    assert!(
        first.calls[0]
            .starts_with(r#"read_file {"path":"notes.txt"} -> ok: The flower is an orchid."#),
        "{:?}",
        first.calls
    );
    assert!(result.runs[2].calls.is_empty());
    let failed = &result.runs[2];
    assert_eq!(failed.checks.len(), 1);
    assert!(!failed.checks[0].passed);
    assert!(
        failed.checks[0].detail.contains("sparrow"),
        "{:?}",
        failed.checks
    );
    // The seed loop's text layers turned the calls into native ones.
    assert_eq!(result.runs[3].parse_layers, ["native"]);
    assert_eq!(result.runs[4].parse_layers, ["native"]);
    assert_eq!(result.runs[4].tool_calls, 1);

    // Every run had its own fresh workspace: the file the tool read came from the suite, and
    // the second create-hello run found no file left by the first.
    let chats: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r.get("messages").is_some())
        .collect();
    assert_eq!(chats.len(), 10);
    let tool_results = |n: usize| chats[n]["messages"].to_string();
    assert!(tool_results(1).contains("The flower is an orchid."));
    assert!(tool_results(6).contains("The flower is an orchid."));
    // Both modes send the tools natively, and the seed loop has no profile hint.
    for chat in &chats {
        assert!(chat["tools"].as_array().is_some_and(|t| !t.is_empty()));
    }
    assert_eq!(chats[0]["seed"], Value::Null);
    assert_eq!(chats[0]["options"]["seed"], 1);
    let system = |n: usize| {
        chats[n]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        system(0).contains("Be brief."),
        "the smollm profile's hint: {}",
        system(0)
    );
    assert!(
        !system(5).contains("Be brief."),
        "no profile hint in the seed loop: {}",
        system(5)
    );
    assert_eq!(
        chats[5]["options"]["temperature"], 0.0,
        "the profile's sampling stays"
    );

    // Summary per mode, category and task.
    assert_eq!(result.modes, ["native", "seed"]);
    assert_eq!(result.tasks, 3);
    assert_eq!(result.summary.len(), 2);
    for mode in &result.summary {
        assert_eq!(
            (mode.overall.runs, mode.overall.passed),
            (3, 2),
            "{}",
            mode.mode
        );
        let cats: Vec<(&str, u32)> = mode
            .categories
            .iter()
            .map(|c| (c.name.as_str(), c.stats.passed))
            .collect();
        assert_eq!(
            cats,
            [
                ("read_answer", 1),
                ("create_file", 1),
                ("follow_pointer", 0)
            ]
        );
    }
    let table = render_summary(&result);
    let overall = table.lines().find(|l| l.starts_with("overall")).unwrap();
    assert_eq!(overall.matches("2/3  67%").count(), 2, "{table}");

    // Every run's events went to the extra handler too, under the run id the result names:
    // numbered from 1, from run_started to run_finished.
    let events = handed_on.lock().unwrap();
    let mut ids: Vec<&str> = Vec::new();
    for e in events.iter() {
        if ids.last() != Some(&e.run_id.as_str()) {
            ids.push(&e.run_id);
        }
    }
    let named: Vec<&str> = result
        .runs
        .iter()
        .map(|r| r.run_id.as_deref().expect("every run has an id"))
        .collect();
    assert_eq!(ids, named, "one run id per run, in order");
    for run in &result.runs {
        let id = run.run_id.as_deref().unwrap();
        let of_run: Vec<&Event> = events
            .iter()
            .filter(|e| e.run_id == id && !e.kind.is_delta())
            .collect();
        let seqs: Vec<u64> = of_run.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=of_run.len() as u64).collect::<Vec<_>>());
        assert!(
            matches!(&of_run[0].kind, EventKind::RunStarted { task, .. } if task == &suite.tasks.iter().find(|t| t.id == run.task).unwrap().prompt)
        );
        match &of_run.last().unwrap().kind {
            EventKind::RunFinished { iterations, .. } => assert_eq!(*iterations, run.iterations),
            other => panic!("the last event of {id} is {other:?}"),
        }
    }
    drop(events);

    let saved = dir.path().join("r.json");
    result.save(&saved).unwrap();
    assert_eq!(EvalResult::load(&saved).unwrap(), result);
}

/// `attempts`: a run whose verification fails is undone and tried again with the next seed; the
/// suite's checks judge the best attempt's files, and the costs add up both attempts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_verification_is_attempted_again_and_the_costs_add_up() {
    const ONE: &str = r#"
name = "one"

[[task]]
id = "create-hello"
category = "create_file"
prompt = "Create out/hello.txt containing hello."
files = { "out/" = "" }
checks = [{ file_contains = { path = "out/hello.txt", text = "hello" } }, { command = "test ! -e out/bye.txt" }]
"#;
    let script = ScriptBuilder::new().turns([
        // Attempt 1: the wrong file and text; the check fails and no retry is left.
        Turn::tool_call(
            "write_file",
            json!({"path": "out/bye.txt", "content": "bye\n"}),
        ),
        Turn::text("Done."),
        // Attempt 2, in the restored workspace: right.
        Turn::tool_call(
            "write_file",
            json!({"path": "out/hello.txt", "content": "hello\n"}),
        ),
        Turn::text("Done."),
    ]);
    let server = ScriptedOllama::start(script).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new("mini-model");
    agent.tool_mode = ToolMode::Native;
    agent.verify.checks = vec!["file_contains:out/hello.txt:hello".parse().unwrap()];
    agent.verify.retries = 0;
    let mut config = HarnessConfig::new(agent);
    config.attempts = 3;
    let handed_on: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = handed_on.clone();
    config.event_handler = Some(Arc::new(move |e| sink.lock().unwrap().push(e)));
    let result = Harness::new(Arc::new(provider(&server)), config)
        .run(&suite(dir.path(), ONE), &|_| {}, &CancellationToken::new())
        .await;

    assert_eq!(server.server().remaining_turns(), 0);
    let run = &result.runs[0];
    // bye.txt is gone with the first attempt: the workspace was restored in between.
    assert!(run.passed, "{run:?}");
    assert_eq!(run.outcome, "verified");
    assert_eq!(run.attempts, 2);
    assert_eq!((run.iterations, run.tool_calls), (4, 2));
    let seeds: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["options"]["seed"].clone())
        .collect();
    assert_eq!(seeds, [json!(1), json!(1), json!(2), json!(2)]);
    // Two runs of their own; the one kept is the second.
    let runs: std::collections::BTreeSet<String> = handed_on
        .lock()
        .unwrap()
        .iter()
        .map(|e| e.run_id.clone())
        .collect();
    assert_eq!(runs.len(), 2);
    assert!(runs.contains(run.run_id.as_deref().unwrap()));
    let overall = &result.summary[0].overall;
    assert_eq!(overall.model_calls_per_pass, Some(4.0));
    assert_eq!(overall.mean_attempts, 2.0);
    let report = render_summary(&result);
    assert!(report.contains("2.00att"), "{report}");
}
