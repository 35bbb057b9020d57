//! Integration tests for reagent-parse: the real-output corpus, property tests,
//! streaming equivalence and a stable-Rust fuzz smoke run.

mod corpus;
mod props;
mod smoke_fuzz;
mod streaming;
