//! `run_command` (placeholder until the sandbox work lands).

/// Settings of `run_command`.
#[derive(Debug, Clone, Default)]
pub struct CommandConfig {}
