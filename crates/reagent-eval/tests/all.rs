//! Integration tests of the harness: a mini suite against a scripted Ollama on 127.0.0.1, and a
//! few tasks of the shipped suite against the real llama-server + SmolLM2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
