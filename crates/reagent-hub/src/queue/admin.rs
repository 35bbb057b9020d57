//! What people and the hub do to tasks (cancel, retry, route) and the worker registry.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::{db, json_text, Queue, QueueError, TaskState, WorkerInfo, WorkerRecord};

impl Queue {
    /// Cancel a task that has not ended. A running task's lease is lost with it: its worker's
    /// next heartbeat says so, and its result is refused.
    pub async fn cancel(&self, id: &str) -> Result<(), QueueError> {
        let id = self.resolve_id(id).await?;
        let mut tx = self.begin().await?;
        let row = sqlx::query(&self.sql(
            "UPDATE tasks SET state = 'cancelled', lease_expires_ms = NULL, updated_ms = {now} \
             WHERE id = $1 AND state IN ('waiting', 'queued', 'running') RETURNING attempt",
        ))
        .bind(&id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(db("cancel a task"))?;
        let Some(row) = row else {
            let state = self.state_of(&mut tx, &id).await?;
            return Err(invalid(id, &state, "cancel"));
        };
        let attempt: i64 = row.try_get(0).map_err(db("cancel a task"))?;
        self.record(&mut tx, &id, attempt, None, "cancelled", None)
            .await?;
        self.settle_dependencies(&mut tx).await?;
        tx.commit().await.map_err(db("cancel a task"))?;
        Ok(())
    }

    /// Give a failed, dead or cancelled task a fresh set of attempts: `queued` again (or
    /// `waiting`, while a task it depends on is not done).
    pub async fn retry(&self, id: &str) -> Result<(), QueueError> {
        let id = self.resolve_id(id).await?;
        let mut tx = self.begin().await?;
        let row = sqlx::query(&self.sql(
            "UPDATE tasks SET state = CASE WHEN EXISTS (SELECT 1 FROM task_deps d JOIN tasks t \
                 ON t.id = d.depends_on WHERE d.task_id = tasks.id AND t.state <> 'done') \
               THEN 'waiting' ELSE 'queued' END, \
               attempt = 0, run_after_ms = {now}, lease_owner = NULL, lease_token = NULL, \
               lease_expires_ms = NULL, error = NULL, result = NULL, updated_ms = {now} \
             WHERE id = $1 AND state IN ('failed', 'dead', 'cancelled') \
             RETURNING (SELECT MAX(h.attempt) FROM task_history h WHERE h.task_id = tasks.id)",
        ))
        .bind(&id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(db("retry a task"))?;
        let Some(row) = row else {
            let state = self.state_of(&mut tx, &id).await?;
            return Err(invalid(id, &state, "retry"));
        };
        let attempts: Option<i64> = row.try_get(0).map_err(db("retry a task"))?;
        let detail = format!("after {} attempts", attempts.unwrap_or(0));
        self.record(&mut tx, &id, 0, None, "retried", Some(&detail))
            .await?;
        self.settle_dependencies(&mut tx).await?;
        self.notify(&mut tx).await?;
        tx.commit().await.map_err(db("retry a task"))?;
        Ok(())
    }

    /// Route a task that is not yet running to one worker: only it claims the task from now
    /// on. `false` when the task is already running or ended.
    pub async fn route(&self, task_id: &str, worker_id: &str) -> Result<bool, QueueError> {
        let mut tx = self.begin().await?;
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET routed_to = $2, updated_ms = {now} \
             WHERE id = $1 AND state IN ('waiting', 'queued')",
        ))
        .bind(task_id)
        .bind(worker_id)
        .execute(&mut *tx)
        .await
        .map_err(db("route a task"))?;
        self.notify(&mut tx).await?;
        tx.commit().await.map_err(db("route a task"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Register (or re-register) a worker as `up`.
    pub async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), QueueError> {
        sqlx::query(&self.sql(
            "INSERT INTO workers (id, host, pid, capacity, tags, endpoint, models, in_flight, \
               heartbeat_ms, started_ms, state) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, 0, {now}, {now}, 'up') \
             ON CONFLICT (id) DO UPDATE SET host = $2, pid = $3, capacity = $4, tags = $5, \
               endpoint = $6, models = $7, heartbeat_ms = {now}, state = 'up'",
        ))
        .bind(&worker.id)
        .bind(&worker.host)
        .bind(i64::from(worker.pid))
        .bind(i64::from(worker.capacity))
        .bind(json_text(&worker.tags)?)
        .bind(&worker.endpoint)
        .bind(json_text(&worker.models)?)
        .execute(self.pool())
        .await
        .map_err(db("register a worker"))?;
        Ok(())
    }

    /// A worker's heartbeat, with the tasks it runs now.
    pub async fn worker_heartbeat(
        &self,
        worker_id: &str,
        in_flight: u32,
    ) -> Result<(), QueueError> {
        sqlx::query(
            &self.sql("UPDATE workers SET heartbeat_ms = {now}, in_flight = $2 WHERE id = $1"),
        )
        .bind(worker_id)
        .bind(i64::from(in_flight))
        .execute(self.pool())
        .await
        .map_err(db("record a worker's heartbeat"))?;
        Ok(())
    }

    /// Mark a worker `stopped` (it left cleanly).
    pub async fn stop_worker(&self, worker_id: &str) -> Result<(), QueueError> {
        sqlx::query(&self.sql(
            "UPDATE workers SET state = 'stopped', in_flight = 0, heartbeat_ms = {now} WHERE id = $1",
        ))
        .bind(worker_id)
        .execute(self.pool())
        .await
        .map_err(db("stop a worker"))?;
        Ok(())
    }

    /// Every registered worker, most recently started first.
    pub async fn workers(&self) -> Result<Vec<WorkerRecord>, QueueError> {
        let rows = sqlx::query(
            "SELECT id, host, pid, capacity, tags, endpoint, models, in_flight, heartbeat_ms, \
               started_ms, state FROM workers ORDER BY started_ms DESC, id",
        )
        .fetch_all(self.pool())
        .await
        .map_err(db("list workers"))?;
        rows.iter().map(worker_record).collect()
    }
}

fn invalid(id: String, state: &str, action: &'static str) -> QueueError {
    match state.parse::<TaskState>() {
        Ok(state) => QueueError::InvalidState { id, state, action },
        Err(_) => QueueError::UnknownTask(id),
    }
}

fn worker_record(row: &AnyRow) -> Result<WorkerRecord, QueueError> {
    let read = db("read a worker");
    let fields = (|| {
        Ok::<_, sqlx::Error>((
            row.try_get::<String, _>("id")?,
            row.try_get::<String, _>("host")?,
            row.try_get::<i64, _>("pid")?,
            row.try_get::<i64, _>("capacity")?,
            row.try_get::<String, _>("tags")?,
            row.try_get::<Option<String>, _>("endpoint")?,
            row.try_get::<String, _>("models")?,
            row.try_get::<i64, _>("in_flight")?,
            row.try_get::<i64, _>("heartbeat_ms")?,
            row.try_get::<i64, _>("started_ms")?,
            row.try_get::<String, _>("state")?,
        ))
    })();
    let (
        id,
        host,
        pid,
        capacity,
        tags,
        endpoint,
        models,
        in_flight,
        heartbeat_ms,
        started_ms,
        state,
    ) = fields.map_err(read)?;
    let list = |text: &str, what: &str| {
        serde_json::from_str::<Vec<String>>(text)
            .map_err(|e| QueueError::Corrupt(format!("worker {what}: {e}")))
    };
    Ok(WorkerRecord {
        info: WorkerInfo {
            id,
            host,
            pid: u32::try_from(pid).unwrap_or(0),
            capacity: u32::try_from(capacity).unwrap_or(0),
            tags: list(&tags, "tags")?,
            endpoint,
            models: list(&models, "models")?,
        },
        in_flight,
        heartbeat_ms,
        started_ms,
        state,
    })
}
