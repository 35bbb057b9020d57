//! Integration tests of reagent-local: the real cached llama-server started and stopped, fake
//! servers for the failure paths, the real install script on its fast path, and the Ollama
//! probe against a local HTTP responder.

// Helpers outside #[test] functions panic on setup failures on purpose.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
