//! Typing raw parameter text against a JSON Schema, and [`coerce_arguments`].

use serde_json::Value;

use crate::scan::{number_value, parse_json_lenient};
use crate::ToolSchema;

/// The JSON types a schema allows (empty = unknown / any).
pub(crate) fn allowed_types(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    collect_types(schema, &mut out, 0);
    out
}

fn collect_types<'a>(schema: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
    if depth > 8 {
        return;
    }
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    // OpenAPI's spelling of an optional value (`"nullable": true`, which transformers'
    // `get_json_schema` writes for `Optional[str]`).
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        out.push("null");
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = schema.get(key) {
            for s in subs {
                collect_types(s, out, depth + 1);
            }
        }
    }
    if out.is_empty() {
        if let Some(Value::Array(vals)) = schema.get("enum") {
            if vals.iter().all(Value::is_string) {
                out.push("string");
            }
        }
    }
}

/// Type names [`convert`] reads, and the names servers give a string (Python's `str`, SQL's
/// `text`/`varchar`/`char`, `enum`), which keep the raw text.
const KNOWN_TYPES: &[&str] = &[
    "integer", "int", "number", "float", "double", "boolean", "bool", "null", "object", "dict",
    "array", "list", "string", "str", "text", "varchar", "char", "enum",
];

/// Convert `raw` to one of the non-string types in `types`, if it reads as one.
fn convert(raw: &str, types: &[&str]) -> Option<Value> {
    let t = raw.trim();
    for ty in types {
        let v = match *ty {
            "integer" | "int" => {
                number_value(&padding_dropped(t)).filter(|v| v.is_i64() || v.is_u64())
            }
            "number" | "float" | "double" => number_value(t).map(whole_as_integer),
            "boolean" | "bool" => match t.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => (t == "null" || t == "None").then_some(Value::Null),
            "object" | "dict" => json_text(t).filter(Value::is_object),
            "array" | "list" => json_text(t).filter(Value::is_array),
            _ => None,
        };
        if v.is_some() {
            return v;
        }
    }
    None
}

/// A zero-padded integer without its padding (`018956` → `18956`), for an integer schema.
fn padding_dropped(t: &str) -> std::borrow::Cow<'_, str> {
    let (sign, digits) = match t.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", t),
    };
    if digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|c| c.is_ascii_digit()) {
        let kept = digits.trim_start_matches('0');
        let kept = if kept.is_empty() { "0" } else { kept };
        return format!("{sign}{kept}").into();
    }
    t.into()
}

/// A float with no fraction as an integer (`5.0` → `5`), as Python-based servers write a
/// whole `number`; other values unchanged.
fn whole_as_integer(v: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact
    match v.as_f64() {
        Some(f) if !v.is_i64() && !v.is_u64() && f.fract() == 0.0 && f.abs() < EXACT => {
            // The guard makes the cast exact.
            #[allow(clippy::cast_possible_truncation)]
            Value::from(f as i64)
        }
        _ => v,
    }
}

/// JSON inside parameter text; also when it came escaped once more, as models write JSON
/// they think sits inside a string (`[{\"id\": \"C:\\\\x\"}]`: one level of string escaping
/// is taken off whole, `\\` with `\"`; failing that, only the quotes).
fn json_text(t: &str) -> Option<Value> {
    let v = parse_json_lenient(t).or_else(|| {
        if !t.contains("\\\"") {
            return None;
        }
        serde_json::from_str::<String>(&format!("\"{t}\""))
            .ok()
            .and_then(|once| parse_json_lenient(&once))
            .or_else(|| parse_json_lenient(&t.replace("\\\"", "\"")))
    })?;
    // Encoded twice (`"{'key': 'value'}"`): the string's own text, once more.
    match v {
        Value::String(inner) => {
            parse_json_lenient(&inner).filter(|v| v.is_object() || v.is_array())
        }
        v => Some(v),
    }
}

/// Type a raw XML parameter value. `schema` is the property's schema if known;
/// without one, `untyped_json` decides whether JSON-looking text is decoded.
pub(crate) fn type_raw(raw: &str, schema: Option<&Value>, untyped_json: bool) -> Value {
    match schema {
        Some(s) => {
            let types = allowed_types(s);
            // A type named by no dialect reagent knows (`other_type`) types like none at all.
            if !types.iter().any(|t| KNOWN_TYPES.contains(t)) {
                return parse_json_lenient(raw).unwrap_or_else(|| Value::String(raw.to_string()));
            }
            convert(raw, &types).unwrap_or_else(|| Value::String(raw.to_string()))
        }
        None if untyped_json => {
            parse_json_lenient(raw).unwrap_or_else(|| Value::String(raw.to_string()))
        }
        None => Value::String(raw.to_string()),
    }
}

/// The schema of property `key` of tool `name`, if the tool is known.
pub(crate) fn property_schema<'a>(
    tools: &'a [ToolSchema],
    name: &str,
    key: &str,
) -> Option<&'a Value> {
    tools
        .iter()
        .find(|t| t.name == name)
        .and_then(|t| t.parameters.get("properties"))
        .and_then(|p| p.get(key))
}

/// The tool's one property, when its schema names exactly one and it takes a string (or
/// names no type): a call whose body is plain text, not argument elements, gives it that text
/// (`<shell>ls</shell>` for a shell tool whose one parameter is `command`).
pub(crate) fn sole_string_property<'a>(tools: &'a [ToolSchema], name: &str) -> Option<&'a str> {
    let props = tools
        .iter()
        .find(|t| t.name == name)?
        .parameters
        .get("properties")?
        .as_object()?;
    let (key, schema) = props.iter().next().filter(|_| props.len() == 1)?;
    let string = schema.get("type").is_none_or(|t| t == "string");
    string.then_some(key.as_str())
}

/// Coerce argument values against a JSON Schema in place: `"true"`→`true`, `"30"`→`30`
/// (integer/number), a JSON string holding an object/array → the object/array,
/// `"null"`→`null` where nullable; an object or list encoded twice (a JSON string holding
/// `{'k': 'v'}`) is decoded. A lone `arguments`, `input`, `parameters` or `properties` key
/// that the schema does not name, wrapping an object (or its text) whose keys the schema
/// does name, is unwrapped (`{"arguments": {"city": "x"}}` → `{"city": "x"}`; small models
/// copy the schema's `properties`). Values that already fit,
/// or that cannot be converted, are left alone; this never fails.
pub fn coerce_arguments(args: &mut Value, schema: &Value) {
    unwrap_wrapper(args, schema);
    coerce(args, schema, 0);
}

/// The wrapper keys models put around the real arguments.
const WRAPPER_KEYS: &[&str] = &["arguments", "input", "parameters", "properties"];

fn unwrap_wrapper(args: &mut Value, schema: &Value) {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return;
    };
    let Value::Object(map) = args else { return };
    if map.len() != 1 {
        return;
    }
    let Some((key, inner)) = map.iter().next() else {
        return;
    };
    // The wrapped object may come as text (`"{'phone_number': '555'}"`, a Python dict).
    let decoded = match inner {
        Value::String(s) => parse_json_lenient(s).filter(Value::is_object),
        _ => None,
    };
    let inner = decoded.as_ref().unwrap_or(inner);
    let wraps = WRAPPER_KEYS.contains(&key.as_str())
        && !props.contains_key(key)
        && inner
            .as_object()
            .is_some_and(|o| !o.is_empty() && o.keys().all(|k| props.contains_key(k)));
    if wraps {
        let inner = inner.clone();
        *args = inner;
    }
}

fn coerce(v: &mut Value, schema: &Value, depth: usize) {
    if depth > 32 {
        return;
    }
    let types = allowed_types(schema);
    if let Value::String(s) = v {
        if !types.is_empty() && !types.contains(&"string") {
            if let Some(new) = convert(s, &types) {
                *v = new;
            }
        }
        return;
    }
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (k, sub) in map.iter_mut() {
                    if let Some(ps) = props.get(k) {
                        coerce(sub, ps, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for it in items.iter_mut() {
                    coerce(it, item_schema, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coerces_by_schema() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "b": {"type": "boolean"}, "s": {"type": "string"},
            "o": {"type": "object"}, "z": {"type": ["string", "null"]}, "f": {"type": "number"}
        }});
        let mut args =
            json!({"n": "30", "b": "true", "s": "30", "o": "{\"a\": 1}", "z": "x", "f": "x"});
        coerce_arguments(&mut args, &schema);
        assert_eq!(
            args,
            json!({"n": 30, "b": true, "s": "30", "o": {"a": 1}, "z": "x", "f": "x"})
        );
    }

    #[test]
    fn unwraps_a_lone_wrapper_key_the_schema_does_not_name() {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}});
        let mut args = json!({"arguments": {"city": "Paris", "days": "2"}});
        coerce_arguments(&mut args, &schema);
        assert_eq!(args, json!({"city": "Paris", "days": 2}));
        // Kept: the wrapper holds a key the schema does not name, or sits beside others,
        // or the schema names the key itself.
        for kept in [
            json!({"input": {"city": "Paris", "other": 1}}),
            json!({"input": {"city": "Paris"}, "days": 2}),
            json!({"parameters": {}}),
        ] {
            let mut args = kept.clone();
            coerce_arguments(&mut args, &schema);
            assert_eq!(args, kept);
        }
        let named = json!({"type": "object", "properties": {"input": {"type": "object"}}});
        let mut args = json!({"input": {"input": {}}});
        coerce_arguments(&mut args, &named);
        assert_eq!(args, json!({"input": {"input": {}}}));
    }

    #[test]
    fn whole_floats_of_number_type_become_integers() {
        let n = json!({"type": "number"});
        assert_eq!(type_raw("5.0", Some(&n), false), json!(5));
        assert_eq!(type_raw("-2.0", Some(&n), false), json!(-2));
        assert_eq!(type_raw("2.5", Some(&n), false), json!(2.5));
        assert_eq!(type_raw("1e300", Some(&n), false), json!(1e300));
    }

    #[test]
    fn types_raw_text() {
        let s = json!({"type": "string"});
        assert_eq!(type_raw("5123123", Some(&s), true), json!("5123123"));
        let i = json!({"type": "integer"});
        assert_eq!(type_raw(" 4 ", Some(&i), false), json!(4));
        let u = json!({"anyOf": [{"type": "array"}, {"type": "string"}]});
        assert_eq!(type_raw("[1]", Some(&u), false), json!([1]));
        assert_eq!(
            type_raw("{not valid json", Some(&u), false),
            json!("{not valid json")
        );
        assert_eq!(type_raw("1", None, false), json!("1"));
        assert_eq!(type_raw("1", None, true), json!(1));
    }
}
