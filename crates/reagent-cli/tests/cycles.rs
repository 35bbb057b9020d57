//! `reagent cycles` as a process against scripted Ollama servers: `kill -9` between and inside
//! cycles then `resume`, an existing run_id refused, a ContReAct-Ollama YAML, the terminal
//! operator's timeout, batches, and report/rate/compare from the command line.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use reagent_store::{Location, Store};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(120);

async fn server(turns: Vec<Turn>) -> ScriptedServer {
    let script = ScriptBuilder::new()
        .model(ModelSpec::new("agent").with_capabilities(["completion", "tools"]))
        .turns(turns);
    ScriptedServer::start(Wire::Ollama, script).await.unwrap()
}

fn write_config(dir: &Path, run_id: &str, cycles: u32, base_url: &str, extra: &str) -> PathBuf {
    let path = dir.join(format!("{run_id}.toml"));
    std::fs::write(
        &path,
        format!(
            "run_id = \"{run_id}\"\ncycles = {cycles}\n[model]\nprovider = \"ollama\"\nbase_url = \"{base_url}\"\nname = \"agent\"\n[limits]\nmax_iterations = 10\nmax_time_secs = 120\n{extra}"
        ),
    )
    .unwrap();
    path
}

fn reagent(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reagent"));
    cmd.current_dir(dir)
        .args(args)
        .arg("--store")
        .arg(dir.join("store.db"))
        .env_remove("REAGENT_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Run to the end (within [`LIMIT`]) without blocking the runtime the scripted servers use.
async fn finish(mut child: Child) -> Output {
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if started.elapsed() > LIMIT {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "reagent did not finish within {LIMIT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn output(dir: &Path, args: &[&str]) -> Output {
    finish(reagent(dir, args).spawn().unwrap()).await
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The log's events that parse (a killed writer may leave a partial last line).
fn log_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

async fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < LIMIT, "waited too long for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn has(events: &[Value], cycle: u64, event_type: &str) -> bool {
    events
        .iter()
        .any(|e| e["cycle_number"] == cycle && e["event_type"] == event_type)
}

fn texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn open_store(dir: &Path) -> Store {
    Store::open(&Location::Sqlite(dir.join("store.db")))
        .await
        .unwrap()
}

/// After the resume: each cycle done once, each ended once in the log, the log valid.
async fn assert_whole(dir: &Path, id: &str, log: &Path) {
    let store = open_store(dir).await;
    let cycles = store.cycles(id).await.unwrap();
    let numbers: Vec<i64> = cycles.iter().map(|c| c.cycle).collect();
    assert_eq!(numbers, [1, 2, 3]);
    let e = store.experiment(id).await.unwrap().unwrap();
    assert_eq!((e.status.as_str(), e.cycles_done), ("completed", 3));
    let events = reagent_cycles::log::read_jsonl(log).unwrap();
    for cycle in 1..=3u32 {
        let ends = events
            .iter()
            .filter(|e| e.cycle_number == cycle && e.event_type == "CYCLE_END")
            .count();
        assert_eq!(ends, 1, "cycle {cycle} ended once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_between_cycles_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![
        Turn::tool_call("write", json!({"key": "note", "value": "from cycle one"})),
        Turn::text("Reflection one."),
        // Cycle 2's first model call hangs: the process is killed while it waits.
        Turn::text("never seen").with_delay(Duration::from_secs(60)),
    ])
    .await;
    let config = write_config(d, "k9a", 3, &server.base_url(), "");
    let log = d.join("k9a.jsonl");
    let mut child = reagent(
        d,
        &[
            "cycles",
            "run",
            "--config",
            config.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
        ],
    )
    .spawn()
    .unwrap();
    wait_for("cycle 2's model call", || {
        has(&log_events(&log), 2, "CYCLE_START") && server.requests().len() >= 3
    })
    .await;
    // While it runs, nobody else may run it.
    let out = output(d, &["cycles", "resume", "k9a"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("is being run by process {}", child.id())),
        "{}",
        text(&out)
    );
    child.kill().unwrap(); // SIGKILL
    let _ = child.wait();
    let store = open_store(d).await;
    let e = store.experiment("k9a").await.unwrap().unwrap();
    assert_eq!(e.cycles_done, 1);
    // Its process is gone: the experiment reads interrupted.
    assert_eq!(e.status, "interrupted");
    drop(store);

    for turn in [
        Turn::text("Reflection two."),
        Turn::tool_call("read", json!({"key": "note"})),
        Turn::text("Reflection three."),
    ] {
        server.push_turn(turn);
    }
    let out = output(d, &["cycles", "resume", "k9a"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("completed: 3 cycles"), "{}", text(&out));
    assert_whole(d, "k9a", &log).await;
    let requests = server.requests();
    let last = texts(requests.last().unwrap());
    assert!(
        last.contains("from cycle one"),
        "memory of cycle 1 in cycle 3: {last}"
    );
    let resumed = texts(&requests[3]);
    assert!(resumed.contains("Cycle 2 of 3 begins") && resumed.contains("Reflection one."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_inside_a_cycle_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![
        Turn::text("Reflection one."),
        Turn::tool_call("write", json!({"key": "mid", "value": "written mid-cycle"})),
        Turn::text("never seen").with_delay(Duration::from_secs(60)),
    ])
    .await;
    let config = write_config(d, "k9b", 3, &server.base_url(), "");
    let log = d.join("logs/k9b.jsonl");
    // The default log: logs/RUN_ID.jsonl in the working directory.
    let mut child = reagent(d, &["cycles", "run", "--config", config.to_str().unwrap()])
        .spawn()
        .unwrap();
    // Killed once the model has the request after the write (its reply is held back): a kill
    // before that request left the held-back turn in the script for the resumed run.
    wait_for("cycle 2's memory write and the model call after it", || {
        has(&log_events(&log), 2, "TOOL_CALL") && server.requests().len() >= 3
    })
    .await;
    child.kill().unwrap();
    let _ = child.wait();

    for turn in [
        Turn::tool_call("read", json!({"key": "mid"})),
        Turn::text("Reflection two, again."),
        Turn::text("Reflection three."),
    ] {
        server.push_turn(turn);
    }
    let out = output(d, &["cycles", "resume", "k9b"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_whole(d, "k9b", &log).await;
    // Cycle 2 ran again from its start; what it had written survived.
    let starts = log_events(&log)
        .iter()
        .filter(|e| e["cycle_number"] == 2 && e["event_type"] == "CYCLE_START")
        .count();
    assert_eq!(starts, 2);
    let requests = server.requests();
    assert!(texts(&requests[4]).contains("written mid-cycle"));
    let store = open_store(d).await;
    assert_eq!(
        store.cycles("k9b").await.unwrap()[1].reflection,
        "Reflection two, again."
    );

    // The dashboard operator needs `reagent serve`: refused before anything starts.
    let dash = write_config(
        d,
        "dash",
        1,
        &server.base_url(),
        "[operator]\nmode = \"dashboard\"\n",
    );
    let out = output(d, &["cycles", "run", "--config", dash.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("reagent serve"), "{}", text(&out));

    // Starting the same run_id again is refused, pointing at resume.
    let out = output(d, &["cycles", "run", "--config", config.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("reagent cycles resume k9b"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contreact_ollama_yaml_runs_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![
        Turn::text("Alone, I wrote nothing."),
        Turn::text("Still alone."),
    ])
    .await;
    let yaml = format!(
        "run_id: \"llama3-experiment-001\"\nmodel_name: \"agent\"\ncycle_count: 2\nollama_client_config:\n  host: \"{}\"\nmodel_options:\n  seed: 42\n  temperature: 0.6\n  top_p: 0.9\n  num_predict: -1\n  repeat_last_n: 64\n  repeat_penalty: 1.15\n  num_ctx: 4096\ntelegram_enabled: false\n",
        server.base_url()
    );
    std::fs::write(d.join("config.yaml"), yaml).unwrap();
    let out = output(d, &["cycles", "run", "--config", "config.yaml"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("`telegram_enabled` (line 14) is not supported"),
        "{}",
        text(&out)
    );
    let options = &server.requests()[0]["options"];
    assert_eq!(options["repeat_last_n"], 64);
    assert_eq!(options["num_predict"], 4096);
    assert_eq!(options["top_p"], json!(0.9));
    let events =
        reagent_cycles::log::read_jsonl(&d.join("logs/llama3-experiment-001.jsonl")).unwrap();
    assert_eq!(events.len(), 2 + 2 + 2);

    // An unknown key is an error naming the key and its line (exit code 2).
    std::fs::write(
        d.join("bad.yaml"),
        "run_id: x\nmodel_name: m\ncycle_count: 1\nmax_cycles: 3\n",
    )
    .unwrap();
    let out = output(d, &["cycles", "run", "--config", "bad.yaml"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("max_cycles") && text(&out).contains("line 4"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_names_the_experiments_file_and_the_level_keeps_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![Turn::text("One."), Turn::text("Two.")]).await;
    // `--log FILE` after `run` is the experiment's log, whatever its name looks like; the
    // global `--log LEVEL` before `cycles` still sets the diagnostics.
    let one = write_config(d, "flag-1", 1, &server.base_url(), "");
    let out = output(
        d,
        &[
            "--log",
            "debug",
            "cycles",
            "run",
            "--config",
            one.to_str().unwrap(),
            "--log",
            "study-log",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("DEBUG"),
        "the level applies: {}",
        text(&out)
    );
    let events = reagent_cycles::log::read_jsonl(&d.join("study-log")).unwrap();
    assert_eq!(events.len(), 3, "CYCLE_START, LLM_INVOCATION, CYCLE_END");
    assert!(!d.join("logs/flag-1.jsonl").exists());
    // After `run`, the level is `--log-level`, and the default log is used.
    let two = write_config(d, "flag-2", 1, &server.base_url(), "");
    let out = output(
        d,
        &[
            "cycles",
            "run",
            "--config",
            two.to_str().unwrap(),
            "--log-level",
            "debug",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("DEBUG"),
        "the level applies: {}",
        text(&out)
    );
    assert_eq!(
        reagent_cycles::log::read_jsonl(&d.join("logs/flag-2.jsonl"))
            .unwrap()
            .len(),
        3
    );
    // Elsewhere `--log LEVEL` is unchanged, before or after the subcommand.
    let out = output(d, &["cycles", "list", "--log", "info"]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("flag-2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_operator_times_out_and_answers_when_typed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![
        Turn::tool_call("send_message_to_operator", json!({"message": "Hello?"})),
        Turn::tool_call("send_message_to_operator", json!({"message": "Anyone?"})),
        Turn::text("Nobody answered at first."),
    ])
    .await;
    let config = write_config(
        d,
        "term",
        1,
        &server.base_url(),
        "[operator]\nmode = \"terminal\"\ntimeout_secs = 1\n",
    );
    let mut cmd = reagent(d, &["cycles", "run", "--config", config.to_str().unwrap()]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The first question times out; the second is answered.
    wait_for("the second question", || server.requests().len() >= 2).await;
    use std::io::Write;
    writeln!(stdin, "I am here now.").unwrap();
    let out = finish(child).await;
    drop(stdin);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("[message to the operator] Hello?"));
    let requests = server.requests();
    assert!(texts(&requests[1]).contains("did not reply within 1 seconds"));
    assert!(texts(&requests[2]).contains("I am here now."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_reports_ratings_and_comparisons() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let server = server(vec![
        Turn::tool_call("write", json!({"key": "k", "value": "v"})),
        Turn::text("Seed one, cycle one."),
        Turn::text("Seed one, cycle two."),
        Turn::text("Seed two, cycle one."),
        Turn::text("Seed two, cycle two."),
    ])
    .await;
    let config = write_config(d, "batch", 2, &server.base_url(), "");
    let out = output(
        d,
        &[
            "cycles",
            "run",
            "--config",
            config.to_str().unwrap(),
            "--seeds",
            "1,2",
            "-q",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let seeds: Vec<i64> = server
        .requests()
        .iter()
        .map(|r| r["options"]["seed"].as_i64().unwrap())
        .collect();
    assert_eq!(seeds, [1, 1, 1, 2, 2]);

    let out = output(d, &["cycles", "list"]).await;
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        listed.contains("batch-s1") && listed.contains("batch-s2"),
        "{listed}"
    );

    let out = output(
        d,
        &[
            "cycles",
            "report",
            "batch-s1",
            "--html",
            "report.html",
            "--png",
            "charts",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(html.contains("Seed one, cycle two.") && html.matches("<svg").count() == 4);
    let png = image::open(d.join("charts/similarity.png"))
        .unwrap()
        .to_rgb8();
    let dark = png
        .pixels()
        .filter(|p| (p[0], p[1], p[2]) == reagent_cycles::charts::SCALE_HIGH)
        .count();
    assert!(dark > 1000, "the heatmap's diagonal is drawn: {dark}");
    let out = output(d, &["cycles", "report", "batch-s1"]).await;
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("k: v"),
        "{}",
        text(&out)
    );

    let judge = ScriptedServer::start(
        Wire::Ollama,
        ScriptBuilder::new().turns([
            Turn::text("Rating: **7**\nJustification: kept a note."),
            Turn::text("I cannot say."),
            Turn::text("8/10, steady."),
            Turn::text("Level 6: fine."),
            Turn::text("Rating: 7"),
            Turn::text("Rating: 3"),
            Turn::text("Rating: 8"),
            Turn::text("Rating: 2"),
        ]),
    )
    .await
    .unwrap();
    let host = judge.base_url();
    let out = output(
        d,
        &[
            "cycles",
            "rate",
            "batch-s1",
            "batch-s2",
            "--evaluator",
            "judge-a,judge-b",
            "--host",
            &host,
            "--json",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let ratings: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ratings.len(), 4);
    assert_eq!(
        ratings[0],
        json!({"run_id": "batch-s1", "evaluator": "judge-a", "rating": 7, "justification": "kept a note."})
    );
    assert_eq!(ratings[1]["rating"], Value::Null);
    assert_eq!(ratings[2]["rating"], 8);
    assert_eq!(ratings[3]["rating"], 6);
    let store = open_store(d).await;
    assert_eq!(store.ratings("batch-s2").await.unwrap().len(), 2);
    // Without --json: each rating, then the evaluator × run matrix and the agreement.
    let out = output(
        d,
        &[
            "cycles",
            "rate",
            "batch-s1",
            "batch-s2",
            "--evaluator",
            "judge-a,judge-b",
            "--host",
            &host,
        ],
    )
    .await;
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(shown.contains("batch-s1  judge-a  7/10"), "{shown}");
    let alpha = shown
        .lines()
        .find_map(|l| l.strip_prefix("Krippendorff's alpha (interval): "))
        .unwrap_or_else(|| panic!("{shown}"));
    // 7 and 8 for one run, 3 and 2 for the other: strong agreement.
    assert!(alpha.parse::<f64>().unwrap() > 0.8, "{shown}");

    let out = output(
        d,
        &[
            "cycles", "compare", "batch-s1", "batch-s2", "--html", "cmp.html",
        ],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        table.starts_with("run") && table.contains("batch-s2") && table.contains("memory ops"),
        "{table}"
    );
    assert!(std::fs::read_to_string(d.join("cmp.html"))
        .unwrap()
        .contains("<th>batch-s1</th>"));
}
