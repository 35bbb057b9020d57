//! `run_command` settings (placeholder until `reagent-sandbox` lands).

use std::time::Duration;

/// Settings of `run_command`.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// Timeout when the model gives none (60 s).
    pub default_timeout: Duration,
    /// Largest timeout the model may ask for (10 min).
    pub max_timeout: Duration,
    /// Bytes of output kept (head and tail), per stream.
    pub output_cap: usize,
    /// Longest command accepted, in bytes (64 KiB).
    pub max_command_bytes: usize,
}

impl Default for CommandConfig {
    fn default() -> Self {
        CommandConfig {
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            output_cap: 30_000,
            max_command_bytes: 64 * 1024,
        }
    }
}
