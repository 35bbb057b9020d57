//! Checking a tool call before it runs: the tool exists, its arguments are coerced to the
//! schema's types (`"true"`→true, `"30"`→30, a JSON string holding an object → the object), and
//! then validated. Every failure becomes a precise message for the model, never a crash.

use std::collections::BTreeMap;

use reagent_protocol::ToolSpec;
use serde_json::Value;

/// Compiled argument schemas of the offered tools.
pub struct ArgumentChecker {
    tools: BTreeMap<String, (Value, Option<jsonschema::Validator>)>,
}

impl ArgumentChecker {
    /// Compile the schemas of `specs`. A schema that does not compile is still offered, but its
    /// arguments are only coerced, not validated.
    pub fn new(specs: &[ToolSpec]) -> Self {
        let tools = specs
            .iter()
            .map(|s| {
                let validator = jsonschema::validator_for(&s.parameters).ok();
                (s.name.clone(), (s.parameters.clone(), validator))
            })
            .collect();
        ArgumentChecker { tools }
    }

    /// Coerce `arguments` for tool `name` and validate them. On success returns the coerced
    /// arguments; on failure, the message to answer the model with.
    pub fn check(&self, name: &str, arguments: &Value) -> Result<Value, String> {
        let Some((schema, validator)) = self.tools.get(name) else {
            let valid: Vec<&str> = self.tools.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown tool `{name}`. Valid tools: {}.",
                valid.join(", ")
            ));
        };
        let mut args = match arguments {
            Value::Null => Value::Object(Default::default()),
            // Arguments given as a JSON-encoded string.
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    return Err(format!(
                    "arguments of `{name}` must be a JSON object, got the string {}. Expected: {}",
                    truncate(s, 80),
                    describe_schema(schema)
                ))
                }
            },
            other => other.clone(),
        };
        if !args.is_object() {
            return Err(format!(
                "arguments of `{name}` must be a JSON object, got {}. Expected: {}",
                truncate(&args.to_string(), 80),
                describe_schema(schema)
            ));
        }
        reagent_parse::coerce_arguments(&mut args, schema);
        if let Some(validator) = validator {
            let problems: Vec<String> = validator
                .iter_errors(&args)
                .map(|e| {
                    let path = e.instance_path().to_string();
                    let field = path.trim_start_matches('/');
                    if field.is_empty() {
                        e.to_string()
                    } else {
                        format!("field `{field}`: {e}")
                    }
                })
                .collect();
            if !problems.is_empty() {
                return Err(format!(
                    "invalid arguments for `{name}`: {}. Expected: {}",
                    problems.join("; "),
                    describe_schema(schema)
                ));
            }
        }
        Ok(args)
    }
}

/// A compact description of a schema's fields for error messages:
/// `{path: string (required), start_line: integer}`.
fn describe_schema(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(k, v)| {
                    let ty = v.get("type").map_or("any".to_owned(), |t| match t {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    let req = if required.contains(&k.as_str()) {
                        " (required)"
                    } else {
                        ""
                    };
                    format!("{k}: {ty}{req}")
                })
                .collect()
        })
        .unwrap_or_default();
    format!("{{{}}}", fields.join(", "))
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checker() -> ArgumentChecker {
        ArgumentChecker::new(&[ToolSpec {
            name: "read_file".into(),
            description: "read".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "start_line": {"type": "integer"},
                    "recursive": {"type": "boolean"}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }])
    }

    #[test]
    fn coerces_strings_to_schema_types() {
        let args = checker()
            .check(
                "read_file",
                &json!({"path": "a.rs", "start_line": "30", "recursive": "true"}),
            )
            .unwrap();
        assert_eq!(
            args,
            json!({"path": "a.rs", "start_line": 30, "recursive": true})
        );
    }

    #[test]
    fn arguments_as_a_json_string_are_decoded() {
        let args = checker()
            .check("read_file", &json!("{\"path\": \"a.rs\"}"))
            .unwrap();
        assert_eq!(args, json!({"path": "a.rs"}));
    }

    #[test]
    fn missing_field_names_it_and_the_expected_shape() {
        let err = checker()
            .check("read_file", &json!({"start_line": 1}))
            .unwrap_err();
        assert!(err.contains("\"path\" is a required property"), "{err}");
        assert!(err.contains("path: string (required)"), "{err}");
    }

    #[test]
    fn wrong_type_names_the_field() {
        let err = checker()
            .check("read_file", &json!({"path": "a", "start_line": "abc"}))
            .unwrap_err();
        assert!(err.contains("field `start_line`"), "{err}");
        assert!(err.contains("integer"), "{err}");
    }

    #[test]
    fn unknown_tool_lists_valid_names() {
        let err = checker().check("readfile", &json!({})).unwrap_err();
        assert_eq!(err, "unknown tool `readfile`. Valid tools: read_file.");
    }
}
