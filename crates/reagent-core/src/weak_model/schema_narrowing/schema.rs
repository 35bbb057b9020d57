//! Applying a [`Narrowing`] to one tool's argument schema.

use serde_json::{json, Value};

use super::Narrowing;

/// `parameters` (a tool's argument schema) narrowed for the tool `name`, or `None` when
/// nothing is narrowed for it. Optional arguments are left out (but `list_directory`'s path,
/// which is narrowed to real folders): a weak model fills them with junk (measured:
/// `read_file` with `start_line` 1234567890, `end_line` 10^12; `grep_search` with `include`
/// set to a file name).
pub(crate) fn narrow(name: &str, parameters: &Value, narrowing: &Narrowing) -> Option<Value> {
    let keep: &[&str] = if name == "list_directory" {
        &["path"]
    } else {
        &[]
    };
    let essential = required_only(parameters, keep);
    let narrowed = narrow_values(name, &essential, parameters, narrowing).unwrap_or(essential);
    (narrowed != *parameters).then_some(narrowed)
}

/// `parameters` with only its required properties (and those in `keep`).
fn required_only(parameters: &Value, keep: &[&str]) -> Value {
    let mut p = parameters.clone();
    let required: Vec<String> = p
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(properties) = p.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|key, _| required.contains(key) || keep.contains(&key.as_str()));
    }
    p
}

/// The values narrowed in `essential` (the required arguments of `original`) for the tool
/// `name`; `None` when the narrowing holds nothing for it.
fn narrow_values(
    name: &str,
    essential: &Value,
    original: &Value,
    narrowing: &Narrowing,
) -> Option<Value> {
    let with = |key: &str, values: &[String]| {
        let mut p = essential.clone();
        set(&mut p, key, json!({ "enum": values }))?;
        Some(p)
    };
    match name {
        "write_file" if !narrowing.write_paths.is_empty() => {
            // One branch per named path (its folder variants too) with the texts given for
            // it; the paths no branch takes, with any of the task's texts.
            let branch = |paths: &[String], texts: &[String]| {
                let mut p = with("path", paths)?;
                let texts = if texts.is_empty() {
                    &narrowing.write_contents
                } else {
                    texts
                };
                if !texts.is_empty() {
                    set(&mut p, "content", json!({ "enum": texts }))?;
                }
                Some(p)
            };
            let mut rest = narrowing.write_paths.clone();
            let mut branches: Vec<Value> = Vec::new();
            for given in narrowing.write_given.iter().filter(|g| !g.texts.is_empty()) {
                let (mine, others): (Vec<String>, Vec<String>) = rest
                    .into_iter()
                    .partition(|p| *p == given.path || p.ends_with(&format!("/{}", given.path)));
                rest = others;
                if !mine.is_empty() {
                    branches.push(branch(&mine, &given.texts)?);
                }
            }
            if !rest.is_empty() {
                branches.push(branch(&rest, &[])?);
            }
            match branches.len() {
                1 => branches.pop(),
                _ => Some(json!({ "oneOf": branches })),
            }
        }
        "list_directory" if !narrowing.folders.is_empty() => with("path", &narrowing.folders),
        "read_file" if !narrowing.read_paths.is_empty() => with("path", &narrowing.read_paths),
        "grep_search" if !narrowing.search_words.is_empty() => {
            with("pattern", &narrowing.search_words)
        }
        "run_command" if !narrowing.commands.is_empty() => with("command", &narrowing.commands),
        "edit_file" if !narrowing.edit_texts.is_empty() => {
            let mut branches: Vec<Value> = Vec::new();
            for file in &narrowing.edit_texts {
                let branch = |texts: &[String]| {
                    let mut p = with("old_string", texts)?;
                    set(&mut p, "path", json!({"enum": [file.path]}))?;
                    if !file.replacements.is_empty() {
                        set(&mut p, "new_string", json!({"enum": file.replacements}))?;
                    }
                    Some(p)
                };
                if !file.texts.is_empty() {
                    branches.push(branch(&file.texts)?);
                }
                if !file.repeated.is_empty() {
                    let mut p = branch(&file.repeated)?;
                    // A repeated text is replaced everywhere or not at all.
                    let mut all = original.pointer("/properties/replace_all")?.clone();
                    all.as_object_mut()?.insert("const".to_owned(), json!(true));
                    p.get_mut("properties")?
                        .as_object_mut()?
                        .insert("replace_all".to_owned(), all);
                    p.get_mut("required")?
                        .as_array_mut()?
                        .push(json!("replace_all"));
                    branches.push(p);
                }
            }
            if !narrowing.free_edit_paths.is_empty() {
                let mut p = essential.clone();
                set(&mut p, "path", json!({"enum": narrowing.free_edit_paths}))?;
                branches.push(p);
            }
            Some(json!({ "oneOf": branches }))
        }
        _ => None,
    }
}

/// Add `extra` (an object of schema keywords) to the property `key` of `parameters`.
fn set(parameters: &mut Value, key: &str, extra: Value) -> Option<()> {
    let prop = parameters
        .pointer_mut(&format!("/properties/{key}"))?
        .as_object_mut()?;
    for (k, v) in extra.as_object()? {
        prop.insert(k.clone(), v.clone());
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::{EditTexts, GivenTexts};
    use super::*;

    #[test]
    fn the_schema_offers_only_the_narrowed_values() {
        let params = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            },
            "required": ["path", "old_string", "new_string"]
        });
        let n = Narrowing {
            write_paths: vec!["out.txt".into()],
            edit_texts: vec![EditTexts {
                path: "a.txt".into(),
                texts: vec!["red".into()],
                repeated: vec!["the".into()],
                replacements: vec!["blue".into()],
            }],
            search_words: vec!["penguin".into()],
            free_edit_paths: vec!["big.log".into()],
            ..Narrowing::default()
        };
        let edit = narrow("edit_file", &params, &n).unwrap();
        let branches = edit["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), 3);
        assert_eq!(
            branches[0]["properties"]["old_string"]["enum"],
            json!(["red"])
        );
        assert_eq!(branches[0]["properties"]["path"]["enum"], json!(["a.txt"]));
        // What the task gives to put instead, in both of the file's branches.
        for branch in &branches[..2] {
            assert_eq!(branch["properties"]["new_string"]["enum"], json!(["blue"]));
        }
        assert_eq!(
            branches[2]["properties"]["new_string"],
            json!({"type": "string"}),
            "a file too large for its texts keeps a free replacement"
        );
        assert_eq!(
            branches[1]["properties"]["old_string"]["enum"],
            json!(["the"])
        );
        assert_eq!(
            branches[1]["properties"]["replace_all"]["const"],
            json!(true)
        );
        assert!(branches[1]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("replace_all")));
        assert_eq!(
            branches[2]["properties"]["path"]["enum"],
            json!(["big.log"])
        );
        assert_eq!(
            branches[2]["properties"]["old_string"],
            json!({"type": "string"})
        );
        let write_params = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]
        });
        let write = narrow("write_file", &write_params, &n).unwrap();
        assert_eq!(write["properties"]["path"]["enum"], json!(["out.txt"]));
        assert!(
            write["properties"]["content"].get("enum").is_none(),
            "no texts: free"
        );
        let with_texts = Narrowing {
            write_contents: vec!["hi".into()],
            ..n.clone()
        };
        let write = narrow("write_file", &write_params, &with_texts).unwrap();
        assert_eq!(write["properties"]["content"]["enum"], json!(["hi"]));
        // Each named path with the texts given for it; the rest with any text of the task.
        let per_path = Narrowing {
            write_paths: vec!["a.txt".into(), "src/a.txt".into(), "b.txt".into()],
            write_contents: vec!["west".into(), "east".into()],
            write_given: vec![
                GivenTexts {
                    path: "a.txt".into(),
                    texts: vec!["west".into()],
                },
                GivenTexts {
                    path: "b.txt".into(),
                    texts: Vec::new(),
                },
            ],
            ..n.clone()
        };
        let write = narrow("write_file", &write_params, &per_path).unwrap();
        let branches = write["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), 2);
        assert_eq!(
            branches[0]["properties"]["path"]["enum"],
            json!(["a.txt", "src/a.txt"])
        );
        assert_eq!(
            branches[0]["properties"]["content"]["enum"],
            json!(["west"])
        );
        assert_eq!(branches[1]["properties"]["path"]["enum"], json!(["b.txt"]));
        assert_eq!(
            branches[1]["properties"]["content"]["enum"],
            json!(["west", "east"])
        );
        let n = Narrowing {
            folders: vec![".".into(), "src".into()],
            ..n
        };
        let list = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}},
            "required": []
        });
        let list = narrow("list_directory", &list, &n).unwrap();
        assert_eq!(list["properties"]["path"]["enum"], json!([".", "src"]));
        assert!(list["properties"].get("recursive").is_none());
        let grep = json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "include": {"type": "string"}},
            "required": ["pattern"]
        });
        let grep = narrow("grep_search", &grep, &n).unwrap();
        assert_eq!(grep["properties"]["pattern"]["enum"], json!(["penguin"]));
        let run = json!({
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout_ms": {"type": "integer"}},
            "required": ["command"]
        });
        let free = narrow("run_command", &run, &n).unwrap();
        assert_eq!(free["properties"]["command"], json!({"type": "string"}));
        let given = Narrowing {
            commands: vec!["sh a.sh".into()],
            ..n.clone()
        };
        let run = narrow("run_command", &run, &given).unwrap();
        assert_eq!(run["properties"]["command"]["enum"], json!(["sh a.sh"]));
        let read_only = Narrowing {
            read_paths: vec!["a.txt".into()],
            ..n.clone()
        };
        let read_params = json!({
            "type": "object",
            "properties": {"path": {"type": "string", "enum": ["a.txt", "b.txt"]}},
            "required": ["path"]
        });
        let read_narrowed = narrow("read_file", &read_params, &read_only).unwrap();
        assert_eq!(
            read_narrowed["properties"]["path"]["enum"],
            json!(["a.txt"])
        );
        // Optional arguments are left out; a tool with nothing else to narrow keeps the rest.
        let read = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "end_line": {"type": "integer"}},
            "required": ["path"]
        });
        assert_eq!(
            narrow("read_file", &read, &n),
            Some(
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
            )
        );
        let all_required = json!({"type": "object", "properties": {"a": {}}, "required": ["a"]});
        assert_eq!(narrow("other", &all_required, &n), None);
        assert!(branches[0]["properties"].get("replace_all").is_none());
        assert_eq!(
            narrow("write_file", &write_params, &Narrowing::default()),
            None
        );
    }
}
