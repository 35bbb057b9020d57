//! Leases: claim, heartbeat, complete, fail, and reclaiming the expired ones.

use std::time::Duration;

use sqlx::Row;

use super::types::TASK_COLUMNS;
use super::{db, json_text, Lease, Queue, QueueError, TaskId, TaskRecord, TaskState, WorkerInfo};

/// The claimable tasks for worker `$1` with tags `$4` and models `$5` (JSON arrays), best
/// first. `{lock}` is PostgreSQL's `FOR UPDATE SKIP LOCKED` (empty on SQLite).
const PG_MATCH: &str = "CAST(c.tags AS jsonb) <@ CAST($4 AS jsonb) \
    AND (c.model IS NULL OR jsonb_build_array(c.model) <@ CAST($5 AS jsonb))";
const SQLITE_MATCH: &str = "NOT EXISTS (SELECT 1 FROM json_each(c.tags) AS t \
      WHERE t.value NOT IN (SELECT value FROM json_each($4))) \
    AND (c.model IS NULL OR c.model IN (SELECT value FROM json_each($5)))";

/// Lease lengths are whole milliseconds, at least one.
fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1)
}

impl Queue {
    /// Claim the best task `worker` may run, leased to it for `lease`; `None` when there is
    /// none. One statement picks and leases the task, so two claimers never get the same one.
    pub async fn claim(
        &self,
        worker: &WorkerInfo,
        lease: Duration,
    ) -> Result<Option<Lease>, QueueError> {
        let (matching, lock) = if self.store.is_postgres() {
            (PG_MATCH, "FOR UPDATE SKIP LOCKED")
        } else {
            (SQLITE_MATCH, "")
        };
        let sql = self.sql(&format!(
            "UPDATE tasks SET state = 'running', attempt = attempt + 1, lease_owner = $1, \
               lease_token = $2, lease_expires_ms = {{now}} + $3, updated_ms = {{now}} \
             WHERE id = (SELECT c.id FROM tasks c WHERE c.state = 'queued' \
               AND c.run_after_ms <= {{now}} AND (c.routed_to IS NULL OR c.routed_to = $1) \
               AND {matching} \
               ORDER BY c.priority DESC, c.created_ms, c.id LIMIT 1 {lock}) \
             RETURNING {TASK_COLUMNS}"
        ));
        let token = uuid::Uuid::new_v4().to_string();
        let mut tx = self.begin().await?;
        let row = sqlx::query(&sql)
            .bind(&worker.id)
            .bind(&token)
            .bind(millis(lease))
            .bind(json_text(&worker.tags)?)
            .bind(json_text(&worker.models)?)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db("claim a task"))?;
        let Some(row) = row else {
            // Nothing claimable: end the (empty) transaction.
            tx.commit().await.map_err(db("claim a task"))?;
            return Ok(None);
        };
        let task = TaskRecord::from_row(&row)?;
        let expires_ms = task.lease_expires_ms.unwrap_or(task.updated_ms);
        self.record(
            &mut tx,
            &task.id,
            task.attempt,
            Some(&worker.id),
            "claimed",
            None,
        )
        .await?;
        tx.commit().await.map_err(db("claim a task"))?;
        Ok(Some(Lease {
            attempt: task.attempt,
            token,
            owner: worker.id.clone(),
            expires_ms,
            task,
        }))
    }

    /// Extend `lease` by `extension` from now. `false` when the lease is lost (expired and
    /// reclaimed, or the task cancelled): the worker must stop the task.
    pub async fn heartbeat(&self, lease: &Lease, extension: Duration) -> Result<bool, QueueError> {
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET lease_expires_ms = {now} + $3, updated_ms = {now} \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        ))
        .bind(lease.task_id())
        .bind(&lease.token)
        .bind(millis(extension))
        .execute(self.pool())
        .await
        .map_err(db("renew a lease"))?;
        if done.rows_affected() == 1 {
            return Ok(true);
        }
        let mut tx = self.begin().await?;
        let now_in = self.state_of(&mut tx, lease.task_id()).await?;
        self.record(
            &mut tx,
            lease.task_id(),
            lease.attempt,
            Some(&lease.owner),
            "heartbeat_lost",
            Some(&format!("the task is now {now_in}")),
        )
        .await?;
        tx.commit().await.map_err(db("renew a lease"))?;
        Ok(false)
    }

    /// Record the run (in the store's `runs`) of the leased attempt. `false` when the lease is
    /// lost.
    pub async fn set_run_id(&self, lease: &Lease, run_id: &str) -> Result<bool, QueueError> {
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET run_id = $3, updated_ms = {now} \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        ))
        .bind(lease.task_id())
        .bind(&lease.token)
        .bind(run_id)
        .execute(self.pool())
        .await
        .map_err(db("record a task's run"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Complete the leased task with `result`. `false` when the lease was lost: the result is
    /// refused (recorded as `late_result_refused`) and the task left as it is.
    pub async fn complete(
        &self,
        lease: &Lease,
        result: &serde_json::Value,
    ) -> Result<bool, QueueError> {
        let mut tx = self.begin().await?;
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET state = 'done', result = $3, error = NULL, lease_expires_ms = NULL, \
               updated_ms = {now} \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        ))
        .bind(lease.task_id())
        .bind(&lease.token)
        .bind(json_text(result)?)
        .execute(&mut *tx)
        .await
        .map_err(db("complete a task"))?;
        if done.rows_affected() == 0 {
            return self.refuse(tx, lease, "completion").await;
        }
        self.record(
            &mut tx,
            lease.task_id(),
            lease.attempt,
            Some(&lease.owner),
            "completed",
            None,
        )
        .await?;
        if self.has_dependants(&mut tx, lease.task_id()).await?
            && self.settle_dependencies(&mut tx).await? > 0
        {
            self.notify(&mut tx).await?;
        }
        tx.commit().await.map_err(db("complete a task"))?;
        Ok(true)
    }

    /// Fail the leased attempt. A `retryable` failure queues the task again after a backoff,
    /// or dead-letters it when it used all its attempts; any other failure fails it for good.
    /// `false` when the lease was lost (refused and recorded, as for [`Queue::complete`]).
    pub async fn fail(
        &self,
        lease: &Lease,
        error: &str,
        retryable: bool,
    ) -> Result<bool, QueueError> {
        let next = if !retryable {
            TaskState::Failed
        } else if lease.attempt < lease.task.max_attempts {
            TaskState::Queued
        } else {
            TaskState::Dead
        };
        let backoff = millis(self.config.backoff(lease.attempt));
        let mut tx = self.begin().await?;
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET state = $3, error = $4, run_after_ms = {now} + $5, \
               lease_expires_ms = NULL, updated_ms = {now} \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        ))
        .bind(lease.task_id())
        .bind(&lease.token)
        .bind(next.as_str())
        .bind(error)
        .bind(backoff)
        .execute(&mut *tx)
        .await
        .map_err(db("fail a task"))?;
        if done.rows_affected() == 0 {
            return self.refuse(tx, lease, "failure").await;
        }
        let (id, attempt, owner) = (lease.task_id(), lease.attempt, Some(lease.owner.as_str()));
        self.record(&mut tx, id, attempt, owner, "failed", Some(error))
            .await?;
        self.after_attempt(&mut tx, id, attempt, next).await?;
        tx.commit().await.map_err(db("fail a task"))?;
        Ok(true)
    }

    /// Give the leased task back unrun (its worker is shutting down): `queued` again at once,
    /// the attempt not counted. `false` when the lease was lost (refused and recorded).
    pub async fn release(&self, lease: &Lease) -> Result<bool, QueueError> {
        let mut tx = self.begin().await?;
        let done = sqlx::query(&self.sql(
            "UPDATE tasks SET state = 'queued', attempt = attempt - 1, run_after_ms = {now}, \
               lease_expires_ms = NULL, updated_ms = {now} \
             WHERE id = $1 AND lease_token = $2 AND state = 'running'",
        ))
        .bind(lease.task_id())
        .bind(&lease.token)
        .execute(&mut *tx)
        .await
        .map_err(db("release a task"))?;
        if done.rows_affected() == 0 {
            return self.refuse(tx, lease, "release").await;
        }
        let (id, attempt, owner) = (lease.task_id(), lease.attempt, Some(lease.owner.as_str()));
        self.record(
            &mut tx,
            id,
            attempt,
            owner,
            "released",
            Some("its worker stopped"),
        )
        .await?;
        self.notify(&mut tx).await?;
        tx.commit().await.map_err(db("release a task"))?;
        Ok(true)
    }

    /// Refuse a late completion or failure: record it, change nothing else.
    async fn refuse(
        &self,
        mut tx: sqlx::Transaction<'static, sqlx::Any>,
        lease: &Lease,
        what: &str,
    ) -> Result<bool, QueueError> {
        let now_in = self.state_of(&mut tx, lease.task_id()).await?;
        let detail = format!("{what} refused: the lease was lost (the task is now {now_in})");
        self.record(
            &mut tx,
            lease.task_id(),
            lease.attempt,
            Some(&lease.owner),
            "late_result_refused",
            Some(&detail),
        )
        .await?;
        tx.commit().await.map_err(db("refuse a late result"))?;
        Ok(false)
    }

    /// After an attempt ended in `next`: dead-letter it, wake workers for a retry, or fail the
    /// tasks waiting on it.
    async fn after_attempt(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        id: &str,
        attempt: i64,
        next: TaskState,
    ) -> Result<(), QueueError> {
        match next {
            TaskState::Queued => self.notify(tx).await,
            TaskState::Dead => {
                let detail = format!("{attempt} attempts used");
                self.record(tx, id, attempt, None, "dead_lettered", Some(&detail))
                    .await?;
                self.settle_dependants(tx, id).await
            }
            _ => self.settle_dependants(tx, id).await,
        }
    }

    /// Settle the dependencies when task `id` has dependants.
    async fn settle_dependants(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        id: &str,
    ) -> Result<(), QueueError> {
        if self.has_dependants(tx, id).await? {
            self.settle_dependencies(tx).await?;
        }
        Ok(())
    }

    /// The state of task `id` (`unknown` if it was deleted).
    pub(super) async fn state_of(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        id: &str,
    ) -> Result<String, QueueError> {
        let row = sqlx::query("SELECT state FROM tasks WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut **tx)
            .await
            .map_err(db("read a task's state"))?;
        Ok(match row {
            Some(row) => row.try_get(0).map_err(db("read a task's state"))?,
            None => "unknown".into(),
        })
    }

    /// Put the tasks whose lease expired back to `queued` after a backoff, or dead-letter those
    /// that used all their attempts; also queue waiting tasks whose dependencies are done.
    /// Returns the tasks taken back. Each change is conditional on the lease it saw, so
    /// concurrent reclaimers (every worker, the hub) never both act on one lease.
    pub async fn reclaim_expired(&self) -> Result<Vec<TaskId>, QueueError> {
        let expired = sqlx::query(&self.sql(
            "SELECT id, lease_token, lease_owner, attempt, max_attempts FROM tasks \
             WHERE state = 'running' AND lease_expires_ms < {now}",
        ))
        .fetch_all(self.pool())
        .await
        .map_err(db("find expired leases"))?;
        let mut reclaimed = Vec::new();
        for row in &expired {
            let read = |e| db("read an expired lease")(e);
            let id: String = row.try_get("id").map_err(read)?;
            let token: Option<String> = row.try_get("lease_token").map_err(read)?;
            let owner: Option<String> = row.try_get("lease_owner").map_err(read)?;
            let attempt: i64 = row.try_get("attempt").map_err(read)?;
            let max_attempts: i64 = row.try_get("max_attempts").map_err(read)?;
            let next = if attempt < max_attempts {
                TaskState::Queued
            } else {
                TaskState::Dead
            };
            let mut tx = self.begin().await?;
            let done = sqlx::query(&self.sql(
                "UPDATE tasks SET state = $3, run_after_ms = {now} + $4, lease_expires_ms = NULL, \
                   error = 'the lease expired', updated_ms = {now} \
                 WHERE id = $1 AND lease_token = $2 AND state = 'running' \
                   AND lease_expires_ms < {now}",
            ))
            .bind(&id)
            .bind(&token)
            .bind(next.as_str())
            .bind(millis(self.config.backoff(attempt)))
            .execute(&mut *tx)
            .await
            .map_err(db("reclaim an expired lease"))?;
            if done.rows_affected() == 1 {
                let detail = format!("the lease of {} expired", owner.as_deref().unwrap_or("?"));
                self.record(
                    &mut tx,
                    &id,
                    attempt,
                    owner.as_deref(),
                    "expired",
                    Some(&detail),
                )
                .await?;
                self.after_attempt(&mut tx, &id, attempt, next).await?;
                reclaimed.push(id);
            }
            tx.commit().await.map_err(db("reclaim an expired lease"))?;
        }
        // Two dependencies completing at once may each not see the other done; catch up.
        let mut tx = self.begin().await?;
        if self.settle_dependencies(&mut tx).await? > 0 {
            self.notify(&mut tx).await?;
        }
        tx.commit().await.map_err(db("queue waiting tasks"))?;
        Ok(reclaimed)
    }
}
