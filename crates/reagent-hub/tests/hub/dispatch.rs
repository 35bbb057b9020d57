//! A goal's node becomes exactly one task: the queue refuses a second task for a node key, and
//! a hub that finds a goal half-dispatched adopts the node's task by its key — not a task
//! that merely has the same text.

use std::time::Duration;

use reagent_hub::goals::{add_goal, get_goal, node_key, update_goal, GoalSpec, GoalState};
use reagent_hub::goals::{GoalRecord, GoalUpdate};
use reagent_hub::graph::TaskGraph;
use reagent_hub::leader::Election;
use reagent_hub::queue::{NewTask, TaskFilter};
use serde_json::json;

use crate::harness::{fast_config, start, wait_for};
use crate::support::{open, Backend};

const LIMIT: Duration = Duration::from_secs(20);

fn node_task(goal: &str, node: &str, text: &str) -> NewTask {
    let mut new = NewTask::new(text);
    new.goal_id = Some(goal.to_owned());
    new.goal_node = Some(node_key(goal, 0, node));
    new
}

async fn a_node_key_is_added_once(backend: Backend) {
    let t = open(backend).await;
    let first = t.queue.add(node_task("g", "a", "Do it")).await.unwrap();
    let again = t.queue.add(node_task("g", "a", "Do it")).await.unwrap();
    assert_eq!(again, first, "the node's stored task is given back");
    let other = t.queue.add(node_task("g", "b", "Do it")).await.unwrap();
    assert_ne!(
        other, first,
        "another node of the same text is another task"
    );
    let plain = t.queue.add(NewTask::new("Do it")).await.unwrap();
    let plain_too = t.queue.add(NewTask::new("Do it")).await.unwrap();
    assert_ne!(plain, plain_too, "tasks without a node are never merged");

    let tasks = t.queue.list(&TaskFilter::default()).await.unwrap();
    assert_eq!(tasks.len(), 4, "{tasks:?}");
    let stored = t.queue.get(&first).await.unwrap();
    assert_eq!(stored.goal_node.as_deref(), Some("g/0/a"));
    let added = t.queue.history(&first).await.unwrap();
    assert_eq!(added.len(), 1, "added once: {added:?}");
}

async fn a_half_dispatched_goal_adopts_its_nodes_tasks_by_key_not_text(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    // Two nodes say the same thing; `after` needs `second`.
    let graph: TaskGraph = serde_json::from_value(json!({
        "tasks": [
            {"id": "first", "task": "Tidy the notes", "depends_on": [], "tools": []},
            {"id": "second", "task": "Tidy the notes", "depends_on": [], "tools": []},
            {"id": "after", "task": "Summarise the notes", "depends_on": ["second"], "tools": []}
        ],
        "acceptance": ["the notes are tidy"]
    }))
    .unwrap();
    let id = add_goal(&pool, "Tidy up", &GoalSpec::default())
        .await
        .unwrap();

    // An earlier leader moved the goal to running and added `second`'s task, then died
    // before saving the map; a task of the same text without a node key is in the goal too.
    let earlier = Election::new(&t.store, "hub", "earlier", Duration::from_secs(30));
    let fence = earlier.try_acquire().await.unwrap().unwrap();
    let update = GoalUpdate {
        graph: Some(graph),
        tasks: Some(Default::default()),
        ..GoalUpdate::default()
    };
    let moved = update_goal(
        &pool,
        &fence,
        &id,
        GoalState::Pending,
        GoalState::Running,
        update,
    )
    .await
    .unwrap();
    assert!(moved);
    let orphan = t
        .queue
        .add(node_task(&id, "second", "Tidy the notes"))
        .await
        .unwrap();
    let mut lookalike = NewTask::new("Tidy the notes");
    lookalike.goal_id = Some(id.clone());
    let lookalike = t.queue.add(lookalike).await.unwrap();
    earlier.release(&fence).await.unwrap();

    let _hub = start(&t.store, fast_config());
    let goal: GoalRecord = wait_for("the goal's map completed", LIMIT, || async {
        let g = get_goal(&pool, &id).await.unwrap();
        (g.tasks.len() == 3).then_some(g)
    })
    .await;
    assert_eq!(goal.tasks["second"], orphan, "adopted by its node key");
    assert_ne!(goal.tasks["first"], orphan);
    assert_ne!(goal.tasks["first"], lookalike, "never matched by text");
    assert_eq!(
        t.queue.dependencies(&goal.tasks["after"]).await.unwrap(),
        vec![orphan.clone()]
    );
    let filter = TaskFilter {
        goal_id: Some(id.clone()),
        ..TaskFilter::default()
    };
    let mut keys: Vec<Option<String>> = t
        .queue
        .list(&filter)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.goal_node)
        .collect();
    keys.sort();
    let key = |n: &str| Some(node_key(&id, 0, n));
    assert_eq!(
        keys,
        vec![None, key("after"), key("first"), key("second")],
        "one task per node, the lookalike left alone"
    );
}

crate::both_backends!(
    a_node_key_is_added_once,
    a_half_dispatched_goal_adopts_its_nodes_tasks_by_key_not_text,
);
