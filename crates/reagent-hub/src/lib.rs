//! reagent's hub: agent tasks spread over many workers through a lease queue kept in the
//! store's database (SQLite on one machine, PostgreSQL across many), and one active hub
//! (elected by a lease with a fencing epoch) running a state machine over it — resting,
//! executing, improving, contemplating, healing — that watches model servers, heals, routes
//! tasks and turns goals into task graphs through its own model.
//!
//! - [`queue`]: the queue itself: add, claim under a fenced lease, heartbeat, complete, fail,
//!   reclaim expired leases with backoff and dead-lettering, dependencies, priorities, tags,
//!   model matching and routing; the worker registry; waking idle workers.
//! - [`worker`]: the worker loop: claim up to its capacity, run each task with the same
//!   `Session` loop as `reagent run` (events recorded in the store), renew the lease, complete or
//!   fail with it, and stop cleanly.
//! - [`leader`]: the hub's lease row, its epoch and [`leader::Fence`], checked by every hub
//!   write.
//! - [`machine`]: the states, the one transition table, the rule picking the next state, and
//!   the persisted state and transition history.
//! - [`endpoints`]: model servers probed on a schedule, marked down after failures in a row.
//! - [`actions`]: what the hub did, with cooldowns and attempt caps for healing acts.
//! - [`cost`]: the ledger capping the hub's own model calls per state and per hour.
//! - [`graph`], [`planner`], [`goals`]: a goal's task graph (schema, validation), the model
//!   calls that decompose and verify, and goals as stored. A goal's tasks and its map are
//!   added in one fenced transaction, each task keyed by its node ([`goals::node_key`], unique
//!   in the queue), so a node becomes exactly one task however a leader dies or is deposed.
//! - [`routing`]: which worker a queued task goes to.
//! - [`status`]: what `reagent hub status` shows.
//! - [`hub`]: the tick loop ([`Hub::run`]) tying them together.

pub mod actions;
mod clock;
pub mod cost;
pub mod endpoints;
mod error;
pub mod goals;
pub mod graph;
pub mod hub;
pub mod leader;
pub mod machine;
pub mod planner;
pub mod queue;
pub mod routing;
pub mod status;
pub mod worker;

pub use error::{HubError, Result};
pub use hub::{Hub, HubConfig, ManagedServer, Watchdog};
