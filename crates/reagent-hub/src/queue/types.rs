//! The queue's data: tasks, leases, workers, history, and how rows become them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::QueueError;

/// A task's id (uuid v4 text).
pub type TaskId = String;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    /// Waits for the tasks it depends on to be done.
    Waiting,
    /// Ready to be claimed (once its `run_after_ms` has passed).
    Queued,
    /// Leased to a worker.
    Running,
    /// Completed by the worker holding its lease.
    Done,
    /// Failed for good (a non-retryable error, or a dependency that failed).
    Failed,
    /// Dead-lettered: every attempt failed or its lease expired `max_attempts` times.
    Dead,
    /// Cancelled by a person or the hub.
    Cancelled,
}

impl TaskState {
    /// Every state, in life order.
    pub const ALL: [TaskState; 7] = [
        TaskState::Waiting,
        TaskState::Queued,
        TaskState::Running,
        TaskState::Done,
        TaskState::Failed,
        TaskState::Dead,
        TaskState::Cancelled,
    ];

    /// The name stored in the `state` column.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Waiting => "waiting",
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Done => "done",
            TaskState::Failed => "failed",
            TaskState::Dead => "dead",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// Whether the task will not change again without a `retry`.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskState::Done | TaskState::Failed | TaskState::Dead | TaskState::Cancelled
        )
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TaskState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TaskState::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = TaskState::ALL.iter().map(|t| t.as_str()).collect();
                format!("unknown task state '{s}' (one of {})", names.join(", "))
            })
    }
}

/// How a task is to be run (the `spec` column, JSON). Every field is optional: the worker's
/// own settings fill the gaps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskSpec {
    /// Directory the agent works in (on the worker's machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Tool mode: auto, native, constrained or prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<String>,
    /// Most model calls of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// A `reagent cycles` task: the id of the experiment (created in the store beforehand) to
    /// run, or continue at its first unfinished cycle, on the worker's model server; the task's
    /// text is then only its label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
}

/// A task to add.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// The task, in plain words (the agent's first user message).
    pub task: String,
    /// How to run it.
    pub spec: TaskSpec,
    /// The model it must run on; only a worker whose endpoint serves it claims it.
    pub model: Option<String>,
    /// Higher runs first.
    pub priority: i64,
    /// Capabilities a worker must have (all of them) to claim it.
    pub tags: Vec<String>,
    /// Attempts before it is dead-lettered (at least 1).
    pub max_attempts: u32,
    /// Tasks that must be done before it is queued.
    pub depends_on: Vec<TaskId>,
    /// The goal it belongs to, when the hub planned it.
    pub goal_id: Option<String>,
    /// The graph node it is, when the hub planned it (see `goals::node_key`): unique among
    /// tasks, so adding the same node again adds nothing and gives the task that has it.
    pub goal_node: Option<String>,
}

impl NewTask {
    /// A task with default settings: no model constraint, priority 0, no tags, 3 attempts.
    pub fn new(task: impl Into<String>) -> NewTask {
        NewTask {
            task: task.into(),
            spec: TaskSpec::default(),
            model: None,
            priority: 0,
            tags: Vec::new(),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            depends_on: Vec::new(),
            goal_id: None,
            goal_node: None,
        }
    }
}

/// Attempts a task gets when `max_attempts` is not given.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// A stored task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    /// Its id.
    pub id: TaskId,
    /// The task text.
    pub task: String,
    /// How to run it.
    pub spec: TaskSpec,
    /// The model it must run on.
    pub model: Option<String>,
    /// Higher runs first.
    pub priority: i64,
    /// Capabilities a worker must have.
    pub tags: Vec<String>,
    /// Where it is.
    pub state: TaskState,
    /// Attempts so far (the current one, while running).
    pub attempt: i64,
    /// Attempts before it is dead-lettered.
    pub max_attempts: i64,
    /// Not claimed before this time (epoch ms): the backoff after a failed attempt.
    pub run_after_ms: i64,
    /// The worker holding (or that last held) its lease.
    pub lease_owner: Option<String>,
    /// When the current lease expires (epoch ms), while running.
    pub lease_expires_ms: Option<i64>,
    /// The worker the hub's router chose, if any.
    pub routed_to: Option<String>,
    /// The goal it belongs to.
    pub goal_id: Option<String>,
    /// The goal's graph node it is (`goal/round/node`), when the hub planned it.
    pub goal_node: Option<String>,
    /// The run (in the store's `runs`) of its latest attempt.
    pub run_id: Option<String>,
    /// What the worker reported on completion.
    pub result: Option<serde_json::Value>,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was added (epoch ms).
    pub created_ms: i64,
    /// When it last changed (epoch ms).
    pub updated_ms: i64,
}

/// Columns read into a [`TaskRecord`] (plus `lease_token`, read into a [`Lease`]).
pub(crate) const TASK_COLUMNS: &str = "id, task, spec, model, priority, tags, state, attempt, \
    max_attempts, run_after_ms, lease_owner, lease_token, lease_expires_ms, routed_to, goal_id, \
    goal_node, run_id, result, error, created_ms, updated_ms";

impl TaskRecord {
    /// Read a row selected with [`TASK_COLUMNS`].
    pub(crate) fn from_row(row: &AnyRow) -> Result<TaskRecord, QueueError> {
        let bad = |what: &str, e: String| QueueError::Corrupt(format!("task column {what}: {e}"));
        let get_text = |name: &str| {
            row.try_get::<String, _>(name)
                .map_err(|e| bad(name, e.to_string()))
        };
        let get_opt = |name: &str| {
            row.try_get::<Option<String>, _>(name)
                .map_err(|e| bad(name, e.to_string()))
        };
        let get_int = |name: &str| {
            row.try_get::<i64, _>(name)
                .map_err(|e| bad(name, e.to_string()))
        };
        let get_opt_int = |name: &str| {
            row.try_get::<Option<i64>, _>(name)
                .map_err(|e| bad(name, e.to_string()))
        };
        let spec = get_text("spec")?;
        let tags = get_text("tags")?;
        let result = get_opt("result")?;
        Ok(TaskRecord {
            id: get_text("id")?,
            task: get_text("task")?,
            spec: serde_json::from_str(&spec).map_err(|e| bad("spec", e.to_string()))?,
            model: get_opt("model")?,
            priority: get_int("priority")?,
            tags: serde_json::from_str(&tags).map_err(|e| bad("tags", e.to_string()))?,
            state: get_text("state")?.parse().map_err(|e| bad("state", e))?,
            attempt: get_int("attempt")?,
            max_attempts: get_int("max_attempts")?,
            run_after_ms: get_int("run_after_ms")?,
            lease_owner: get_opt("lease_owner")?,
            lease_expires_ms: get_opt_int("lease_expires_ms")?,
            routed_to: get_opt("routed_to")?,
            goal_id: get_opt("goal_id")?,
            goal_node: get_opt("goal_node")?,
            run_id: get_opt("run_id")?,
            result: result
                .map(|r| serde_json::from_str(&r))
                .transpose()
                .map_err(|e| bad("result", e.to_string()))?,
            error: get_opt("error")?,
            created_ms: get_int("created_ms")?,
            updated_ms: get_int("updated_ms")?,
        })
    }
}

/// A claimed task: the right to run one attempt of it until `expires_ms`, proven by `token`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// The task as claimed (state `running`).
    pub task: TaskRecord,
    /// The attempt this lease is for (1 for the first).
    pub attempt: i64,
    /// The fencing token: completion, failure and heartbeats count only with it.
    pub token: String,
    /// The worker holding it.
    pub owner: String,
    /// When it expires unless renewed (epoch ms, the database's clock).
    pub expires_ms: i64,
}

impl Lease {
    /// The leased task's id.
    pub fn task_id(&self) -> &str {
        &self.task.id
    }
}

/// A worker, as it registers and as the queue matches tasks against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerInfo {
    /// Its id (uuid v4 text), also the `lease_owner` of its leases.
    pub id: String,
    /// The machine it runs on.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// Tasks it runs at once.
    pub capacity: u32,
    /// Its capabilities: it claims only tasks whose tags are all among them.
    pub tags: Vec<String>,
    /// The model server it talks to.
    pub endpoint: Option<String>,
    /// The models its endpoint serves: it claims a task with a model only when listed here.
    pub models: Vec<String>,
}

/// A registered worker, with what it last reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerRecord {
    /// What it registered.
    #[serde(flatten)]
    pub info: WorkerInfo,
    /// Tasks it ran at its last heartbeat.
    pub in_flight: i64,
    /// Its last heartbeat (epoch ms).
    pub heartbeat_ms: i64,
    /// When it registered (epoch ms).
    pub started_ms: i64,
    /// `up` or `stopped`.
    pub state: String,
}

/// One line of a task's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The attempt it concerns.
    pub attempt: i64,
    /// The worker involved, if any.
    pub worker: Option<String>,
    /// What happened: added, claimed, heartbeat_lost, completed, failed, expired,
    /// late_result_refused, dead_lettered, cancelled, retried, released.
    pub what: String,
    /// Details (an error, the state a refused result found).
    pub detail: Option<String>,
    /// When (epoch ms).
    pub at_ms: i64,
}

/// Tasks per state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounts {
    /// Waiting for dependencies.
    pub waiting: u64,
    /// Ready to be claimed.
    pub queued: u64,
    /// Leased.
    pub running: u64,
    /// Completed.
    pub done: u64,
    /// Failed for good.
    pub failed: u64,
    /// Dead-lettered.
    pub dead: u64,
    /// Cancelled.
    pub cancelled: u64,
}

impl QueueCounts {
    /// Count `n` tasks in `state`.
    pub(crate) fn add(&mut self, state: TaskState, n: u64) {
        let slot = match state {
            TaskState::Waiting => &mut self.waiting,
            TaskState::Queued => &mut self.queued,
            TaskState::Running => &mut self.running,
            TaskState::Done => &mut self.done,
            TaskState::Failed => &mut self.failed,
            TaskState::Dead => &mut self.dead,
            TaskState::Cancelled => &mut self.cancelled,
        };
        *slot += n;
    }
}

/// Which tasks [`super::Queue::list`] returns (newest first).
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// Only tasks in one of these states (all when empty).
    pub states: Vec<TaskState>,
    /// Only the tasks of this goal.
    pub goal_id: Option<String>,
    /// At most this many (all when `None`).
    pub limit: Option<u32>,
}
