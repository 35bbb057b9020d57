//! `reagent chat` (line mode, `--json`) against the real embedded model: llama-server with
//! SmolLM2, started from the cache `scripts/install-model-server.sh` fills (fails, never skips,
//! when it is missing). Two turns of one conversation: the first reads a file through a tool
//! call in constrained mode, the follow-up continues the same session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_turn_chat_with_a_tool_call_on_the_embedded_model() {
    let server = start_server().await;
    let ws = demo_workspace();
    let scratch = tempfile::tempdir().unwrap();
    let config = config_file(scratch.path(), "[guardrails]\nrepetition_threshold = 2\n");
    let args: Vec<String> = [
        "chat",
        "--config",
        &config.display().to_string(),
        "--workspace",
        &ws.path().display().to_string(),
        "--store",
        &scratch.path().join("store.db").display().to_string(),
        "--json",
        "--read-only",
        "--no-stream",
        "--num-ctx",
        "4096",
        "--num-predict",
        "128",
        "--temperature",
        "0",
        "--seed",
        "1",
        "--timeout",
        "200",
        "--provider",
        "openai",
        "--base-url",
        &server.openai_base_url(),
        "--model",
        server.model(),
        "--tool-mode",
        "constrained",
        "--max-iterations",
        "5",
    ]
    .map(String::from)
    .to_vec();
    let input = format!("{TASK}\nThank you.\n");
    let cwd = scratch.path().to_path_buf();
    let out = tokio::time::timeout(
        RUN_LIMIT * 2,
        tokio::task::spawn_blocking(move || {
            let mut child = Command::new(env!("CARGO_BIN_EXE_reagent"))
                .args(&args)
                .current_dir(&cwd)
                .env("HOME", &cwd)
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
        }),
    )
    .await
    .expect("the chat did not end in time")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let turns: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}")))
        .collect();
    assert_eq!(
        turns.len(),
        2,
        "one JSON object per turn: {turns:#?}\n{stderr}"
    );
    let read = turns[0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "read_file")
        .unwrap_or_else(|| panic!("no read_file call: {:#}", turns[0]));
    assert_eq!(read["arguments"]["path"], "keeper.txt", "{read}");
    assert_eq!(read["ok"], true, "{read}");
    assert!(
        read["summary"].as_str().unwrap().contains(KEEPER_FACT),
        "{read}"
    );
    assert_eq!(
        turns[0]["session_id"], turns[1]["session_id"],
        "one conversation"
    );
    for turn in &turns {
        assert_ne!(turn["outcome"], "provider_error", "{turn}");
    }
}
