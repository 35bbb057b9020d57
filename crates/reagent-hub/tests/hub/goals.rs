//! Goals end to end, with a scripted Ollama server speaking the real wire format: decomposed
//! under a JSON Schema into a graph, validated (a cyclic graph refused), dispatched through the
//! queue in dependency order, verified, corrected; the cost ledger's cap.

use std::time::Duration;

use reagent_hub::actions::ActionPolicy;
use reagent_hub::goals::{add_goal, get_goal, GoalRecord, GoalSpec, GoalState};
use reagent_hub::machine::{self, HubState};
use reagent_hub::planner::Planner;
use reagent_hub::queue::{Queue, TaskState, WorkerInfo};
use reagent_hub::{actions, cost, HubConfig};
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::{json, Value};
use sqlx::AnyPool;

use crate::harness::{fast_config, start, transitions, wait_for};
use crate::support::{open, worker, Backend};

const LIMIT: Duration = Duration::from_secs(20);
const MODEL: &str = "qwen3:8b";

async fn model_server(turns: Vec<Value>) -> ScriptedServer {
    let script = ScriptBuilder::new()
        .model(ModelSpec::new(MODEL))
        .turns(turns.into_iter().map(|t| Turn::text(t.to_string())));
    ScriptedServer::start(Wire::Ollama, script).await.unwrap()
}

fn hub_config(server: &ScriptedServer) -> HubConfig {
    let mut provider = ProviderConfig::new(ProviderKind::Ollama);
    provider.base_urls = vec![server.base_url()];
    provider.max_retries = 0;
    let tools = vec!["read_file".to_owned(), "write_file".to_owned()];
    HubConfig {
        planner: Some(Planner::new(
            build_provider(&provider).unwrap(),
            MODEL,
            tools,
        )),
        ..fast_config()
    }
}

fn two_step_graph() -> Value {
    json!({
        "tasks": [
            {"id": "check", "task": "Check that hello.txt says hello", "depends_on": ["write"], "tools": ["read_file"]},
            {"id": "write", "task": "Write hello.txt saying hello", "depends_on": [], "tools": ["write_file"]}
        ],
        "acceptance": ["hello.txt says hello"]
    })
}

fn verdict(passed: bool) -> Value {
    json!({"checks": [{"check": "hello.txt says hello", "passed": passed, "note": "read it"}]})
}

async fn goal_in(pool: &AnyPool, id: &str, state: GoalState) -> GoalRecord {
    wait_for(&format!("goal {id} {}", state.as_str()), LIMIT, || async {
        let g = get_goal(pool, id).await.unwrap();
        assert!(
            !matches!(g.state, GoalState::Failed) || state == GoalState::Failed,
            "the goal failed: {g:?}"
        );
        (g.state == state).then_some(g)
    })
    .await
}

/// A registered worker serving [`MODEL`] (the hub may route tasks to it).
async fn registered(queue: &Queue) -> WorkerInfo {
    let w = worker("w", &[], &[MODEL]);
    queue.register_worker(&w).await.unwrap();
    w
}

/// Claim and complete `tasks` tasks one at a time as worker `w` (in the order the queue allows);
/// the order they were claimed in.
async fn work_off(queue: &Queue, w: &WorkerInfo, tasks: usize) -> Vec<String> {
    let mut order = Vec::new();
    while order.len() < tasks {
        let lease = wait_for("a claimable task", LIMIT, || async {
            queue.claim(w, Duration::from_secs(30)).await.unwrap()
        })
        .await;
        assert!(queue
            .complete(&lease, &json!({"answer": "done"}))
            .await
            .unwrap());
        order.push(lease.task.task.clone());
    }
    order
}

async fn a_goal_is_decomposed_dispatched_in_order_and_verified(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let server = model_server(vec![two_step_graph(), verdict(true)]).await;
    let _hub = start(&t.store, hub_config(&server));
    let spec = GoalSpec {
        model: Some(MODEL.into()),
        workspace: Some("/srv/ws".into()),
    };
    let id = add_goal(&pool, "Say hello in hello.txt", &spec)
        .await
        .unwrap();

    let running = wait_for("both tasks dispatched", LIMIT, || async {
        let g = get_goal(&pool, &id).await.unwrap();
        (g.state == GoalState::Running && g.tasks.len() == 2).then_some(g)
    })
    .await;
    let write = running.tasks["write"].clone();
    let check = running.tasks["check"].clone();
    assert_eq!(t.queue.get(&write).await.unwrap().state, TaskState::Queued);
    let check_task = t.queue.get(&check).await.unwrap();
    assert_eq!(check_task.state, TaskState::Waiting, "it waits for `write`");
    assert_eq!(check_task.model.as_deref(), Some(MODEL));
    assert_eq!(check_task.spec.workspace.as_deref(), Some("/srv/ws"));
    assert_eq!(check_task.goal_id.as_deref(), Some(id.as_str()));
    assert_eq!(t.queue.dependencies(&check).await.unwrap(), [write]);

    let w = registered(&t.queue).await;
    let order = work_off(&t.queue, &w, 2).await;
    assert_eq!(
        order,
        [
            "Write hello.txt saying hello",
            "Check that hello.txt says hello"
        ]
    );
    let done = goal_in(&pool, &id, GoalState::Verified).await;
    let v = done.verdict.unwrap();
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["checks"][0]["passed"], true);

    // The graph was forced by its JSON Schema; the verification saw the results.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let schema = &requests[0]["format"];
    assert_eq!(schema["required"], json!(["tasks", "acceptance"]));
    assert_eq!(
        schema["properties"]["tasks"]["items"]["properties"]["tools"]["items"]["enum"],
        json!(["read_file", "write_file"])
    );
    let asked = requests[1]["messages"][1]["content"].as_str().unwrap();
    assert!(
        asked.contains("hello.txt says hello") && asked.contains("done"),
        "{asked}"
    );
    assert_eq!(
        cost::calls_this_hour(&pool, HubState::Contemplating)
            .await
            .unwrap(),
        2
    );
    // Whether the hub passed through executing depends on how fast the worker was; it
    // starts by contemplating and ends resting.
    wait_for("the hub resting", LIMIT, || async {
        let s = machine::load_state(&pool, "hub").await.unwrap().unwrap();
        (s.state == HubState::Resting).then_some(())
    })
    .await;
    let steps = transitions(&pool).await;
    assert_eq!(
        steps[0],
        (HubState::Resting, HubState::Contemplating),
        "{steps:?}"
    );
}

async fn a_cyclic_graph_is_rejected_with_a_clear_error(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let cyclic = json!({
        "tasks": [
            {"id": "a", "task": "do a", "depends_on": ["b"], "tools": []},
            {"id": "b", "task": "do b", "depends_on": ["a"], "tools": []}
        ],
        "acceptance": ["done"]
    });
    let server = model_server(vec![cyclic.clone(), cyclic]).await;
    let _hub = start(&t.store, hub_config(&server));
    let id = add_goal(&pool, "Loop forever", &GoalSpec::default())
        .await
        .unwrap();
    let failed = goal_in(&pool, &id, GoalState::Failed).await;
    assert_eq!(
        failed.detail.as_deref(),
        Some(
            "the model's task graph was rejected: invalid task graph: the dependencies form a \
             cycle: a -> b -> a (each depends on the next)"
        )
    );
    // The model was told why its first graph was refused; nothing reached the queue.
    let second = server.requests()[1]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        second.contains("was rejected") && second.contains("a -> b -> a"),
        "{second}"
    );
    let counts = t.queue.counts().await.unwrap();
    assert_eq!(counts.queued + counts.waiting, 0);
    let rejected = actions::recent(&pool, "hub", 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == "graph_rejected")
        .count();
    assert_eq!(rejected, 2);
}

async fn a_goal_that_fails_verification_gets_a_corrective_round(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let fix = json!({
        "tasks": [{"id": "fix", "task": "Make hello.txt say hello", "depends_on": [], "tools": ["write_file"]}],
        "acceptance": ["hello.txt says hello"]
    });
    let server = model_server(vec![two_step_graph(), verdict(false), fix, verdict(true)]).await;
    let _hub = start(&t.store, hub_config(&server));
    let id = add_goal(&pool, "Say hello in hello.txt", &GoalSpec::default())
        .await
        .unwrap();
    goal_in(&pool, &id, GoalState::Running).await;
    let w = registered(&t.queue).await;
    work_off(&t.queue, &w, 2).await;
    let corrected = wait_for("the corrective round", LIMIT, || async {
        let g = get_goal(&pool, &id).await.unwrap();
        (g.rounds == 1 && g.state == GoalState::Running && !g.tasks.is_empty()).then_some(g)
    })
    .await;
    assert_eq!(corrected.tasks.keys().collect::<Vec<_>>(), ["fix"]);
    assert_eq!(corrected.verdict.as_ref().unwrap()["verdict"], "failed");
    let asked = server.requests()[2]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(asked.contains("did not pass"), "{asked}");
    assert_eq!(
        work_off(&t.queue, &w, 1).await,
        ["Make hello.txt say hello"]
    );
    let done = goal_in(&pool, &id, GoalState::Verified).await;
    assert_eq!(done.verdict.unwrap()["round"], 1);
    let steps = transitions(&pool).await;
    assert!(
        steps.contains(&(HubState::Resting, HubState::Improving)),
        "{steps:?}"
    );
    assert_eq!(
        cost::calls_this_hour(&pool, HubState::Improving)
            .await
            .unwrap(),
        1
    );
}

async fn the_cost_cap_holds_back_the_hubs_model_calls(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let server = model_server(vec![two_step_graph(), verdict(true), two_step_graph()]).await;
    let first = add_goal(&pool, "first", &GoalSpec::default())
        .await
        .unwrap();
    let second = add_goal(&pool, "second", &GoalSpec::default())
        .await
        .unwrap();
    let config = HubConfig {
        calls_per_hour: 1,
        ..hub_config(&server)
    };
    let _hub = start(&t.store, config);
    goal_in(&pool, &first, GoalState::Running).await;
    // The first goal's tasks end: the hub is idle, with a goal to verify and one to decompose,
    // and no call left this hour.
    let w = registered(&t.queue).await;
    work_off(&t.queue, &w, 2).await;
    goal_in(&pool, &first, GoalState::Checking).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        get_goal(&pool, &first).await.unwrap().state,
        GoalState::Checking
    );
    assert_eq!(
        get_goal(&pool, &second).await.unwrap().state,
        GoalState::Pending
    );
    assert_eq!(server.requests().len(), 1, "one call allowed this hour");
    assert_eq!(
        cost::calls_this_hour(&pool, HubState::Contemplating)
            .await
            .unwrap(),
        1
    );
    let state = machine::load_state(&pool, "hub").await.unwrap().unwrap();
    assert_eq!(
        state.state,
        HubState::Resting,
        "no waiting in contemplating"
    );
}

async fn a_failed_model_call_is_retried_after_the_cooldown(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let script = ScriptBuilder::new()
        .model(ModelSpec::new(MODEL))
        .turn(Turn::error(500, "model is loading"))
        .turn(Turn::text(two_step_graph().to_string()));
    let server = ScriptedServer::start(Wire::Ollama, script).await.unwrap();
    let config = HubConfig {
        healing: ActionPolicy {
            cooldown: Duration::from_millis(800),
            max_per_hour: 5,
        },
        ..hub_config(&server)
    };
    let _hub = start(&t.store, config);
    let id = add_goal(&pool, "Say hello", &GoalSpec::default())
        .await
        .unwrap();
    goal_in(&pool, &id, GoalState::Running).await;
    let failures: Vec<_> = actions::recent(&pool, "hub", 100)
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.kind == "plan")
        .collect();
    assert_eq!(
        failures.len(),
        1,
        "asked again only after the cooldown: {failures:?}"
    );
    assert!(failures[0]
        .detail
        .as_deref()
        .unwrap()
        .contains("model is loading"));
    assert_eq!(server.requests().len(), 2);
    // While the goal cooled down the hub did not sit in contemplating.
    let steps = transitions(&pool).await;
    let entered = steps
        .iter()
        .filter(|s| **s == (HubState::Resting, HubState::Contemplating))
        .count();
    assert_eq!(entered, 2, "{steps:?}");
}

crate::both_backends!(
    a_failed_model_call_is_retried_after_the_cooldown,
    a_goal_is_decomposed_dispatched_in_order_and_verified,
    a_cyclic_graph_is_rejected_with_a_clear_error,
    a_goal_that_fails_verification_gets_a_corrective_round,
    the_cost_cap_holds_back_the_hubs_model_calls,
);
