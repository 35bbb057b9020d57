//! What the hub did (`hub_actions`): healing acts, takeovers, watchdog firings, refused model
//! calls. Healing acts are rate-limited per target by a cooldown and an hourly attempt cap read
//! back from this table, so the limits hold across hub restarts and takeovers.

use std::time::Duration;

use serde::Serialize;
use sqlx::{AnyPool, Row};

use crate::clock;
use crate::error::{HubError, Result};
use crate::leader::Fence;

/// How often one kind of act may be tried on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionPolicy {
    /// Least time between two attempts.
    pub cooldown: Duration,
    /// Most attempts in any hour.
    pub max_per_hour: u32,
}

impl Default for ActionPolicy {
    fn default() -> Self {
        ActionPolicy {
            cooldown: Duration::from_secs(30),
            max_per_hour: 5,
        }
    }
}

/// One recorded act.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionRecord {
    /// Sequence number.
    pub id: i64,
    /// What kind of act (`endpoint_down`, `restart_server`, `reclaim`, `watchdog`...).
    pub kind: String,
    /// What it was done to (an endpoint URL, a task id, a state...).
    pub target: String,
    /// How it went (`done`, `failed`, `refused`...).
    pub outcome: String,
    /// Details.
    pub detail: Option<String>,
    /// The epoch of the hub that did it.
    pub epoch: i64,
    /// When (epoch ms).
    pub at_ms: i64,
}

/// Record an act (fenced).
pub async fn record(
    pool: &AnyPool,
    fence: &Fence,
    kind: &str,
    target: &str,
    outcome: &str,
    detail: Option<&str>,
) -> Result<()> {
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    sqlx::query(
        "INSERT INTO hub_actions (name, kind, target, outcome, detail, epoch, at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&fence.name)
    .bind(kind)
    .bind(target)
    .bind(outcome)
    .bind(detail)
    .bind(fence.epoch)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("record a hub action"))?;
    tx.commit()
        .await
        .map_err(HubError::db("record a hub action"))
}

/// Whether `kind` may be tried on `target` now under `policy`.
pub async fn allowed(
    pool: &AnyPool,
    name: &str,
    kind: &str,
    target: &str,
    policy: ActionPolicy,
) -> Result<bool> {
    let now = clock::now_ms(pool).await?;
    let hour_ago = now.saturating_sub(3_600_000);
    let row = sqlx::query(
        "SELECT COUNT(*), COALESCE(MAX(at_ms), 0) FROM hub_actions \
         WHERE name = $1 AND kind = $2 AND target = $3 AND at_ms > $4",
    )
    .bind(name)
    .bind(kind)
    .bind(target)
    .bind(hour_ago)
    .fetch_one(pool)
    .await
    .map_err(HubError::db("read the hub actions"))?;
    let count: i64 = row
        .try_get(0)
        .map_err(HubError::db("read the hub actions"))?;
    let last: i64 = row
        .try_get(1)
        .map_err(HubError::db("read the hub actions"))?;
    let cooldown = i64::try_from(policy.cooldown.as_millis()).unwrap_or(i64::MAX);
    Ok(count < i64::from(policy.max_per_hour) && now.saturating_sub(last) >= cooldown)
}

/// The last `limit` acts of hub group `name`, oldest first.
pub async fn recent(pool: &AnyPool, name: &str, limit: u32) -> Result<Vec<ActionRecord>> {
    let what = "read the hub actions";
    let rows = sqlx::query(
        "SELECT id, kind, target, outcome, detail, epoch, at_ms FROM hub_actions \
         WHERE name = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(name)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(HubError::db(what))?;
    let mut out = rows
        .iter()
        .map(|r| {
            Ok(ActionRecord {
                id: r.try_get(0).map_err(HubError::db(what))?,
                kind: r.try_get(1).map_err(HubError::db(what))?,
                target: r.try_get(2).map_err(HubError::db(what))?,
                outcome: r.try_get(3).map_err(HubError::db(what))?,
                detail: r.try_get(4).map_err(HubError::db(what))?,
                epoch: r.try_get(5).map_err(HubError::db(what))?,
                at_ms: r.try_get(6).map_err(HubError::db(what))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    out.reverse();
    Ok(out)
}
