//! The cost ledger: the hub's own model calls counted per state and per hour (`hub_cost`; the
//! hour by the database's clock, the one leases use, so hubs on machines whose clocks differ
//! fill the same hour), each call charged before it is made and refused once the hour's cap
//! is reached.

use serde::Serialize;
use sqlx::{AnyPool, Row};

use crate::clock;
use crate::error::{HubError, Result};
use crate::leader::Fence;
use crate::machine::HubState;

const HOUR_MS: i64 = 3_600_000;

/// The hour (since the epoch) that `ms` falls in.
pub fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR_MS)
}

/// Calls made in one state during one hour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CostRow {
    /// The state the calls were made in.
    pub state: String,
    /// The hour (epoch ms / 3 600 000).
    pub hour: i64,
    /// Calls made.
    pub calls: i64,
}

/// Calls made in `state` during the current hour.
pub async fn calls_this_hour(pool: &AnyPool, state: HubState) -> Result<i64> {
    let now = clock::now_ms(pool).await?;
    let row = sqlx::query("SELECT calls FROM hub_cost WHERE state = $1 AND hour = $2")
        .bind(state.as_str())
        .bind(hour_of(now))
        .fetch_optional(pool)
        .await
        .map_err(HubError::db("read the cost ledger"))?;
    row.map(|r| r.try_get::<i64, _>(0))
        .transpose()
        .map(Option::unwrap_or_default)
        .map_err(HubError::db("read the cost ledger"))
}

/// Whether a call in `state` is still within `cap` this hour.
pub async fn has_budget(pool: &AnyPool, state: HubState, cap: u32) -> Result<bool> {
    Ok(calls_this_hour(pool, state).await? < i64::from(cap))
}

/// Charge one call to `state` (fenced); `false`, and nothing charged, when the hour's `cap`
/// is reached.
pub async fn charge(pool: &AnyPool, fence: &Fence, state: HubState, cap: u32) -> Result<bool> {
    if cap == 0 {
        return Ok(false);
    }
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    let charged = sqlx::query(
        "INSERT INTO hub_cost (state, hour, calls) VALUES ($1, $2, 1) \
         ON CONFLICT (state, hour) DO UPDATE SET calls = hub_cost.calls + 1 \
         WHERE hub_cost.calls < $3",
    )
    .bind(state.as_str())
    .bind(hour_of(now))
    .bind(i64::from(cap))
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("charge the cost ledger"))?
    .rows_affected();
    tx.commit()
        .await
        .map_err(HubError::db("charge the cost ledger"))?;
    Ok(charged == 1)
}

/// The ledger's rows of the last `hours` hours, newest first.
pub async fn ledger(pool: &AnyPool, hours: i64) -> Result<Vec<CostRow>> {
    let what = "read the cost ledger";
    let now = clock::now_ms(pool).await?;
    let rows = sqlx::query(
        "SELECT state, hour, calls FROM hub_cost WHERE hour > $1 ORDER BY hour DESC, state",
    )
    .bind(hour_of(now) - hours)
    .fetch_all(pool)
    .await
    .map_err(HubError::db(what))?;
    rows.iter()
        .map(|r| {
            Ok(CostRow {
                state: r.try_get(0).map_err(HubError::db(what))?,
                hour: r.try_get(1).map_err(HubError::db(what))?,
                calls: r.try_get(2).map_err(HubError::db(what))?,
            })
        })
        .collect()
}
