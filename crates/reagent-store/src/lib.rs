//! Where reagent keeps its runs: every run's row, its events, sessions (opaque snapshots), a
//! key–value memory scoped by run or session, and `reagent eval` results (opaque documents). SQLite by default
//! (`$XDG_DATA_HOME/reagent/reagent.db`), PostgreSQL for `postgres://…` locations.
//!
//! # One code base, two backends
//!
//! The store talks to both databases through sqlx's `Any` driver with runtime queries: every
//! statement is written once, with `$1…` placeholders (which SQLite accepts too), in the SQL
//! both databases share (`TEXT`, `BIGINT`, `ON CONFLICT … DO UPDATE`, `CASE`, `substr`). Timestamps
//! are RFC 3339 text (fixed width, so they sort) and epoch milliseconds; JSON is text. Only two
//! things differ per backend and are kept apart on purpose: the migrations
//! (`migrations/sqlite`, `migrations/postgres`, applied on open) and the query that lists a
//! database's tables (to refuse a foreign database). An enum over two typed pools would have
//! needed every query twice or generic code over `sqlx::Database`; `Any` keeps one copy.
//!
//! # Writing
//!
//! [`Store::recorder`] gives a [`Recorder`] whose [`Recorder::handler`] fits
//! `reagent_core::EventSink::new`. The handler never blocks the loop: it appends the event to a
//! bounded queue ([`CHANNEL_CAPACITY`] events) taken by the store's one writer task, which
//! writes in batches of up to [`BATCH_MAX`] events or [`BATCH_WINDOW`], whichever comes first;
//! `run_finished` is written at once. The writer is woken only when a batch starts, fills or
//! must be written at once, not for every event (a wake-up per event cost more CPU than the
//! insert). When the queue is full (the database is far slower than the runs), the event is
//! dropped and counted rather than slowing the run: the first such drop becomes the store's
//! error. Store errors never stop a run: the first one is kept
//! ([`Store::error`]) for the caller to report once; later batches are still attempted.
//!
//! # Runs that died
//!
//! A run row says `running` until its `run_finished` is written. Each row records the pid and
//! host of the process writing it and when its last event arrived (the writer refreshes that
//! every [`HEARTBEAT`] while the run lives). A `running` row whose process is gone (same host,
//! pid dead) or that has been silent for [`STALE_AFTER`] reads as `interrupted`, and is marked
//! so whenever a store is opened.

mod error;
mod evals;
mod experiments;
mod kv;
mod liveness;
mod location;
mod open;
mod page;
mod read;
mod writer;

use std::sync::Arc;
use std::time::Duration;

pub use error::StoreError;
pub use evals::{EvalRecord, NewEvalResult, StoredEvalResult};
pub use experiments::{
    CycleEventRow, CycleRecord, ExperimentRecord, MemoryItem, NewExperiment, RatingRecord,
};
pub use kv::{MemoryEntry, Scope, SessionRecord, StoredSession};
pub use location::{default_sqlite_path, Location, STORE_ENV};
pub use page::RunPage;
pub use read::{RunFilter, RunRecord, StoredEvent};
pub use writer::Recorder;

/// Events waiting for the writer before new events are dropped.
pub const CHANNEL_CAPACITY: usize = 16_384;
/// Most events written in one transaction.
pub const BATCH_MAX: usize = 256;
/// Longest an event waits before its batch is written.
pub const BATCH_WINDOW: Duration = Duration::from_millis(50);
/// How often the writer refreshes `last_event_at` of the runs it is writing.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// How long a `running` row may stay silent before it reads as `interrupted`.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// The `outcome` of a run that has not finished.
pub const RUNNING: &str = "running";

/// An open store: a connection pool and its writer task. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: sqlx::AnyPool,
    location: Arc<Location>,
    writer: writer::WriterHandle,
}

impl Store {
    /// Open (creating and migrating when needed) the store at `location`, and mark the runs
    /// whose writer is gone as `interrupted`.
    pub async fn open(location: &Location) -> Result<Store, StoreError> {
        let pool = open::connect(location).await?;
        let writer =
            writer::WriterHandle::spawn(pool.clone(), location.to_string(), location.is_sqlite());
        let store = Store {
            pool,
            location: Arc::new(location.clone()),
            writer,
        };
        store
            .mark_interrupted()
            .await
            .map_err(|e| store.open_error(e))?;
        Ok(store)
    }

    /// Where this store lives.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The store's connection pool, for the crates that keep their own tables in it (the hub's
    /// queue). Statements must be written for both backends (see [`Store::is_postgres`]).
    pub fn pool(&self) -> &sqlx::AnyPool {
        &self.pool
    }

    /// Whether the store is PostgreSQL (else SQLite).
    pub fn is_postgres(&self) -> bool {
        matches!(*self.location, Location::Postgres(_))
    }

    /// A recorder for runs' events (they all go through this store's one writer).
    pub fn recorder(&self) -> Recorder {
        self.writer.recorder()
    }

    /// Wait until every event recorded so far is written (or failed).
    pub async fn flush(&self) {
        self.writer.flush().await;
    }

    /// The first error the writer met, if any (kept until the store is dropped).
    pub fn error(&self) -> Option<String> {
        self.writer.error()
    }

    /// Whether every event recorded so far was written: no write failed and none was dropped.
    /// Call it after [`Store::flush`]; a session saved over complete events can leave its
    /// messages to them.
    pub fn events_complete(&self) -> bool {
        self.error().is_none() && self.dropped_events() == 0
    }

    /// Events dropped because the writer's channel was full.
    pub fn dropped_events(&self) -> u64 {
        self.writer.dropped()
    }

    fn open_error(&self, e: sqlx::Error) -> StoreError {
        StoreError::Open {
            location: self.location.to_string(),
            message: e.to_string(),
        }
    }

    fn query_error(&self, what: &str, e: impl std::fmt::Display) -> StoreError {
        StoreError::Query {
            location: self.location.to_string(),
            what: what.to_owned(),
            message: e.to_string(),
        }
    }
}

/// Now, as RFC 3339 UTC with milliseconds (the format of event timestamps).
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
