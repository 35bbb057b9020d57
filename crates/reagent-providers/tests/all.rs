//! Protocol tests of every backend against the scripted servers of reagent-testkit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
