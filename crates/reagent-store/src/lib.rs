//! Where reagent keeps its runs: every run's row, its events, sessions (opaque snapshots), a
//! key–value memory scoped by run or session, and `reagent eval` results (opaque documents). SQLite by default
//! (`$XDG_DATA_HOME/reagent/reagent.db`), PostgreSQL for `postgres://…` locations.
//!
//! # One code base, two backends
//!
//! The store talks to both databases through sqlx's `Any` driver with runtime queries (the
//! SQLite writer excepted, see below): every statement is written once, with `$1…` placeholders (which SQLite accepts too), in the SQL
//! both databases share (`TEXT`, `BIGINT`, `ON CONFLICT … DO UPDATE`, `CASE`, `substr`). Timestamps
//! are RFC 3339 text (fixed width, so they sort) and epoch milliseconds; JSON is text. Only two
//! things differ per backend and are kept apart on purpose: the migrations
//! (`migrations/sqlite`, `migrations/postgres`, applied on open) and the query that lists a
//! database's tables (to refuse a foreign database). An enum over two typed pools would have
//! needed every query twice or generic code over `sqlx::Database`; `Any` keeps one copy.
//!
//! On SQLite the writer (events, runs, session saves) has a connection of its own, outside
//! sqlx (rusqlite, on the SQLite sqlx links): a batch is one hand-off to a blocking thread
//! instead of a round trip to sqlx's worker thread per statement. Its statements are the same
//! text, described once for both (`stmt`), and the batch logic is written once over both.
//!
//! # Writing
//!
//! [`Store::recorder`] gives a [`Recorder`] whose [`Recorder::handler`] fits
//! `reagent_core::EventSink::new`. The handler never blocks the loop: it appends the event to a
//! list taken by the store's one writer task, which writes in batches of up to [`BATCH_MAX`]
//! events or [`BATCH_WINDOW`], whichever comes first; `run_finished` is written at once. The
//! writer is woken only when a batch starts, fills or must be written at once, not for every
//! event (a wake-up per event cost more CPU than the insert).
//!
//! # Losing no event
//!
//! A batch the database does not take is not dropped. The writer tells an outage from a
//! refusal by the error's kind and code, not its text: an I/O error, a pool timeout, SQLite's
//! BUSY, LOCKED, IOERR, FULL or READONLY, PostgreSQL's connection (08), shutdown (57),
//! resource (53) or serialization (40) classes are an outage, and the batch is tried again
//! after a pause that doubles from 100 ms up to [`RETRY_MAX`]. Meanwhile events wait in memory,
//! up to [`StoreOptions::memory_events`] ([`MEMORY_EVENTS`] by default); past that they are
//! appended to the store's journal ([`Location::journal_dir`]: JSON lines, one file per
//! writer and spill, each held under a `flock` by its writer). When the database answers again
//! the queue is written oldest first, the journal included, and each replayed file removed.
//! [`Store::flush`] waits until the events recorded before it are written, or, while the
//! database does not answer, until they are in the journal (so a run that ends during an
//! outage leaves them there); any process that opens the store later replays the files whose
//! writer is gone before [`Store::open`] returns. Every write is idempotent: events are
//! inserted `ON CONFLICT (run_id, seq) DO NOTHING` and only those actually inserted add to a
//! run's totals, so a retry after a commit whose answer was lost, or a journal replayed twice,
//! changes nothing. A run's row is written by the batch holding its `run_started`, retried
//! like the rest.
//!
//! A batch the database refuses (a constraint, a value it cannot hold) would be refused again:
//! when it holds several runs each is written on its own, so only the refused run's events are
//! lost. Those, events the journal cannot take once memory holds four times its bound, and
//! events still in memory when the writer ends with neither database nor journal writable,
//! are the only events lost, and never silently: [`Store::error`] says how many and why, and
//! [`Store::dropped_events`] counts them. A `kill -9` still loses what was in memory. Store
//! errors never stop a run; the caller reports [`Store::error`] once.
//!
//! # Runs that died
//!
//! A run row says `running` until its `run_finished` is written. Each row records the pid and
//! host of the process writing it and when its last event arrived (the writer refreshes that
//! every [`HEARTBEAT`] while the run lives). A `running` row whose process is gone (same host,
//! pid dead) or that has been silent for [`STALE_AFTER`] reads as `interrupted`, and is marked
//! so whenever a store is opened.

mod batch;
mod classify;
mod direct;
mod error;
mod evals;
mod experiments;
mod journal;
mod kv;
mod liveness;
mod location;
mod open;
mod page;
mod queue;
mod read;
mod stmt;
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

/// Events held in memory while the database does not take them, before new ones go to the
/// journal (the default of [`StoreOptions::memory_events`]).
pub const MEMORY_EVENTS: usize = 16_384;
/// The environment variable that sets [`StoreOptions::memory_events`].
pub const MEMORY_EVENTS_ENV: &str = "REAGENT_STORE_MEMORY_EVENTS";
pub use writer::RETRY_MAX;
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

/// How a store holds the events the database has not taken yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Events held in memory before new ones go to the journal (at least 1).
    pub memory_events: usize,
    /// The journal's directory, instead of [`Location::journal_dir`].
    pub journal_dir: Option<std::path::PathBuf>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            memory_events: MEMORY_EVENTS,
            journal_dir: None,
        }
    }
}

impl StoreOptions {
    /// The defaults, with `memory_events` from [`MEMORY_EVENTS_ENV`] when it holds a number.
    pub fn from_env() -> Result<StoreOptions, StoreError> {
        let mut o = StoreOptions::default();
        if let Some(v) = std::env::var_os(MEMORY_EVENTS_ENV) {
            let v = v.to_string_lossy();
            o.memory_events = v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| {
                    StoreError::Location(format!(
                        "{MEMORY_EVENTS_ENV} must be a positive number of events, not '{v}'"
                    ))
                })?;
        }
        Ok(o)
    }
}

/// An open store: a connection pool and its writer task. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    pool: sqlx::AnyPool,
    /// SQLite: the writer's own connection, which also saves sessions.
    direct: Option<direct::Direct>,
    location: Arc<Location>,
    writer: writer::WriterHandle,
}

impl Store {
    /// Open (creating and migrating when needed) the store at `location` with the options of
    /// [`StoreOptions::from_env`]; see [`Store::open_with`].
    pub async fn open(location: &Location) -> Result<Store, StoreError> {
        Store::open_with(location, StoreOptions::from_env()?).await
    }

    /// Open (creating and migrating when needed) the store at `location`, write the journal
    /// files left by writers that are gone, and mark the runs whose writer is gone as
    /// `interrupted`.
    pub async fn open_with(
        location: &Location,
        options: StoreOptions,
    ) -> Result<Store, StoreError> {
        let pool = open::connect(location).await?;
        let direct = match location {
            Location::Sqlite(path) => {
                Some(direct::Direct::open(path, open::BUSY_TIMEOUT).map_err(|e| {
                    StoreError::Open {
                        location: location.to_string(),
                        message: e.to_string(),
                    }
                })?)
            }
            Location::Postgres(_) => None,
        };
        let dir = options
            .journal_dir
            .clone()
            .unwrap_or_else(|| location.journal_dir());
        let orphans = writer::take_over_orphans(&dir);
        let replay = !orphans.is_empty();
        let mut queue = queue::Queue::new(
            options.memory_events.max(1),
            dir,
            liveness::own_pid(),
            now_ms(),
        );
        queue.adopt(orphans);
        let writer = writer::WriterHandle::spawn(writer::WriterSetup {
            pool: pool.clone(),
            sink: match &direct {
                Some(d) => batch::Sink::Direct(d.clone()),
                None => batch::Sink::Pool(pool.clone()),
            },
            location: location.to_string(),
            queue,
        });
        let store = Store {
            pool,
            direct,
            location: Arc::new(location.clone()),
            writer,
        };
        if replay {
            store.flush().await;
        }
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

    /// Wait until every event recorded so far is written, or, while the database does not
    /// answer, safe in the journal (or, when neither can be written, reported lost).
    pub async fn flush(&self) {
        self.writer.flush().await;
    }

    /// What is wrong with the events recorded so far, if anything: how many were lost and why
    /// (kept until the store is dropped), and how many still wait for a database that does not
    /// answer, and where. `None` once every event is in the database.
    pub fn error(&self) -> Option<String> {
        self.writer.error()
    }

    /// Whether every event recorded so far is in the database: none was lost and none waits.
    /// Call it after [`Store::flush`]; a session saved over complete events can leave its
    /// messages to them.
    pub fn events_complete(&self) -> bool {
        self.dropped_events() == 0 && self.waiting_events() == 0
    }

    /// Events that will never be stored (see the crate docs: refused by the database, or
    /// neither the database nor the journal could take them).
    pub fn dropped_events(&self) -> u64 {
        self.writer.lost()
    }

    /// Events not yet in the database: in memory or in the journal, waiting for it to answer.
    pub fn waiting_events(&self) -> usize {
        self.writer.waiting()
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
