//! The test modules, one per backend plus shared helpers.

mod anthropic;
mod common;
mod ollama;
mod openai;
