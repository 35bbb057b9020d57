//! The hub through a PostgreSQL restart: connections cut, the server down longer than the
//! lease; the hub reconnects, keeps (or wins back) the lease and goes on — nothing dispatched
//! twice.

use std::sync::Arc;
use std::time::Duration;

use reagent_hub::goals::{add_goal, get_goal, GoalSpec, GoalState};
use reagent_hub::leader::current_leader;
use reagent_hub::planner::Planner;
use reagent_hub::HubConfig;
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_store::{Location, Store};
use reagent_testkit::{ModelSpec, PostgresCluster, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::json;

use crate::harness::{fast_config, start, wait_for};

const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hub_rides_out_a_postgres_restart() {
    // A cluster of its own: the restart must not disturb other tests.
    let pg = Arc::new(PostgresCluster::start().expect("PostgreSQL 15"));
    let store = Store::open(&Location::Postgres(pg.new_database().unwrap()))
        .await
        .unwrap();
    let pool = store.pool().clone();
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
        .turns([graph(1), graph(2)]);
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
    let dispatched = |id: String| {
        let pool = pool.clone();
        async move {
            wait_for("the goal dispatched", LIMIT, || async {
                let g = get_goal(&pool, &id).await.ok()?;
                (g.state == GoalState::Running && g.tasks.len() == 1).then_some(())
            })
            .await
        }
    };
    let first = add_goal(&pool, "one", &GoalSpec::default()).await.unwrap();
    dispatched(first.clone()).await;
    let before = current_leader(&pool, "hub").await.unwrap().unwrap();

    // Down for longer than the 2 s lease.
    let restart = pg.clone();
    tokio::task::spawn_blocking(move || restart.restart(Duration::from_secs(3)))
        .await
        .unwrap()
        .unwrap();

    let second = wait_for("the store back", LIMIT, || async {
        add_goal(&pool, "two", &GoalSpec::default()).await.ok()
    })
    .await;
    dispatched(second).await;
    let after = current_leader(&pool, "hub").await.unwrap().unwrap();
    assert_eq!(after.holder, before.holder, "the only hub leads again");
    let counts = reagent_hub::queue::Queue::new(&store)
        .counts()
        .await
        .unwrap();
    assert_eq!(counts.queued, 2, "one task per goal: {counts:?}");
    assert_eq!(server.requests().len(), 2, "each goal decomposed once");
    assert_eq!(
        get_goal(&pool, &first).await.unwrap().state,
        GoalState::Running
    );
}
