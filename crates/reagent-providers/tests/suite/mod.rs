//! The test modules, one per backend plus shared helpers.

mod anthropic;
mod behaviour;
mod common;
mod gemini;
mod misbehaving;
mod ollama;
mod openai;
mod pool;
mod transcripts;
