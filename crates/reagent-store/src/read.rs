//! Reading runs and their events; deleting runs; marking dead runs `interrupted`.

use reagent_protocol::{Event, Outcome};
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::liveness::writer_gone;
use crate::{now_ms, Store, StoreError, RUNNING};

pub(crate) const RUN_COLUMNS: &str =
    "id, session_id, started, finished, model, provider, tool_mode, \
    workspace, task, outcome, iterations, tool_calls, prompt_tokens, completion_tokens, error, \
    error_kind, answer, pid, host, last_event_at";

/// One run's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// Run id.
    pub id: String,
    /// The session it belongs to, when it has one.
    pub session_id: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// When it finished, if it did.
    pub finished: Option<String>,
    /// Model name.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// Tool mode.
    pub tool_mode: String,
    /// Workspace directory.
    pub workspace: String,
    /// The task.
    pub task: String,
    /// An [`Outcome`] name, or `running`. A `running` row whose writer is gone reads as
    /// `interrupted`.
    pub outcome: String,
    /// Loop iterations.
    pub iterations: i64,
    /// Tool calls.
    pub tool_calls: i64,
    /// Prompt tokens.
    pub prompt_tokens: i64,
    /// Completion tokens.
    pub completion_tokens: i64,
    /// Error text, when it ended in error.
    pub error: Option<String>,
    /// Error kind, when it ended in error.
    pub error_kind: Option<String>,
    /// The final answer.
    pub answer: Option<String>,
    /// Process id of the writer.
    pub pid: i64,
    /// Host of the writer.
    pub host: String,
    /// When its last event was written (epoch ms).
    pub last_event_at: i64,
}

impl RunRecord {
    /// Whether the run is still going (its writer alive and no `run_finished` yet).
    pub fn is_running(&self) -> bool {
        self.outcome == RUNNING
    }

    /// Prompt plus completion tokens.
    pub fn total_tokens(&self) -> i64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    pub(crate) fn from_row(row: &AnyRow) -> Result<RunRecord, sqlx::Error> {
        let mut r = RunRecord {
            id: row.try_get("id")?,
            session_id: row.try_get("session_id")?,
            started: row.try_get("started")?,
            finished: row.try_get("finished")?,
            model: row.try_get("model")?,
            provider: row.try_get("provider")?,
            tool_mode: row.try_get("tool_mode")?,
            workspace: row.try_get("workspace")?,
            task: row.try_get("task")?,
            outcome: row.try_get("outcome")?,
            iterations: row.try_get("iterations")?,
            tool_calls: row.try_get("tool_calls")?,
            prompt_tokens: row.try_get("prompt_tokens")?,
            completion_tokens: row.try_get("completion_tokens")?,
            error: row.try_get("error")?,
            error_kind: row.try_get("error_kind")?,
            answer: row.try_get("answer")?,
            pid: row.try_get("pid")?,
            host: row.try_get("host")?,
            last_event_at: row.try_get("last_event_at")?,
        };
        if r.is_running() && writer_gone(r.pid, &r.host, r.last_event_at, now_ms()) {
            r.outcome = Outcome::Interrupted.as_str().to_owned();
        }
        Ok(r)
    }
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only runs with this outcome (`running` or an [`Outcome`] name).
    pub outcome: Option<String>,
    /// At most this many (0: no limit).
    pub limit: u32,
    /// Paging: only runs older than this one (`started`, `id`) — the last row of the page before.
    pub before: Option<(String, String)>,
}

/// One stored event.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Its position in the run.
    pub seq: i64,
    /// Its `type`.
    pub kind: String,
    /// The event as written (one JSON object).
    pub json: String,
}

/// Rows of `seq, type, json`.
fn stored_events(rows: &[sqlx::any::AnyRow]) -> Result<Vec<StoredEvent>, sqlx::Error> {
    rows.iter()
        .map(|r| {
            Ok(StoredEvent {
                seq: r.try_get(0)?,
                kind: r.try_get(1)?,
                json: r.try_get(2)?,
            })
        })
        .collect()
}

impl StoredEvent {
    /// The event, parsed (an error for an event of a kind this build does not know).
    pub fn parse(&self) -> Result<Event, serde_json::Error> {
        serde_json::from_str(&self.json)
    }
}

impl Store {
    /// Runs, newest first.
    pub async fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError> {
        let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE 1 = 1");
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        if filter.outcome.is_some() {
            sql.push_str(&format!(" AND outcome = {}", next()));
        }
        if filter.before.is_some() {
            let (a, b, c) = (next(), next(), next());
            sql.push_str(&format!(
                " AND (started < {a} OR (started = {b} AND id < {c}))"
            ));
        }
        sql.push_str(" ORDER BY started DESC, id DESC");
        if filter.limit > 0 {
            sql.push_str(&format!(" LIMIT {}", filter.limit));
        }
        let mut q = sqlx::query(&sql);
        if let Some(o) = &filter.outcome {
            q = q.bind(o.as_str());
        }
        if let Some((started, id)) = &filter.before {
            q = q
                .bind(started.as_str())
                .bind(started.as_str())
                .bind(id.as_str());
        }
        let rows = q
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.query_error("list runs", e))?;
        rows.iter()
            .map(RunRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(|e| self.query_error("read runs", e))
    }

    /// One run by its full id.
    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.one_run("WHERE id = $1", id, "read a run").await
    }

    /// The newest run of session `session_id` (`None`: no run has that session).
    pub async fn last_run_of_session(
        &self,
        session_id: &str,
    ) -> Result<Option<RunRecord>, StoreError> {
        let filter = "WHERE session_id = $1 ORDER BY started DESC, id DESC LIMIT 1";
        self.one_run(filter, session_id, "read a session's runs")
            .await
    }

    /// The first run `filter` (with one parameter, `value`) selects.
    async fn one_run(
        &self,
        filter: &str,
        value: &str,
        doing: &str,
    ) -> Result<Option<RunRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {RUN_COLUMNS} FROM runs {filter}"))
            .bind(value)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.query_error(doing, e))?;
        row.as_ref()
            .map(RunRecord::from_row)
            .transpose()
            .map_err(|e| self.query_error(doing, e))
    }

    /// The full id of the one run whose id starts with `prefix`.
    pub async fn resolve_id(&self, prefix: &str) -> Result<String, StoreError> {
        self.unique_id("runs", "run", prefix).await
    }

    /// The full id of the one row of `table` (a table of ours, with a text `id`) whose id starts
    /// with `prefix`; `noun` names its rows in errors.
    pub(crate) async fn unique_id(
        &self,
        table: &str,
        noun: &str,
        prefix: &str,
    ) -> Result<String, StoreError> {
        let prefix = prefix.trim();
        if prefix.is_empty() {
            let article = if noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            return Err(StoreError::NotFound(format!(
                "give {article} {noun} id (or a prefix of one)"
            )));
        }
        let doing = format!("find a {noun}");
        let len = i64::try_from(prefix.chars().count()).unwrap_or(i64::MAX);
        let rows = sqlx::query(&format!(
            "SELECT id FROM {table} WHERE substr(id, 1, CAST($1 AS INTEGER)) = $2 ORDER BY id LIMIT 3"
        ))
        .bind(len)
        .bind(prefix)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.query_error(&doing, e))?;
        let ids: Vec<String> = rows
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()
            .map_err(|e| self.query_error(&doing, e))?;
        match ids.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(StoreError::NotFound(format!(
                "no {noun} with id '{prefix}' in the store {}",
                self.location
            ))),
            many => Err(StoreError::NotFound(format!(
                "'{prefix}' matches several {noun}s ({}…): give more of the id",
                many.join(", ")
            ))),
        }
    }

    /// The events of `run_id` after `after_seq` (0: from the start), in order, at most `limit`
    /// (0: all).
    pub async fn events_after(
        &self,
        run_id: &str,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let mut sql = String::from(
            "SELECT seq, type, json FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq",
        );
        if limit > 0 {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let rows = sqlx::query(&sql)
            .bind(run_id)
            .bind(after_seq)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.query_error("read events", e))?;
        stored_events(&rows).map_err(|e| self.query_error("read events", e))
    }

    /// The events of every run of session `session_id`, run after run in the order they started,
    /// each run's in order: what rebuilds the session's conversation.
    pub async fn session_events(&self, session_id: &str) -> Result<Vec<StoredEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT e.seq, e.type, e.json FROM events e JOIN runs r ON r.id = e.run_id \
             WHERE r.session_id = $1 ORDER BY r.started, r.id, e.seq",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.query_error("read a session's events", e))?;
        stored_events(&rows).map_err(|e| self.query_error("read a session's events", e))
    }

    /// Delete a run and its events (and its run-scoped memory). Returns whether it existed.
    pub async fn delete_run(&self, id: &str) -> Result<bool, StoreError> {
        let fail = |e| self.query_error("delete a run", e);
        let mut tx = self.pool.begin().await.map_err(fail)?;
        for sql in [
            "DELETE FROM events WHERE run_id = $1",
            "DELETE FROM memory WHERE scope = 'run' AND scope_id = $1",
        ] {
            sqlx::query(sql)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(fail)?;
        }
        let gone = sqlx::query("DELETE FROM runs WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(fail)?
            .rows_affected();
        tx.commit().await.map_err(fail)?;
        Ok(gone > 0)
    }

    /// Mark every `running` row whose writer is gone as `interrupted`; returns how many.
    pub(crate) async fn mark_interrupted(&self) -> Result<u64, sqlx::Error> {
        let rows = sqlx::query("SELECT id, pid, host, last_event_at FROM runs WHERE outcome = $1")
            .bind(RUNNING)
            .fetch_all(&self.pool)
            .await?;
        let now = now_ms();
        let mut marked = 0;
        for row in rows {
            let id: String = row.try_get(0)?;
            if writer_gone(
                row.try_get(1)?,
                &row.try_get::<String, _>(2)?,
                row.try_get(3)?,
                now,
            ) {
                marked +=
                    sqlx::query("UPDATE runs SET outcome = $1 WHERE id = $2 AND outcome = $3")
                        .bind(Outcome::Interrupted.as_str())
                        .bind(id.as_str())
                        .bind(RUNNING)
                        .execute(&self.pool)
                        .await?
                        .rows_affected();
            }
        }
        Ok(marked)
    }
}
