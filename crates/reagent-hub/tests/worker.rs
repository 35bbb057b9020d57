//! The worker loop with runners of its own: capacity, lease loss, draining on shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reagent_hub::queue::{Lease, NewTask, Queue, TaskState};
use reagent_hub::worker::{run_worker, worker_info, Attempt, TaskRunner, WorkerSettings};
use reagent_protocol::CancellationToken;
use serde_json::json;
use support::{open, Backend};

/// Sleeps `work` (or until cancelled), counting how many run at once.
struct Sleeper {
    work: Duration,
    now: AtomicUsize,
    most: AtomicUsize,
}

#[async_trait::async_trait]
impl TaskRunner for Sleeper {
    async fn run(&self, lease: &Lease, _queue: &Queue, cancel: CancellationToken) -> Attempt {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(n, Ordering::SeqCst);
        let attempt = tokio::select! {
            () = tokio::time::sleep(self.work) => Attempt::Completed(json!({"task": lease.task.task})),
            () = cancel.cancelled() => Attempt::Stopped,
        };
        self.now.fetch_sub(1, Ordering::SeqCst);
        attempt
    }
}

fn sleeper(work: Duration) -> Arc<Sleeper> {
    Arc::new(Sleeper {
        work,
        now: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
    })
}

fn settings(capacity: u32) -> WorkerSettings {
    WorkerSettings {
        capacity,
        lease: Duration::from_secs(2),
        heartbeat: Duration::from_millis(200),
        poll: Duration::from_millis(50),
        maintenance: Duration::from_millis(200),
        drain: Duration::from_millis(300),
        ..WorkerSettings::default()
    }
}

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn runs_up_to_capacity_at_once(backend: Backend) {
    let t = open(backend).await;
    let ids = add_tasks(&t.queue, 9).await;
    let runner = sleeper(Duration::from_millis(300));
    let settings = settings(3);
    let info = worker_info(&settings);
    let shutdown = CancellationToken::new();
    let worker = {
        let (q, runner, shutdown) = (t.queue.clone(), runner.clone(), shutdown.clone());
        tokio::spawn(async move { run_worker(&q, &info, &settings, runner, shutdown).await })
    };
    for id in &ids {
        wait_for_state(&t.queue, id, TaskState::Done).await;
    }
    shutdown.cancel();
    let report = worker.await.unwrap().unwrap();
    assert_eq!(report.completed, 9);
    assert_eq!(
        runner.most.load(Ordering::SeqCst),
        3,
        "three at once, never more"
    );
}

async fn add_tasks(q: &Queue, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        ids.push(q.add(NewTask::new(format!("task {i}"))).await.unwrap());
    }
    ids
}

async fn wait_for_state(q: &Queue, id: &str, state: TaskState) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if q.get(id).await.unwrap().state == state {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {id} never {state}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn shutdown_drains_then_gives_tasks_back(backend: Backend) {
    let t = open(backend).await;
    let ids = add_tasks(&t.queue, 3).await;
    // Longer than the drain: the two running tasks are stopped and given back.
    let runner = sleeper(Duration::from_secs(60));
    let settings = settings(2);
    let info = worker_info(&settings);
    let shutdown = CancellationToken::new();
    let worker = {
        let (q, r, s) = (t.queue.clone(), runner.clone(), shutdown.clone());
        tokio::spawn(async move { run_worker(&q, &info, &settings, r, s).await })
    };
    wait_until("two tasks running", || {
        runner.now.load(Ordering::SeqCst) == 2
    })
    .await;
    shutdown.cancel();
    let report = worker.await.unwrap().unwrap();
    assert_eq!((report.released, report.completed), (2, 0));
    let counts = t.queue.counts().await.unwrap();
    assert_eq!((counts.queued, counts.running), (3, 0));
    let mut released = 0;
    for id in &ids {
        let task = t.queue.get(id).await.unwrap();
        assert_eq!(task.attempt, 0, "a given-back attempt does not count");
        let history = t.queue.history(id).await.unwrap();
        released += history.iter().filter(|h| h.what == "released").count();
    }
    assert_eq!(released, 2);
    assert_eq!(t.queue.workers().await.unwrap()[0].state, "stopped");
}

async fn a_cancelled_task_is_stopped_on_its_worker(backend: Backend) {
    let t = open(backend).await;
    let id = t.queue.add(NewTask::new("long")).await.unwrap();
    let runner = sleeper(Duration::from_secs(60));
    let settings = settings(1);
    let info = worker_info(&settings);
    let shutdown = CancellationToken::new();
    let worker = {
        let (q, r, s) = (t.queue.clone(), runner.clone(), shutdown.clone());
        tokio::spawn(async move { run_worker(&q, &info, &settings, r, s).await })
    };
    wait_until("the task running", || {
        runner.now.load(Ordering::SeqCst) == 1
    })
    .await;
    t.queue.cancel(&id).await.unwrap();
    // The next heartbeat finds the lease lost and stops the run.
    wait_until("the run stopped", || runner.now.load(Ordering::SeqCst) == 0).await;
    shutdown.cancel();
    let report = worker.await.unwrap().unwrap();
    assert_eq!(report.refused, 1);
    let whats: Vec<String> = t
        .queue
        .history(&id)
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.what)
        .collect();
    assert_eq!(
        whats,
        [
            "added",
            "claimed",
            "cancelled",
            "heartbeat_lost",
            "late_result_refused"
        ]
    );
    assert_eq!(t.queue.get(&id).await.unwrap().state, TaskState::Cancelled);
}

both_backends!(
    runs_up_to_capacity_at_once,
    shutdown_drains_then_gives_tasks_back,
    a_cancelled_task_is_stopped_on_its_worker,
);
