//! Turning decoded JSON values into [`ParsedCall`]s: the many spellings of
//! "a call object" (`name`/`tool_name`/`function`, `arguments`/`parameters`/`tool_args`/
//! `tool_input`, wrappers, arguments given as a JSON-encoded string).

use serde_json::{Map, Value};

use crate::scan::{is_tool_name, parse_json_lenient};
use crate::ParsedCall;

/// Rules for accepting a call object.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CallRules {
    /// Keep `arguments` that are a plain (non-JSON) string or a list as written.
    pub(crate) keep_string_args: bool,
}

/// Normalise an `arguments` value: objects pass, JSON-encoded strings are decoded once.
/// Under `keep_string_args` a plain string or a list is kept as written, so the loop can
/// tell the model its arguments have the wrong shape.
fn normalize_args(v: Value, rules: CallRules) -> Option<Value> {
    match v {
        Value::Object(_) => Some(v),
        Value::String(s) => match parse_json_lenient(&s) {
            Some(obj @ Value::Object(_)) => Some(obj),
            _ if rules.keep_string_args => Some(Value::String(s)),
            _ => None,
        },
        Value::Array(_) if rules.keep_string_args => Some(v),
        _ => None,
    }
}

fn id_of(m: &Map<String, Value>) -> Option<String> {
    ["id", "tool_call_id"]
        .iter()
        .find_map(|k| m.get(*k))
        .and_then(|v| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
}

/// One call object, in any of the common spellings (consumes the object).
pub(crate) fn call_from_object(mut m: Map<String, Value>, rules: CallRules) -> Option<ParsedCall> {
    // Wrappers around a call object (an agent's `{"thought": …, "command": {call}}` too).
    for wrapper in [
        "tool_call",
        "function",
        "function_call",
        "command",
        "action",
        "tool",
    ] {
        if matches!(m.get(wrapper), Some(Value::Object(_))) {
            let outer_id = id_of(&m);
            let Some(Value::Object(inner)) = m.remove(wrapper) else {
                return None;
            };
            let mut call = call_from_object(inner, rules)?;
            if call.id.is_none() {
                call.id = outer_id;
            }
            return Some(call);
        }
    }
    // text-generation-inference's tool grammar: `{"_name": NAME, ...arguments}`.
    if let Some(Value::String(name)) = m.remove("_name") {
        if name.is_empty() {
            return None;
        }
        return Some(ParsedCall {
            name,
            arguments: Value::Object(m),
            id: None,
        });
    }
    let Some(name) = ["name", "tool_name", "function", "tool", "api_name"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str))
    else {
        return request_call(m);
    };
    let name = name.to_string();
    if name.is_empty() {
        return None;
    }
    let key = [
        "arguments",
        "parameters",
        "args",
        "input",
        "tool_args",
        "tool_input",
    ]
    .into_iter()
    .find(|k| m.contains_key(*k))?;
    let id = id_of(&m);
    let args = m.remove(key)?;
    Some(ParsedCall {
        name,
        arguments: normalize_args(args, rules)?,
        id,
    })
}

/// langroid's tool message: `{"request": NAME, ...arguments}`, the tool named by a
/// `request` field that holds a tool name (no spaces or markup) beside its arguments.
fn request_call(mut m: Map<String, Value>) -> Option<ParsedCall> {
    match m.remove("request") {
        Some(Value::String(name)) if is_tool_name(&name) => Some(ParsedCall {
            name,
            arguments: Value::Object(m),
            id: None,
        }),
        _ => None,
    }
}

/// A call with no arguments from an object that holds nothing but its name (and perhaps an
/// id): `{"name": "now"}`. Only where a call tag says a call is meant.
pub(crate) fn name_only_call(v: &Value) -> Option<ParsedCall> {
    let m = v.as_object()?;
    // Checked by size first: this runs on every tagged call object.
    if m.len() > 2 || (m.len() == 2 && !m.contains_key("id")) {
        return None;
    }
    // A tool's name: `{"name": "wc -w words.txt"}` names a command, not a tool.
    let name = m.get("name")?.as_str().filter(|n| is_tool_name(n))?;
    Some(ParsedCall {
        name: name.to_string(),
        arguments: Value::Object(Map::new()),
        id: id_of(m),
    })
}

/// Calls from a decoded value: a call object, a `{"tool_calls": [...]}` wrapper, or a
/// non-empty list of call objects (all elements must be calls).
pub(crate) fn calls_from_value(v: &Value, rules: CallRules) -> Option<Vec<ParsedCall>> {
    calls_from_owned(v.clone(), rules)
}

/// [`calls_from_value`] consuming the value (no copies).
pub(crate) fn calls_from_owned(v: Value, rules: CallRules) -> Option<Vec<ParsedCall>> {
    match v {
        Value::Object(mut m) => {
            if let Some(inner) = m.remove("tool_calls") {
                return calls_from_owned(inner, rules);
            }
            call_from_object(m, rules).map(|c| vec![c])
        }
        Value::Array(items) if !items.is_empty() => items
            .into_iter()
            .map(|it| match it {
                Value::Object(m) => call_from_object(m, rules),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Whether a decoded object names something (has a `name`-like key) without being a call.
pub(crate) fn looks_like_named_object(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.contains_key("name") || m.contains_key("tool_call"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spellings() {
        let r = CallRules::default();
        let v = json!({"arguments": {"a": 1}, "name": "f", "id": "x"});
        assert_eq!(
            calls_from_value(&v, r).map(|c| c[0].id.clone()),
            Some(Some("x".into()))
        );
        let v = json!({"function": {"_name": "f", "a": 1}});
        let c = &calls_from_value(&v, r).unwrap()[0];
        assert_eq!((c.name.as_str(), &c.arguments), ("f", &json!({"a": 1})));
        let v = json!({"tool_call": {"name": "f", "arguments": "{\"a\": 1}"}});
        assert_eq!(
            calls_from_value(&v, r).map(|c| c[0].arguments.clone()),
            Some(json!({"a": 1}))
        );
        // An agent's step wrapping its call; camel's and LangChain's argument keys.
        let v = json!({"thought": "list", "command": {"name": "ls", "arguments": {"p": "."}}});
        assert_eq!(
            calls_from_value(&v, r).map(|c| c[0].name.clone()),
            Some("ls".into())
        );
        for key in ["tool_args", "tool_input"] {
            let v = json!({"tool_name": "f", key: {"q": 1}});
            assert_eq!(
                calls_from_value(&v, r).map(|c| c[0].arguments.clone()),
                Some(json!({"q": 1}))
            );
        }
        // langroid's `request` field names the tool beside its arguments, when it holds a
        // tool name.
        let v = json!({"request": "file_exists", "filename": "a.txt"});
        let c = &calls_from_value(&v, r).unwrap()[0];
        assert_eq!(
            (c.name.as_str(), &c.arguments),
            ("file_exists", &json!({"filename": "a.txt"}))
        );
        assert!(calls_from_value(&json!({"request": "tell me more", "id": 1}), r).is_none());
        let v = json!({"name": "f", "arguments": "hello"});
        assert!(calls_from_value(&v, r).is_none());
        let keep = CallRules {
            keep_string_args: true,
        };
        assert!(calls_from_value(&v, keep).is_some());
        assert!(calls_from_value(&json!([{"name": "f"}]), r).is_none());
    }
}
