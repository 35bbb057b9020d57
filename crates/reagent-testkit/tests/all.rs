//! The scripted servers speak each wire byte for byte: checked with a plain HTTP client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
