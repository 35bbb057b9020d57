//! `reagent cycles` experiments (migration 0006): one row per experiment (its config as opaque
//! JSON text, status, cycles done), one per finished cycle, every event in the study's log shape,
//! the experiment's memory (the agent's key-value tools) and the evaluator models' ratings.
//! What the JSON texts hold is reagent-cycles' business; the store never reads them.

use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::liveness::{host_name, own_pid, writer_gone};
use crate::{now_ms, now_rfc3339, Store, StoreError};

/// An experiment to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewExperiment {
    /// Its id (the config's `run_id`).
    pub id: String,
    /// The model it runs.
    pub model: String,
    /// Cycles planned.
    pub cycles: u32,
    /// The resolved config (JSON text, stored as given).
    pub config: String,
}

/// A stored experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExperimentRecord {
    /// Its id.
    pub id: String,
    /// When it was created (RFC 3339, UTC, milliseconds).
    pub created: String,
    /// When it last changed.
    pub updated: String,
    /// `running`, `stopped`, `completed` or `failed` (reagent-cycles' words), and
    /// `interrupted` for a `running` row whose process is gone (killed, crashed).
    pub status: String,
    /// The model it runs.
    pub model: String,
    /// Cycles planned.
    pub cycles: i64,
    /// Cycles finished (they are 1..=cycles_done).
    pub cycles_done: i64,
    /// The config as it was stored.
    pub config: String,
}

/// One finished cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CycleRecord {
    /// Its cycle number, from 1.
    pub cycle: i64,
    /// When it started.
    pub started: String,
    /// When it ended.
    pub finished: String,
    /// How its session's run ended (`completed`, `max_iterations`...).
    pub outcome: String,
    /// Whether a guardrail ended it before a reply without a tool call.
    pub cut_short: bool,
    /// Its final reflection (thinking removed).
    pub reflection: String,
    /// The thinking removed from the reflection.
    pub thinking: String,
    /// Its metrics (JSON text).
    pub metrics: String,
}

/// One event of an experiment, in the study's log shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CycleEventRow {
    /// Position in the experiment, from 1.
    pub seq: i64,
    /// The cycle it belongs to.
    pub cycle: i64,
    /// When it happened.
    pub ts: String,
    /// `CYCLE_START`, `LLM_INVOCATION`, `TOOL_CALL`, `CYCLE_END`...
    pub event_type: String,
    /// Its payload (JSON text).
    pub payload: String,
}

/// One entry of an experiment's memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryItem {
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: String,
    /// When it was last written.
    pub updated: String,
}

/// An evaluator model's rating of an experiment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RatingRecord {
    /// The experiment rated.
    pub experiment_id: String,
    /// The evaluator model.
    pub evaluator: String,
    /// When it was rated.
    pub created: String,
    /// The rating (1–10), `None` when the reply held none.
    pub rating: Option<i64>,
    /// The justification given.
    pub justification: String,
    /// The evaluator's whole reply.
    pub reply: String,
    /// Why there is no rating, when there is none.
    pub error: Option<String>,
}

const EXPERIMENT_COLUMNS: &str =
    "id, created, updated, status, model, cycles, cycles_done, config, \
     owner_pid, owner_host, heartbeat";
const CYCLE_COLUMNS: &str =
    "cycle, started, finished, outcome, cut_short, reflection, thinking, metrics";

/// The process running an experiment, as its row names it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    pid: i64,
    host: String,
    heartbeat: i64,
}

impl Owner {
    fn of(row: &AnyRow) -> Result<Owner, sqlx::Error> {
        Ok(Owner {
            pid: row.try_get("owner_pid")?,
            host: row.try_get("owner_host")?,
            heartbeat: row.try_get("heartbeat")?,
        })
    }

    fn gone(&self) -> bool {
        writer_gone(self.pid, &self.host, self.heartbeat, now_ms())
    }

    fn is_this_process(&self) -> bool {
        self.pid == own_pid() && self.host == host_name()
    }
}

fn experiment_from_row(row: &AnyRow) -> Result<ExperimentRecord, sqlx::Error> {
    let status: String = row.try_get("status")?;
    let status = if status == "running" && Owner::of(row)?.gone() {
        "interrupted".to_owned()
    } else {
        status
    };
    Ok(ExperimentRecord {
        id: row.try_get("id")?,
        created: row.try_get("created")?,
        updated: row.try_get("updated")?,
        status,
        model: row.try_get("model")?,
        cycles: row.try_get("cycles")?,
        cycles_done: row.try_get("cycles_done")?,
        config: row.try_get("config")?,
    })
}

fn cycle_from_row(row: &AnyRow) -> Result<CycleRecord, sqlx::Error> {
    Ok(CycleRecord {
        cycle: row.try_get("cycle")?,
        started: row.try_get("started")?,
        finished: row.try_get("finished")?,
        outcome: row.try_get("outcome")?,
        cut_short: row.try_get::<i64, _>("cut_short")? != 0,
        reflection: row.try_get("reflection")?,
        thinking: row.try_get("thinking")?,
        metrics: row.try_get("metrics")?,
    })
}

impl Store {
    /// Create an experiment with status `stopped` (no cycle run yet; [`Store::claim_experiment`]
    /// starts it); `false` (nothing written) when one with that id exists.
    pub async fn create_experiment(&self, new: &NewExperiment) -> Result<bool, StoreError> {
        let now = now_rfc3339();
        let done = sqlx::query(
            "INSERT INTO cycle_experiments (id, created, updated, status, model, cycles, cycles_done, config, \
             owner_pid, owner_host, heartbeat) \
             VALUES ($1, $2, $3, 'stopped', $4, $5, 0, $6, 0, '', 0) ON CONFLICT (id) DO NOTHING",
        )
        .bind(new.id.as_str())
        .bind(now.as_str())
        .bind(now.as_str())
        .bind(new.model.as_str())
        .bind(i64::from(new.cycles))
        .bind(new.config.as_str())
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("create an experiment", e))?;
        Ok(done.rows_affected() == 1)
    }

    /// The experiment `id`, if there is one.
    pub async fn experiment(&self, id: &str) -> Result<Option<ExperimentRecord>, StoreError> {
        let fail = |e| self.query_error("read an experiment", e);
        let row = sqlx::query(&format!(
            "SELECT {EXPERIMENT_COLUMNS} FROM cycle_experiments WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(fail)?;
        row.as_ref()
            .map(experiment_from_row)
            .transpose()
            .map_err(fail)
    }

    /// Every experiment, oldest first.
    pub async fn list_experiments(&self) -> Result<Vec<ExperimentRecord>, StoreError> {
        let fail = |e| self.query_error("list experiments", e);
        let rows = sqlx::query(&format!(
            "SELECT {EXPERIMENT_COLUMNS} FROM cycle_experiments ORDER BY created, id"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(fail)?;
        rows.iter()
            .map(experiment_from_row)
            .collect::<Result<_, _>>()
            .map_err(fail)
    }

    /// Mark experiment `id` `running` in this process. Refused (`Ok(Err(why))`, nothing
    /// written) while another live process runs it; a process that died (or fell silent for
    /// [`crate::STALE_AFTER`]) loses it.
    pub async fn claim_experiment(&self, id: &str) -> Result<Result<(), String>, StoreError> {
        let fail = |e| self.query_error("claim an experiment", e);
        let row = sqlx::query(
            "SELECT status, owner_pid, owner_host, heartbeat FROM cycle_experiments WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(fail)?;
        let Some(row) = row else {
            return Ok(Err(format!("no experiment `{id}`")));
        };
        let status: String = row.try_get("status").map_err(fail)?;
        let owner = Owner::of(&row).map_err(fail)?;
        if status == "running" && !owner.gone() && !owner.is_this_process() {
            return Ok(Err(format!(
                "experiment `{id}` is being run by process {} on {}",
                owner.pid,
                if owner.host.is_empty() {
                    "this host"
                } else {
                    &owner.host
                }
            )));
        }
        // Compare and set: a process claiming it meanwhile wins, this one is refused.
        let done = sqlx::query(
            "UPDATE cycle_experiments SET status = 'running', updated = $1, owner_pid = $2, \
             owner_host = $3, heartbeat = $4 \
             WHERE id = $5 AND owner_pid = $6 AND owner_host = $7 AND heartbeat = $8",
        )
        .bind(now_rfc3339())
        .bind(own_pid())
        .bind(host_name())
        .bind(now_ms())
        .bind(id)
        .bind(owner.pid)
        .bind(owner.host.as_str())
        .bind(owner.heartbeat)
        .execute(&self.pool)
        .await
        .map_err(fail)?;
        if done.rows_affected() == 1 {
            Ok(Ok(()))
        } else {
            Ok(Err(format!(
                "experiment `{id}` was claimed by another process meanwhile"
            )))
        }
    }

    /// Set an experiment's status.
    pub async fn set_experiment_status(&self, id: &str, status: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE cycle_experiments SET status = $1, updated = $2 WHERE id = $3")
            .bind(status)
            .bind(now_rfc3339())
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(|e| self.query_error("update an experiment", e))?;
        Ok(())
    }

    /// Record a finished cycle and count it done, in one transaction (a cycle is either done
    /// with its row or not done at all).
    pub async fn save_cycle(&self, id: &str, record: &CycleRecord) -> Result<(), StoreError> {
        let fail = |e| self.query_error("save a cycle", e);
        let mut tx = self.pool.begin().await.map_err(fail)?;
        sqlx::query(&format!(
            "INSERT INTO cycle_records (experiment_id, {CYCLE_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (experiment_id, cycle) DO UPDATE SET started = excluded.started, \
             finished = excluded.finished, outcome = excluded.outcome, \
             cut_short = excluded.cut_short, reflection = excluded.reflection, \
             thinking = excluded.thinking, metrics = excluded.metrics"
        ))
        .bind(id)
        .bind(record.cycle)
        .bind(record.started.as_str())
        .bind(record.finished.as_str())
        .bind(record.outcome.as_str())
        .bind(i64::from(record.cut_short))
        .bind(record.reflection.as_str())
        .bind(record.thinking.as_str())
        .bind(record.metrics.as_str())
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
        sqlx::query(
            "UPDATE cycle_experiments SET cycles_done = $1, updated = $2 WHERE id = $3 AND cycles_done < $1",
        )
        .bind(record.cycle)
        .bind(now_rfc3339())
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(fail)?;
        tx.commit().await.map_err(fail)
    }

    /// The finished cycles of experiment `id`, in order.
    pub async fn cycles(&self, id: &str) -> Result<Vec<CycleRecord>, StoreError> {
        let fail = |e| self.query_error("read an experiment's cycles", e);
        let rows = sqlx::query(&format!(
            "SELECT {CYCLE_COLUMNS} FROM cycle_records WHERE experiment_id = $1 ORDER BY cycle"
        ))
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .map_err(fail)?;
        rows.iter()
            .map(cycle_from_row)
            .collect::<Result<_, _>>()
            .map_err(fail)
    }

    /// Append an event to experiment `id` (numbered after its last one).
    pub async fn append_cycle_event(
        &self,
        id: &str,
        cycle: u32,
        ts: &str,
        event_type: &str,
        payload: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO cycle_events (experiment_id, seq, cycle, ts, event_type, payload) \
             SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM cycle_events WHERE experiment_id = $1",
        )
        .bind(id)
        .bind(i64::from(cycle))
        .bind(ts)
        .bind(event_type)
        .bind(payload)
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("record an experiment's event", e))?;
        // The experiment's process is alive as long as it logs.
        sqlx::query("UPDATE cycle_experiments SET heartbeat = $1 WHERE id = $2 AND owner_pid = $3")
            .bind(now_ms())
            .bind(id)
            .bind(own_pid())
            .execute(&self.pool)
            .await
            .map_err(|e| self.query_error("record an experiment's event", e))?;
        Ok(())
    }

    /// The events of experiment `id`, in order.
    pub async fn cycle_events(&self, id: &str) -> Result<Vec<CycleEventRow>, StoreError> {
        self.cycle_events_after(id, 0, i64::MAX).await
    }

    /// At most `limit` events of experiment `id` numbered after `after`, in order (a live
    /// view's next page).
    pub async fn cycle_events_after(
        &self,
        id: &str,
        after: i64,
        limit: i64,
    ) -> Result<Vec<CycleEventRow>, StoreError> {
        let fail = |e| self.query_error("read an experiment's events", e);
        let rows = sqlx::query(
            "SELECT seq, cycle, ts, event_type, payload FROM cycle_events \
             WHERE experiment_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(id)
        .bind(after)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(fail)?;
        rows.iter()
            .map(|row| {
                Ok(CycleEventRow {
                    seq: row.try_get("seq")?,
                    cycle: row.try_get("cycle")?,
                    ts: row.try_get("ts")?,
                    event_type: row.try_get("event_type")?,
                    payload: row.try_get("payload")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(fail)
    }

    /// Write `key` = `value` in experiment `id`'s memory.
    pub async fn experiment_memory_put(
        &self,
        id: &str,
        key: &str,
        value: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO cycle_memory (experiment_id, key, value, updated) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (experiment_id, key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
        )
        .bind(id)
        .bind(key)
        .bind(value)
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("write an experiment's memory", e))?;
        Ok(())
    }

    /// The value of `key` in experiment `id`'s memory.
    pub async fn experiment_memory_get(
        &self,
        id: &str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        let fail = |e| self.query_error("read an experiment's memory", e);
        let row =
            sqlx::query("SELECT value FROM cycle_memory WHERE experiment_id = $1 AND key = $2")
                .bind(id)
                .bind(key)
                .fetch_optional(&self.pool)
                .await
                .map_err(fail)?;
        row.map(|r| r.try_get::<String, _>("value"))
            .transpose()
            .map_err(fail)
    }

    /// Remove `key` from experiment `id`'s memory; whether it was there.
    pub async fn experiment_memory_delete(&self, id: &str, key: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM cycle_memory WHERE experiment_id = $1 AND key = $2")
            .bind(id)
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(|e| self.query_error("delete from an experiment's memory", e))?;
        Ok(done.rows_affected() > 0)
    }

    /// Experiment `id`'s whole memory, by key.
    pub async fn experiment_memory(&self, id: &str) -> Result<Vec<MemoryItem>, StoreError> {
        let fail = |e| self.query_error("read an experiment's memory", e);
        let rows = sqlx::query(
            "SELECT key, value, updated FROM cycle_memory WHERE experiment_id = $1 ORDER BY key",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .map_err(fail)?;
        rows.iter()
            .map(|row| {
                Ok(MemoryItem {
                    key: row.try_get("key")?,
                    value: row.try_get("value")?,
                    updated: row.try_get("updated")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(fail)
    }

    /// Save an evaluator's rating of an experiment.
    pub async fn save_rating(&self, rating: &RatingRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO cycle_ratings (id, experiment_id, evaluator, created, rating, justification, reply, error) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(uuid::Uuid::new_v4().simple().to_string())
        .bind(rating.experiment_id.as_str())
        .bind(rating.evaluator.as_str())
        .bind(rating.created.as_str())
        .bind(rating.rating)
        .bind(rating.justification.as_str())
        .bind(rating.reply.as_str())
        .bind(rating.error.as_deref())
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("save a rating", e))?;
        Ok(())
    }

    /// The ratings of experiment `id`, oldest first.
    pub async fn ratings(&self, id: &str) -> Result<Vec<RatingRecord>, StoreError> {
        let fail = |e| self.query_error("read ratings", e);
        let rows = sqlx::query(
            "SELECT experiment_id, evaluator, created, rating, justification, reply, error \
             FROM cycle_ratings WHERE experiment_id = $1 ORDER BY created, id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .map_err(fail)?;
        rows.iter()
            .map(|row| {
                Ok(RatingRecord {
                    experiment_id: row.try_get("experiment_id")?,
                    evaluator: row.try_get("evaluator")?,
                    created: row.try_get("created")?,
                    rating: row.try_get("rating")?,
                    justification: row.try_get("justification")?,
                    reply: row.try_get("reply")?,
                    error: row.try_get("error")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(fail)
    }
}
