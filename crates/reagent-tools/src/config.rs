//! [`ToolsConfig`]: which tools a registry holds and the limits they work within.

use std::time::Duration;

use crate::async_tool::ToolSources;
use crate::run_command::CommandConfig;
use crate::workspace::{ProtectedPaths, WritePolicy};

/// Which tools a registry holds and how they behave.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Disable every tool that mutates (writes, edits, commands).
    pub read_only: bool,
    /// Every file write (write_file, edit_file) shows its diff to the run's approver and waits
    /// for its answer (refused when there is no approver); see [`ToolContext::approve_write`].
    ///
    /// [`ToolContext::approve_write`]: crate::ToolContext::approve_write
    pub approve_writes: bool,
    /// Tool names to leave out.
    pub disabled: Vec<String>,
    /// Settings of `run_command`.
    pub command: CommandConfig,
    /// Workspace-relative paths that stay read-only (see [`ProtectedPaths`] for matching);
    /// default `.git`, `.env`, `reagent.toml`, `.reagent`.
    pub protected: Vec<String>,
    /// Size, count and time caps of the file tools.
    pub limits: FileLimits,
    /// Sources of further tools (MCP servers), read each time a registry is built.
    pub sources: ToolSources,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            read_only: false,
            approve_writes: false,
            disabled: Vec::new(),
            command: CommandConfig::default(),
            protected: ProtectedPaths::DEFAULTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            limits: FileLimits::default(),
            sources: ToolSources::default(),
        }
    }
}

impl ToolsConfig {
    /// The write policy the file tools apply.
    pub fn write_policy(&self) -> WritePolicy {
        WritePolicy {
            protected: ProtectedPaths::new(&self.protected),
            max_bytes: self.limits.write_max_bytes,
        }
    }
}

/// Caps of the file tools. Every one bounds memory, time or the size of what the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLimits {
    /// Most bytes of file text one `read_file` call returns (256 KiB).
    pub read_page_bytes: usize,
    /// Lines returned when `end_line` is not given (2000).
    pub read_default_lines: u64,
    /// Longest line shown; longer lines are cut with a note (4000 bytes).
    pub read_max_line_bytes: usize,
    /// Most bytes scanned to reach `start_line` (256 MiB).
    pub read_scan_bytes: u64,
    /// Largest content `write_file` or `edit_file` writes (10 MiB).
    pub write_max_bytes: u64,
    /// Most replacements one `edit_file` with `replace_all` makes (10,000).
    pub edit_max_replacements: usize,
    /// Largest diff shown after an edit; longer ones are cut (20,000 bytes).
    pub diff_max_bytes: usize,
    /// Most entries `list_directory` shows (1000).
    pub list_max_entries: usize,
    /// Deepest level a recursive `list_directory` descends (5).
    pub list_max_depth: usize,
    /// Most results of `find_files` and matches of `grep_search` (200).
    pub search_max_results: usize,
    /// Deepest level `find_files` and `grep_search` descend (32).
    pub search_max_depth: usize,
    /// Wall-clock budget of one `find_files` or `grep_search` call (10 s).
    pub search_timeout: Duration,
    /// Longest regex pattern `grep_search` accepts (4096 bytes).
    pub grep_max_pattern_bytes: usize,
    /// Compiled regex size limit (`RegexBuilder::size_limit`, 2 MiB).
    pub grep_regex_size_limit: usize,
    /// Files larger than this are not searched (8 MiB).
    pub grep_max_file_bytes: u64,
    /// Longest matching line shown (300 bytes).
    pub grep_max_line_bytes: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            read_page_bytes: 256 * 1024,
            read_default_lines: 2000,
            read_max_line_bytes: 4000,
            read_scan_bytes: 256 * 1024 * 1024,
            write_max_bytes: 10 * 1024 * 1024,
            edit_max_replacements: 10_000,
            diff_max_bytes: 20_000,
            list_max_entries: 1000,
            list_max_depth: 5,
            search_max_results: 200,
            search_max_depth: 32,
            search_timeout: Duration::from_secs(10),
            grep_max_pattern_bytes: 4096,
            grep_regex_size_limit: 2 * 1024 * 1024,
            grep_max_file_bytes: 8 * 1024 * 1024,
            grep_max_line_bytes: 300,
        }
    }
}
