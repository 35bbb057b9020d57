//! The hub through a PostgreSQL restart: connections cut, the server down longer than the
//! lease; the hub reconnects, keeps (or wins back) the lease and goes on — the goal it had
//! dispatched is verified once its task is done, nothing decomposed or dispatched twice.

use std::sync::Arc;
use std::time::Duration;

use reagent_hub::goals::{add_goal, get_goal, GoalSpec, GoalState};
use reagent_hub::leader::current_leader;
use reagent_hub::planner::Planner;
use reagent_hub::queue::Queue;
use reagent_hub::HubConfig;
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_store::{Location, Store};
use reagent_testkit::{ModelSpec, PostgresCluster, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::json;

use crate::harness::{fast_config, start, wait_for};
use crate::support::worker;

const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_rides_out_a_postgres_restart() {
    // A cluster of its own: the restart must not disturb other tests.
    let pg = Arc::new(PostgresCluster::start().expect("PostgreSQL 15"));
    let store = Store::open(&Location::Postgres(pg.new_database().unwrap()))
        .await
        .unwrap();
    let pool = store.pool().clone();
    let verdict = json!({"checks": [{"check": "done", "passed": true, "note": "it is"}]});
    let graph = |n: u32| {
        Turn::text(
            json!({
                "tasks": [{"id": "t", "task": format!("task of goal {n}"), "depends_on": [], "tools": []}],
                "acceptance": ["done"]
            })
            .to_string(),
        )
    };
    let script = ScriptBuilder::new()
        .model(ModelSpec::new("qwen3:8b"))
        .turns([graph(1), Turn::text(verdict.to_string())]);
    let server = ScriptedServer::start(Wire::Ollama, script).await.unwrap();
    let mut provider = ProviderConfig::new(ProviderKind::Ollama);
    provider.base_urls = vec![server.base_url()];
    let config = HubConfig {
        planner: Some(Planner::new(
            build_provider(&provider).unwrap(),
            "qwen3:8b",
            vec![],
        )),
        ..fast_config()
    };
    let _hub = start(&store, config);
    let first = add_goal(&pool, "one", &GoalSpec::default()).await.unwrap();
    wait_for("the goal dispatched", LIMIT, || async {
        let g = get_goal(&pool, &first).await.ok()?;
        (g.state == GoalState::Running && g.tasks.len() == 1).then_some(())
    })
    .await;
    let before = current_leader(&pool, "hub").await.unwrap().unwrap();

    // Down for longer than the 2 s lease.
    let restart = pg.clone();
    tokio::task::spawn_blocking(move || restart.restart(Duration::from_secs(3)))
        .await
        .unwrap()
        .unwrap();

    // The task is done after the restart; the hub, back on the store, verifies the goal.
    let queue = Queue::new(&store);
    let w = worker("w", &[], &[]);
    let lease = wait_for("the store back", LIMIT, || async {
        queue.register_worker(&w).await.ok()?;
        queue.claim(&w, Duration::from_secs(30)).await.ok()?
    })
    .await;
    assert!(queue
        .complete(&lease, &json!({"answer": "done"}))
        .await
        .unwrap());
    wait_for("the goal verified", LIMIT, || async {
        let g = get_goal(&pool, &first).await.ok()?;
        (g.state == GoalState::Verified).then_some(())
    })
    .await;
    let after = current_leader(&pool, "hub").await.unwrap().unwrap();
    assert_eq!(after.holder, before.holder, "the only hub leads again");
    let counts = queue.counts().await.unwrap();
    assert_eq!((counts.done, counts.queued), (1, 0), "one task: {counts:?}");
    assert_eq!(server.requests().len(), 2, "decomposed once, verified once");
}
