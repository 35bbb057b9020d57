//! Leader election by a lease row with an epoch (a fencing token).
//!
//! One row of `hub_leader` per hub group. A hub becomes leader by inserting the row (epoch 1)
//! or, once the current lease has expired, by a conditional `UPDATE … SET epoch = epoch + 1`;
//! it stays leader by renewing with a conditional `UPDATE … WHERE holder = me AND epoch =
//! mine`. Only plain statements are used, so it works on SQLite, PostgreSQL and through
//! connection poolers (where a session advisory lock would not). Expiry is judged on the
//! database's clock, so hubs on machines whose clocks differ agree on it.
//!
//! Every hub write goes through [`Fence::begin`]: a transaction whose first statement touches
//! the lease row `WHERE holder = me AND epoch = mine`. The epoch is the fencing token: once
//! another hub has taken over (epoch + 1), every write of the old one is refused
//! ([`HubError::Deposed`]). On PostgreSQL that first statement locks the row until the commit,
//! so a takeover waits for the write in progress; on SQLite the transaction holds the
//! database's write lock.

use std::time::Duration;

use serde::Serialize;
use sqlx::{Any, AnyPool, Row, Transaction};

use reagent_store::Store;

use crate::error::{HubError, Result};
use crate::queue::Queue;

/// Proof that a hub held the lease of `name` at `epoch`; every hub write checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The hub group (lease row).
    pub name: String,
    /// This hub's id.
    pub holder: String,
    /// The epoch this hub won.
    pub epoch: i64,
}

impl Fence {
    /// Begin a transaction in which this hub is still the leader, or fail with
    /// [`HubError::Deposed`]. Commit it to make the hub's writes count.
    pub async fn begin(&self, pool: &AnyPool) -> Result<Transaction<'static, Any>> {
        let mut tx = pool
            .begin()
            .await
            .map_err(HubError::db("begin a hub write"))?;
        let held = sqlx::query(
            "UPDATE hub_leader SET epoch = epoch WHERE name = $1 AND holder = $2 AND epoch = $3",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(self.epoch)
        .execute(&mut *tx)
        .await
        .map_err(HubError::db("check the hub's lease"))?
        .rows_affected();
        if held != 1 {
            // Nothing was written; dropping the transaction rolls it back.
            return Err(HubError::Deposed { epoch: self.epoch });
        }
        Ok(tx)
    }
}

/// Who holds a hub group's lease, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaderRecord {
    /// The holder's id.
    pub holder: String,
    /// Its epoch.
    pub epoch: i64,
    /// When its lease ends unless renewed (epoch ms, the database's clock).
    pub expires_ms: i64,
    /// When it became leader (epoch ms).
    pub acquired_ms: i64,
}

/// One hub's side of the election.
#[derive(Clone)]
pub struct Election {
    pool: AnyPool,
    /// The database's clock.
    clock: Queue,
    name: String,
    holder: String,
    lease: Duration,
}

impl Election {
    /// A candidate `holder` for the lease of hub group `name` in `store`, holding it for
    /// `lease` at a time.
    pub fn new(store: &Store, name: &str, holder: &str, lease: Duration) -> Self {
        Election {
            pool: store.pool().clone(),
            clock: Queue::new(store),
            name: name.to_owned(),
            holder: holder.to_owned(),
            lease,
        }
    }

    /// This candidate's id.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    fn expiry(&self, now: i64) -> i64 {
        now.saturating_add(i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX))
    }

    /// Become leader if nobody is or the current lease has expired.
    pub async fn try_acquire(&self) -> Result<Option<Fence>> {
        let now = self.clock.now_ms().await?;
        let inserted = sqlx::query(
            "INSERT INTO hub_leader (name, holder, epoch, expires_ms, acquired_ms) \
             VALUES ($1, $2, 1, $3, $4) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(self.expiry(now))
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(HubError::db("create the hub lease"))?
        .rows_affected();
        if inserted == 1 {
            return Ok(Some(self.fence(1)));
        }
        let row = sqlx::query(
            "UPDATE hub_leader SET holder = $2, epoch = epoch + 1, expires_ms = $3, acquired_ms = $4 \
             WHERE name = $1 AND expires_ms <= $4 RETURNING epoch",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(self.expiry(now))
        .bind(now)
        .fetch_optional(&self.pool)
        .await
        .map_err(HubError::db("take over the hub lease"))?;
        row.map(|r| r.try_get::<i64, _>(0).map(|epoch| self.fence(epoch)))
            .transpose()
            .map_err(HubError::db("read the hub lease"))
    }

    /// Extend the lease; `false` when it is no longer ours (taken over).
    pub async fn renew(&self, fence: &Fence) -> Result<bool> {
        let now = self.clock.now_ms().await?;
        let renewed = sqlx::query(
            "UPDATE hub_leader SET expires_ms = $4 WHERE name = $1 AND holder = $2 AND epoch = $3",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(fence.epoch)
        .bind(self.expiry(now))
        .execute(&self.pool)
        .await
        .map_err(HubError::db("renew the hub lease"))?
        .rows_affected();
        Ok(renewed == 1)
    }

    /// Give the lease up at once (on shutdown), so a standby need not wait for it to expire.
    pub async fn release(&self, fence: &Fence) -> Result<()> {
        sqlx::query(
            "UPDATE hub_leader SET expires_ms = 0 WHERE name = $1 AND holder = $2 AND epoch = $3",
        )
        .bind(&self.name)
        .bind(&self.holder)
        .bind(fence.epoch)
        .execute(&self.pool)
        .await
        .map_err(HubError::db("release the hub lease"))?;
        Ok(())
    }

    fn fence(&self, epoch: i64) -> Fence {
        Fence {
            name: self.name.clone(),
            holder: self.holder.clone(),
            epoch,
        }
    }
}

/// The lease of hub group `name`, if any hub ever held it.
pub async fn current_leader(pool: &AnyPool, name: &str) -> Result<Option<LeaderRecord>> {
    let row = sqlx::query(
        "SELECT holder, epoch, expires_ms, acquired_ms FROM hub_leader WHERE name = $1",
    )
    .bind(name)
    .fetch_optional(pool)
    .await
    .map_err(HubError::db("read the hub lease"))?;
    row.map(|r| {
        Ok(LeaderRecord {
            holder: r.try_get(0)?,
            epoch: r.try_get(1)?,
            expires_ms: r.try_get(2)?,
            acquired_ms: r.try_get(3)?,
        })
    })
    .transpose()
    .map_err(HubError::db("read the hub lease"))
}
