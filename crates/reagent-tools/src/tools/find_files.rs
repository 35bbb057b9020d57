//! `find_files{pattern, path?}`: files whose path matches a glob, respecting `.gitignore`.
//!
//! A pattern without `/` (`*.rs`) matches file names at any depth; a pattern with `/`
//! (`src/**/*.rs`) matches the path relative to the searched folder. Only structured
//! arguments exist: there is no way to pass `find` options such as `-exec` or `-delete`.

use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use globset::GlobBuilder;
use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

use super::walk::{walk_files, Stop};
use super::{opt_str_arg, schema, str_arg};
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::workspace::escape_bytes;
use crate::ToolsConfig;

/// The `find_files` tool.
pub(crate) struct FindFiles {
    cfg: Arc<ToolsConfig>,
}

impl FindFiles {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        FindFiles { cfg }
    }
}

impl Tool for FindFiles {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "find_files".into(),
            description: "Find files by name with a glob pattern such as *.py or src/**/*.rs. \
                          Files ignored by .gitignore are skipped."
                .into(),
            parameters: schema(
                json!({
                    "pattern": {"type": "string", "description": "Glob pattern, e.g. *.rs"},
                    "path": {"type": "string", "description": "Folder to search (default: the workspace)"}
                }),
                &["pattern"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match self.find(args, ctx) {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::err(e),
        }
    }
}

impl FindFiles {
    fn find(&self, args: &Value, ctx: &ToolContext) -> Result<String, String> {
        let pattern = str_arg(args, "pattern")?.trim();
        let path = opt_str_arg(args, "path")?;
        if pattern.is_empty() {
            return Err("pattern is empty; give a glob such as *.rs".into());
        }
        let limits = &self.cfg.limits;
        if pattern.len() > limits.grep_max_pattern_bytes {
            return Err(format!(
                "pattern is longer than {} bytes",
                limits.grep_max_pattern_bytes
            ));
        }
        let by_name = !pattern.contains('/');
        let glob = GlobBuilder::new(pattern.trim_start_matches("./").trim_start_matches('/'))
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid glob pattern: {e}"))?
            .compile_matcher();

        let max = limits.search_max_results;
        let mut found: Vec<String> = Vec::new();
        let stop = walk_files(&ctx.workspace, path, limits, |f| {
            let hit = if by_name {
                f.under_start.file_name().is_some_and(|n| glob.is_match(n))
            } else {
                glob.is_match(f.under_start)
            };
            // Confirm through the workspace fd, so a path swapped during the walk or
            // reached across a mount point is never reported.
            let confined = || ctx.workspace.stat_rel(f.rel, "").is_ok();
            if hit && confined() {
                if found.len() >= max {
                    return false;
                }
                found.push(escape_bytes(f.rel.as_os_str().as_bytes()));
            }
            true
        })?;
        found.sort();
        let mut out = if found.is_empty() {
            format!("no files match {pattern}")
        } else {
            found.join("\n")
        };
        match stop {
            Some(Stop::Full) => out.push_str(&format!(
                "\n[results capped at {max}; narrow the pattern or path]"
            )),
            Some(Stop::Timeout) => out.push_str(&format!(
                "\n[search stopped after {} s; results are incomplete]",
                limits.search_timeout.as_secs()
            )),
            None => {}
        }
        Ok(out)
    }
}
