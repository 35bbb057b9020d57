//! The lease queue: tasks in the store's database, claimed by workers under a lease with a
//! fencing token.
//!
//! # Life of a task
//!
//! `add` stores it `queued` (or `waiting` while a task it depends on is not done). `claim`
//! takes the best claimable task for a worker (highest priority, then oldest; its tags all among
//! the worker's, its model served by the worker, routed to nobody or to this worker, its backoff
//! over) in one statement and gives a [`Lease`]: owner, attempt, a fresh token and an expiry on
//! the database's clock. `heartbeat` extends it; `complete` and `fail` end it. All three apply
//! only while the task is still `running` under that token: anything else means the lease was
//! lost (it expired and was reclaimed, or the task was cancelled), and a refused completion or
//! failure is recorded as `late_result_refused` without touching the task.
//!
//! `reclaim_expired` (run by every worker's loop and by the hub) puts tasks whose lease expired
//! back to `queued` with an exponential backoff, or dead-letters them (`dead`) once they used
//! `max_attempts`. Each reclaim is itself conditional on the token it saw, so two reclaimers
//! never both act on one lease. A task that completes promotes the `waiting` tasks whose
//! dependencies are now all done; one that ends failed, dead or cancelled fails its waiting
//! dependants (and theirs).
//!
//! # Two backends, one code
//!
//! Statements go through the store's `Any` pool. Claiming differs: PostgreSQL selects with
//! `FOR UPDATE SKIP LOCKED` inside the `UPDATE`, so concurrent claimers skip each other's rows;
//! SQLite runs the same `UPDATE … RETURNING` inside `BEGIN IMMEDIATE`, which takes the database's
//! write lock first (a deferred transaction could read, then fail to upgrade). Tag and model
//! matching use each engine's JSON functions. Times come from the database's clock, so leases
//! mean the same on every machine.

mod admin;
mod lease;
mod types;
mod wake;

use std::time::Duration;

use reagent_store::Store;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyPool, Row, Transaction};

pub use types::{
    HistoryEntry, Lease, NewTask, QueueCounts, TaskFilter, TaskId, TaskRecord, TaskSpec, TaskState,
    WorkerInfo, WorkerRecord, DEFAULT_MAX_ATTEMPTS,
};
pub use wake::Wakeup;

use types::TASK_COLUMNS;

/// The PostgreSQL channel notified when work may have become claimable.
pub const NOTIFY_CHANNEL: &str = "reagent_tasks";

/// What can go wrong in the queue.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The database refused or failed a statement.
    #[error("task queue: cannot {what}: {message}")]
    Database {
        /// What the queue was doing.
        what: String,
        /// The database's message.
        message: String,
    },
    /// No task has this id (or prefix).
    #[error("no task {0}")]
    UnknownTask(String),
    /// More than one task id starts with this prefix.
    #[error("task id prefix {0} is ambiguous: give more of it")]
    Ambiguous(String),
    /// The task is not in a state that allows the action.
    #[error("task {id} is {state}: cannot {action} it")]
    InvalidState {
        /// The task.
        id: String,
        /// Its state.
        state: TaskState,
        /// What was asked.
        action: &'static str,
    },
    /// The request itself is wrong (an empty task, zero attempts...).
    #[error("{0}")]
    BadInput(String),
    /// A stored row cannot be read.
    #[error("task queue: a stored row cannot be read: {0}")]
    Corrupt(String),
}

/// Map a sqlx error to [`QueueError::Database`], saying what was being done.
pub(crate) fn db(what: &str) -> impl FnOnce(sqlx::Error) -> QueueError + '_ {
    move |e| QueueError::Database {
        what: what.to_owned(),
        message: e.to_string(),
    }
}

/// Timing of leases and retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// Backoff before the second attempt; it doubles with every further attempt.
    pub backoff_base: Duration,
    /// Longest backoff.
    pub backoff_max: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            backoff_base: Duration::from_secs(1),
            backoff_max: Duration::from_secs(300),
        }
    }
}

impl QueueConfig {
    /// The wait before the attempt after `attempt` (1-based) failed or expired.
    pub fn backoff(&self, attempt: i64) -> Duration {
        let doublings = u32::try_from(attempt.saturating_sub(1).clamp(0, 30)).unwrap_or(30);
        self.backoff_base
            .saturating_mul(2u32.saturating_pow(doublings))
            .min(self.backoff_max)
    }
}

/// Lease length when none is given.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);
/// How often a worker renews its leases by default.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);

/// The task queue of a store. Cheap to clone.
#[derive(Clone)]
pub struct Queue {
    store: Store,
    config: QueueConfig,
    /// SQL for "now, in epoch milliseconds" on the database's clock.
    now: &'static str,
}

impl Queue {
    /// The queue of `store` with default timing.
    pub fn new(store: &Store) -> Queue {
        Queue::with_config(store, QueueConfig::default())
    }

    /// The queue of `store` with the given timing.
    pub fn with_config(store: &Store, config: QueueConfig) -> Queue {
        Queue {
            store: store.clone(),
            config,
            now: crate::clock::now_sql(store.is_postgres()),
        }
    }

    /// The store it lives in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Its timing.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    fn pool(&self) -> &AnyPool {
        self.store.pool()
    }

    /// `sql` with every `{now}` replaced by the database's clock.
    fn sql(&self, sql: &str) -> String {
        sql.replace("{now}", self.now)
    }

    /// Begin a write transaction: on SQLite `BEGIN IMMEDIATE` (take the write lock first).
    async fn begin(&self) -> Result<Transaction<'static, Any>, QueueError> {
        if self.store.is_postgres() {
            self.pool().begin().await
        } else {
            self.pool().begin_with("BEGIN IMMEDIATE").await
        }
        .map_err(db("begin a transaction"))
    }

    /// Wake the workers listening on PostgreSQL (delivered when the transaction commits).
    pub async fn notify(&self, tx: &mut Transaction<'static, Any>) -> Result<(), QueueError> {
        if self.store.is_postgres() {
            sqlx::query("SELECT pg_notify($1, '')")
                .bind(NOTIFY_CHANNEL)
                .execute(&mut **tx)
                .await
                .map_err(db("notify the workers"))?;
        }
        Ok(())
    }

    /// The database's clock, in epoch milliseconds.
    pub async fn now_ms(&self) -> Result<i64, QueueError> {
        let row = sqlx::query(&self.sql("SELECT {now}"))
            .fetch_one(self.pool())
            .await
            .map_err(db("read the clock"))?;
        row.try_get::<i64, _>(0).map_err(db("read the clock"))
    }

    /// Add a task: `queued`, or `waiting` while a task it depends on is not done (failed at
    /// once when one already failed). Every dependency must exist.
    pub async fn add(&self, new: NewTask) -> Result<TaskId, QueueError> {
        let mut tx = self.begin().await?;
        let id = self.add_in(&mut tx, new).await?;
        self.notify(&mut tx).await?;
        tx.commit().await.map_err(db("add a task"))?;
        Ok(id)
    }

    /// [`Queue::add`] inside the caller's transaction `tx` (the hub's fenced one), which must
    /// hold the write lock on SQLite (`BEGIN IMMEDIATE`, or a first statement that writes).
    /// A task whose `goal_node` a stored task already has is not added again: that task's id
    /// is given instead. The caller commits (and calls [`Queue::notify`]).
    pub async fn add_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        new: NewTask,
    ) -> Result<TaskId, QueueError> {
        if new.task.trim().is_empty() {
            return Err(QueueError::BadInput(
                "the task is empty: say what the agent should do".into(),
            ));
        }
        if new.max_attempts == 0 {
            return Err(QueueError::BadInput(
                "max attempts must be at least 1".into(),
            ));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let spec = json_text(&new.spec)?;
        let tags = json_text(&new.tags)?;
        for dep in &new.depends_on {
            let found = sqlx::query("SELECT id FROM tasks WHERE id = $1")
                .bind(dep)
                .fetch_optional(&mut **tx)
                .await
                .map_err(db("look up a dependency"))?;
            if found.is_none() {
                return Err(QueueError::UnknownTask(dep.clone()));
            }
        }
        let state = if new.depends_on.is_empty() {
            TaskState::Queued
        } else {
            TaskState::Waiting
        };
        let added = sqlx::query(&self.sql(
            "INSERT INTO tasks (id, task, spec, model, priority, tags, state, attempt, max_attempts, \
             run_after_ms, goal_id, goal_node, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, {now}, $9, $10, {now}, {now}) \
             ON CONFLICT DO NOTHING",
        ))
        .bind(&id)
        .bind(&new.task)
        .bind(&spec)
        .bind(&new.model)
        .bind(new.priority)
        .bind(&tags)
        .bind(state.as_str())
        .bind(i64::from(new.max_attempts))
        .bind(&new.goal_id)
        .bind(&new.goal_node)
        .execute(&mut **tx)
        .await
        .map_err(db("add a task"))?
        .rows_affected();
        if added == 0 {
            return self.task_of_node(tx, new.goal_node.as_deref()).await;
        }
        for dep in &new.depends_on {
            sqlx::query("INSERT INTO task_deps (task_id, depends_on) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(&id)
                .bind(dep)
                .execute(&mut **tx)
                .await
                .map_err(db("store a dependency"))?;
        }
        self.record(tx, &id, 0, None, "added", None).await?;
        if state == TaskState::Waiting {
            self.settle_dependencies(tx).await?;
        }
        Ok(id)
    }

    /// The task that already has graph node `node` (an insert that conflicted).
    async fn task_of_node(
        &self,
        tx: &mut Transaction<'static, Any>,
        node: Option<&str>,
    ) -> Result<TaskId, QueueError> {
        let Some(node) = node else {
            return Err(QueueError::Corrupt(
                "a new task's id is already taken".to_owned(),
            ));
        };
        let row = sqlx::query("SELECT id FROM tasks WHERE goal_node = $1")
            .bind(node)
            .fetch_one(&mut **tx)
            .await
            .map_err(db("find the task of a goal's node"))?;
        row.try_get(0).map_err(db("find the task of a goal's node"))
    }

    /// Append a line to a task's history.
    async fn record(
        &self,
        tx: &mut Transaction<'static, Any>,
        task_id: &str,
        attempt: i64,
        worker: Option<&str>,
        what: &str,
        detail: Option<&str>,
    ) -> Result<(), QueueError> {
        sqlx::query(&self.sql(
            "INSERT INTO task_history (task_id, attempt, worker, what, detail, at_ms) \
             VALUES ($1, $2, $3, $4, $5, {now})",
        ))
        .bind(task_id)
        .bind(attempt)
        .bind(worker)
        .bind(what)
        .bind(detail)
        .execute(&mut **tx)
        .await
        .map_err(db("record a task's history"))?;
        Ok(())
    }

    /// Fail the waiting tasks a failed, dead or cancelled task blocks (transitively), then
    /// queue the waiting tasks whose dependencies are all done. Returns how many were queued.
    async fn settle_dependencies(
        &self,
        tx: &mut Transaction<'static, Any>,
    ) -> Result<u64, QueueError> {
        let fail_blocked = self.sql(
            "UPDATE tasks SET state = 'failed', error = 'a task it depends on did not succeed', \
             updated_ms = {now} \
             WHERE state = 'waiting' AND EXISTS (SELECT 1 FROM task_deps d JOIN tasks t \
               ON t.id = d.depends_on WHERE d.task_id = tasks.id \
               AND t.state IN ('failed', 'dead', 'cancelled')) \
             RETURNING id",
        );
        loop {
            let failed = sqlx::query(&fail_blocked)
                .fetch_all(&mut **tx)
                .await
                .map_err(db("fail the dependants of a failed task"))?;
            if failed.is_empty() {
                break;
            }
            for row in &failed {
                let id: String = row.try_get(0).map_err(db("fail a dependant"))?;
                let detail = "a task it depends on did not succeed";
                self.record(tx, &id, 0, None, "failed", Some(detail))
                    .await?;
            }
        }
        let queued = sqlx::query(&self.sql(
            "UPDATE tasks SET state = 'queued', run_after_ms = {now}, updated_ms = {now} \
             WHERE state = 'waiting' AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks t \
               ON t.id = d.depends_on WHERE d.task_id = tasks.id AND t.state <> 'done')",
        ))
        .execute(&mut **tx)
        .await
        .map_err(db("queue the tasks whose dependencies are done"))?;
        Ok(queued.rows_affected())
    }

    /// Whether any task depends on `id` (so its ending may queue or fail others).
    async fn has_dependants(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<bool, QueueError> {
        let row = sqlx::query("SELECT 1 FROM task_deps WHERE depends_on = $1 LIMIT 1")
            .bind(id)
            .fetch_optional(&mut **tx)
            .await
            .map_err(db("look up a task's dependants"))?;
        Ok(row.is_some())
    }

    /// The task with this id, or the one task whose id starts with it.
    pub async fn get(&self, id: &str) -> Result<TaskRecord, QueueError> {
        let id = self.resolve_id(id).await?;
        let row = sqlx::query(&format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1"))
            .bind(&id)
            .fetch_optional(self.pool())
            .await
            .map_err(db("read a task"))?
            .ok_or(QueueError::UnknownTask(id))?;
        TaskRecord::from_row(&row)
    }

    /// The full id of the task whose id is `id` or starts with it.
    pub async fn resolve_id(&self, id: &str) -> Result<TaskId, QueueError> {
        let id = id.trim();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(QueueError::UnknownTask(id.to_owned()));
        }
        let rows = sqlx::query(
            "SELECT id FROM tasks WHERE id = $1 OR substr(id, 1, length($1)) = $1 LIMIT 2",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await
        .map_err(db("look up a task"))?;
        let ids: Vec<String> = rows
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()
            .map_err(db("look up a task"))?;
        match ids.as_slice() {
            [] => Err(QueueError::UnknownTask(id.to_owned())),
            [one] => Ok(one.clone()),
            _ if ids.iter().any(|full| full == id) => Ok(id.to_owned()),
            _ => Err(QueueError::Ambiguous(id.to_owned())),
        }
    }

    /// Tasks matching `filter`, newest first.
    pub async fn list(&self, filter: &TaskFilter) -> Result<Vec<TaskRecord>, QueueError> {
        let mut sql = format!("SELECT {TASK_COLUMNS} FROM tasks WHERE 1 = 1");
        let mut binds: Vec<String> = Vec::new();
        if !filter.states.is_empty() {
            let mut marks = Vec::new();
            for state in &filter.states {
                binds.push(state.as_str().to_owned());
                marks.push(format!("${}", binds.len()));
            }
            sql.push_str(&format!(" AND state IN ({})", marks.join(", ")));
        }
        if let Some(goal) = &filter.goal_id {
            binds.push(goal.clone());
            sql.push_str(&format!(" AND goal_id = ${}", binds.len()));
        }
        sql.push_str(" ORDER BY created_ms DESC, id");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut query = sqlx::query(&sql);
        for b in &binds {
            query = query.bind(b);
        }
        let rows = query
            .fetch_all(self.pool())
            .await
            .map_err(db("list tasks"))?;
        rows.iter().map(TaskRecord::from_row).collect()
    }

    /// The ids of the tasks `id` depends on.
    pub async fn dependencies(&self, id: &str) -> Result<Vec<TaskId>, QueueError> {
        let rows =
            sqlx::query("SELECT depends_on FROM task_deps WHERE task_id = $1 ORDER BY depends_on")
                .bind(id)
                .fetch_all(self.pool())
                .await
                .map_err(db("read a task's dependencies"))?;
        rows.iter()
            .map(|r| r.try_get::<String, _>(0).map_err(db("read a dependency")))
            .collect()
    }

    /// A task's history, oldest first.
    pub async fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, QueueError> {
        let rows = sqlx::query(
            "SELECT attempt, worker, what, detail, at_ms FROM task_history WHERE task_id = $1 ORDER BY id",
        )
        .bind(id)
        .fetch_all(self.pool())
        .await
        .map_err(db("read a task's history"))?;
        rows.iter().map(history_entry).collect()
    }

    /// How many tasks are in each state.
    pub async fn counts(&self) -> Result<QueueCounts, QueueError> {
        let rows = sqlx::query("SELECT state, COUNT(*) FROM tasks GROUP BY state")
            .fetch_all(self.pool())
            .await
            .map_err(db("count tasks"))?;
        let mut counts = QueueCounts::default();
        for row in &rows {
            let state: String = row.try_get(0).map_err(db("count tasks"))?;
            let n: i64 = row.try_get(1).map_err(db("count tasks"))?;
            let state = state.parse().map_err(QueueError::Corrupt)?;
            counts.add(state, u64::try_from(n).unwrap_or(0));
        }
        Ok(counts)
    }
}

fn history_entry(row: &AnyRow) -> Result<HistoryEntry, QueueError> {
    let read = db("read a task's history");
    let entry = (|| {
        Ok::<_, sqlx::Error>(HistoryEntry {
            attempt: row.try_get("attempt")?,
            worker: row.try_get("worker")?,
            what: row.try_get("what")?,
            detail: row.try_get("detail")?,
            at_ms: row.try_get("at_ms")?,
        })
    })();
    entry.map_err(read)
}

/// `value` as JSON text.
fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, QueueError> {
    serde_json::to_string(value).map_err(|e| QueueError::BadInput(format!("cannot encode: {e}")))
}
