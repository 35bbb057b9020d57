//! Integration tests of the agent loop against a scripted Ollama speaking the real wire format,
//! with the real workspace tools on a temporary directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
