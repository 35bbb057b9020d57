//! How tools are put in front of the model in each [`ToolMode`], and how a constrained reply is
//! read back.
//!
//! - Native: tools go in the request; the server parses the calls.
//! - Constrained: the tool list goes into the system prompt and the reply is forced by a JSON
//!   Schema to be exactly one call (`{"tool": NAME, "arguments": {...}}`) or a final answer
//!   (`{"final_answer": "..."}`). A 135M-parameter model emits valid calls this way.
//! - Prompt: tools and a few-shot example in the system prompt; free text parsed by
//!   `reagent-parse`.

use reagent_protocol::{Capabilities, ToolSpec};
use reagent_tools::WorkspaceFiles;
use serde_json::{json, Value};

use crate::config::ToolMode;
use crate::weak_model::schema_narrowing::{self, Narrowing};

/// The mode `auto` resolves to, given what the server says.
pub fn resolve(mode: ToolMode, caps: &Capabilities) -> ToolMode {
    match mode {
        ToolMode::Auto => match (caps.tools, caps.json_schema) {
            (Some(true), _) => ToolMode::Native,
            (_, Some(true)) => ToolMode::Constrained,
            _ => ToolMode::Prompt,
        },
        fixed => fixed,
    }
}

/// Tools whose `path` argument must name a file that exists.
const EXISTING_FILE_TOOLS: &[&str] = &["read_file", "edit_file"];

/// Most workspace files the constrained prompt lists; a workspace with at most this many files
/// also gets them as the only allowed `path` of the tools in [`EXISTING_FILE_TOOLS`].
pub const LISTED_FILES_MAX: usize = 50;

/// The JSON Schema a constrained reply must match: one of the tool calls, or a final answer.
/// With the complete file list of a small workspace (`files` not cut short), the `path` of a
/// file-reading tool may only be one of those files: a small model cannot invent a path. A
/// [`Narrowing`] (weak models' profiles) limits more arguments to what the task and the
/// workspace hold.
pub fn constrained_schema(
    specs: &[ToolSpec],
    files: Option<&WorkspaceFiles>,
    narrowing: Option<&Narrowing>,
) -> Value {
    let allowed = files.filter(|f| !f.more && !f.paths.is_empty());
    let mut choices: Vec<Value> = specs
        .iter()
        .map(|s| {
            let mut parameters = s.parameters.clone();
            if let (Some(files), true) = (allowed, EXISTING_FILE_TOOLS.contains(&s.name.as_str())) {
                if let Some(path) = parameters.pointer_mut("/properties/path") {
                    if let Some(obj) = path.as_object_mut() {
                        obj.insert("enum".to_owned(), json!(files.paths));
                    }
                }
            }
            if let Some(narrowed) =
                narrowing.and_then(|n| schema_narrowing::narrow(&s.name, &parameters, n))
            {
                parameters = narrowed;
            }
            json!({
                "type": "object",
                "properties": {
                    "tool": {"const": s.name},
                    "arguments": parameters,
                },
                "required": ["tool", "arguments"],
                "additionalProperties": false
            })
        })
        .collect();
    choices.push(json!({
        "type": "object",
        "properties": {"final_answer": {"type": "string"}},
        "required": ["final_answer"],
        "additionalProperties": false
    }));
    json!({"oneOf": choices})
}

/// A constrained reply, read back.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstrainedReply {
    /// One tool call.
    Call {
        /// Tool name.
        name: String,
        /// Arguments.
        arguments: Value,
    },
    /// The final answer.
    Answer(String),
}

/// Read a constrained reply; `None` when it is not valid JSON of either shape (e.g. truncated).
pub fn read_constrained(content: &str) -> Option<ConstrainedReply> {
    let value: Value = serde_json::from_str(content.trim()).ok()?;
    if let Some(answer) = value.get("final_answer").and_then(Value::as_str) {
        return Some(ConstrainedReply::Answer(answer.to_owned()));
    }
    let name = value.get("tool")?.as_str()?.to_owned();
    let arguments = value.get("arguments").cloned().unwrap_or_else(|| json!({}));
    Some(ConstrainedReply::Call { name, arguments })
}

/// The part of the system prompt that lists the tools, for constrained and prompt modes.
pub fn tool_catalogue(specs: &[ToolSpec]) -> String {
    let mut out = String::new();
    for s in specs {
        out.push_str(&format!(
            "- {}: {}\n  arguments: {}\n",
            s.name, s.description, s.parameters
        ));
    }
    out
}

/// Instructions and an example for the constrained mode, with the workspace's first files.
/// The example is a call of `example_tool` (the tool the task points to, see
/// [`crate::weak_model::tool_retrieval`]; `read_file` when it points to none) whose arguments are
/// placeholders naming where the real ones come from: small models copy a concrete sample file
/// name instead of the task's (SmolLM2-135M read `README.md` three times for a task naming
/// `keeper.txt`), and a bare `"..."` was copied literally too; with no example at all they pick
/// the wrong tool.
pub fn constrained_instructions(
    specs: &[ToolSpec],
    example_tool: &str,
    files: Option<&WorkspaceFiles>,
) -> String {
    let example = specs
        .iter()
        .find(|s| s.name == example_tool)
        .map_or_else(|| READ_EXAMPLE.to_owned(), example_call);
    let mut out = format!(
        "You can use these tools:\n{}\nReply with one JSON object and nothing else: either \
         {{\"tool\": \"<name>\", \"arguments\": {{...}}}} to use a tool, or \
         {{\"final_answer\": \"<your answer>\"}} when the task is done.\n\
         Example: {example}",
        tool_catalogue(specs)
    );
    out.push_str(&file_listing(files));
    out
}

/// The workspace's files as the system prompt lists them (after a blank line), the list cut
/// short saying so; empty without files.
pub(crate) fn file_listing(files: Option<&WorkspaceFiles>) -> String {
    let mut out = String::new();
    if let Some(files) = files.filter(|f| !f.paths.is_empty()) {
        out.push_str("\n\nFiles in the workspace:\n");
        for path in &files.paths {
            out.push_str(&format!("- {path}\n"));
        }
        if files.more {
            out.push_str("(and more; use find_files to search)\n");
        }
    }
    out
}

/// The example call when the example tool is not among the tools.
const READ_EXAMPLE: &str =
    r#"{"tool": "read_file", "arguments": {"path": "<file named in the task>"}}"#;

/// An example call of `spec`: its required arguments (or its `path`, when nothing is required)
/// with placeholders that say where each value comes from.
fn example_call(spec: &ToolSpec) -> String {
    let properties = spec.parameters.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = spec
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names: Vec<&str> = if required.is_empty() {
        properties
            .filter(|p| p.contains_key("path"))
            .map(|_| vec!["path"])
            .unwrap_or_default()
    } else {
        required
    };
    let quoted = |text: &str| Value::from(text).to_string();
    let arguments: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "{}: {}",
                quoted(name),
                quoted(&placeholder(&spec.name, name))
            )
        })
        .collect();
    format!(
        "{{\"tool\": {}, \"arguments\": {{{}}}}}",
        quoted(&spec.name),
        arguments.join(", ")
    )
}

/// The placeholder for argument `name` of tool `tool` in an example call.
fn placeholder(tool: &str, name: &str) -> String {
    match (tool, name) {
        ("list_directory" | "grep_search", "path") => "<folder named in the task>".to_owned(),
        (_, "path") => "<file named in the task>".to_owned(),
        (_, "content") => "<text from the task>".to_owned(),
        (_, "old_string") => "<text in the file to change>".to_owned(),
        (_, "new_string") => "<the new text the task gives>".to_owned(),
        (_, "command") => "<the command the task names>".to_owned(),
        (_, "pattern") => "<the word to look for>".to_owned(),
        (_, other) => format!("<{other}>"),
    }
}

/// Instructions and few-shot examples for the prompt mode.
pub fn prompt_instructions(specs: &[ToolSpec]) -> String {
    format!(
        "You can use these tools:\n{}\nTo use a tool, write exactly:\n\
         <tool_call>\n{{\"name\": \"<tool name>\", \"arguments\": {{...}}}}\n</tool_call>\n\
         You may write several tool calls in one reply. You will get each result back. \
         When the task is done, answer in plain text without a tool call.\n\n\
         Example:\nUser: What does notes.txt say?\nAssistant: <tool_call>\n\
         {{\"name\": \"read_file\", \"arguments\": {{\"path\": \"notes.txt\"}}}}\n</tool_call>\n\
         User: The file notes.txt has 1 line:\nbuy milk\n\
         Assistant: notes.txt says: buy milk",
        tool_catalogue(specs)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_prefers_native_then_constrained_then_prompt() {
        let caps = |tools, schema| Capabilities {
            tools,
            json_schema: schema,
            thinking: None,
        };
        assert_eq!(
            resolve(ToolMode::Auto, &caps(Some(true), Some(true))),
            ToolMode::Native
        );
        assert_eq!(
            resolve(ToolMode::Auto, &caps(Some(false), Some(true))),
            ToolMode::Constrained
        );
        assert_eq!(resolve(ToolMode::Auto, &caps(None, None)), ToolMode::Prompt);
        assert_eq!(
            resolve(ToolMode::Prompt, &caps(Some(true), None)),
            ToolMode::Prompt
        );
    }

    #[test]
    fn constrained_replies_read_back() {
        assert_eq!(
            read_constrained(r#"{"tool": "read_file", "arguments": {"path": "a"}}"#),
            Some(ConstrainedReply::Call {
                name: "read_file".into(),
                arguments: json!({"path": "a"})
            })
        );
        assert_eq!(
            read_constrained(r#" {"final_answer": "done"} "#),
            Some(ConstrainedReply::Answer("done".into()))
        );
        assert_eq!(read_constrained(r#"{"tool": "read_file", "argu"#), None);
    }

    #[test]
    fn schema_offers_every_tool_and_an_answer() {
        let specs = vec![ToolSpec {
            name: "read_file".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
        }];
        let schema = constrained_schema(&specs, None, None);
        let choices = schema["oneOf"].as_array().unwrap();
        assert_eq!(choices.len(), 2);
        assert_eq!(choices[0]["properties"]["tool"]["const"], "read_file");
        assert_eq!(choices[1]["required"][0], "final_answer");
    }

    fn files(paths: &[&str], more: bool) -> WorkspaceFiles {
        WorkspaceFiles {
            paths: paths.iter().map(|p| p.to_string()).collect(),
            more,
        }
    }

    #[test]
    fn a_complete_file_list_becomes_the_only_allowed_paths() {
        let spec = |name: &str| ToolSpec {
            name: name.into(),
            description: "d".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        };
        let specs = vec![spec("read_file"), spec("write_file")];
        let path = |schema: &Value, i: usize| {
            schema["oneOf"][i]["properties"]["arguments"]["properties"]["path"].clone()
        };
        let all = files(&["a.txt", "b/c.md"], false);
        let schema = constrained_schema(&specs, Some(&all), None);
        assert_eq!(path(&schema, 0)["enum"], json!(["a.txt", "b/c.md"]));
        assert_eq!(path(&schema, 1), json!({"type": "string"}));
        for partial in [files(&["a.txt"], true), files(&[], false)] {
            let schema = constrained_schema(&specs, Some(&partial), None);
            assert_eq!(path(&schema, 0), json!({"type": "string"}));
        }
    }

    #[test]
    fn the_constrained_prompt_lists_files_and_says_when_there_are_more() {
        let text = constrained_instructions(&[], "read_file", Some(&files(&["a.txt"], true)));
        assert!(text
            .ends_with("Files in the workspace:\n- a.txt\n(and more; use find_files to search)\n"));
        assert!(!text.contains("\"...\""));
        let text = constrained_instructions(&[], "read_file", Some(&files(&[], false)));
        assert!(!text.contains("Files in the workspace"));
    }

    #[test]
    fn the_example_calls_the_given_tool_with_placeholders_for_its_arguments() {
        let spec = |name: &str, params: Value| ToolSpec {
            name: name.into(),
            description: "d".into(),
            parameters: params,
        };
        let specs = vec![
            spec(
                "read_file",
                json!({"type": "object", "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}}, "required": ["path"]}),
            ),
            spec(
                "write_file",
                json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
            ),
            spec(
                "list_directory",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": []}),
            ),
        ];
        let example = |tool: &str| {
            let text = constrained_instructions(&specs, tool, None);
            text.lines()
                .find_map(|l| l.strip_prefix("Example: "))
                .unwrap()
                .to_owned()
        };
        assert_eq!(example("read_file"), READ_EXAMPLE);
        assert_eq!(
            example("write_file"),
            r#"{"tool": "write_file", "arguments": {"path": "<file named in the task>", "content": "<text from the task>"}}"#
        );
        assert_eq!(
            example("list_directory"),
            r#"{"tool": "list_directory", "arguments": {"path": "<folder named in the task>"}}"#
        );
        assert_eq!(example("not_a_tool"), READ_EXAMPLE);
    }
}
