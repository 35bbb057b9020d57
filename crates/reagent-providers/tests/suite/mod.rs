//! The test modules, one per backend plus shared helpers.

mod common;
mod ollama;
mod openai;
