//! `reagent eval SUITE` and `reagent eval compare A B` through the binary, against a scripted
//! Ollama on 127.0.0.1: JSON output, the result saved by default, the table, and usage errors.
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
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("suite.toml"), SUITE).unwrap();
    let out = run_cli(
        [
            "eval",
            "suite.toml",
            "--host",
            &server.base_url(),
            "--model",
            "qwen3:8b",
            "--tool-mode",
            "native,seed",
            "--json",
        ]
        .map(String::from)
        .to_vec(),
        dir.path().to_owned(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
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
}

#[test]
fn eval_usage_errors_exit_2_and_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let bad = "[[task]]\nid = \"t1\"\ncategory = \"c\"\nprompt = \"p\"\nchecks = []\n";
    std::fs::write(dir.path().join("bad.toml"), bad).unwrap();
    std::fs::write(dir.path().join("good.toml"), SUITE).unwrap();
    let cases: [(&[&str], &str); 5] = [
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
