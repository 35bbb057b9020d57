//! The test suite: the queue (`queue.rs`) and the worker loop (`worker.rs`).

#[macro_use]
pub(crate) mod harness;
mod queue;
mod worker;
