//! reagent's hub: agent tasks spread over many workers through a lease queue kept in the
//! store's database (SQLite on one machine, PostgreSQL across many).
//!
//! - [`queue`]: the queue itself: add, claim under a fenced lease, heartbeat, complete, fail,
//!   reclaim expired leases with backoff and dead-lettering, dependencies, priorities, tags,
//!   model matching and routing; the worker registry; waking idle workers.
//! - [`worker`]: the worker loop: claim up to its capacity, run each task with the same
//!   `Session` loop as `reagent run` (events recorded in the store), renew the lease, complete or
//!   fail with it, and stop cleanly.

pub mod queue;
pub mod worker;
