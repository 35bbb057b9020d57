//! Integration tests of `reagent-bench`: real reagent runs against the scripted server on
//! 127.0.0.1, over real files in a temporary workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
