//! The lease queue on SQLite and a real PostgreSQL 15: claiming, fencing, expiry, dead letters,
//! priorities, dependencies, tags, models, routing, and waking.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_hub::queue::{NewTask, QueueError, TaskFilter, TaskState};
use serde_json::json;
use support::{open, worker, Backend};

const LEASE: Duration = Duration::from_secs(30);

fn whats(history: &[reagent_hub::queue::HistoryEntry]) -> Vec<&str> {
    history.iter().map(|h| h.what.as_str()).collect()
}

async fn lifecycle(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    q.register_worker(&w).await.unwrap();
    let mut new = NewTask::new("write hello.txt");
    new.spec.workspace = Some("/tmp/ws".into());
    let id = q.add(new).await.unwrap();
    let task = q.get(&id[..8]).await.unwrap();
    assert_eq!(task.state, TaskState::Queued);
    assert_eq!(task.attempt, 0);
    assert_eq!(task.spec.workspace.as_deref(), Some("/tmp/ws"));

    let lease = q.claim(&w, LEASE).await.unwrap().expect("a task to claim");
    assert_eq!(lease.task_id(), id);
    assert_eq!(lease.attempt, 1);
    assert_eq!(lease.owner, w.id);
    let now = q.now_ms().await.unwrap();
    assert!(lease.expires_ms > now + 25_000 && lease.expires_ms <= now + 30_000);
    assert!(
        q.claim(&w, LEASE).await.unwrap().is_none(),
        "one task, claimed once"
    );
    assert!(q.heartbeat(&lease, LEASE).await.unwrap());
    assert!(q.set_run_id(&lease, "run-1").await.unwrap());
    assert!(q.complete(&lease, &json!({"answer": "ok"})).await.unwrap());

    let task = q.get(&id).await.unwrap();
    assert_eq!(task.state, TaskState::Done);
    assert_eq!(task.result, Some(json!({"answer": "ok"})));
    assert_eq!(task.run_id.as_deref(), Some("run-1"));
    assert_eq!(
        whats(&q.history(&id).await.unwrap()),
        ["added", "claimed", "completed"]
    );
    let counts = q.counts().await.unwrap();
    assert_eq!((counts.done, counts.queued, counts.running), (1, 0, 0));
    let workers = q.workers().await.unwrap();
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0].info, w);
    q.worker_heartbeat(&w.id, 1).await.unwrap();
    q.stop_worker(&w.id).await.unwrap();
    assert_eq!(q.workers().await.unwrap()[0].state, "stopped");

    let listed = q
        .list(&TaskFilter {
            states: vec![TaskState::Done],
            ..TaskFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert!(matches!(
        q.add(NewTask::new("  ")).await,
        Err(QueueError::BadInput(_))
    ));
    assert!(matches!(
        q.get("ffffffff").await,
        Err(QueueError::UnknownTask(_))
    ));
    assert!(matches!(
        q.get("'; drop table tasks; --").await,
        Err(QueueError::UnknownTask(_))
    ));
}

async fn stale_token_is_refused_and_recorded(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let (a, b) = (worker("a", &[], &[]), worker("b", &[], &[]));
    let id = q.add(NewTask::new("task")).await.unwrap();
    let first = q
        .claim(&a, Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    assert_eq!(q.reclaim_expired().await.unwrap(), vec![id.clone()]);
    tokio::time::sleep(Duration::from_millis(150)).await; // the backoff
    let second = q.claim(&b, LEASE).await.unwrap().expect("reclaimed task");
    assert_eq!(second.attempt, 2);
    assert_ne!(second.token, first.token);

    // The first worker wakes up: every use of its old lease is refused.
    assert!(!q.heartbeat(&first, LEASE).await.unwrap());
    assert!(!q.complete(&first, &json!("late")).await.unwrap());
    assert!(!q.fail(&first, "late failure", true).await.unwrap());
    assert!(!q.set_run_id(&first, "stale-run").await.unwrap());
    let task = q.get(&id).await.unwrap();
    assert_eq!(task.state, TaskState::Running);
    assert_eq!(task.lease_owner.as_deref(), Some(b.id.as_str()));
    assert_eq!(task.result, None);

    assert!(q.complete(&second, &json!("right")).await.unwrap());
    let task = q.get(&id).await.unwrap();
    assert_eq!(
        (task.state, task.result),
        (TaskState::Done, Some(json!("right")))
    );
    let history = q.history(&id).await.unwrap();
    assert_eq!(
        whats(&history),
        [
            "added",
            "claimed",
            "expired",
            "claimed",
            "heartbeat_lost",
            "late_result_refused",
            "late_result_refused",
            "completed"
        ]
    );
    let refused = &history[5];
    assert_eq!(
        (refused.attempt, refused.worker.as_deref()),
        (1, Some(a.id.as_str()))
    );
    assert!(refused.detail.as_deref().unwrap_or("").contains("running"));
}

async fn expiry_backs_off_then_dead_letters(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    let mut new = NewTask::new("always times out");
    new.max_attempts = 3;
    let id = q.add(new).await.unwrap();
    for attempt in 1..=3 {
        let lease = claim_within(q, &w, Duration::from_millis(30)).await;
        assert_eq!(lease.attempt, attempt);
        // The worker goes silent: the lease expires and is taken back.
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert_eq!(q.reclaim_expired().await.unwrap(), vec![id.clone()]);
        let task = q.get(&id).await.unwrap();
        if attempt < 3 {
            assert_eq!(task.state, TaskState::Queued);
            let backoff = task.run_after_ms - task.updated_ms;
            let expected = 100 * (1 << (attempt - 1));
            assert!(
                (expected - 5..=expected + 5).contains(&backoff),
                "attempt {attempt}: backoff {backoff} ms, expected {expected}"
            );
            assert!(
                q.claim(&w, LEASE).await.unwrap().is_none(),
                "still backing off"
            );
        } else {
            assert_eq!(task.state, TaskState::Dead);
        }
    }
    assert!(q.reclaim_expired().await.unwrap().is_empty());
    let history = whats(&q.history(&id).await.unwrap()).join(",");
    assert_eq!(
        history,
        "added,claimed,expired,claimed,expired,claimed,expired,dead_lettered"
    );
    assert_eq!(q.counts().await.unwrap().dead, 1);

    // retry gives it a fresh set of attempts.
    q.retry(&id).await.unwrap();
    let lease = q.claim(&w, LEASE).await.unwrap().expect("retried task");
    assert_eq!(lease.attempt, 1);
    assert!(matches!(
        q.retry(&id).await,
        Err(QueueError::InvalidState {
            state: TaskState::Running,
            ..
        })
    ));
}

async fn claim_within(
    q: &reagent_hub::queue::Queue,
    w: &reagent_hub::queue::WorkerInfo,
    lease: Duration,
) -> reagent_hub::queue::Lease {
    let (start, limit) = (Instant::now(), Duration::from_secs(5));
    loop {
        if let Some(lease) = q.claim(w, lease).await.unwrap() {
            return lease;
        }
        assert!(
            start.elapsed() < limit,
            "nothing claimable within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn failures(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    let mut new = NewTask::new("fails");
    new.max_attempts = 2;
    let id = q.add(new).await.unwrap();
    let lease = q.claim(&w, LEASE).await.unwrap().unwrap();
    assert!(q.fail(&lease, "model server down", true).await.unwrap());
    assert_eq!(q.get(&id).await.unwrap().state, TaskState::Queued);
    let lease = claim_within(q, &w, LEASE).await;
    assert!(q.fail(&lease, "model server down", true).await.unwrap());
    let task = q.get(&id).await.unwrap();
    assert_eq!(
        (task.state, task.error.as_deref()),
        (TaskState::Dead, Some("model server down"))
    );

    let other = q.add(NewTask::new("bad input")).await.unwrap();
    let lease = q.claim(&w, LEASE).await.unwrap().unwrap();
    assert!(q.fail(&lease, "no such workspace", false).await.unwrap());
    assert_eq!(q.get(&other).await.unwrap().state, TaskState::Failed);
}

async fn priorities_then_age(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    let mut ids = Vec::new();
    for (name, priority) in [("low", 0), ("high", 10), ("mid", 5), ("high2", 10)] {
        let mut new = NewTask::new(name);
        new.priority = priority;
        ids.push((name, q.add(new).await.unwrap()));
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let mut order = Vec::new();
    while let Some(lease) = q.claim(&w, LEASE).await.unwrap() {
        order.push(lease.task.task.clone());
    }
    assert_eq!(order, ["high", "high2", "mid", "low"]);
}

async fn dependencies(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    let a = q.add(NewTask::new("a")).await.unwrap();
    let b = q.add(NewTask::new("b")).await.unwrap();
    let mut c = NewTask::new("c after a and b");
    c.depends_on = vec![a.clone(), b.clone()];
    let c = q.add(c).await.unwrap();
    let mut d = NewTask::new("d after c");
    d.depends_on = vec![c.clone()];
    let d = q.add(d).await.unwrap();
    assert_eq!(q.get(&c).await.unwrap().state, TaskState::Waiting);
    assert_eq!(q.dependencies(&c).await.unwrap().len(), 2);

    let first = q.claim(&w, LEASE).await.unwrap().unwrap();
    let second = q.claim(&w, LEASE).await.unwrap().unwrap();
    assert!(q.claim(&w, LEASE).await.unwrap().is_none(), "c and d wait");
    q.complete(&first, &json!(null)).await.unwrap();
    assert_eq!(q.get(&c).await.unwrap().state, TaskState::Waiting);
    q.complete(&second, &json!(null)).await.unwrap();
    assert_eq!(q.get(&c).await.unwrap().state, TaskState::Queued);
    let lease = q.claim(&w, LEASE).await.unwrap().unwrap();
    assert_eq!(lease.task_id(), c);
    assert_eq!(q.get(&d).await.unwrap().state, TaskState::Waiting);

    // A dependency failing fails its dependants, transitively.
    let mut e = NewTask::new("e after d");
    e.depends_on = vec![d.clone()];
    let e = q.add(e).await.unwrap();
    assert!(q.fail(&lease, "broken", false).await.unwrap());
    assert_eq!(q.get(&d).await.unwrap().state, TaskState::Failed);
    assert_eq!(q.get(&e).await.unwrap().state, TaskState::Failed);
    // Adding a task after a failed one fails it at once; an unknown dependency is refused.
    let mut f = NewTask::new("f after c");
    f.depends_on = vec![c.clone()];
    let f = q.add(f).await.unwrap();
    assert_eq!(q.get(&f).await.unwrap().state, TaskState::Failed);
    let mut g = NewTask::new("g");
    g.depends_on = vec!["00000000-0000-0000-0000-000000000000".into()];
    assert!(matches!(q.add(g).await, Err(QueueError::UnknownTask(_))));
    // A cancelled dependency too.
    let h = q.add(NewTask::new("h")).await.unwrap();
    let mut i = NewTask::new("i after h");
    i.depends_on = vec![h.clone()];
    let i = q.add(i).await.unwrap();
    q.cancel(&h).await.unwrap();
    assert_eq!(q.get(&i).await.unwrap().state, TaskState::Failed);
    assert!(matches!(
        q.cancel(&h).await,
        Err(QueueError::InvalidState {
            state: TaskState::Cancelled,
            ..
        })
    ));
}

async fn tags_models_and_routing(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let gpu = worker("gpu", &["gpu", "linux"], &["qwen3:8b"]);
    let plain = worker("plain", &["linux"], &["smollm2"]);
    let mut needs_gpu = NewTask::new("needs gpu");
    needs_gpu.tags = vec!["gpu".into()];
    let needs_gpu = q.add(needs_gpu).await.unwrap();
    let mut needs_qwen = NewTask::new("needs qwen");
    needs_qwen.model = Some("qwen3:8b".into());
    let needs_qwen = q.add(needs_qwen).await.unwrap();
    let mut needs_both = NewTask::new("needs linux+gpu on qwen");
    needs_both.tags = vec!["linux".into(), "gpu".into()];
    needs_both.model = Some("qwen3:8b".into());
    let needs_both = q.add(needs_both).await.unwrap();
    let mut needs_unknown = NewTask::new("needs a model nobody serves");
    needs_unknown.model = Some("llama-405b".into());
    q.add(needs_unknown).await.unwrap();
    let anyone = q.add(NewTask::new("anyone")).await.unwrap();

    let lease = q.claim(&plain, LEASE).await.unwrap().unwrap();
    assert_eq!(lease.task_id(), anyone);
    assert!(q.claim(&plain, LEASE).await.unwrap().is_none());
    let mut got = HashSet::new();
    while let Some(lease) = q.claim(&gpu, LEASE).await.unwrap() {
        got.insert(lease.task.id.clone());
    }
    assert_eq!(got, HashSet::from([needs_gpu, needs_qwen, needs_both]));
    assert_eq!(
        q.counts().await.unwrap().queued,
        1,
        "the unserved model waits"
    );

    // Routing: only the chosen worker claims it.
    let routed = q.add(NewTask::new("routed")).await.unwrap();
    assert!(q.route(&routed, &plain.id).await.unwrap());
    assert!(q.claim(&gpu, LEASE).await.unwrap().is_none());
    assert_eq!(
        q.claim(&plain, LEASE).await.unwrap().unwrap().task_id(),
        routed
    );
    assert!(!q.route(&routed, &gpu.id).await.unwrap(), "already running");
}

async fn each_task_claimed_once_under_concurrency(backend: Backend) {
    let t = open(backend).await;
    let tasks = 300;
    for i in 0..tasks {
        t.queue
            .add(NewTask::new(format!("task {i}")))
            .await
            .unwrap();
    }
    let claimed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut claimers = Vec::new();
    for n in 0..16 {
        let (q, claimed) = (t.queue.clone(), claimed.clone());
        claimers.push(tokio::spawn(async move {
            let w = worker(&format!("c{n}"), &[], &[]);
            while let Some(lease) = q.claim(&w, LEASE).await.unwrap() {
                claimed.lock().unwrap().push(lease.task.id.clone());
                assert!(q.complete(&lease, &json!(n)).await.unwrap());
            }
        }));
    }
    for c in claimers {
        c.await.unwrap();
    }
    let claimed = claimed.lock().unwrap().clone();
    let unique: HashSet<_> = claimed.iter().collect();
    assert_eq!(claimed.len(), tasks, "every task claimed");
    assert_eq!(unique.len(), tasks, "no task claimed twice");
    assert_eq!(t.queue.counts().await.unwrap().done, tasks as u64);
}

async fn listen_notify_wakes_at_once(backend: Backend) {
    let t = open(backend).await;
    // A polling interval far longer than the test: only a notification can wake it in time.
    let mut wakeup = t.queue.wakeup(Duration::from_secs(60), true);
    assert_eq!(wakeup.listens(), backend == Backend::Postgres);
    if backend == Backend::Sqlite {
        let mut polling = t.queue.wakeup(Duration::from_millis(50), true);
        let start = Instant::now();
        polling.wait().await;
        assert!(start.elapsed() >= Duration::from_millis(50));
        return;
    }
    // Let the listener connect (its connection itself wakes once), then add a task.
    tokio::time::timeout(Duration::from_secs(10), wakeup.wait())
        .await
        .expect("the listener connects");
    let queue = t.queue.clone();
    let adder = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        queue.add(NewTask::new("wake up")).await.unwrap()
    });
    let start = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), wakeup.wait())
        .await
        .expect("woken by the notification, not the 60 s poll");
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "woken by the add, not before"
    );
    adder.await.unwrap();
    let w = worker("w", &[], &[]);
    assert!(t.queue.claim(&w, LEASE).await.unwrap().is_some());
}

async fn cancel_running_task_refuses_its_result(backend: Backend) {
    let t = open(backend).await;
    let q = &t.queue;
    let w = worker("w", &[], &[]);
    let id = q.add(NewTask::new("long")).await.unwrap();
    let lease = q.claim(&w, LEASE).await.unwrap().unwrap();
    q.cancel(&id).await.unwrap();
    assert!(!q.heartbeat(&lease, LEASE).await.unwrap());
    assert!(!q.complete(&lease, &json!("too late")).await.unwrap());
    let task = q.get(&id).await.unwrap();
    assert_eq!((task.state, task.result), (TaskState::Cancelled, None));
    q.retry(&id).await.unwrap();
    assert_eq!(q.get(&id).await.unwrap().state, TaskState::Queued);
    let history = whats(&q.history(&id).await.unwrap()).join(",");
    assert_eq!(
        history,
        "added,claimed,cancelled,heartbeat_lost,late_result_refused,retried"
    );
}

both_backends!(
    lifecycle,
    stale_token_is_refused_and_recorded,
    expiry_backs_off_then_dead_letters,
    failures,
    priorities_then_age,
    dependencies,
    tags_models_and_routing,
    each_task_claimed_once_under_concurrency,
    listen_notify_wakes_at_once,
    cancel_running_task_refuses_its_result,
);
