//! `reagent eval SUITE`, `reagent eval compare A B` and `reagent eval list` through the binary,
//! against a scripted Ollama on 127.0.0.1: JSON output, the result saved by default, the table,
//! the result and each task run recorded in the store, results compared by stored id, a store
//! that cannot be opened, a suite stopped by a signal, and usage errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const SUITE: &str = r#"
[[task]]
id = "read-flower"
category = "read_answer"
prompt = "Read notes.txt and tell me which flower it names."
files = { "notes.txt" = "The flower is an orchid.\n" }
checks = [{ answer_contains = "orchid" }]
"#;

fn reagent(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .current_dir(cwd)
        .env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env_remove("XDG_DATA_HOME")
        .env("HOME", cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Run the binary on a blocking thread while the scripted server keeps serving.
async fn run_cli(args: Vec<String>, cwd: PathBuf) -> Output {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        reagent(&refs, &cwd)
    })
    .await
    .unwrap()
}

/// `reagent eval suite.toml` against the scripted server, with `flags`.
async fn eval_suite(server: &ScriptedOllama, cwd: &Path, flags: &[&str]) -> Output {
    let url = server.base_url();
    let fixed = ["eval", "suite.toml", "--host", &url, "--model", "qwen3:8b"];
    let args = fixed.iter().chain(flags).map(|a| a.to_string()).collect();
    run_cli(args, cwd.to_owned()).await
}

fn text(out: &Output) -> String {
    format!(
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_runs_modes_side_by_side_saves_the_result_and_compares() {
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::tool_call("read_file", json!({"path": "notes.txt"})),
        Turn::text("It is an orchid."),
        Turn::text("I cannot tell."),
        // The run whose store cannot be opened.
        Turn::text("An orchid."),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), SUITE).unwrap();
    let out = eval_suite(
        &server,
        dir.path(),
        &["--tool-mode", "native,seed", "--json", "--store", "runs.db"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out_of_eval = out;
    let result: Value = serde_json::from_slice(&out_of_eval.stdout).expect("one JSON document");
    assert_eq!(result["modes"], json!(["native", "seed"]));
    assert_eq!(result["runs"][0]["passed"], true, "{result:#}");
    assert_eq!(result["runs"][1]["passed"], false, "{result:#}");
    assert_eq!(result["summary"][0]["overall"]["pass_rate"], 1.0);
    assert_eq!(result["summary"][1]["categories"][0]["name"], "read_answer");

    // Saved by default under .reagent/evals/, the same document.
    let saved: Vec<PathBuf> = std::fs::read_dir(dir.path().join(".reagent/evals"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved[0]).unwrap()).unwrap();
    assert_eq!(on_disk, result);

    let copy = dir.path().join("b.json");
    let mut better = on_disk.clone();
    better["runs"][1]["passed"] = json!(true);
    std::fs::write(&copy, better.to_string()).unwrap();
    let a = saved[0].display().to_string();
    let out = reagent(&["eval", "compare", &a, "b.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    let row = |mode: &str| {
        table
            .lines()
            .find(|l| l.starts_with(mode) && l.contains("overall"))
            .unwrap_or_else(|| panic!("no {mode} overall row: {table}"))
            .to_owned()
    };
    assert!(row("native").contains("+0 pt"), "{table}");
    assert!(
        row("seed").contains("0/1 0%") && row("seed").contains("+100 pt"),
        "{table}"
    );

    // The result is in the store too, under the id printed beside the file's path.
    let stderr = String::from_utf8_lossy(&out_of_eval.stderr).into_owned();
    let saved_line = stderr
        .lines()
        .find(|l| l.starts_with("reagent: result ") && l.ends_with(" saved in runs.db"))
        .unwrap_or_else(|| panic!("no stored id on stderr: {stderr}"));
    let id = saved_line
        .trim_start_matches("reagent: result ")
        .trim_end_matches(" saved in runs.db")
        .to_owned();
    let pos = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("{needle}: {stderr}"))
    };
    assert!(
        pos("reagent: result saved to ") < pos(saved_line),
        "{stderr}"
    );
    let out = reagent(
        &["eval", "list", "--store", "runs.db", "--json"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed:#}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(
        [
            &listed[0]["suite"],
            &listed[0]["model"],
            &listed[0]["provider"]
        ],
        [&result["suite"], &json!("qwen3:8b"), &json!("ollama")]
    );
    assert_eq!(
        (&listed[0]["passed"], &listed[0]["total"]),
        (&json!(1), &json!(2))
    );
    let out = reagent(&["eval", "list", "--store", "runs.db"], dir.path());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("ID "), "{table}");
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with(&id[..11]) && l.ends_with("1/2")),
        "{table}"
    );

    // Each task run was recorded as a run, under the run id the document names; the failing
    // one's transcript opens with `reagent runs show`.
    let run_ids: Vec<&str> = result["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().expect("each run names its run_id"))
        .collect();
    let out = reagent(
        &["runs", "list", "--store", "runs.db", "--json"],
        dir.path(),
    );
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut stored: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    stored.sort_unstable();
    let mut named = run_ids.clone();
    named.sort_unstable();
    assert_eq!(stored, named, "{runs:#}");
    let out = reagent(
        &["runs", "show", run_ids[1], "--store", "runs.db"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert!(
        transcript.contains("which flower it names") && transcript.contains("I cannot tell."),
        "{transcript}"
    );

    // A stored result compares as its file does: by id prefix against a file.
    let by_file = reagent(&["eval", "compare", &a, "b.json", "--json"], dir.path());
    let by_id = reagent(
        &[
            "eval",
            "compare",
            &id[..8],
            "b.json",
            "--json",
            "--store",
            "runs.db",
        ],
        dir.path(),
    );
    assert_eq!(by_id.status.code(), Some(0), "{}", text(&by_id));
    assert_eq!(
        serde_json::from_slice::<Value>(&by_id.stdout).unwrap(),
        serde_json::from_slice::<Value>(&by_file.stdout).unwrap()
    );
    let unknown = reagent(
        &[
            "eval", "compare", "ffffffff", "b.json", "--store", "runs.db",
        ],
        dir.path(),
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains(
            "'ffffffff' is no result file, and no eval result with id 'ffffffff' in the store runs.db"
        ),
        "{}",
        text(&unknown)
    );

    // A store that cannot be opened is a warning: the result file is still written and the
    // exit code is the suite's.
    std::fs::write(dir.path().join("garbage.db"), [0x5a_u8; 4096]).unwrap();
    let out = eval_suite(
        &server,
        dir.path(),
        &[
            "--tool-mode",
            "native",
            "--out",
            "kept.json",
            "--store",
            "garbage.db",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("reagent: warning: result not saved in the store garbage.db: cannot open the store garbage.db")
            && stderr.contains("(it is in kept.json)"),
        "{stderr}"
    );
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("kept.json")).unwrap())
            .unwrap();
    assert_eq!(kept["runs"][0]["passed"], true, "{kept:#}");
    assert_eq!(server.server().remaining_turns(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_stopped_by_a_signal_keeps_its_finished_runs_in_the_file_and_the_store() {
    // The first run answers at once; the second waits on a model that takes a minute.
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::text("It is an orchid."),
        Turn::text("Too late.").with_delay(std::time::Duration::from_secs(60)),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let suite = [SUITE, &SUITE.replace("read-flower", "read-flower-again")].concat();
    std::fs::write(dir.path().join("suite.toml"), suite).unwrap();
    let url = server.base_url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(["eval", "suite.toml", "--host", &url, "--model", "qwen3:8b"])
        .args([
            "--tool-mode",
            "native",
            "--out",
            "r.json",
            "--store",
            "runs.db",
        ])
        .current_dir(dir.path())
        .env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let stderr = child.stderr.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // Once the first run's progress line is out and the model got the second run's request,
    // the suite is stopped.
    let (mut lines, mut err) = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(stderr);
        let mut err = String::new();
        while !err.contains("[1/2]") {
            if lines.read_line(&mut err).unwrap() == 0 {
                break;
            }
        }
        (lines, err)
    })
    .await
    .unwrap();
    for _ in 0..200 {
        if server.server().remaining_turns() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(server.server().remaining_turns(), 0, "{err}");
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let (status, out, err) = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        lines.read_to_string(&mut err).unwrap();
        let mut out = String::new();
        std::io::BufReader::new(stdout)
            .read_to_string(&mut out)
            .unwrap();
        (child.wait().unwrap(), out, err)
    })
    .await
    .unwrap();
    let all = format!("stdout: {out}\nstderr: {err}");
    assert_eq!(status.code(), Some(7), "{all}");
    assert!(err.contains("reagent eval: stopping"), "{all}");
    assert!(out.contains("interrupted: 1 of 2 runs finished"), "{all}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(saved["interrupted"], true, "{saved:#}");
    assert_eq!(saved["runs"].as_array().map(Vec::len), Some(1), "{saved:#}");
    assert_eq!(saved["runs"][0]["passed"], true, "{saved:#}");
    // The store holds the interrupted result too, and the run the signal cut short.
    let listed = reagent(
        &["eval", "list", "--store", "runs.db", "--json"],
        dir.path(),
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        (&listed[0]["passed"], &listed[0]["total"]),
        (&json!(1), &json!(1)),
        "{listed:#}"
    );
    let runs = reagent(
        &["runs", "list", "--store", "runs.db", "--json"],
        dir.path(),
    );
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let outcomes: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["outcome"].as_str())
        .collect();
    assert!(
        outcomes.contains(&"completed") && outcomes.contains(&"cancelled"),
        "{runs:#}"
    );
}

/// `--samples 2`: the task runs with seeds 1 and 2; the table gives the task's pass fraction,
/// the spread of the samples' pass rates, and the cost per finished task; `--record DIR` keeps
/// each run's events (the model's raw replies) as a fixture file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_samples_report_the_spread_and_record_each_run() {
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::tool_call("read_file", json!({"path": "notes.txt"})),
        Turn::text("It is an orchid."),
        Turn::text("I cannot tell."),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), SUITE).unwrap();
    let url = server.base_url();
    let args = [
        "eval",
        "--suite",
        "suite.toml",
        "--host",
        &url,
        "--model",
        "qwen3:8b",
        "--samples",
        "2",
        "--tool-mode",
        "native",
        "--record",
        "fixtures",
        "--no-store",
    ];
    let out = run_cli(
        args.iter().map(|a| a.to_string()).collect(),
        dir.path().to_owned(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |start: &str, nth: usize| {
        table
            .lines()
            .filter(|l| l.starts_with(start))
            .nth(nth)
            .unwrap_or_else(|| panic!("no line {start} #{nth}: {table}"))
            .to_owned()
    };
    assert!(table.contains("2 samples per task: seeds 1..=2"), "{table}");
    assert!(line("read-flower", 0).contains("1/2  50%"), "{table}");
    // Seed 1 passed, seed 2 failed: sample pass rates 100% and 0%.
    assert!(
        line("overall", 0).contains("1/2  50%") && line("overall", 0).contains("±71pt [0–100%]"),
        "{table}"
    );
    assert!(table.contains("per finished task"), "{table}");
    assert!(line("overall", 1).contains("calls"), "{table}");

    let recorded = |seed: u32| {
        let path = dir
            .path()
            .join(format!("fixtures/read-flower.native.seed{seed}.jsonl"));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let first = recorded(1);
    assert_eq!(first[0]["type"], "run_started", "{first:#?}");
    assert_eq!(first.last().unwrap()["type"], "run_finished");
    assert!(first.iter().any(|e| e["type"] == "tool_call"));
    let second = recorded(2);
    assert!(
        second
            .iter()
            .any(|e| e["type"] == "assistant_message" && e["content"] == "I cannot tell."),
        "{second:#?}"
    );
    assert_ne!(first[0]["run_id"], second[0]["run_id"]);
}

/// `--verify` runs its checks when the model ends each task run: the failing check goes back
/// to the model, which then does the work; the suite's own check judges the run after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_verify_gives_a_failing_check_back_to_the_model() {
    const MAKE: &str = r#"
[[task]]
id = "make-out"
category = "create_file"
prompt = "Create out.txt containing done."
checks = [{ command = "grep -q done out.txt" }]
"#;
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::text("Created out.txt."),
        Turn::tool_call(
            "write_file",
            json!({"path": "out.txt", "content": "done\n"}),
        ),
        Turn::text("Now it exists."),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), MAKE).unwrap();
    let flags = [
        "--tool-mode",
        "native",
        "--verify",
        "file_exists:out.txt",
        "--record",
        "fixtures",
        "--no-store",
    ];
    let out = eval_suite(&server, dir.path(), &flags).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("make-out") && l.contains("1/1 100%")),
        "{table}"
    );
    let events =
        std::fs::read_to_string(dir.path().join("fixtures/make-out.native.seed1.jsonl")).unwrap();
    let checks: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "verification_check")
        .collect();
    assert_eq!(checks.len(), 2, "{checks:#?}");
    assert_eq!(
        (checks[0]["passed"].as_bool(), checks[1]["passed"].as_bool()),
        (Some(false), Some(true))
    );
    assert!(events.contains(r#""outcome":"verified""#), "{events}");
}

#[test]
fn eval_usage_errors_exit_2_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "[[task]]\nid = \"t1\"\ncategory = \"c\"\nprompt = \"p\"\nchecks = []\n";
    std::fs::write(dir.path().join("bad.toml"), bad).unwrap();
    std::fs::write(dir.path().join("good.toml"), SUITE).unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["eval", "good.toml", "--suite", "bad.toml", "--model", "m"],
            "cannot be used with",
        ),
        (
            &["eval", "bad.toml", "--model", "m"],
            "bad.toml: task `t1`: no checks",
        ),
        (&["eval", "missing.toml", "--model", "m"], "missing.toml: "),
        (
            &[
                "eval",
                "good.toml",
                "--model",
                "m",
                "--tool-mode",
                "native,magic",
            ],
            "--tool-mode: tool modes: unknown tool mode 'magic'",
        ),
        (
            &["eval", "good.toml", "--model", "m", "--task", "nope"],
            "good.toml: no task with id `nope`",
        ),
        (
            &["eval", "compare", "good.toml", "good.toml"],
            "good.toml: not an eval result",
        ),
        (
            &["eval", "--store", "s.db", "list"],
            "no suite file 'list': to run `reagent eval list`, give its flags after it",
        ),
    ];
    for (args, want) in cases {
        let out = reagent(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(want),
            "{args:?}: wanted {want:?} in {stderr}"
        );
    }
}
