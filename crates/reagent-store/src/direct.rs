//! The SQLite writer's own connection. Through sqlx every statement is a round trip to the
//! connection's worker thread (two thread wake-ups) and its arguments are copied twice (the
//! `Any` driver's, then SQLite's); a batch of a few statements cost more in hand-offs than in
//! SQLite. Here the writer holds a connection of its own (rusqlite, linking the same SQLite as
//! sqlx) and runs a whole batch, or a session's save, in one hand-off to a blocking thread,
//! its statements prepared once and kept. The statements and the batch logic are those of
//! [`crate::stmt`] and [`crate::batch`], shared with the pool (PostgreSQL).
//!
//! Reads, the migrations and the other tables stay on sqlx's pool.

use std::borrow::Cow;
use std::future::ready;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reagent_protocol::Event;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, InterruptHandle, OpenFlags, ToSql};

use crate::batch::{self, Db, DbFuture, Written, ATTEMPT_TIMEOUT};
use crate::stmt::{self, Param};

/// The SQLite writer's connection; clones share it.
#[derive(Clone)]
pub(crate) struct Direct {
    conn: Arc<Mutex<Conn>>,
    interrupt: Arc<InterruptHandle>,
}

/// The connection, as [`batch`] writes through it.
pub(crate) struct Conn(Connection);

impl Direct {
    /// Open the store's file (it exists: sqlx created and migrated it) with the pool's settings.
    pub(crate) fn open(path: &Path, busy_timeout: Duration) -> Result<Direct, rusqlite::Error> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(busy_timeout)?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA temp_store = MEMORY;")?;
        let interrupt = Arc::new(conn.get_interrupt_handle());
        Ok(Direct {
            conn: Arc::new(Mutex::new(Conn(conn))),
            interrupt,
        })
    }

    /// Write `events` (see [`batch::write`]) in one hand-off.
    pub(crate) async fn write(&self, events: Arc<Vec<Event>>, pid: i64) -> Written {
        let rt = tokio::runtime::Handle::current();
        // The connection's futures are ready at once: this runs the batch on the blocking thread.
        let done = self
            .run(move |conn| rt.block_on(batch::write(conn, &events, pid)))
            .await;
        done.unwrap_or_else(|e| Written::Outage(e.to_string()))
    }

    /// Save (or replace) a session's snapshot.
    pub(crate) async fn save_session(
        &self,
        id: String,
        now: String,
        snapshot: String,
    ) -> Result<(), sqlx::Error> {
        self.run(move |conn| {
            conn.statement(stmt::SAVE_SESSION, &stmt::session_row(&id, &now, &snapshot))
                .map(drop)
        })
        .await?
    }

    /// Run `f` on the connection on a blocking thread. One that takes longer than
    /// [`ATTEMPT_TIMEOUT`] is interrupted (its statement fails, its transaction rolls back).
    async fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Conn) -> R + Send + 'static,
    ) -> Result<R, sqlx::Error> {
        let conn = self.conn.clone();
        let mut task = tokio::task::spawn_blocking(move || {
            // A panic while it was held left the connection as usable as ever (a transaction
            // not committed is rolled back).
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            // Only a panic in a write could have left one open: it must not hold the lock.
            if conn.end_open().is_err() {
                tracing::debug!("the store's writer could not roll back a transaction left open");
            }
            f(&mut conn)
        });
        let done = match tokio::time::timeout(ATTEMPT_TIMEOUT, &mut task).await {
            Ok(done) => done,
            Err(_) => {
                self.interrupt.interrupt();
                task.await
            }
        };
        done.map_err(|_| sqlx::Error::WorkerCrashed)
    }
}

impl Conn {
    fn statement(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64, sqlx::Error> {
        let mut st = self.0.prepare_cached(sql).map_err(from_rusqlite)?;
        let n = st
            .execute(rusqlite::params_from_iter(params))
            .map_err(from_rusqlite)?;
        Ok(n as u64)
    }
}

impl Conn {
    fn insert(&mut self, rows: &[[Param<'_>; stmt::EVENT_ROW]]) -> rusqlite::Result<u64> {
        // One statement prepared once, run per row: no statement text of a new size to parse
        // per batch, and SQLite runs a row as fast as it does within a multi-row insert.
        let mut st = self.0.prepare_cached(stmt::INSERT_EVENT)?;
        let mut inserted = 0;
        for row in rows {
            inserted += st.execute(rusqlite::params_from_iter(row))? as u64;
        }
        Ok(inserted)
    }

    fn seqs(&mut self, run_id: &str, low: i64, high: i64) -> rusqlite::Result<Vec<i64>> {
        let mut st = self.0.prepare_cached(stmt::STORED_SEQS)?;
        let seqs = st.query_map((run_id, low, high), |r| r.get::<_, i64>(0))?;
        seqs.collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        self.0.execute_batch(sql).map_err(from_rusqlite)
    }

    /// Roll back the transaction, if one is open (SQLite ends it itself on some errors).
    fn end_open(&mut self) -> Result<(), sqlx::Error> {
        if self.0.is_autocommit() {
            return Ok(());
        }
        self.batch("ROLLBACK")
    }
}

/// The connection's calls are synchronous: their futures are ready at once.
impl Db for Conn {
    const SQLITE: bool = true;

    fn begin(&mut self) -> DbFuture<'_, ()> {
        // IMMEDIATE: the write lock is taken (or waited for) at once, not on the first write.
        Box::pin(ready(self.batch("BEGIN IMMEDIATE")))
    }

    fn execute<'a>(&'a mut self, sql: &'static str, params: &'a [Param<'_>]) -> DbFuture<'a, u64> {
        Box::pin(ready(self.statement(sql, params)))
    }

    fn insert_events<'a>(
        &'a mut self,
        rows: &'a [[Param<'_>; stmt::EVENT_ROW]],
    ) -> DbFuture<'a, u64> {
        Box::pin(ready(self.insert(rows).map_err(from_rusqlite)))
    }

    fn stored_seqs<'a>(
        &'a mut self,
        run_id: &'a str,
        low: i64,
        high: i64,
    ) -> DbFuture<'a, Vec<i64>> {
        Box::pin(ready(self.seqs(run_id, low, high).map_err(from_rusqlite)))
    }

    fn commit(&mut self) -> DbFuture<'_, ()> {
        Box::pin(ready(self.batch("COMMIT")))
    }

    fn rollback(&mut self) -> DbFuture<'_, ()> {
        Box::pin(ready(self.end_open()))
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Int(i) => ValueRef::Integer(*i),
            Param::Null => ValueRef::Null,
        }))
    }
}

/// SQLite's error as sqlx reports it, so [`crate::classify`] reads its code the same way.
#[derive(Debug)]
struct SqliteError {
    /// The extended result code.
    code: i32,
    message: String,
}

impl std::fmt::Display for SqliteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SqliteError {}

impl sqlx::error::DatabaseError for SqliteError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Owned(self.code.to_string()))
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> sqlx::error::ErrorKind {
        sqlx::error::ErrorKind::Other
    }
}

/// A database error keeps SQLite's code; anything else rusqlite reports is about the
/// statement or its values (a wrong parameter count, a column of another type): refused.
fn from_rusqlite(e: rusqlite::Error) -> sqlx::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            let message = message.unwrap_or_else(|| code.to_string());
            sqlx::Error::Database(Box::new(SqliteError {
                code: code.extended_code,
                message,
            }))
        }
        other => sqlx::Error::Encode(Box::new(other)),
    }
}

#[cfg(test)]
mod tests {
    use reagent_protocol::EventKind;

    use super::*;
    use crate::location::Location;

    fn started(run: &str) -> Event {
        let kind = EventKind::RunStarted {
            task: "t".into(),
            model: "m".into(),
            provider: "ollama".into(),
            tool_mode: "native".into(),
            workspace: "/ws".into(),
            num_ctx: 4096,
            tools: vec![],
            session_id: String::new(),
            system_prompt: String::new(),
            follow_up: false,
        };
        Event::new(run, 1, kind)
    }

    /// A store file in `dir` with the migrations applied, as `Store::open` leaves it.
    async fn migrated(dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("s.db");
        crate::open::connect(&Location::Sqlite(path.clone()))
            .await
            .unwrap()
            .close()
            .await;
        path
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_locked_file_is_an_outage_and_the_write_succeeds_once_it_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = migrated(dir.path()).await;
        let direct = Direct::open(&path, Duration::from_millis(50)).unwrap();
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let events = Arc::new(vec![started("r1")]);
        match direct.write(events.clone(), 7).await {
            Written::Outage(why) => assert!(why.contains("locked"), "{why}"),
            Written::Stored { .. } => panic!("written while another connection held the lock"),
        }
        other.execute_batch("ROLLBACK").unwrap();
        match direct.write(events, 7).await {
            Written::Stored { refused } => assert!(refused.is_empty()),
            Written::Outage(why) => panic!("not written once the lock was free: {why}"),
        }
        let (seqs, pid): (i64, i64) = other
            .query_row(
                "SELECT (SELECT count(*) FROM events WHERE run_id = 'r1'), \
                 (SELECT pid FROM runs WHERE id = 'r1')",
                (),
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((seqs, pid), (1, 7));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_session_saved_twice_keeps_the_last_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let path = migrated(dir.path()).await;
        let direct = Direct::open(&path, Duration::from_secs(1)).unwrap();
        for snapshot in ["{\"a\":1}", "{\"a\":2}"] {
            direct
                .save_session(
                    "s1".into(),
                    "2026-01-01T00:00:00.000Z".into(),
                    snapshot.into(),
                )
                .await
                .unwrap();
        }
        let other = Connection::open(&path).unwrap();
        let saved: String = other
            .query_row("SELECT snapshot FROM sessions WHERE id = 's1'", (), |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(saved, "{\"a\":2}");
    }

    #[test]
    fn sqlite_codes_survive_the_mapping() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("database is locked".into()),
        );
        let mapped = from_rusqlite(busy);
        assert!(crate::classify::is_transient(&mapped, true));
        assert!(
            mapped.to_string().contains("database is locked"),
            "{mapped}"
        );
        let constraint = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_TRIGGER),
            None,
        );
        assert!(!crate::classify::is_transient(
            &from_rusqlite(constraint),
            true
        ));
        let wrong = rusqlite::Error::InvalidParameterCount(1, 2);
        assert!(!crate::classify::is_transient(&from_rusqlite(wrong), true));
    }
}
