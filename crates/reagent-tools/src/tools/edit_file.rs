//! `edit_file{path, old_string, new_string, replace_all?}`: exact string replacement.
//!
//! `old_string` must occur exactly once unless `replace_all` is true (then at most
//! [`FileLimits::edit_max_replacements`](crate::config::FileLimits) times). The file is
//! rewritten atomically, keeping its permissions, and the answer is a unified diff.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};
use similar::TextDiff;

use super::nearby::not_found_hint;
use super::{opt_bool_arg, schema, str_arg, truncate_str};
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::workspace::escape_str;
use crate::ToolsConfig;

/// The `edit_file` tool.
pub(crate) struct EditFile {
    cfg: Arc<ToolsConfig>,
}

impl EditFile {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        EditFile { cfg }
    }
}

impl Tool for EditFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "edit_file".into(),
            description: "Replace exact text in a file. old_string must match the file exactly \
                          (including spaces) and only once; include nearby lines to make it \
                          unique, or set replace_all to change every occurrence."
                .into(),
            parameters: schema(
                json!({
                    "path": {"type": "string", "description": "File path relative to the workspace"},
                    "old_string": {"type": "string", "description": "Exact text to find"},
                    "new_string": {"type": "string", "description": "Text to put in its place"},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)"}
                }),
                &["path", "old_string", "new_string"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        true
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match self.edit(args, ctx) {
            Ok((diff, path)) => ToolResult::ok_changed(diff, vec![path]),
            Err(e) => ToolResult::err(e),
        }
    }
}

impl EditFile {
    fn edit(&self, args: &Value, ctx: &ToolContext) -> Result<(String, String), String> {
        let path = str_arg(args, "path")?;
        let old = str_arg(args, "old_string")?;
        let new = str_arg(args, "new_string")?;
        let replace_all = opt_bool_arg(args, "replace_all")?.unwrap_or(false);
        let limits = &self.cfg.limits;
        if old.is_empty() {
            return Err(
                "old_string is empty; to create or replace a whole file use write_file".into(),
            );
        }
        if old == new {
            return Err("old_string and new_string are the same; nothing to change".into());
        }

        let shown = escape_str(path);
        let mut opened = ctx
            .workspace
            .open_file(path)
            .map_err(|e| not_found_hint(&ctx.workspace, path, &e, limits))?;
        if opened.size > limits.write_max_bytes {
            return Err(format!(
                "{shown} is {} bytes, over the edit limit of {} bytes",
                opened.size, limits.write_max_bytes
            ));
        }
        let mut bytes = Vec::new();
        (&mut opened.file)
            .take(limits.write_max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{shown}: {e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("{shown} is not UTF-8 text; edit_file only edits text files"))?;

        let count = text
            .matches(old)
            .take(limits.edit_max_replacements + 1)
            .count();
        if count == 0 {
            return Err(format!(
                "old_string not found in {shown}; it must match exactly, including spaces and \
                 indentation.{}",
                current_text(&text)
            ));
        }
        if count > 1 && !replace_all {
            return Err(format!(
                "old_string occurs {count} times in {shown}; include more surrounding lines to \
                 make it unique, or set replace_all to true.{}",
                current_text(&text)
            ));
        }
        if count > limits.edit_max_replacements {
            return Err(format!(
                "old_string occurs more than {} times in {shown}; refusing such a broad edit",
                limits.edit_max_replacements
            ));
        }
        let updated = if replace_all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
        if let Some(key) = renamed_json_key(path, old, &text, &updated) {
            return Err(format!(
                "this edit would rename the key {key} of {shown} (old_string matches the key, not \
                 its value); to change a value, include its key in old_string and new_string, \
                 e.g. old_string `{key}: true`, new_string `{key}: false`.{}",
                current_text(&text)
            ));
        }
        ctx.approve_write(&self.cfg, path, Some(&text), &updated)?;
        let done = ctx
            .workspace
            .write_file(path, updated.as_bytes(), &self.cfg.write_policy())
            .map_err(|e| e.to_string())?;

        // A deadline keeps the diff of a huge, much-changed file from taking long.
        let diff = TextDiff::configure()
            .timeout(Duration::from_secs(2))
            .diff_lines(&text, &updated)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{}", done.path), &format!("b/{}", done.path))
            .to_string();
        let mut out = format!(
            "replaced {count} occurrence{} in {}\n",
            if count == 1 { "" } else { "s" },
            done.path
        );
        out.push_str(truncate_str(&diff, limits.diff_max_bytes));
        if diff.len() > limits.diff_max_bytes {
            out.push_str(&format!(
                "\n[diff cut: {} more bytes]",
                diff.len() - limits.diff_max_bytes
            ));
        }
        Ok((out, done.path))
    }
}

/// Most bytes of a file's text an edit's error shows.
const SHOWN_TEXT_MAX_BYTES: usize = 4_000;

/// The file's current text, for an edit's error: a model that guessed the old text copies it
/// from here on its next try instead of guessing again.
fn current_text(text: &str) -> String {
    let shown = truncate_str(text, SHOWN_TEXT_MAX_BYTES);
    let cut = if shown.len() < text.len() {
        format!("\n[{} more bytes]", text.len() - shown.len())
    } else {
        String::new()
    };
    format!(" The file's current text:\n{shown}{cut}")
}

/// For a JSON file whose edit replaced a key's name rather than a value (old_string without a
/// `:`, as in `old_string = "debug"`, `new_string = "false"`: Qwen2.5-Coder-1.5B turned
/// `"debug": true` into `"false": true`), the quoted key that would be renamed.
fn renamed_json_key(path: &str, old: &str, before: &str, after: &str) -> Option<String> {
    if !path.ends_with(".json") || old.contains(':') {
        return None;
    }
    let keys = |text: &str| -> Option<Vec<String>> {
        let value: Value = serde_json::from_str(text).ok()?;
        let mut out = Vec::new();
        collect_keys(&value, &mut out);
        out.sort();
        Some(out)
    };
    let (was, now) = (keys(before)?, keys(after)?);
    was.into_iter()
        .find(|k| !now.contains(k))
        .map(|k| Value::from(k).to_string())
}

fn collect_keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                collect_keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_keys(v, out)),
        _ => {}
    }
}
