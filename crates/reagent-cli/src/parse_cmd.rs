//! `reagent parse`: read a raw model output on stdin and show what the parser finds in it.

use std::io::Read;

use anyhow::Context;
use reagent_parse::{ParseOptions, ToolSchema};
use serde_json::Value;

use crate::cli::ParseArgs;
use crate::exit::ExitCode;
use crate::usage;

/// Run the command.
pub(crate) fn run(args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let format = args
        .format
        .as_deref()
        .map(|f| {
            f.parse::<reagent_parse::Family>()
                .map_err(|e| usage(anyhow::anyhow!("--format: {e}")))
        })
        .transpose()?;
    let tools = match &args.tools {
        Some(path) => read_tool_schemas(path).map_err(usage)?,
        None => Vec::new(),
    };
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .context("cannot read stdin")?;
    let text = String::from_utf8_lossy(&input);
    let parsed = reagent_parse::parse(
        &text,
        &ParseOptions {
            format,
            tools,
            ..ParseOptions::default()
        },
    );
    if args.json {
        println!("{}", reagent_parse::render_json(&parsed));
    } else {
        print!("{}", reagent_parse::render_human(&parsed));
    }
    Ok(ExitCode::Completed)
}

/// Read tool schemas: a JSON array of `{name, parameters}` objects or OpenAI-style
/// `{"type": "function", "function": {...}}` objects (an object with a `tools` array works too).
fn read_tool_schemas(path: &std::path::Path) -> anyhow::Result<Vec<ToolSchema>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON", path.display()))?;
    let items = match &value {
        Value::Array(items) => items.clone(),
        Value::Object(o) => match o.get("tools") {
            Some(Value::Array(items)) => items.clone(),
            _ => vec![value.clone()],
        },
        _ => anyhow::bail!("{}: expected a JSON array of tool schemas", path.display()),
    };
    items
        .iter()
        .map(|item| {
            let f = item.get("function").unwrap_or(item);
            let name = f.get("name").and_then(Value::as_str).with_context(|| {
                format!("{}: a tool schema has no \"name\": {item}", path.display())
            })?;
            let parameters = f
                .get("parameters")
                .or_else(|| f.get("input_schema"))
                .cloned()
                .unwrap_or(Value::Null);
            Ok(ToolSchema {
                name: name.to_owned(),
                parameters,
            })
        })
        .collect()
}
