//! Session snapshots (opaque JSON text) and the key–value memory scoped by run or session.

use reagent_protocol::Event;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use crate::batch::bound;
use crate::stmt;
use crate::{now_rfc3339, Store, StoreError, StoredEvent};

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRecord {
    /// Session id.
    pub id: String,
    /// When it was first stored (RFC 3339, UTC).
    pub created: String,
    /// When it last changed.
    pub updated: String,
    /// Its latest snapshot (JSON text), if one was saved.
    pub snapshot: Option<String>,
}

/// What a memory entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One run.
    Run,
    /// A session (all its runs).
    Session,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Run => "run",
            Scope::Session => "session",
        }
    }
}

/// One memory entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryEntry {
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// When it was last written.
    pub updated: String,
}

/// A stored session as it is continued (see [`Store::load_session_to_continue`]).
#[derive(Debug)]
pub struct StoredSession<S> {
    /// The state saved at the end of its last run, if it was saved.
    pub snapshot: Option<S>,
    /// The events of its runs, in order, when the snapshot needs them or is missing (else empty).
    pub events: Vec<Event>,
}

impl Store {
    /// Save (or replace) a session's snapshot.
    pub async fn save_session(&self, id: &str, snapshot: &str) -> Result<(), StoreError> {
        let now = now_rfc3339();
        let saved = match &self.direct {
            Some(direct) => {
                direct
                    .save_session(id.to_owned(), now, snapshot.to_owned())
                    .await
            }
            None => {
                let params = stmt::session_row(id, &now, snapshot);
                bound(stmt::SAVE_SESSION, &params)
                    .execute(&self.pool)
                    .await
                    .map(drop)
            }
        };
        saved.map_err(|e| self.query_error("save a session", e))
    }

    /// Wait for the events recorded so far, then save a session's snapshot as JSON. `snapshot`
    /// gets whether every event was written (see [`Store::events_complete`]) and returns the
    /// value to save: a session can then leave its messages to the events
    /// (`reagent_core::Session::snapshot_over_events`).
    pub async fn save_session_after_events<T: Serialize>(
        &self,
        id: &str,
        snapshot: impl FnOnce(bool) -> T,
    ) -> Result<(), StoreError> {
        self.flush().await;
        let json = serde_json::to_string(&snapshot(self.events_complete()))
            .map_err(|e| self.query_error("save a session", e))?;
        self.save_session(id, &json).await
    }

    /// Session `id` as it is continued: its saved snapshot read as `S` (`None` when it was never
    /// saved: its process was killed), and the events of its runs when there is no snapshot or
    /// `needs_events` says the snapshot needs them (`reagent_core::Session::from_stored` takes
    /// both). A snapshot or event that cannot be read is an error naming the session.
    pub async fn load_session_to_continue<S: DeserializeOwned>(
        &self,
        id: &str,
        needs_events: impl Fn(&S) -> bool,
    ) -> Result<StoredSession<S>, StoreError> {
        let unreadable =
            |what: &str, e| self.query_error(&format!("read the {what} of session {id}"), e);
        let snapshot: Option<S> = match self.load_session(id).await?.and_then(|s| s.snapshot) {
            Some(text) => {
                Some(serde_json::from_str(&text).map_err(|e| unreadable("saved state", e))?)
            }
            None => None,
        };
        let events = if snapshot.as_ref().is_none_or(needs_events) {
            self.session_events(id)
                .await?
                .iter()
                .map(StoredEvent::parse)
                .collect::<Result<_, _>>()
                .map_err(|e| unreadable("events", e))?
        } else {
            Vec::new()
        };
        Ok(StoredSession { snapshot, events })
    }

    /// A session, if stored.
    pub async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let fail = |e| self.query_error("load a session", e);
        let row = sqlx::query("SELECT id, created, updated, snapshot FROM sessions WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(fail)?;
        row.map(|r| {
            Ok(SessionRecord {
                id: r.try_get(0)?,
                created: r.try_get(1)?,
                updated: r.try_get(2)?,
                snapshot: r.try_get(3)?,
            })
        })
        .transpose()
        .map_err(fail)
    }

    /// Write `key` = `value` in the memory of `scope`/`scope_id`.
    pub async fn memory_put(
        &self,
        scope: Scope,
        scope_id: &str,
        key: &str,
        value: &Value,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO memory (scope, scope_id, key, value, updated) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (scope, scope_id, key) \
             DO UPDATE SET value = excluded.value, updated = excluded.updated",
        )
        .bind(scope.as_str())
        .bind(scope_id)
        .bind(key)
        .bind(value.to_string())
        .bind(now_rfc3339())
        .execute(&self.pool)
        .await
        .map_err(|e| self.query_error("write memory", e))?;
        Ok(())
    }

    /// The value of `key` in the memory of `scope`/`scope_id`.
    pub async fn memory_get(
        &self,
        scope: Scope,
        scope_id: &str,
        key: &str,
    ) -> Result<Option<Value>, StoreError> {
        Ok(self
            .memory_query(scope, scope_id, Some(key))
            .await?
            .pop()
            .map(|e| e.value))
    }

    /// Every entry in the memory of `scope`/`scope_id`, by key.
    pub async fn memory_list(
        &self,
        scope: Scope,
        scope_id: &str,
    ) -> Result<Vec<MemoryEntry>, StoreError> {
        self.memory_query(scope, scope_id, None).await
    }

    /// Remove `key`; returns whether it was there.
    pub async fn memory_delete(
        &self,
        scope: Scope,
        scope_id: &str,
        key: &str,
    ) -> Result<bool, StoreError> {
        let done =
            sqlx::query("DELETE FROM memory WHERE scope = $1 AND scope_id = $2 AND key = $3")
                .bind(scope.as_str())
                .bind(scope_id)
                .bind(key)
                .execute(&self.pool)
                .await
                .map_err(|e| self.query_error("delete memory", e))?;
        Ok(done.rows_affected() > 0)
    }

    async fn memory_query(
        &self,
        scope: Scope,
        scope_id: &str,
        key: Option<&str>,
    ) -> Result<Vec<MemoryEntry>, StoreError> {
        let fail = |e| self.query_error("read memory", e);
        let mut sql = String::from(
            "SELECT key, value, updated FROM memory WHERE scope = $1 AND scope_id = $2",
        );
        if key.is_some() {
            sql.push_str(" AND key = $3");
        }
        sql.push_str(" ORDER BY key");
        let mut q = sqlx::query(&sql).bind(scope.as_str()).bind(scope_id);
        if let Some(k) = key {
            q = q.bind(k);
        }
        let rows = q.fetch_all(&self.pool).await.map_err(fail)?;
        rows.iter()
            .map(|r| {
                let text: String = r.try_get(1).map_err(fail)?;
                let value = serde_json::from_str(&text).map_err(|e| {
                    self.query_error("read memory", format!("stored value is not JSON: {e}"))
                })?;
                Ok(MemoryEntry {
                    key: r.try_get(0).map_err(fail)?,
                    value,
                    updated: r.try_get(2).map_err(fail)?,
                })
            })
            .collect()
    }
}
