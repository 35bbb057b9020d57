//! The hub's tests: every body runs against SQLite and a private PostgreSQL 15.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

#[path = "hub/dispatch.rs"]
mod dispatch;
#[path = "hub/election.rs"]
mod election;
#[path = "hub/faults.rs"]
mod faults;
#[path = "hub/goals.rs"]
mod goals;
#[path = "hub/harness.rs"]
mod harness;
#[path = "hub/healing.rs"]
mod healing;
#[path = "hub/machine.rs"]
mod machine;
#[path = "hub/routing.rs"]
mod routing;
