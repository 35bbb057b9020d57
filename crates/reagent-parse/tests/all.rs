//! Integration tests for reagent-parse: the real-output corpus, property tests,
//! streaming equivalence and a stable-Rust fuzz smoke run.

// Test helpers outside #[test] fns may panic on broken fixtures.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod agent_formats;
mod cases;
mod corpus;
mod functionary;
mod gemma4;
mod heldout;
mod kimi_k3;
mod prompted;
mod props;
mod recovery;
mod smoke_fuzz;
mod streaming;
mod template_tokens;
mod vendor_guides;
mod weak_json;
mod xml_typing;
