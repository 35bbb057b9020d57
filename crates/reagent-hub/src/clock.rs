//! The database's clock: every time the hub and the queue store or compare (leases, the
//! watchdog, the cost ledger's hours, cooldowns, goals' and endpoints' times) is read from the
//! database the hubs and workers share, so machines whose clocks differ agree on them.

use sqlx::{AnyPool, Row};

use crate::error::{HubError, Result};

/// "Now" in epoch milliseconds, as PostgreSQL computes it (the statement's start).
const PG_NOW: &str = "CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS BIGINT)";
/// "Now" in epoch milliseconds, as SQLite computes it.
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// The SQL expression for "now, in epoch milliseconds" on PostgreSQL (`postgres`) or SQLite.
pub(crate) fn now_sql(postgres: bool) -> &'static str {
    if postgres {
        PG_NOW
    } else {
        SQLITE_NOW
    }
}

/// Whether `pool` is connected to PostgreSQL (else SQLite).
fn is_postgres(pool: &AnyPool) -> bool {
    pool.connect_options()
        .database_url
        .scheme()
        .starts_with("postgres")
}

/// The database's clock, in epoch milliseconds.
pub(crate) async fn now_ms(pool: &AnyPool) -> Result<i64> {
    let row = sqlx::query(&format!("SELECT {}", now_sql(is_postgres(pool))))
        .fetch_one(pool)
        .await
        .map_err(HubError::db("read the database's clock"))?;
    row.try_get::<i64, _>(0)
        .map_err(HubError::db("read the database's clock"))
}
