//! `reagent cycles` end to end with the real embedded model (llama-server + SmolLM2-135M,
//! installed by `scripts/install-model-server.sh`; the test fails, never skips, without it): a
//! 3-cycle experiment with scripted operator replies completes, every cycle ends with a
//! reflection, memory written in cycle 1 is found by the agent in cycle 3, the JSONL log
//! validates, and the report renders its charts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_cycle_experiment_on_the_real_model() {
    let server = start_server().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("replies.txt"),
        "Hello from the operator.\nCarry on.\n",
    )
    .unwrap();
    let config = d.join("real.toml");
    std::fs::write(
        &config,
        format!(
            "run_id = \"real-1\"\ncycles = 3\n[model]\nprovider = \"openai\"\nbase_url = \"{}\"\nname = \"{}\"\noptions = {{ temperature = 0.0, seed = 1, num_ctx = 4096, num_predict = 128 }}\n[operator]\nmode = \"script\"\nreplies = \"replies.txt\"\n[limits]\nmax_iterations = 4\nmax_time_secs = 120\n",
            server.openai_base_url(),
            server.model()
        ),
    )
    .unwrap();
    let store = d.join("store.db");
    let store = store.to_str().unwrap();
    let args = |rest: &[&str]| -> Vec<String> {
        rest.iter()
            .map(|s| (*s).to_owned())
            .chain(["--store".to_owned(), store.to_owned()])
            .collect()
    };
    let out = reagent(
        &args(&[
            "cycles",
            "run",
            "--config",
            config.to_str().unwrap(),
            "--log",
            "logs/real.jsonl",
        ]),
        d,
    )
    .await;
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("completed: 3 cycles"), "{shown}");

    let events = reagent_cycles::log::read_jsonl(&d.join("logs/real.jsonl")).unwrap();
    // What the model did, for whoever reads a failure.
    for e in events.iter().filter(|e| e.event_type == "TOOL_CALL") {
        eprintln!(
            "cycle {}: {} {} -> {}",
            e.cycle_number, e.payload["tool_name"], e.payload["parameters"], e.payload["output"]
        );
    }
    let ends: Vec<&reagent_cycles::log::LogEvent> = events
        .iter()
        .filter(|e| e.event_type == "CYCLE_END")
        .collect();
    assert_eq!(ends.len(), 3, "{shown}");
    for end in &ends {
        let metrics = &end.payload["metrics"];
        assert!(
            metrics["completion_tokens"].as_u64().unwrap() > 0,
            "{end:?}"
        );
        assert!(metrics["duration_ms"].as_u64().unwrap() > 0);
        assert!(
            end.payload["final_reflection"]
                .as_str()
                .is_some_and(|r| !r.trim().is_empty()),
            "every cycle reflects: {end:?}"
        );
    }
    // Memory written in cycle 1 is what the agent finds in cycle 3 (SmolLM2 at temperature 0
    // writes a note in cycle 1 and lists its memory in cycle 3; the calls are printed above).
    let written = events
        .iter()
        .find(|e| {
            e.event_type == "TOOL_CALL"
                && e.cycle_number == 1
                && e.payload["tool_name"] == "write"
                && e.payload["ok"] == true
        })
        .expect("the model wrote to its memory in cycle 1");
    let key = written.payload["parameters"]["key"].as_str().unwrap();
    let found = events.iter().any(|e| {
        e.event_type == "TOOL_CALL"
            && e.cycle_number == 3
            && ["read", "list", "pattern_search"]
                .contains(&e.payload["tool_name"].as_str().unwrap_or(""))
            && e.payload["output"]["ok"] == true
            && e.payload["output"].to_string().contains(key)
    });
    assert!(found, "cycle 3 found the key `{key}` written in cycle 1");
    let invocations = events
        .iter()
        .filter(|e| e.event_type == "LLM_INVOCATION")
        .count();
    assert!(invocations >= 3);
    // Cycle 3 opened with the reflections of cycles 1 and 2.
    let third_open = events
        .iter()
        .find(|e| e.event_type == "LLM_INVOCATION" && e.cycle_number == 3)
        .unwrap();
    let opening = third_open.payload["prompt_messages"][1]["content"]
        .as_str()
        .unwrap();
    assert!(
        opening.contains("[Cycle 1]") && opening.contains("[Cycle 2]"),
        "{opening}"
    );
    // The first cycle's reflection is the one cycle 3 was given.
    let first: &Value = &ends[0].payload["final_reflection"];
    assert!(
        opening.contains(first.as_str().unwrap().trim()),
        "{opening}"
    );

    let out = reagent(
        &args(&[
            "cycles",
            "report",
            "real-1",
            "--html",
            "report.html",
            "--png",
            "charts",
        ]),
        d,
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 4);
    let heat = image::open(d.join("charts/similarity.png"))
        .unwrap()
        .to_rgb8();
    let diagonal = heat
        .pixels()
        .filter(|p| (p[0], p[1], p[2]) == reagent_cycles::charts::SCALE_HIGH)
        .count();
    assert!(diagonal > 1000, "the heatmap's diagonal: {diagonal} pixels");
}
