//! reagent-hub's tests: every test body runs against SQLite and a private PostgreSQL 15.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[macro_use]
mod suite;
