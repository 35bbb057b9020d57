//! `reagent cycles run --hub URL`: a batch queued as hub tasks and run by real `reagent worker`
//! processes against scripted Ollamas, on SQLite and a real PostgreSQL 15. Each worker serves
//! one of the batch's models, so the batch spreads over them by model.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[macro_use]
mod hub_support;

use std::time::Duration;

use hub_support::{cli, hub, reagent, task_in, worker, Backend, Hub};
use reagent_hub::queue::TaskState;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};

/// `reagent cycles ARGS --store STORE`, run in the hub's directory (where the logs go).
fn cycles(h: &Hub, args: &[&str]) -> std::process::Output {
    reagent()
        .current_dir(h.dir.path())
        .arg("cycles")
        .args(args)
        .args(["--store", &h.store_url])
        .output()
        .unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn a_batch_spreads_over_the_workers_by_model(backend: Backend) {
    let h = hub(backend).await;
    let replies = |m: &str| {
        (1..=4)
            .map(|n| {
                Turn::text(format!("{m}: reflection {n}.")).with_delay(Duration::from_millis(100))
            })
            .collect::<Vec<_>>()
    };
    // alpha's server serves embeddings, beta's does not.
    let alpha = ScriptedOllama::start(ScriptBuilder::new().turns(replies("alpha")).embeddings())
        .await
        .unwrap();
    let beta = ScriptedOllama::start(ScriptBuilder::new().turns(replies("beta")))
        .await
        .unwrap();
    let config = h.dir.path().join("batch.toml");
    std::fs::write(
        &config,
        "run_id = \"hubbed\"\ncycles = 2\n[model]\nprovider = \"ollama\"\nname = \"alpha\"\n\
         [operator]\nmode = \"none\"\n",
    )
    .unwrap();
    let config = config.display().to_string();

    // Refused before anything is queued: a terminal operator, and a --store that is not the hub.
    let terminal = h.dir.path().join("terminal.toml");
    std::fs::write(
        &terminal,
        "run_id = \"t\"\ncycles = 1\n[model]\nname = \"alpha\"\n[operator]\nmode = \"terminal\"\n",
    )
    .unwrap();
    let out = cycles(
        &h,
        &[
            "run",
            "--config",
            &terminal.display().to_string(),
            "--hub",
            &h.store_url,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("script or none"), "{}", stderr(&out));
    let out = reagent()
        .args(["cycles", "run", "--config", &config, "--hub", &h.store_url])
        .args(["--store", "/nonexistent/other.db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--hub"), "{}", stderr(&out));
    assert!(h.queue.list(&Default::default()).await.unwrap().is_empty());

    let out = cycles(
        &h,
        &[
            "run",
            "--config",
            &config,
            "--seeds",
            "1,2",
            "--models",
            "alpha,beta",
            "--hub",
            &h.store_url,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let queued: Vec<(String, String)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (run, task) = l.split_once('\t').unwrap();
            (run.to_owned(), task.to_owned())
        })
        .collect();
    let runs: Vec<&str> = queued.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        runs,
        [
            "hubbed-alpha-s1",
            "hubbed-alpha-s2",
            "hubbed-beta-s1",
            "hubbed-beta-s2"
        ]
    );
    // Nothing ran here: the workers run them.
    assert!(alpha.requests().is_empty() && beta.requests().is_empty());

    let a = worker(&h, "a", &alpha, &["--serves", "alpha"]);
    let b = worker(&h, "b", &beta, &["--serves", "beta"]);
    let store = h.queue.store().clone();
    for (run, task) in &queued {
        let done = task_in(&h, task, TaskState::Done, 90).await;
        let result = done.result.unwrap();
        assert_eq!(result["experiment"], run.as_str());
        assert_eq!(result["cycles_done"], 2);
        let e = store.experiment(run).await.unwrap().unwrap();
        assert_eq!(
            (e.status.as_str(), e.cycles_done),
            ("completed", 2),
            "{run}"
        );
        let events =
            reagent_cycles::log::read_jsonl(&h.dir.path().join(format!("logs/{run}.jsonl")))
                .unwrap();
        let ends: Vec<_> = events
            .iter()
            .filter(|e| e.event_type == "CYCLE_END")
            .collect();
        assert_eq!(ends.len(), 2, "{run}");
        // The second cycle's monitor compares with the first: by the worker's server's
        // embeddings where it serves them, else by TF-IDF.
        let method = &ends[1].payload["metrics"]["similarity_method"];
        let served = if run.contains("alpha") {
            "embeddings"
        } else {
            "tfidf"
        };
        assert_eq!(method, served, "{run}");
    }
    // Each worker ran only its model's experiments: two each, one model call a cycle.
    for (server, model) in [(&alpha, "alpha"), (&beta, "beta")] {
        let asked: Vec<String> = server
            .requests()
            .iter()
            .map(|r| r["model"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(asked, vec![model; 4], "{model}");
    }
    let reflection = &store.cycles("hubbed-beta-s2").await.unwrap()[1].reflection;
    assert!(reflection.starts_with("beta: reflection"), "{reflection}");
    assert!(a.stop(Duration::from_secs(20)).await.success());
    assert!(b.stop(Duration::from_secs(20)).await.success());
    // The same batch again: the ids exist, nothing is queued twice.
    let again = cli(
        &h,
        &[
            "cycles",
            "run",
            "--config",
            &config,
            "--seeds",
            "1,2",
            "--models",
            "alpha,beta",
            "--hub",
            &h.store_url,
        ],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("reagent cycles resume"),
        "{}",
        stderr(&again)
    );
    assert_eq!(h.queue.list(&Default::default()).await.unwrap().len(), 4);
}

both_backends!(a_batch_spreads_over_the_workers_by_model);
