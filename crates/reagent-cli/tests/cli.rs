//! The `reagent` binary's contract: flags, JSON output, events file, exit codes, config errors,
//! and the `tool` and `parse` subcommands — against a scripted Ollama on 127.0.0.1.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

fn reagent(args: &[&str], cwd: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .current_dir(cwd)
        .env_remove("OLLAMA_HOST")
        .env("HOME", cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Run `reagent run` in a blocking thread while the scripted server keeps serving.
async fn run_cli(args: Vec<String>, cwd: std::path::PathBuf) -> Output {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        reagent(&refs, &cwd)
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn run_json_reports_the_result_and_writes_the_events_file() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "hello.txt", "content": "hi\n"}),
            ))
            .turn(Turn::text("Created hello.txt.")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let events = dir.path().join("events.jsonl");
    let out = run_cli(
        vec![
            "run".into(),
            "--model".into(),
            "qwen3:8b".into(),
            "--host".into(),
            server.base_url(),
            "--workspace".into(),
            ws.display().to_string(),
            "--events".into(),
            events.display().to_string(),
            "--json".into(),
            "--verify".into(),
            "file_contains:hello.txt:hi".into(),
            "create hello.txt".into(),
        ],
        dir.path().to_path_buf(),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = stdout_json(&out);
    assert_eq!(r["outcome"], "verified");
    assert_eq!(r["answer"], "Created hello.txt.");
    assert_eq!(r["iterations"], 2);
    assert_eq!(r["tool_calls"], 1);
    assert_eq!(r["files_changed"], json!(["hello.txt"]));
    assert!(r["tokens"]["total"].as_u64().unwrap() > 0);
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt")).unwrap(),
        "hi\n"
    );

    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "run_started",
            "llm_request",
            "llm_response",
            "assistant_message",
            "checkpoint",
            "tool_call_started",
            "tool_call",
            "tool_result",
            "llm_request",
            "llm_response",
            "assistant_message",
            "verification_check",
            "checkpoint",
            "run_finished"
        ]
    );
    let seqs: Vec<u64> = lines.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=14).collect::<Vec<u64>>(), "gapless from 1");
    assert!(lines
        .iter()
        .all(|e| e["schema_version"] == reagent_protocol::SCHEMA_VERSION));
    for e in &lines {
        assert_eq!(e["run_id"], r["run_id"]);
        assert!(e["ts"].as_str().unwrap().ends_with('Z'));
    }
}

/// `reagent run --model MODEL --host SERVER --workspace DIR EXTRA... task` against `script`.
async fn run_scripted(script: ScriptBuilder, model: &str, extra: &[&str]) -> Output {
    let server = ScriptedOllama::start(script).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "run",
        "--model",
        model,
        "--host",
        &server.base_url(),
        "--workspace",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(dir.path().display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push("task".into());
    run_cli(args, dir.path().to_path_buf()).await
}

#[tokio::test]
async fn exit_codes_tell_outcomes_apart() {
    let call = || Turn::tool_call("list_directory", json!({}));

    let out = run_scripted(
        ScriptBuilder::new()
            .turn(call())
            .turn(Turn::text("unreached")),
        "m",
        &["--max-iterations", "1"],
    )
    .await;
    assert_eq!(out.status.code(), Some(3), "max iterations");

    let out = run_scripted(
        ScriptBuilder::new().turn(call()).turn(Turn::text("final")),
        "m",
        &["--max-tool-calls", "1", "--json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(4), "budget exhausted");
    assert_eq!(stdout_json(&out)["answer"], "final");

    let out = run_scripted(ScriptBuilder::new().turns((0..6).map(|_| call())), "m", &[]).await;
    assert_eq!(out.status.code(), Some(5), "guardrail stop");

    let out = run_scripted(
        ScriptBuilder::new().model(ModelSpec::new("other")),
        "missing:1b",
        &[],
    )
    .await;
    assert_eq!(out.status.code(), Some(6), "provider error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ollama pull missing:1b"));
}

#[test]
fn bad_usage_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = reagent(&["run", "task without a model"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model"));

    std::fs::write(
        dir.path().join("reagent.toml"),
        "model = \"x\"\nmax_iteratons = 3\n",
    )
    .unwrap();
    let out = reagent(&["run", "task"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown field `max_iteratons`") && err.contains("reagent.toml"),
        "{err}"
    );

    let out = reagent(
        &["run", "--model", "m", "--tool-mode", "telepathy", "task"],
        tempfile::tempdir().unwrap().path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tool mode"));

    let out = reagent(&["run", "--no-such-flag"], dir.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn tool_runs_one_tool_under_run_confinement() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let ws = dir.path().display().to_string();
    let out = reagent(
        &[
            "tool",
            "read_file",
            "--workspace",
            &ws,
            "--args",
            r#"{"path": "a.txt"}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout_json(&out), json!({"ok": true, "output": "alpha\n"}));

    let out = reagent(
        &[
            "tool",
            "read_file",
            "--workspace",
            &ws,
            "--args",
            r#"{"path": "../../etc/passwd"}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let r = stdout_json(&out);
    assert_eq!(r["ok"], false);
    assert!(!r.to_string().contains("root:"), "{r}");

    // The same coercion and validation as inside a run.
    let out = reagent(
        &[
            "tool",
            "read_file",
            "--workspace",
            &ws,
            "--args",
            r#"{"path": "a.txt", "start_line": "1"}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let out = reagent(
        &["tool", "read_file", "--workspace", &ws, "--args", r#"{}"#],
        dir.path(),
    );
    assert!(stdout_json(&out)["error"]
        .as_str()
        .unwrap()
        .contains("path"));

    let out = reagent(
        &[
            "tool",
            "write_file",
            "--workspace",
            &ws,
            "--read-only",
            "--args",
            r#"{"path": "b", "content": "x"}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("b").exists());
}

fn parse(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reagent"))
        .arg("parse")
        .args(args)
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

#[test]
fn parse_prints_calls_as_json_and_for_people() {
    let input = "<think>plan</think>Sure.<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>";
    let out = parse(&["--json"], input);
    assert_eq!(out.status.code(), Some(0));
    let r = stdout_json(&out);
    assert_eq!(
        r["calls"],
        json!([{"name": "read_file", "arguments": {"path": "a"}}])
    );
    assert_eq!(r["reasoning"], "plan");
    assert_eq!(r["content"], "Sure.");
    assert_eq!(r["format"], "hermes");
    assert_eq!(r["truncated"], false);

    let out = parse(&[], input);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("read_file") && text.contains("hermes"),
        "{text}"
    );

    // Typed by schema with --tools: "5" stays a string where the schema says string.
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, r#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}}}}]"#).unwrap();
    let xml = "<tool_call>\n<function=f>\n<parameter=id>\n5\n</parameter>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>";
    let out = parse(&["--json", "--tools", tools.to_str().unwrap()], xml);
    assert_eq!(
        stdout_json(&out)["calls"][0]["arguments"],
        json!({"id": "5", "n": 7})
    );

    let out = parse(&["--format", "no_such_family"], "x");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn parse_types_xml_values_against_the_tools_file() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"{"tools": [{"type": "function", "function": {"name": "setup", "parameters": {"type": "object", "properties": {
            "n": {"type": "integer"}, "r": {"type": "number"}, "on": {"type": "boolean"},
            "gone": {"type": ["string", "null"]}, "list": {"type": "array"},
            "obj": {"type": "object"}, "zip": {"type": "string"}}}}}]}"#,
    )
    .unwrap();
    let values = [
        ("n", "12"),
        ("r", "0.5"),
        ("on", "false"),
        ("gone", "null"),
        ("list", r#"["a", 2, [3]]"#),
        ("obj", r#"{"k": {"v": true}}"#),
        ("zip", "02139"),
    ];
    let want = json!({"n": 12, "r": 0.5, "on": false, "gone": null,
        "list": ["a", 2, [3]], "obj": {"k": {"v": true}}, "zip": "02139"});
    let mut glm = String::from("<tool_call>setup");
    let mut seed = String::from("<seed:tool_call>\n<function=setup>\n");
    for (k, v) in values {
        glm.push_str(&format!("<arg_key>{k}</arg_key><arg_value>{v}</arg_value>"));
        seed.push_str(&format!("<parameter={k}>{v}</parameter>\n"));
    }
    glm.push_str("</tool_call>");
    seed.push_str("</function>\n</seed:tool_call>");
    for (input, format) in [(glm, "glm_xml"), (seed, "seed_oss")] {
        let out = parse(&["--json", "--tools", tools.to_str().unwrap()], &input);
        assert_eq!(out.status.code(), Some(0), "{format}");
        let r = stdout_json(&out);
        assert_eq!(r["format"], format);
        assert_eq!(r["calls"][0]["arguments"], want, "{format}");
    }
    // Without the file the Seed-OSS values stay text.
    let out = parse(&["--json"], "<seed:tool_call>\n<function=setup>\n<parameter=n>12</parameter>\n</function>\n</seed:tool_call>");
    assert_eq!(
        stdout_json(&out)["calls"][0]["arguments"],
        json!({"n": "12"})
    );
    // A tools file that is not JSON is a usage error that names the file.
    std::fs::write(&tools, "not json").unwrap();
    let out = parse(&["--tools", tools.to_str().unwrap()], "x");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tools.json"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn ctrl_c_stops_the_run_cleanly_and_still_writes_run_finished() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("list_directory", json!({})).with_content("Looking around."))
            .turn(Turn::text("late").with_delay(std::time::Duration::from_secs(20))),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args([
            "run",
            "--model",
            "m",
            "--host",
            &server.base_url(),
            "--workspace",
        ])
        .arg(dir.path())
        .arg("--events")
        .arg(&events)
        .args(["--json", "task"])
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the second model call is under way, then press Ctrl-C.
    let started = std::time::Instant::now();
    while server.requests().len() < 2 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the run never reached its second call"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "Ctrl-C did not stop the run promptly"
    );
    assert_eq!(
        out.status.code(),
        Some(7),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = stdout_json(&out);
    assert_eq!(r["outcome"], "cancelled");
    assert_eq!(r["tool_calls"], 1);
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&events)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["type"], "run_finished");
    assert_eq!(last["outcome"], "cancelled");
}

#[tokio::test]
async fn disabled_and_read_only_tools_are_not_offered() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("a"))
            .turn(Turn::text("b")),
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = vec![
        "run".to_owned(),
        "--model".into(),
        "m".into(),
        "--host".into(),
        server.base_url(),
        "--workspace".into(),
        dir.path().display().to_string(),
    ];
    let mut args = base.clone();
    args.extend([
        "--disable-tool".into(),
        "run_command".into(),
        "--disable-tool".into(),
        "grep_search".into(),
        "t".into(),
    ]);
    assert_eq!(
        run_cli(args, dir.path().to_path_buf()).await.status.code(),
        Some(0)
    );
    let mut args = base;
    args.extend(["--read-only".into(), "t".into()]);
    assert_eq!(
        run_cli(args, dir.path().to_path_buf()).await.status.code(),
        Some(0)
    );
    let names = |n: usize| -> Vec<String> {
        server.requests()[n]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(0),
        [
            "edit_file",
            "find_files",
            "list_directory",
            "read_file",
            "task_complete",
            "write_file"
        ]
    );
    assert_eq!(
        names(1),
        [
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "task_complete"
        ]
    );
}

#[test]
fn doctor_reports_sandbox_layers_and_the_model_servers() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(["doctor", "--host", &format!("http://127.0.0.1:{port}")])
        .env("REAGENT_CACHE", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for layer in [
        "landlock",
        "seccomp",
        "no_new_privs",
        "pid/mount/net ns",
        "pids cgroup",
    ] {
        assert!(text.contains(layer), "{layer} missing from:\n{text}");
    }
    assert!(text.contains("ollama serve"), "{text}");
    assert!(
        text.contains("Embedded model server: not installed"),
        "{text}"
    );
}
