//! Connecting: the pool, SQLite's settings, refusing foreign databases, and migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::Migrator;
use sqlx::{AnyConnection, AnyPool, ConnectOptions, Connection, Executor, Row};

use crate::location::{create_parent, Location};
use crate::StoreError;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// The tables a reagent store holds (sqlx's migration table included).
const OUR_TABLES: [&str; 15] = [
    "_sqlx_migrations",
    "sessions",
    "runs",
    "events",
    "memory",
    // 0002_queue: the hub's task queue.
    "tasks",
    "task_deps",
    "task_history",
    "workers",
    // 0004_evals: `reagent eval` results.
    "eval_results",
    // 0006_cycles: `reagent cycles` experiments.
    "cycle_experiments",
    "cycle_records",
    "cycle_events",
    "cycle_memory",
    "cycle_ratings",
];

/// The hub's tables (migration 0003, `reagent-hub`).
const HUB_TABLES: [&str; 7] = [
    "hub_leader",
    "hub_state",
    "hub_transitions",
    "endpoints",
    "hub_actions",
    "goals",
    "hub_cost",
];

/// How long opening the first connection may take (an unreachable host, a stuck server).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The page size of a new SQLite store (an existing file keeps its own). A tool result of a few
/// KB fits in one page instead of spilling into overflow pages, and a batch is written (and
/// later checkpointed) in a quarter of the WAL frames, each a system call or two.
const SQLITE_PAGE_SIZE: u32 = 16_384;

/// How long a SQLite connection waits for another writer's lock before giving up.
const BUSY_TIMEOUT_MS: u32 = 30_000;
/// [`BUSY_TIMEOUT_MS`], for the writer's own connection.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_millis(BUSY_TIMEOUT_MS as u64);

/// Open the pool, check that the database is a reagent store (or empty) and migrate it.
///
/// Processes that open a new SQLite store at the same moment (a hub, its workers, a status
/// command) contend for the file's lock while it is created, switched to WAL and migrated; a
/// step that SQLite answers with "database is locked" at once (it does when waiting could
/// deadlock) is tried again from the start, a few times, after a short pause.
pub(crate) async fn connect(location: &Location) -> Result<AnyPool, StoreError> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match connect_once(location).await {
            Err(StoreError::Open { message, .. })
                if location.is_sqlite()
                    && message.contains("database is locked")
                    && attempt < 6 =>
            {
                tracing::debug!("store open attempt {attempt}: {message}");
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
            }
            other => return other,
        }
    }
}

async fn connect_once(location: &Location) -> Result<AnyPool, StoreError> {
    sqlx::any::install_default_drivers();
    let fail = |message: String| StoreError::Open {
        location: location.to_string(),
        message,
    };
    let sqlite = location.is_sqlite();
    if let Location::Sqlite(path) = location {
        create_parent(path)?;
    }
    // One connection first: an unreachable server or a file that is not a database fails here
    // at once, instead of the pool retrying until its timeout.
    let mut first = tokio::time::timeout(
        CONNECT_TIMEOUT,
        AnyConnection::connect(&location.connect_url()),
    )
    .await
    .map_err(|_| fail(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())))?
    .map_err(|e| fail(explain(&e)))?;
    // Another process may hold the file's lock for a moment (creating the store, switching it
    // to WAL): wait for it as every pooled connection does.
    let busy_timeout = if sqlite {
        first
            .execute(format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}").as_str())
            .await
            .map(drop)
    } else {
        Ok(())
    };
    let tables = match busy_timeout {
        Ok(()) => list_tables(&mut first, sqlite).await,
        Err(e) => Err(e),
    }
    .map_err(|e| fail(explain(&e)));
    let tables = match tables {
        Ok(t) => t,
        Err(e) => {
            // Closing is courtesy; the check's result is what matters.
            let _ = first.close().await;
            return Err(e);
        }
    };
    // Any table of another application makes it foreign. Only some of ours is fine: another
    // process may be creating them right now.
    let foreign: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| !OUR_TABLES.contains(t) && !HUB_TABLES.contains(t))
        .collect();
    if !foreign.is_empty() {
        let _ = first.close().await;
        let mut shown: Vec<&str> = foreign.iter().copied().take(8).collect();
        if foreign.len() > shown.len() {
            shown.push("…");
        }
        return Err(fail(format!(
            "it is not a reagent store: it holds other tables ({}); give another --store",
            shown.join(", ")
        )));
    }
    let pool = AnyPoolOptions::new()
        .max_connections(if sqlite { 4 } else { 8 })
        .acquire_timeout(Duration::from_secs(if sqlite { 60 } else { 5 }))
        // A SQLite connection is a thread of this process, not a socket a server may have
        // closed: sqlx's ping before every acquire (a round trip to that thread, two wake-ups)
        // checks nothing a write would not find out (and a failed write is tried again).
        .test_before_acquire(!sqlite)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                if sqlite {
                    conn.execute(
                        format!(
                            "PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}; PRAGMA synchronous = NORMAL; \
                             PRAGMA page_size = {SQLITE_PAGE_SIZE}; PRAGMA temp_store = MEMORY;"
                        )
                        .as_str(),
                    )
                    .await?;
                }
                Ok(())
            })
        })
        .connect_with(
            // A statement slowed by an outage or another process's lock is the writer's to
            // handle; sqlx's warning would print the whole statement into the user's terminal.
            AnyConnectOptions::from_str(&location.connect_url())
                .map_err(|e| fail(explain(&e)))?
                .disable_statement_logging(),
        )
        .await;
    // Closed only once the pool holds a connection: closing a SQLite file's last connection
    // checkpoints its WAL and removes it (fsyncs, and files the pool makes again at once).
    let _ = first.close().await;
    let pool = pool.map_err(|e| fail(explain(&e)))?;
    if sqlite {
        // WAL lets readers (`runs events --follow`) read while a run writes; it is a property of
        // the file, so setting it once is enough.
        sqlx::query("PRAGMA journal_mode = WAL")
            .execute(&pool)
            .await
            .map_err(|e| fail(explain(&e)))?;
    }
    migrate(&pool, sqlite).await.map_err(fail)?;
    Ok(pool)
}

/// The tables of the database (SQLite: the file; PostgreSQL: the current schema).
async fn list_tables(conn: &mut AnyConnection, sqlite: bool) -> Result<Vec<String>, sqlx::Error> {
    let sql = if sqlite {
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    } else {
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
    };
    let rows = sqlx::query(sql).fetch_all(conn).await?;
    rows.iter().map(|r| r.try_get::<String, _>(0)).collect()
}

/// Apply the backend's migrations. Two processes opening a new SQLite store at once may race
/// to apply the first migration: the loser sees the winner's work on a second attempt.
async fn migrate(pool: &AnyPool, sqlite: bool) -> Result<(), String> {
    let migrator = if sqlite {
        &SQLITE_MIGRATIONS
    } else {
        &POSTGRES_MIGRATIONS
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        match migrator.run(pool).await {
            Ok(()) => return Ok(()),
            Err(sqlx::migrate::MigrateError::VersionMissing(v)) => {
                return Err(format!(
                    "it was written by a newer reagent (migration {v} is unknown to this one)"
                ))
            }
            Err(e) if attempt < 3 => {
                tracing::debug!("store migration attempt {attempt} failed: {e}");
                tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
            }
            Err(e) => return Err(format!("cannot apply the store's migrations: {e}")),
        }
    }
}

/// The database's message, with a hint where one helps.
fn explain(e: &sqlx::Error) -> String {
    let text = e.to_string();
    if text.contains("file is not a database") {
        format!("{text}: the file is not a SQLite database (corrupt, or something else)")
    } else {
        text
    }
}
