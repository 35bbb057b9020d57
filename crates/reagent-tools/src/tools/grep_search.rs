//! `grep_search{pattern, path?, include?}`: lines matching a regex, respecting `.gitignore`.
//! Smart case, as ripgrep's `--smart-case`: a pattern with no uppercase letter matches any case
//! (SmolLM2 searched `error` in a log of `ERROR` lines and concluded there was none).
//!
//! The Rust `regex` engine runs in linear time, so `(a+)+$` cannot backtrack
//! catastrophically; the pattern length and compiled size are capped as well. Matches are
//! capped, long lines cut, binary and oversized files skipped, and the whole search has a
//! deadline. Files are read through the workspace fd (see [`super::walk`]).

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::time::Instant;

use globset::GlobBuilder;
use reagent_protocol::ToolSpec;
use regex::RegexBuilder;
use serde_json::{json, Value};

use super::walk::{walk_files, Stop};
use super::{opt_bool_arg, opt_str_arg, schema, str_arg, truncate_str};
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::workspace::{escape_bytes, escape_str};
use crate::ToolsConfig;

/// The `grep_search` tool.
pub(crate) struct GrepSearch {
    cfg: Arc<ToolsConfig>,
}

impl GrepSearch {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        GrepSearch { cfg }
    }
}

impl Tool for GrepSearch {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "grep_search".into(),
            description: "Search file contents with a regular expression. Returns matching \
                          lines as path:line: text. Files ignored by .gitignore are skipped."
                .into(),
            parameters: schema(
                json!({
                    "pattern": {"type": "string", "description": "Regular expression, e.g. fn main"},
                    "path": {"type": "string", "description": "Folder or file to search (default: the workspace)"},
                    "include": {"type": "string", "description": "Only search files matching this glob, e.g. *.rs"},
                    "word": {"type": "boolean", "description": "Match whole words only (default false)"}
                }),
                &["pattern"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match self.grep(args, ctx) {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::err(e),
        }
    }
}

/// Whether `pattern` has an uppercase letter outside an escape (`\W`, `\S` and `\D` are
/// classes, not letters): smart case searches such a pattern exactly.
fn has_uppercase_literal(pattern: &str) -> bool {
    let mut escaped = false;
    pattern.chars().any(|c| {
        let literal = !escaped;
        escaped = !escaped && c == '\\';
        literal && c.is_uppercase()
    })
}

impl GrepSearch {
    fn grep(&self, args: &Value, ctx: &ToolContext) -> Result<String, String> {
        let pattern = str_arg(args, "pattern")?;
        let path = opt_str_arg(args, "path")?;
        let include = opt_str_arg(args, "include")?;
        let word = opt_bool_arg(args, "word")?.unwrap_or(false);
        let limits = &self.cfg.limits;
        if pattern.is_empty() {
            return Err("pattern is empty".into());
        }
        if pattern.len() > limits.grep_max_pattern_bytes {
            return Err(format!(
                "pattern is {} bytes, longer than the limit of {} bytes",
                pattern.len(),
                limits.grep_max_pattern_bytes
            ));
        }
        // A whole-word search, as `rg -w`: `backup_host` does not match `backup_host_old`.
        let regex = if word {
            format!(r"\b(?:{pattern})\b")
        } else {
            pattern.to_owned()
        };
        let re = RegexBuilder::new(&regex)
            .case_insensitive(!has_uppercase_literal(pattern))
            .size_limit(limits.grep_regex_size_limit)
            .dfa_size_limit(limits.grep_regex_size_limit)
            .build()
            .map_err(|e| format!("invalid regex: {e}"))?;
        let include = match include.map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(g) => Some((
                !g.contains('/'),
                GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("invalid include glob: {e}"))?
                    .compile_matcher(),
            )),
        };

        // A file path searches just that file.
        let ws = &ctx.workspace;
        if let Some(p) = path {
            if let Ok(opened) = ws.open_file(p) {
                let mut matches = Vec::new();
                search_file(
                    opened,
                    &escape_str(p),
                    &re,
                    limits,
                    &mut matches,
                    usize::MAX,
                );
                return Ok(render(matches, None, limits, pattern));
            }
        }

        let deadline = Instant::now() + limits.search_timeout;
        let max = limits.search_max_results;
        let mut matches: Vec<String> = Vec::new();
        let mut stop = walk_files(ws, path, limits, |f| {
            if let Some((by_name, glob)) = &include {
                let hit = if *by_name {
                    f.under_start.file_name().is_some_and(|n| glob.is_match(n))
                } else {
                    glob.is_match(f.under_start)
                };
                if !hit {
                    return true;
                }
            }
            let shown = escape_bytes(f.rel.as_os_str().as_bytes());
            if let Ok(opened) = ws.open_file_rel(f.rel, &shown) {
                search_file(opened, &shown, &re, limits, &mut matches, max + 1);
            }
            matches.len() <= max && Instant::now() < deadline
        })?;
        if matches.len() > max {
            matches.truncate(max);
            stop = Some(Stop::Full);
        } else if stop == Some(Stop::Full) {
            stop = Some(Stop::Timeout);
        }
        Ok(render(matches, stop, limits, pattern))
    }
}

/// Append `path:line: text` for each matching line of `opened` until `matches` holds `max`.
fn search_file(
    mut opened: crate::workspace::OpenedFile,
    shown: &str,
    re: &regex::Regex,
    limits: &crate::config::FileLimits,
    matches: &mut Vec<String>,
    max: usize,
) {
    if opened.size > limits.grep_max_file_bytes {
        return;
    }
    let mut bytes = Vec::new();
    if (&mut opened.file)
        .take(limits.grep_max_file_bytes)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return;
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (i, line) in text.lines().enumerate() {
        if matches.len() >= max {
            return;
        }
        if re.is_match(line) {
            let cut = truncate_str(line, limits.grep_max_line_bytes);
            let more = if cut.len() < line.len() { " [...]" } else { "" };
            matches.push(format!("{shown}:{}: {cut}{more}", i + 1));
        }
    }
}

fn render(
    matches: Vec<String>,
    stop: Option<Stop>,
    limits: &crate::config::FileLimits,
    pattern: &str,
) -> String {
    let mut out = if matches.is_empty() {
        format!("no matches for {}", escape_str(truncate_str(pattern, 200)))
    } else {
        matches.join("\n")
    };
    match stop {
        Some(Stop::Full) => out.push_str(&format!(
            "\n[matches capped at {}; narrow the pattern, path or include]",
            limits.search_max_results
        )),
        Some(Stop::Timeout) => out.push_str(&format!(
            "\n[search stopped after {} s; results are incomplete]",
            limits.search_timeout.as_secs()
        )),
        None => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::has_uppercase_literal;

    #[test]
    fn only_uppercase_letters_outside_escapes_make_the_search_exact() {
        for exact in ["ERROR", "Error code", "fn Main", r"\dX", "É"] {
            assert!(has_uppercase_literal(exact), "{exact}");
        }
        for any_case in ["error", r"\W+error", r"\S\D", "e4711", r"\\", ""] {
            assert!(!has_uppercase_literal(any_case), "{any_case}");
        }
    }
}
