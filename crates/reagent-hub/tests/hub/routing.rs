//! Routing and task healing with real endpoints: queued tasks go to the least loaded worker
//! whose endpoint serves their model, and move when that endpoint goes down; expired leases
//! are reclaimed, poison tasks dead-lettered, tasks routed to a dead worker taken back.

use std::collections::HashMap;
use std::time::Duration;

use reagent_hub::actions;
use reagent_hub::endpoints::list_endpoints;
use reagent_hub::queue::{NewTask, Queue, TaskFilter, TaskState, WorkerInfo};
use reagent_hub::HubConfig;
use reagent_protocol::CancellationToken;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Wire};
use sqlx::AnyPool;

use crate::harness::{fast_config, start, wait_for};
use crate::support::{open, worker, Backend};

const LIMIT: Duration = Duration::from_secs(20);
const MODEL: &str = "qwen3:8b";

fn script() -> ScriptBuilder {
    ScriptBuilder::new().model(ModelSpec::new(MODEL))
}

/// Heartbeats for `workers` every 200 ms until the token is dropped (cancelled).
struct Heartbeats(CancellationToken);

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn heartbeats(queue: &Queue, workers: &[&WorkerInfo]) -> Heartbeats {
    let token = CancellationToken::new();
    let (queue, ids, stop) = (
        queue.clone(),
        workers.iter().map(|w| w.id.clone()).collect::<Vec<_>>(),
        token.clone(),
    );
    tokio::spawn(async move {
        while !stop.is_cancelled() {
            for id in &ids {
                queue.worker_heartbeat(id, 0).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    Heartbeats(token)
}

/// Queued tasks per worker they are routed to (`-` for none).
async fn routes(queue: &Queue) -> HashMap<String, Vec<String>> {
    let filter = TaskFilter {
        states: vec![TaskState::Queued],
        ..TaskFilter::default()
    };
    let mut by: HashMap<String, Vec<String>> = HashMap::new();
    for t in queue.list(&filter).await.unwrap() {
        let to = t.routed_to.unwrap_or_else(|| "-".into());
        by.entry(to).or_default().push(t.task);
    }
    by
}

async fn kinds(pool: &AnyPool, kind: &str) -> Vec<String> {
    actions::recent(pool, "hub", 1000)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == kind)
        .map(|a| a.target)
        .collect()
}

async fn tasks_follow_load_and_healthy_endpoints(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let server_a = ScriptedServer::start(Wire::Ollama, script()).await.unwrap();
    let server_b = ScriptedServer::start(Wire::Ollama, script()).await.unwrap();
    let with_endpoint = |name: &str, url: String| WorkerInfo {
        endpoint: Some(url),
        capacity: 2,
        ..worker(name, &[], &[MODEL])
    };
    let a = with_endpoint("a", server_a.base_url());
    let b = with_endpoint("b", server_b.base_url());
    for w in [&a, &b] {
        t.queue.register_worker(w).await.unwrap();
    }
    let _beats = heartbeats(&t.queue, &[&a, &b]);
    for i in 0..4 {
        let mut task = NewTask::new(format!("task {i}"));
        task.model = Some(MODEL.into());
        t.queue.add(task).await.unwrap();
    }
    let mut odd = NewTask::new("needs mistral");
    odd.model = Some("mistral".into());
    t.queue.add(odd).await.unwrap();
    let _hub = start(&t.store, fast_config());

    let spread = wait_for("four tasks routed", LIMIT, || async {
        let r = routes(&t.queue).await;
        (r.get(&a.id).map_or(0, Vec::len) + r.get(&b.id).map_or(0, Vec::len) == 4).then_some(r)
    })
    .await;
    assert_eq!(spread[&a.id].len(), 2, "{spread:?}");
    assert_eq!(spread[&b.id].len(), 2, "{spread:?}");
    assert_eq!(spread["-"], ["needs mistral"], "no worker serves mistral");
    let urls: Vec<String> = list_endpoints(&pool)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.url)
        .collect();
    assert!(urls.contains(&server_a.base_url()) && urls.contains(&server_b.base_url()));

    // a's model server stops: it is marked down and its tasks move to b.
    server_a.stop().await;
    let moved = wait_for("a's tasks moved to b", LIMIT, || async {
        let r = routes(&t.queue).await;
        (r.get(&b.id).map_or(0, Vec::len) == 4).then_some(r)
    })
    .await;
    assert!(!moved.contains_key(&a.id), "{moved:?}");
    let down = list_endpoints(&pool).await.unwrap();
    assert!(down
        .iter()
        .any(|e| e.url == server_a.base_url() && !e.healthy));
    let mut rerouted = kinds(&pool, "reroute").await;
    rerouted.sort();
    rerouted.dedup();
    assert_eq!(rerouted.len(), 2, "{rerouted:?}");

    // Back up: marked up again.
    let _back = ScriptedServer::start_at(Wire::Ollama, script(), server_a.addr())
        .await
        .unwrap();
    wait_for("a's endpoint up again", LIMIT, || async {
        let e = list_endpoints(&pool).await.unwrap();
        e.iter()
            .any(|e| e.url == server_a.base_url() && e.healthy)
            .then_some(())
    })
    .await;
    assert!(kinds(&pool, "endpoint_up")
        .await
        .contains(&server_a.base_url()));
}

async fn expired_leases_are_reclaimed_and_poison_tasks_dead_lettered(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let dead = worker("dead", &[], &[]);
    t.queue.register_worker(&dead).await.unwrap();
    let mut poison = NewTask::new("poison");
    poison.max_attempts = 1;
    let poison = t.queue.add(poison).await.unwrap();
    let retried = t.queue.add(NewTask::new("retried")).await.unwrap();
    for _ in 0..2 {
        // The worker claims both and dies: no heartbeat, no result.
        let lease = t
            .queue
            .claim(&dead, Duration::from_millis(300))
            .await
            .unwrap();
        assert!(lease.is_some());
    }
    let config = HubConfig {
        worker_timeout: Duration::from_millis(500),
        ..fast_config()
    };
    let _hub = start(&t.store, config);
    wait_for("both leases healed", LIMIT, || async {
        let k = kinds(&pool, "dead_letter").await;
        let r = kinds(&pool, "reclaim").await;
        (k == [poison.clone()] && r == [retried.clone()]).then_some(())
    })
    .await;
    assert_eq!(t.queue.get(&poison).await.unwrap().state, TaskState::Dead);
    // The retried task is queued again, and never left routed to the dead worker.
    let back = wait_for(
        "the retried task queued, not routed to the dead",
        LIMIT,
        || async {
            let task = t.queue.get(&retried).await.unwrap();
            (task.state == TaskState::Queued && task.routed_to.as_deref() != Some(dead.id.as_str()))
                .then_some(task)
        },
    )
    .await;
    assert_eq!(back.attempt, 1);
}

crate::both_backends!(
    tasks_follow_load_and_healthy_endpoints,
    expired_leases_are_reclaimed_and_poison_tasks_dead_lettered,
);
