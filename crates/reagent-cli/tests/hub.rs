//! `reagent task …` and `reagent worker` end to end: real worker processes against a scripted
//! Ollama, on SQLite and a real PostgreSQL 15.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[macro_use]
mod hub_support;

use std::time::Duration;

use hub_support::{cli, cli_ok, hub, run_of, task_in, worker, worker_id, Backend};
use reagent_hub::queue::TaskState;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::Value;

async fn tasks_run_on_a_worker_and_land_in_runs(backend: Backend) {
    let h = hub(backend).await;
    let first = cli_ok(
        &h,
        &[
            "task",
            "add",
            "say hi",
            "--priority",
            "5",
            "--tags",
            "gpu",
            "--max-attempts",
            "2",
        ],
    )
    .trim()
    .to_owned();
    let second = cli_ok(
        &h,
        &["task", "add", "then say bye", "--depends-on", &first[..8]],
    )
    .trim()
    .to_owned();
    let listed: Vec<Value> =
        serde_json::from_str(&cli_ok(&h, &["task", "list", "--json"])).unwrap();
    assert_eq!(listed.len(), 2);
    let by_id = |id: &str| listed.iter().find(|t| t["id"] == id).unwrap().clone();
    assert_eq!(by_id(&first)["state"], "queued");
    assert_eq!(by_id(&first)["attempt"], 0);
    assert_eq!(by_id(&first)["max_attempts"], 2);
    assert_eq!(by_id(&second)["state"], "waiting");
    let table = cli_ok(&h, &["task", "list"]);
    assert!(
        table.contains("waiting") && table.contains("then say bye"),
        "{table}"
    );

    // A worker without the tag leaves the tagged task alone.
    let idle_server = ScriptedOllama::start(ScriptBuilder::new()).await.unwrap();
    let untagged = worker(&h, "untagged", &idle_server, &[]);
    worker_id(&h, untagged.pid()).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(h.queue.get(&first).await.unwrap().state, TaskState::Queued);
    assert!(untagged.stop(Duration::from_secs(20)).await.success());
    assert!(idle_server.requests().is_empty());

    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("hi there"))
            .turn(Turn::text("bye now")),
    )
    .await
    .unwrap();
    let w = worker(
        &h,
        "w",
        &server,
        &["--tags", "gpu,linux", "--capacity", "2"],
    );
    let done = task_in(&h, &second, TaskState::Done, 60).await;
    let first_task = h.queue.get(&first).await.unwrap();
    assert_eq!(first_task.state, TaskState::Done);
    assert_eq!(first_task.result.as_ref().unwrap()["answer"], "hi there");
    assert_eq!(done.result.as_ref().unwrap()["answer"], "bye now");
    // Each run is in the store, complete, under the id the task row names.
    for task in [&first_task, &done] {
        let run_id = task.run_id.clone().expect("the task names its run");
        assert_eq!(task.result.as_ref().unwrap()["run_id"], run_id.as_str());
        let run = run_of(&h, &run_id);
        assert_eq!(run["outcome"], "completed", "{run}");
        assert_eq!(run["task"], task.task.as_str());
    }

    let shown: Value =
        serde_json::from_str(&cli_ok(&h, &["task", "show", &second[..8], "--json"])).unwrap();
    assert_eq!(shown["state"], "done");
    assert_eq!(shown["attempt"], 1);
    assert_eq!(shown["depends_on"], serde_json::json!([first]));
    let whats: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, ["added", "claimed", "completed"]);
    let text = cli_ok(&h, &["task", "show", &second]);
    assert!(
        text.contains("status    done") && text.contains("reagent runs show"),
        "{text}"
    );

    let status = w.stop(Duration::from_secs(20)).await;
    assert!(status.success(), "worker exit {status}");
    let workers = h.queue.workers().await.unwrap();
    assert!(workers.iter().all(|w| w.state == "stopped"), "{workers:?}");
}

async fn task_commands_refuse_bad_input(backend: Backend) {
    let h = hub(backend).await;
    let id = cli_ok(&h, &["task", "add", "something"]).trim().to_owned();
    for (args, needle) in [
        (vec!["task", "add", "  "], "the task is empty"),
        (
            vec!["task", "add", "x", "--depends-on", "abcdef12"],
            "no task abcdef12",
        ),
        (
            vec!["task", "add", "x", "--max-attempts", "0"],
            "at least 1",
        ),
        (vec!["task", "show", "0000"], "no task 0000"),
        (
            vec!["task", "list", "--state", "sleeping"],
            "unknown task state",
        ),
        (vec!["task", "retry", &id], "is queued: cannot retry"),
    ] {
        let out = cli(&h, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    cli_ok(&h, &["task", "cancel", &id]);
    let out = cli(&h, &["task", "cancel", &id]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is cancelled: cannot cancel"));
    cli_ok(&h, &["task", "retry", &id]);
    assert_eq!(h.queue.get(&id).await.unwrap().state, TaskState::Queued);
    // The tasks are all still there.
    assert_eq!(h.queue.counts().await.unwrap().queued, 1);

    // reagent worker refuses flags of reagent run that make no sense for it.
    let server = ScriptedOllama::start(ScriptBuilder::new()).await.unwrap();
    for (extra, needle) in [
        (vec!["a task"], "takes no task"),
        (vec!["--json"], "--json does not apply"),
        (
            vec!["--lease", "1", "--heartbeat", "2"],
            "must be shorter than --lease",
        ),
        (vec!["--capacity", "0"], "at least 1"),
    ] {
        let out = hub_support::reagent()
            .args(["worker", "--model", "m", "--host", &server.base_url()])
            .args(["--store", &h.store_url])
            .args(&extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
}

both_backends!(
    tasks_run_on_a_worker_and_land_in_runs,
    task_commands_refuse_bad_input
);
