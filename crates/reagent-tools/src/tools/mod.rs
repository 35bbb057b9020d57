//! The built-in tools, one file each, and the argument helpers they share.
//!
//! Arguments arrive validated against each tool's schema by the agent loop, but the helpers
//! here are lenient anyway (a number written as `"12"`, a boolean as `"true"`), because small
//! models often send them that way and a tool must answer every input with a clean result.

pub(crate) mod edit_file;
pub(crate) mod find_files;
pub(crate) mod grep_search;
pub(crate) mod list_directory;
pub(crate) mod nearby;
pub(crate) mod read_file;
pub(crate) mod run_command;
pub(crate) mod task_complete;
pub(crate) mod walk;
pub(crate) mod write_file;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::registry::Tool;
use crate::ToolsConfig;

/// Every built-in tool, configured by `config`.
pub(crate) fn builtin(config: &ToolsConfig) -> Vec<Arc<dyn Tool>> {
    let cfg = Arc::new(config.clone());
    vec![
        Arc::new(edit_file::EditFile::new(cfg.clone())),
        Arc::new(find_files::FindFiles::new(cfg.clone())),
        Arc::new(grep_search::GrepSearch::new(cfg.clone())),
        Arc::new(list_directory::ListDirectory::new(cfg.clone())),
        Arc::new(read_file::ReadFile::new(cfg.clone())),
        Arc::new(run_command::RunCommand::new(cfg.clone())),
        Arc::new(task_complete::TaskComplete),
        Arc::new(write_file::WriteFile::new(cfg)),
    ]
}

/// A JSON Schema object with `properties` and `required`.
pub(crate) fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The required string argument `key`.
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!(
            "argument `{key}` must be a string, got {}",
            type_name(other)
        )),
        None => Err(format!("missing required argument `{key}`")),
    }
}

/// The optional string argument `key` (`null` counts as absent).
pub(crate) fn opt_str_arg<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => str_arg(args, key).map(Some),
    }
}

/// The optional non-negative integer argument `key` (also accepts `"12"`).
pub(crate) fn opt_u64_arg(args: &Value, key: &str) -> Result<Option<u64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| format!("argument `{key}` must be a non-negative integer, got {n}")),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("argument `{key}` must be a non-negative integer, got {s:?}")),
        Some(other) => Err(format!(
            "argument `{key}` must be an integer, got {}",
            type_name(other)
        )),
    }
}

/// The optional boolean argument `key` (also accepts `"true"`/`"false"`).
pub(crate) fn opt_bool_arg(args: &Value, key: &str) -> Result<Option<bool>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(other) => Err(format!(
            "argument `{key}` must be true or false, got {}",
            type_name(other)
        )),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Cut `s` to at most `max` bytes at a char boundary.
pub(crate) fn truncate_str(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_args() {
        let a = json!({"n": "12", "f": 3.0, "b": "TRUE", "s": 1, "neg": -1});
        assert_eq!(opt_u64_arg(&a, "n"), Ok(Some(12)));
        assert_eq!(opt_u64_arg(&a, "f"), Ok(Some(3)));
        assert!(opt_u64_arg(&a, "neg").is_err());
        assert_eq!(opt_u64_arg(&a, "missing"), Ok(None));
        assert_eq!(opt_bool_arg(&a, "b"), Ok(Some(true)));
        assert!(str_arg(&a, "s").unwrap_err().contains("must be a string"));
        assert!(str_arg(&a, "zz").unwrap_err().contains("missing"));
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate_str("héllo", 2), "h");
        assert_eq!(truncate_str("abc", 10), "abc");
    }
}
