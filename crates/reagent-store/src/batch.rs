//! Writing one batch of events: their rows, the rows of the runs they start and finish, and
//! the runs' running totals, in one transaction. Every part is idempotent, so a batch written
//! twice (a retry after a commit whose answer was lost, a journal replayed again) changes
//! nothing the second time: events already stored are skipped by `(run_id, seq)` and only the
//! events actually inserted count towards a run's totals (a batch whose insert reports fewer
//! rows than events is rolled back and written again without the stored ones).
//!
//! The logic is written once, over [`Db`]: sqlx's pool (PostgreSQL) and the SQLite writer's
//! own connection ([`crate::direct`]) each run the statements of [`crate::stmt`] their way.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::{Event, EventKind};
use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, AnyPool};

use crate::classify::is_transient;
use crate::direct::Direct;
use crate::now_ms;
use crate::stmt::{self, Param, Progress};

/// Rows per multi-row `INSERT` on the pool: a whole batch, one statement (5 parameters each:
/// 1,280, far under PostgreSQL's limit of 65,535).
const INSERT_CHUNK: usize = crate::BATCH_MAX;

/// Longest one write may take before it counts as an outage (a server that stopped answering
/// without closing the connection).
pub(crate) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(90);

/// What became of a batch.
pub(crate) enum Written {
    /// Every event is stored, except those of `refused` runs (the database refused them).
    Stored { refused: Vec<Refused> },
    /// The database did not answer (or was busy): nothing is known to be stored; try again.
    Outage(String),
}

/// A run whose events in a batch the database refused.
pub(crate) struct Refused {
    pub(crate) run_id: String,
    pub(crate) events: usize,
    pub(crate) error: String,
}

/// Where the writer writes its batches.
pub(crate) enum Sink {
    /// sqlx's pool (PostgreSQL).
    Pool(AnyPool),
    /// The SQLite writer's own connection.
    Direct(Direct),
}

impl Sink {
    /// Write `events` (see [`write`]). Boxed: the writer task's future must be `Send`, which
    /// the compiler cannot prove through the generic one for every lifetime.
    pub(crate) fn write(
        &self,
        events: Arc<Vec<Event>>,
        pid: i64,
    ) -> Pin<Box<dyn Future<Output = Written> + Send + '_>> {
        match self {
            Sink::Pool(pool) => {
                Box::pin(async move { write(&mut PoolDb::new(pool), &events, pid).await })
            }
            Sink::Direct(direct) => Box::pin(direct.write(events, pid)),
        }
    }
}

/// What [`Db`] and [`Tx`] return: boxed, so that the writer's future is provably `Send` (the
/// compiler cannot prove it through `async fn`s of a generic trait for every lifetime).
pub(crate) type DbFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'a>>;

/// A database a batch is written to, one transaction at a time.
pub(crate) trait Db: Send {
    /// Whether it is SQLite (its errors are classified by SQLite's codes).
    const SQLITE: bool;
    /// Start a transaction (one left open by a failed write is rolled back first).
    fn begin(&mut self) -> DbFuture<'_, ()>;
    /// Run a statement of [`crate::stmt`] in the transaction; the rows it changed.
    fn execute<'a>(&'a mut self, sql: &'static str, params: &'a [Param<'_>]) -> DbFuture<'a, u64>;
    /// Insert event rows (see [`stmt::event_row`]), skipping those already stored; how many
    /// were inserted.
    fn insert_events<'a>(
        &'a mut self,
        rows: &'a [[Param<'_>; stmt::EVENT_ROW]],
    ) -> DbFuture<'a, u64>;
    /// The `seq`s [`stmt::STORED_SEQS`] finds.
    fn stored_seqs<'a>(
        &'a mut self,
        run_id: &'a str,
        low: i64,
        high: i64,
    ) -> DbFuture<'a, Vec<i64>>;
    /// Commit the transaction.
    fn commit(&mut self) -> DbFuture<'_, ()>;
    /// Roll the transaction back.
    fn rollback(&mut self) -> DbFuture<'_, ()>;
}

/// Write `batch` (rows of runs it starts get `pid`). When the database refuses a batch of
/// several runs, each run is written on its own, so one bad run does not take the others'
/// events with it.
pub(crate) async fn write<D: Db>(db: &mut D, batch: &[Event], pid: i64) -> Written {
    let transient = |e: &sqlx::Error| is_transient(e, D::SQLITE);
    match attempt(db, batch, pid).await {
        Ok(()) => Written::Stored {
            refused: Vec::new(),
        },
        Err(e) if transient(&e) => Written::Outage(e.to_string()),
        Err(e) => {
            let mut runs: Vec<&str> = Vec::new();
            for ev in batch {
                if !runs.contains(&ev.run_id.as_str()) {
                    runs.push(&ev.run_id);
                }
            }
            if runs.len() < 2 {
                return Written::Stored {
                    refused: vec![Refused {
                        run_id: runs.first().copied().unwrap_or_default().to_owned(),
                        events: batch.len(),
                        error: e.to_string(),
                    }],
                };
            }
            let mut refused = Vec::new();
            for run in runs {
                let own: Vec<Event> = batch.iter().filter(|e| e.run_id == run).cloned().collect();
                match attempt(db, &own, pid).await {
                    Ok(()) => {}
                    Err(e) if transient(&e) => return Written::Outage(e.to_string()),
                    Err(e) => refused.push(Refused {
                        run_id: run.to_owned(),
                        events: own.len(),
                        error: e.to_string(),
                    }),
                }
            }
            Written::Stored { refused }
        }
    }
}

async fn attempt<D: Db>(db: &mut D, batch: &[Event], pid: i64) -> Result<(), sqlx::Error> {
    // Almost always every event is new: insert them all and count them all. When some were
    // stored already (a retry after a lost answer, a journal replayed again), start over and
    // leave those out, so they count once.
    let written = match write_events(db, batch, pid, false).await {
        Ok(Fresh::All) => Ok(()),
        Ok(Fresh::Some) => write_events(db, batch, pid, true).await.map(drop),
        Err(e) => Err(e),
    };
    if written.is_err() {
        // A failed write leaves no transaction holding the database's write lock; the first
        // error is the one that counts.
        let _ = db.rollback().await;
    }
    written
}

/// Whether every event of a batch was new.
enum Fresh {
    All,
    /// Some were stored already: nothing was committed.
    Some,
}

async fn write_events<D: Db>(
    db: &mut D,
    batch: &[Event],
    pid: i64,
    skip_stored: bool,
) -> Result<Fresh, sqlx::Error> {
    let now = now_ms();
    db.begin().await?;
    let tx = db;
    for e in batch {
        if let Some(row) = stmt::run_row(e, now, pid) {
            tx.execute(stmt::INSERT_RUN, &row.run).await?;
            if let Some(session) = &row.session {
                tx.execute(stmt::TOUCH_SESSION, session).await?;
            }
        }
    }
    let stored = if skip_stored {
        stored_seqs(tx, batch).await?
    } else {
        HashSet::new()
    };
    let new: Vec<&Event> = batch
        .iter()
        .filter(|e| !stored.contains(&(e.run_id.as_str(), stmt::to_i64(e.seq))))
        .collect();
    let rows = new
        .iter()
        .map(|e| stmt::event_row(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| sqlx::Error::Encode(Box::new(err)))?;
    if tx.insert_events(&rows).await? < rows.len() as u64 {
        tx.rollback().await?;
        return Ok(Fresh::Some);
    }
    // A run finished in this batch gets its final totals from `FINISH_RUN` (absolute values):
    // its running totals need no update of their own.
    let finished: HashSet<&str> = batch
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunFinished { .. }))
        .map(|e| e.run_id.as_str())
        .collect();
    let mut progress: HashMap<&str, Progress> = HashMap::new();
    for e in new.iter().filter(|e| !finished.contains(e.run_id.as_str())) {
        progress.entry(e.run_id.as_str()).or_default().add(e);
    }
    for (run_id, p) in &progress {
        tx.execute(stmt::UPDATE_PROGRESS, &p.params(run_id, now))
            .await?;
    }
    for e in batch {
        if let Some(row) = stmt::finish_row(e, now) {
            tx.execute(stmt::FINISH_RUN, &row).await?;
        }
    }
    tx.commit().await?;
    Ok(Fresh::All)
}

/// The `(run_id, seq)` of the batch's events already stored.
async fn stored_seqs<'e, D: Db>(
    tx: &mut D,
    batch: &'e [Event],
) -> Result<HashSet<(&'e str, i64)>, sqlx::Error> {
    let mut runs: HashMap<&str, (i64, i64)> = HashMap::new();
    for e in batch {
        let seq = stmt::to_i64(e.seq);
        let r = runs.entry(e.run_id.as_str()).or_insert((seq, seq));
        r.0 = r.0.min(seq);
        r.1 = r.1.max(seq);
    }
    let mut stored = HashSet::new();
    for (run, (low, high)) in runs {
        let seqs = tx.stored_seqs(run, low, high).await?;
        stored.extend(seqs.into_iter().map(|s| (run, s)));
    }
    Ok(stored)
}

/// Writing through sqlx's pool (PostgreSQL), each statement bounded by [`ATTEMPT_TIMEOUT`].
pub(crate) struct PoolDb<'p> {
    pool: &'p AnyPool,
    tx: Option<sqlx::Transaction<'static, Any>>,
}

impl<'p> PoolDb<'p> {
    pub(crate) fn new(pool: &'p AnyPool) -> PoolDb<'p> {
        PoolDb { pool, tx: None }
    }

    fn tx(&mut self) -> Result<&mut sqlx::Transaction<'static, Any>, sqlx::Error> {
        self.tx
            .as_mut()
            .ok_or_else(|| sqlx::Error::Protocol("a statement outside a transaction".into()))
    }
}

/// `fut`, or an I/O error once [`ATTEMPT_TIMEOUT`] has passed.
async fn bounded<T>(fut: impl Future<Output = Result<T, sqlx::Error>>) -> Result<T, sqlx::Error> {
    match tokio::time::timeout(ATTEMPT_TIMEOUT, fut).await {
        Ok(r) => r,
        Err(_) => Err(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()),
        ))),
    }
}

/// `sql` with `params` bound, for sqlx.
pub(crate) fn bound<'q, 'a: 'q>(
    sql: &'q str,
    params: impl IntoIterator<Item = &'q Param<'a>>,
) -> Query<'q, Any, AnyArguments<'q>> {
    params.into_iter().fold(sqlx::query(sql), |q, p| match p {
        Param::Text(s) => q.bind(s.as_ref()),
        Param::Int(i) => q.bind(*i),
        Param::Null => q.bind(None::<String>),
    })
}

impl Db for PoolDb<'_> {
    const SQLITE: bool = false;

    fn begin(&mut self) -> DbFuture<'_, ()> {
        // Dropping a transaction left open rolls it back.
        self.tx = None;
        Box::pin(async move {
            self.tx = Some(bounded(self.pool.begin()).await?);
            Ok(())
        })
    }

    fn execute<'a>(&'a mut self, sql: &'static str, params: &'a [Param<'_>]) -> DbFuture<'a, u64> {
        Box::pin(async move {
            let tx = self.tx()?;
            let done = bounded(bound(sql, params).execute(&mut **tx)).await?;
            Ok(done.rows_affected())
        })
    }

    fn insert_events<'a>(
        &'a mut self,
        rows: &'a [[Param<'_>; stmt::EVENT_ROW]],
    ) -> DbFuture<'a, u64> {
        Box::pin(async move {
            let tx = self.tx()?;
            let mut inserted = 0;
            for chunk in rows.chunks(INSERT_CHUNK) {
                let mut sql = String::from(stmt::INSERT_EVENTS_HEAD);
                for i in 0..chunk.len() {
                    let b = i * stmt::EVENT_ROW;
                    // Writing into a String cannot fail.
                    let _ = write!(
                        sql,
                        "{}(${}, ${}, ${}, ${}, ${})",
                        if i > 0 { ", " } else { "" },
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4,
                        b + 5
                    );
                }
                sql.push_str(stmt::INSERT_EVENTS_TAIL);
                let q = bound(&sql, chunk.iter().flatten());
                inserted += bounded(q.execute(&mut **tx)).await?.rows_affected();
            }
            Ok(inserted)
        })
    }

    fn stored_seqs<'a>(
        &'a mut self,
        run_id: &'a str,
        low: i64,
        high: i64,
    ) -> DbFuture<'a, Vec<i64>> {
        Box::pin(async move {
            let tx = self.tx()?;
            bounded(
                sqlx::query_scalar(stmt::STORED_SEQS)
                    .bind(run_id)
                    .bind(low)
                    .bind(high)
                    .fetch_all(&mut **tx),
            )
            .await
        })
    }

    fn commit(&mut self) -> DbFuture<'_, ()> {
        let tx = self.tx.take();
        Box::pin(async move {
            match tx {
                Some(tx) => bounded(tx.commit()).await,
                None => Err(sqlx::Error::Protocol(
                    "a commit outside a transaction".into(),
                )),
            }
        })
    }

    fn rollback(&mut self) -> DbFuture<'_, ()> {
        let tx = self.tx.take();
        Box::pin(async move {
            match tx {
                Some(tx) => bounded(tx.rollback()).await,
                None => Ok(()),
            }
        })
    }
}
