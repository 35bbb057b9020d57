//! What `reagent hub status` shows: the leader, the state, the queue, the endpoints, the
//! model calls of the hour and the latest acts, read in one go.

use reagent_store::Store;
use serde::Serialize;

use crate::actions::{self, ActionRecord};
use crate::cost::{self, CostRow};
use crate::endpoints::{list_endpoints, EndpointRecord};
use crate::error::Result;
use crate::leader::{current_leader, LeaderRecord};
use crate::machine::{load_state, StateRecord};
use crate::queue::{Queue, QueueCounts};

/// Acts shown by [`status`].
pub const RECENT_ACTIONS: u32 = 10;

/// A hub group's status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HubStatus {
    /// The hub group.
    pub name: String,
    /// The last leader's lease, if a hub ever led.
    pub leader: Option<LeaderRecord>,
    /// Whether that lease is still live (someone leads now).
    pub leading: bool,
    /// The state machine's state, if a hub ever ran (or a pause was asked).
    pub state: Option<StateRecord>,
    /// Tasks per state.
    pub queue: QueueCounts,
    /// Watched model servers.
    pub endpoints: Vec<EndpointRecord>,
    /// The hub's model calls this hour, per state.
    pub model_calls: Vec<CostRow>,
    /// The latest acts, oldest first.
    pub actions: Vec<ActionRecord>,
}

/// The status of hub group `name` in `store`.
pub async fn status(store: &Store, name: &str) -> Result<HubStatus> {
    let pool = store.pool();
    let leader = current_leader(pool, name).await?;
    let queue = Queue::new(store);
    let now = queue.now_ms().await?;
    let counts = queue.counts().await?;
    Ok(HubStatus {
        name: name.to_owned(),
        leading: leader.as_ref().is_some_and(|l| l.expires_ms > now),
        leader,
        state: load_state(pool, name).await?,
        queue: counts,
        endpoints: list_endpoints(pool).await?,
        model_calls: cost::ledger(pool, 1).await?,
        actions: actions::recent(pool, name, RECENT_ACTIONS).await?,
    })
}
