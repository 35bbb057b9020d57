//! Integration tests for reagent-sandbox: exec basics and the red-team rows
//! 34–62 of `tests/data/redteam.md` (sections C, D, E).
//!
//! Every test runs real commands in a real temp workspace and asserts the
//! outcome (sentinels untouched, secrets absent, no surviving processes,
//! bounded time), never that some string matched a pattern.

// Test code: a failed setup step should panic loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod suite;
