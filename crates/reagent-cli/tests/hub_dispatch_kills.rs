//! The active `reagent hub` killed with SIGKILL while it adds a goal's tasks — at a random
//! point between its first added task and the saving of the goal's map — 50 times, a fresh hub
//! taking over after each kill: in the end every node of every goal has exactly one task, none
//! lost, none twice. On SQLite and PostgreSQL 15, with the hub's model a scripted Ollama server.
//!
//! Each hub logs (`--log reagent_hub=debug`) `adding N tasks` once its fenced dispatch began,
//! `node X is task Y` after each task it added inside it and `N tasks dispatched` after the
//! commit; the test kills it on the k-th node line (k random), or one time in eight just after
//! the commit (those kills do not count among the 50). Once the dead hub's transaction is
//! settled (a write on the lease row waits for it on PostgreSQL), the goal must be either
//! untouched (pending, no task: the kill came before the commit) or running with all its tasks
//! (the kill came after it; the test then cancels its tasks so the next hub verifies the goal
//! and moves on to a new one).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod hub_support;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hub_support::{hub, reagent, Backend, Hub};
use reagent_hub::goals::{add_goal, get_goal, list_goals, node_key, GoalSpec, GoalState};
use reagent_hub::queue::{QueueError, TaskFilter};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::json;
use tokio::sync::mpsc;

const MODEL: &str = "qwen3:8b";
/// Nodes of each goal's graph.
const NODES: usize = 30;
/// Kills that must land inside a dispatch.
const KILLS: usize = 50;
/// Hubs started at most (kills that come after the commit do not count).
const MAX_HUBS: usize = 150;
/// Longest wait for one hub to begin a dispatch.
const PATIENCE: Duration = Duration::from_secs(60);

/// The hub model's one answer: a graph (a tree of [`NODES`] nodes, five texts shared among
/// them) that is also a passing verification, so any request can take any turn.
fn reply() -> String {
    let tasks: Vec<_> = (0..NODES)
        .map(|i| {
            let deps: Vec<String> = if i == 0 {
                vec![]
            } else {
                vec![format!("n{}", (i - 1) / 2)]
            };
            json!({"id": format!("n{i}"), "task": format!("Tidy part {}", i % 5), "depends_on": deps, "tools": []})
        })
        .collect();
    json!({
        "tasks": tasks,
        "acceptance": ["the parts are tidy"],
        "checks": [{"check": "the parts are tidy", "passed": true, "note": "they are"}]
    })
    .to_string()
}

/// A small xorshift generator (the seed is printed, to replay a failure).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % n as u64).unwrap()
    }
}

/// A `reagent hub` process whose log lines arrive on a channel; killed on drop.
struct HubProcess {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
}

impl HubProcess {
    fn start(h: &Hub, model_host: &str) -> HubProcess {
        let mut child = reagent()
            .args([
                "hub",
                "--store",
                &h.store_url,
                "--tick",
                "50ms",
                "--lease",
                "500ms",
            ])
            .args(["--model", MODEL, "--host", model_host])
            .args(["--calls-per-hour", "100000", "--log", "reagent_hub=debug"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        HubProcess {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The next log line containing all of `parts`.
    async fn line_with(&mut self, parts: &[&str]) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.lines.recv()).await {
                Ok(Some(line)) => {
                    self.seen.push(line.clone());
                    if parts.iter().all(|p| line.contains(p)) {
                        return line;
                    }
                }
                Ok(None) => panic!(
                    "the hub exited ({:?}) before logging {parts:?}:\n{}",
                    self.child.try_wait(),
                    self.seen.join("\n")
                ),
                Err(_) => panic!(
                    "no log line with {parts:?} within {PATIENCE:?}:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// SIGKILL, and wait until it is gone.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait until no hub transaction is in progress: a write on the lease row waits for the one a
/// killed hub left open until PostgreSQL has rolled it back (or committed it).
async fn settle(h: &Hub) {
    sqlx::query("UPDATE hub_leader SET epoch = epoch WHERE name = 'hub'")
        .execute(h.queue.store().pool())
        .await
        .unwrap();
}

/// The goal's tasks (every state).
async fn tasks_of(h: &Hub, goal: &str) -> Vec<reagent_hub::queue::TaskRecord> {
    let filter = TaskFilter {
        goal_id: Some(goal.to_owned()),
        ..TaskFilter::default()
    };
    h.queue.list(&filter).await.unwrap()
}

/// End a dispatched goal's tasks (as people may), so the hub leaves `executing`, verifies it
/// and takes the next goal.
async fn cancel_tasks(h: &Hub, goal: &str) {
    for task in tasks_of(h, goal).await {
        match h.queue.cancel(&task.id).await {
            // Its dependency's cancellation failed it first.
            Ok(()) | Err(QueueError::InvalidState { .. }) => {}
            Err(e) => panic!("cancel {}: {e}", task.id),
        }
    }
}

/// Every dispatched goal: one task per node, keyed by the node, mapped to it; the goal
/// `pending` (never dispatched) has none. The number of tasks.
async fn check_exactly_once(h: &Hub, pending: Option<&str>) -> usize {
    let pool = h.queue.store().pool();
    let mut total = 0;
    for goal in list_goals(pool, &[]).await.unwrap() {
        let tasks = tasks_of(h, &goal.id).await;
        if Some(goal.id.as_str()) == pending {
            assert_eq!(goal.state, GoalState::Pending, "{goal:?}");
            assert!(
                tasks.is_empty(),
                "a task of an undispatched goal: {tasks:?}"
            );
            continue;
        }
        let graph = goal.graph.as_ref().unwrap();
        assert_eq!(graph.tasks.len(), NODES);
        let by_key: HashMap<String, String> = tasks
            .iter()
            .map(|t| (t.goal_node.clone().unwrap(), t.id.clone()))
            .collect();
        assert_eq!(by_key.len(), tasks.len(), "a node key twice: {tasks:?}");
        assert_eq!(tasks.len(), NODES, "goal {}: {tasks:?}", goal.id);
        for node in &graph.tasks {
            let key = node_key(&goal.id, 0, &node.id);
            let task = by_key
                .get(&key)
                .unwrap_or_else(|| panic!("node {key} lost"));
            assert_eq!(&goal.tasks[&node.id], task, "goal {}'s map", goal.id);
        }
        total += tasks.len();
    }
    let all = h.queue.list(&TaskFilter::default()).await.unwrap();
    assert_eq!(all.len(), total, "tasks outside the goals");
    let ids: BTreeSet<&String> = all.iter().map(|t| &t.id).collect();
    assert_eq!(ids.len(), all.len());
    total
}

async fn killing_the_hub_mid_dispatch_adds_every_node_exactly_once(backend: Backend) {
    let h = hub(backend).await;
    let pool = h.queue.store().pool().clone();
    let turns = (0..2 * MAX_HUBS + 10).map(|_| Turn::text(reply()));
    let planner = ScriptedOllama::start(
        ScriptBuilder::new()
            .model(ModelSpec::new(MODEL))
            .turns(turns),
    )
    .await
    .unwrap();
    // `REAGENT_KILL_SEED` replays the kill points of a printed run.
    let seed = std::env::var("REAGENT_KILL_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.unwrap().as_nanos() as u64
        })
        | 1;
    let mut rng = Rng(seed);
    let started = Instant::now();

    let spec = GoalSpec::default();
    let mut pending = add_goal(&pool, "Tidy every part", &spec).await.unwrap();
    let (mut inside, mut after_commit, mut hubs) = (0, 0, 0);
    while inside < KILLS {
        assert!(
            hubs < MAX_HUBS,
            "only {inside} of {hubs} kills landed inside a dispatch (seed {seed})"
        );
        hubs += 1;
        let mut hub = HubProcess::start(&h, &planner.base_url());
        hub.line_with(&[&pending, &format!("adding {NODES} tasks")])
            .await;
        // Mostly on the k-th task added; one time in eight just after the commit.
        let k = if rng.below(8) == 0 {
            hub.line_with(&[&pending, &format!("{NODES} tasks dispatched")])
                .await;
            NODES
        } else {
            let k = 1 + rng.below(NODES - 5);
            for _ in 0..k {
                hub.line_with(&[&pending, ": node "]).await;
            }
            k
        };
        hub.kill();
        settle(&h).await;

        let goal = get_goal(&pool, &pending).await.unwrap();
        let tasks = tasks_of(&h, &pending).await;
        match goal.state {
            GoalState::Pending if k < NODES => {
                assert!(
                    goal.tasks.is_empty() && tasks.is_empty(),
                    "killed after task {k}: a pending goal with tasks: {goal:?} {tasks:?}"
                );
                inside += 1;
            }
            GoalState::Running => {
                assert_eq!(
                    (goal.tasks.len(), tasks.len()),
                    (NODES, NODES),
                    "killed after task {k}: {goal:?}"
                );
                after_commit += 1;
                cancel_tasks(&h, &pending).await;
                pending = add_goal(&pool, "Tidy every part again", &spec)
                    .await
                    .unwrap();
            }
            other => panic!("killed after task {k}: the goal is {other:?}: {goal:?}"),
        }
        check_exactly_once(&h, Some(&pending)).await;
    }

    // A last hub, left alone, dispatches the goal the killed ones could not.
    let mut last = HubProcess::start(&h, &planner.base_url());
    last.line_with(&[&pending, &format!("{NODES} tasks dispatched")])
        .await;
    last.kill();
    settle(&h).await;
    let tasks = check_exactly_once(&h, None).await;
    let goals = list_goals(&pool, &[]).await.unwrap().len();
    assert_eq!(tasks, goals * NODES);
    // The outcome, for BENCHMARKS.md (`--nocapture` shows it).
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "{backend:?}: {hubs} hubs SIGKILLed ({inside} inside a dispatch, {after_commit} just \
             after its commit), {goals} goals, {tasks} tasks, duplicates 0, lost 0, in {:.1} s \
             (seed {seed})",
            started.elapsed().as_secs_f64()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_hub_mid_dispatch_adds_every_node_exactly_once_sqlite() {
    killing_the_hub_mid_dispatch_adds_every_node_exactly_once(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_hub_mid_dispatch_adds_every_node_exactly_once_postgres() {
    killing_the_hub_mid_dispatch_adds_every_node_exactly_once(Backend::Postgres).await;
}
