//! Test modules and the shared harness.

mod attempts;
mod checkpoints;
mod coding_loop;
mod edit_turns;
mod errors;
mod guardrails;
mod harness;
mod loop_basics;
mod sessions;
mod small_model;
mod small_runs;
mod snapshots_over_events;
mod verify;
