//! Faults with real `reagent worker` processes: `kill -9` mid-task, a worker frozen past its
//! lease (SIGSTOP/SIGCONT), a worker cut off from the network (its own namespace, link pulled),
//! and PostgreSQL restarted under load.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[macro_use]
mod hub_support;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hub_support::netns::NetNs;
use hub_support::{
    clean_env, count, find_run, hub, hub_on, run_of, spawn_worker, task_in, wait_for, worker,
    worker_id, Backend, Hub, WorkerProcess,
};
use reagent_hub::queue::{NewTask, TaskState};
use reagent_testkit::{PostgresCluster, ScriptBuilder, ScriptedOllama, Turn};

/// The answer of the worker that takes a task over.
const OTHER_ANSWER: &str = "from the other worker";

/// The first worker's model server (answering `answer` after `delay`) and the second's
/// (answering [`OTHER_ANSWER`] at once).
async fn two_servers(answer: &str, delay: Duration) -> (ScriptedOllama, ScriptedOllama) {
    let slow =
        ScriptedOllama::start(ScriptBuilder::new().turn(Turn::text(answer).with_delay(delay)))
            .await
            .unwrap();
    let fast = ScriptedOllama::start(ScriptBuilder::new().turn(Turn::text(OTHER_ANSWER)))
        .await
        .unwrap();
    (slow, fast)
}

/// Wait until task `id` runs under worker `owner` and its model call reached `server`.
async fn mid_task(h: &Hub, id: &str, owner: &str, server: &ScriptedOllama) {
    wait_for(30, "the task to run on the first worker", || async {
        let t = h.queue.get(id).await.ok()?;
        (t.state == TaskState::Running
            && t.lease_owner.as_deref() == Some(owner)
            && t.run_id.is_some()
            && !server.requests().is_empty())
        .then_some(())
    })
    .await;
}

/// Start a second worker on `fast`; wait until it finished task `id` (attempt 2) with its
/// answer. Returns it.
async fn finished_by_another(h: &Hub, id: &str, fast: &ScriptedOllama) -> WorkerProcess {
    let b = worker(h, "b", fast, &[]);
    let b_id = worker_id(h, b.pid()).await;
    let done = task_in(h, id, TaskState::Done, 60).await;
    assert_eq!(done.lease_owner.as_deref(), Some(b_id.as_str()));
    assert_eq!(done.attempt, 2);
    assert_eq!(done.result.as_ref().unwrap()["answer"], OTHER_ANSWER);
    assert_eq!(fast.requests().len(), 1, "run once on the second worker");
    b
}

/// Wait until worker `a_id`'s late report on task `id` is refused and recorded; the task keeps
/// the second worker's result, completed once.
async fn late_report_refused(h: &Hub, id: &str, a_id: &str) {
    let refused = wait_for(
        90,
        "the first worker's late report to be refused",
        || async {
            let history = h.queue.history(id).await.ok()?;
            history
                .into_iter()
                .find(|e| e.what == "late_result_refused" && e.worker.as_deref() == Some(a_id))
        },
    )
    .await;
    assert_eq!(refused.attempt, 1);
    let detail = refused.detail.unwrap_or_default();
    assert!(detail.contains("the task is now done"), "{detail}");
    let task = h.queue.get(id).await.unwrap();
    assert_eq!(task.state, TaskState::Done);
    assert_eq!(task.result.as_ref().unwrap()["answer"], OTHER_ANSWER);
    let history = h.queue.history(id).await.unwrap();
    assert_eq!(count(&history, "completed"), 1, "{history:?}");
}

async fn kill_9_mid_task_completes_once_elsewhere(backend: Backend) {
    let h = hub(backend).await;
    // The first worker's model answers only after a minute: it is killed mid-task.
    let (slow, fast) = two_servers("from the killed worker", Duration::from_secs(60)).await;
    let id = h.queue.add(NewTask::new("the task")).await.unwrap();
    let a = worker(&h, "a", &slow, &[]);
    let a_id = worker_id(&h, a.pid()).await;
    mid_task(&h, &id, &a_id, &slow).await;
    let first_run = h.queue.get(&id).await.unwrap().run_id.unwrap();
    wait_for(10, "the killed worker's run row", || async {
        find_run(&h, &first_run).map(drop)
    })
    .await;
    a.signal(libc::SIGKILL);

    let b = finished_by_another(&h, &id, &fast).await;
    let done = h.queue.get(&id).await.unwrap();
    let history = h.queue.history(&id).await.unwrap();
    assert_eq!(count(&history, "completed"), 1, "{history:?}");
    assert_eq!(count(&history, "expired"), 1, "{history:?}");
    assert_eq!(slow.requests().len(), 1);
    // Both attempts are in the store: the killed one reads interrupted, the other completed.
    let second_run = done.run_id.unwrap();
    assert_eq!(run_of(&h, &second_run)["outcome"], "completed");
    assert_eq!(run_of(&h, &first_run)["outcome"], "interrupted");
    assert!(b.stop(Duration::from_secs(20)).await.success());
}

async fn frozen_worker_is_overtaken_and_its_result_refused(backend: Backend) {
    let h = hub(backend).await;
    // The frozen worker's answer arrives while it is stopped.
    let (slow, fast) = two_servers("from the frozen worker", Duration::from_secs(2)).await;
    let id = h.queue.add(NewTask::new("the task")).await.unwrap();
    let a = worker(&h, "a", &slow, &[]);
    let a_id = worker_id(&h, a.pid()).await;
    mid_task(&h, &id, &a_id, &slow).await;
    a.signal(libc::SIGSTOP);

    let b = finished_by_another(&h, &id, &fast).await;
    // Past the slow answer's delay: it waits in the frozen worker's socket.
    tokio::time::sleep(Duration::from_secs(1)).await;
    a.signal(libc::SIGCONT);
    late_report_refused(&h, &id, &a_id).await;
    assert!(a.stop(Duration::from_secs(20)).await.success());
    assert!(b.stop(Duration::from_secs(20)).await.success());
}

/// A worker in its own network namespace, cut off (its link pulled: packets dropped, nothing
/// told to either side) mid-task: the task is taken back and finished by another worker; once the
/// link is back, the cut-off worker's late report is refused and recorded. PostgreSQL only: a
/// SQLite store is a file, which no network cut separates from the worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_cut_off_from_the_network_is_overtaken_and_refused() {
    let ns = NetNs::create();
    let h = hub(Backend::Postgres).await;
    let pg = h.pg.clone().unwrap();
    let (slow, fast) = two_servers("from the cut-off worker", Duration::from_secs(4)).await;
    // From inside, the database and the model server are reached through relays on the link.
    let pg_addr = SocketAddr::from(([127, 0, 0, 1], pg.port()));
    let pg_relay = ns.relay(pg_addr).await;
    let model_addr: SocketAddr = slow
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let model_relay = ns.relay(model_addr).await;
    let inner_store = h
        .store_url
        .replace(&pg_addr.to_string(), &pg_relay.to_string());
    assert_ne!(inner_store, h.store_url);

    let id = h.queue.add(NewTask::new("the task")).await.unwrap();
    let cmd = clean_env(ns.command(env!("CARGO_BIN_EXE_reagent")));
    let model_host = format!("http://{model_relay}");
    let a = spawn_worker(cmd, &h, "a", &inner_store, &model_host, &[]);
    let a_id = worker_id(&h, a.pid()).await;
    mid_task(&h, &id, &a_id, &slow).await;
    ns.cut();

    let b = finished_by_another(&h, &id, &fast).await;
    ns.restore();
    late_report_refused(&h, &id, &a_id).await;
    let log = a.log();
    assert!(a.stop(Duration::from_secs(30)).await.success(), "{log}");
    assert!(b.stop(Duration::from_secs(20)).await.success());
}

/// PostgreSQL down for 6 s (every connection cut; longer than the pool waits) while three
/// workers run 30 tasks: they reconnect, every task is done once, and no model call is made
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restart_under_load_loses_and_repeats_nothing() {
    // A cluster of its own: the restart must not disturb other tests.
    let pg = Arc::new(PostgresCluster::start().expect("PostgreSQL 15"));
    let h = hub_on(pg.clone()).await;
    let tasks = 30;
    let mut ids = Vec::new();
    for i in 0..tasks {
        ids.push(
            h.queue
                .add(NewTask::new(format!("task {i}")))
                .await
                .unwrap(),
        );
    }
    let mut servers = Vec::new();
    let mut workers = Vec::new();
    for n in 0..3 {
        let turns = (0..tasks)
            .map(|i| Turn::text(format!("answer {n}-{i}")).with_delay(Duration::from_millis(150)));
        let server = ScriptedOllama::start(ScriptBuilder::new().turns(turns))
            .await
            .unwrap();
        workers.push(worker(
            &h,
            &format!("w{n}"),
            &server,
            &["--lease", "20", "--heartbeat", "1"],
        ));
        servers.push(server);
    }
    let logs = || {
        workers
            .iter()
            .map(|w| w.log())
            .collect::<Vec<_>>()
            .join("\n---\n")
    };
    tokio::time::timeout(
        Duration::from_secs(60),
        wait_for(60, "a third of the tasks to be done", || async {
            (h.queue.counts().await.ok()?.done >= tasks / 3).then_some(())
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("{}", logs()));
    let pg_restart = pg.clone();
    tokio::task::spawn_blocking(move || pg_restart.restart(Duration::from_secs(6)))
        .await
        .unwrap()
        .expect("PostgreSQL restarts");
    wait_for(120, "every task to be done", || async {
        (h.queue.counts().await.ok()?.done == tasks).then_some(())
    })
    .await;
    let mut answers = HashSet::new();
    for id in &ids {
        let task = h.queue.get(id).await.unwrap();
        let history = h.queue.history(id).await.unwrap();
        assert_eq!(count(&history, "completed"), 1, "{id}: {history:?}");
        answers.insert(task.result.unwrap()["answer"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        answers.len(),
        tasks as usize,
        "each task has its own answer"
    );
    // The workers did meet the outage (and got over it).
    let seen = logs();
    assert!(
        [
            "claim failed",
            "heartbeat failed",
            "cannot report yet",
            "reclaiming expired leases failed"
        ]
        .iter()
        .any(|m| seen.contains(m)),
        "no worker noticed the restart:\n{seen}"
    );
    let calls: usize = servers.iter().map(|s| s.requests().len()).sum();
    assert_eq!(calls, tasks as usize, "no task ran twice");
    for w in workers {
        let log = w.log();
        assert!(w.stop(Duration::from_secs(30)).await.success(), "{log}");
    }
}

both_backends!(
    kill_9_mid_task_completes_once_elsewhere,
    frozen_worker_is_overtaken_and_its_result_refused,
);
