//! reagent's hub: one active hub (elected by a lease with a fencing epoch) runs a state machine
//! over the store's database — resting, executing, improving, contemplating, healing — that
//! watches model servers, heals, and turns goals into task graphs through its own model.
//!
//! - [`leader`]: the lease row, its epoch and [`leader::Fence`], checked by every hub write.
//! - [`machine`]: the states, the one transition table, the rule picking the next state, and
//!   the persisted state and transition history.
//! - [`endpoints`]: model servers probed on a schedule, marked down after failures in a row.
//! - [`actions`]: what the hub did, with cooldowns and attempt caps for healing acts.
//! - [`cost`]: the ledger capping the hub's own model calls per state and per hour.
//! - [`graph`], [`planner`], [`goals`]: a goal's task graph (schema, validation), the model
//!   calls that decompose and verify, and goals as stored.
//! - [`hub`]: the tick loop ([`Hub::run`]) tying them together.

pub mod actions;
pub mod cost;
pub mod endpoints;
mod error;
pub mod goals;
pub mod graph;
pub mod hub;
pub mod leader;
pub mod machine;
pub mod planner;

pub use error::{HubError, Result};
pub use hub::{Hub, HubConfig, ManagedServer, Watchdog};

/// Now, in milliseconds since the Unix epoch (this machine's clock).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
