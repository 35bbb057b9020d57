//! reagent-store's tests: every test body runs against SQLite and a private PostgreSQL 15.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod suite;
