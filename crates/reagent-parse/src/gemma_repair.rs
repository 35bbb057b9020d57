//! Repairs of malformed Gemma 4 call arguments, after ollama's (its issue 15315 collects
//! the real outputs). They run only where the strict read of a call failed, and only on
//! properties the offered tool's schema types as string:
//!
//! - a single-quoted value followed by a stray delimiter (`k:'v'<|"|>`): the delimiter is
//!   dropped (the quoted text is the string);
//! - a delimited string left open on the last value (`k:<|"|>ls}`) closes before the
//!   final `}`;
//! - a value with no delimiter at all (`k:hello,m:…`, `k:\n# Title …`) runs to the next
//!   `,KEY:` of a property the tool declares, else to the final `}`, else to the end of
//!   the call's region;
//!
//! and a final `}` the repaired text lacks is added. With no schema nothing is repaired:
//! a value of unknown type is not guessed.

use serde_json::{Map, Value};

use crate::lenient::Lenient;
use crate::scan::{skip_ws, string_end};

/// The arguments object of a call whose strict read failed: `region` runs from the call's
/// `{` to its end (the block's closer, or the end of a text holding only the call).
/// `None` when no repair applies or the repaired text still does not parse.
pub(crate) fn repaired_arguments(
    region: &str,
    delim: &'static str,
    props: &Map<String, Value>,
) -> Option<Value> {
    let is_string = |key: &str| {
        props
            .get(key)
            .is_some_and(|s| crate::schema::allowed_types(s).contains(&"string"))
    };
    let mut text = drop_delimiters_after_quoted(region, delim, &is_string);
    text = close_open_delimiter(text, delim, &is_string);
    text = delimit_raw_values(text, delim, props, &is_string);
    if text == region {
        return None;
    }
    // Only a repaired call gets its missing `}`: a call merely cut off is not completed.
    let kept = text.trim_end().len();
    if !text[..kept].ends_with('}') {
        text.insert(kept, '}');
    }
    let mut p = Lenient::new(&text);
    p.str_delim = Some(delim);
    p.bare_keys = true;
    match p.value() {
        Some(args @ Value::Object(_)) if skip_ws(text.as_bytes(), p.pos) == text.len() => {
            Some(args)
        }
        _ => None,
    }
}

/// The key and the value start of the first `{KEY:` or `,KEY:` in `s` at or after
/// `from`, outside delimited and double-quoted strings (a caller steps over a
/// single-quoted value itself); the scan stops at a delimiter left open.
fn next_key<'a>(s: &'a str, from: usize, delim: &str) -> Option<(&'a str, usize)> {
    let b = s.as_bytes();
    let d = delim.as_bytes();
    let mut i = from;
    while i < b.len() {
        if b[i..].starts_with(d) {
            let close = s[i + d.len()..].find(delim)?;
            i += 2 * d.len() + close;
            continue;
        }
        match b[i] {
            b'"' => i = string_end(b, i, b'"')?,
            b':' => {
                let value = i + 1;
                if let Some(key) = key_before(s, i) {
                    return Some((key, value));
                }
                i = value;
            }
            _ => i += 1,
        }
    }
    None
}

/// The bare key before the `:` at `colon`, when a `{` or `,` opens it.
fn key_before(s: &str, colon: usize) -> Option<&str> {
    let b = s.as_bytes();
    let mut end = colon;
    while end > 0 && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_') {
        start -= 1;
    }
    let mut open = start;
    while open > 0 && b[open - 1].is_ascii_whitespace() {
        open -= 1;
    }
    (start < end && open > 0 && matches!(b[open - 1], b'{' | b',')).then(|| &s[start..end])
}

/// `k:'v'<|"|>` → `k:'v'` where `k` is a string property.
fn drop_delimiters_after_quoted(s: &str, delim: &str, is_string: &dyn Fn(&str) -> bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some((key, value)) = next_key(s, from, delim) {
        let v = skip_ws(b, value);
        from = value;
        if b.get(v) != Some(&b'\'') {
            continue;
        }
        let Some(end) = string_end(b, v, b'\'') else {
            break;
        };
        from = end;
        if s[end..].starts_with(delim) && is_string(key) {
            out.push_str(&s[copied..end]);
            copied = end + delim.len();
            from = copied;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// `k:<|"|>ls}` → `k:<|"|>ls<|"|>}`: the last delimiter, left open as the value of a
/// string property, closes before the final `}`.
fn close_open_delimiter(s: String, delim: &str, is_string: &dyn Fn(&str) -> bool) -> String {
    if s.matches(delim).count().is_multiple_of(2) {
        return s;
    }
    let Some(open) = s.rfind(delim) else {
        return s;
    };
    let before = s[..open].trim_end();
    let names_string = before
        .strip_suffix(':')
        .and_then(|_| key_before(&s, before.len() - 1))
        .is_some_and(is_string);
    let kept = s.trim_end().len();
    if !names_string || !s[..kept].ends_with('}') || kept - 1 < open + delim.len() {
        return s;
    }
    let mut s = s;
    s.insert_str(kept - 1, delim);
    s
}

/// Each undelimited value of a string property wrapped in delimiters, from right after
/// its `:` to the next `,KEY:` of a declared property, the final `}`, or the end.
fn delimit_raw_values(
    s: String,
    delim: &str,
    props: &Map<String, Value>,
    is_string: &dyn Fn(&str) -> bool,
) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    while let Some((key, value)) = next_key(&s, from, delim) {
        let at = skip_ws(b, value);
        if !is_string(key) || is_structured(&s, at, delim) {
            from = match b.get(at) {
                Some(b'\'') => string_end(b, at, b'\'').unwrap_or(s.len()),
                _ => value,
            };
            continue;
        }
        let end = raw_value_end(&s, value, props);
        out.push_str(&s[copied..value]);
        out.push_str(delim);
        out.push_str(&s[value..end]);
        out.push_str(delim);
        copied = end;
        from = end;
    }
    if copied == 0 {
        return s;
    }
    out.push_str(&s[copied..]);
    out
}

/// Whether the value at `at` is written as a value: a delimited or quoted string, an
/// object or list, or a scalar (number, `true`, `null` …) followed by `,` or `}`.
fn is_structured(s: &str, at: usize, delim: &str) -> bool {
    let b = s.as_bytes();
    match b.get(at) {
        None => true,
        Some(b'"' | b'\'' | b'{' | b'[') => true,
        Some(_) if s[at..].starts_with(delim) => true,
        Some(_) => {
            let mut p = Lenient::new(s);
            p.pos = at;
            p.value().is_some() && matches!(b.get(skip_ws(b, p.pos)), None | Some(b',' | b'}'))
        }
    }
}

/// Where an undelimited value starting at `start` ends: at the `,` of the next `,KEY:`
/// naming a declared property, else before the final `}`, else at the end.
fn raw_value_end(s: &str, start: usize, props: &Map<String, Value>) -> usize {
    let b = s.as_bytes();
    for (i, _) in s[start..].match_indices(',') {
        let key_start = skip_ws(b, start + i + 1);
        let mut key_end = key_start;
        while key_end < b.len() && (b[key_end].is_ascii_alphanumeric() || b[key_end] == b'_') {
            key_end += 1;
        }
        let colon = skip_ws(b, key_end);
        if key_end > key_start
            && b.get(colon) == Some(&b':')
            && props.contains_key(&s[key_start..key_end])
        {
            return start + i;
        }
    }
    let kept = s.trim_end().len();
    if kept > start && s[..kept].ends_with('}') {
        kept - 1
    } else {
        s.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DELIM: &str = "<|\"|>";

    fn repair(region: &str, props: Value) -> Option<Value> {
        let Value::Object(props) = props else {
            panic!("properties are an object")
        };
        repaired_arguments(region, DELIM, &props)
    }

    #[test]
    fn each_repair_needs_a_string_property() {
        let string = json!({"k": {"type": "string"}, "m": {"type": "string"}});
        let number = json!({"k": {"type": "number"}, "m": {"type": "string"}});
        for (region, args) in [
            ("{k:<|\"|>ls}", json!({"k": "ls"})),
            ("{k:'a:b'<|\"|>}", json!({"k": "a:b"})),
            (
                "{k:two words,m:<|\"|>x<|\"|>}",
                json!({"k": "two words", "m": "x"}),
            ),
            ("{k:\n# a, b}", json!({"k": "\n# a, b"})),
            ("{k:no close", json!({"k": "no close"})),
            ("{m:'x,k:y',k:z}", json!({"m": "x,k:y", "k": "z"})),
            ("{k:12 apples}", json!({"k": "12 apples"})),
        ] {
            assert_eq!(repair(region, string.clone()), Some(args), "{region}");
            assert_eq!(repair(region, number.clone()), None, "{region}");
            assert_eq!(repair(region, json!({})), None, "{region}");
        }
    }

    #[test]
    fn a_raw_value_ends_only_at_a_declared_key() {
        let props = json!({"k": {"type": "string"}, "m": {"type": "integer"}});
        assert_eq!(
            repair("{k:a,b:c,m:2}", props.clone()),
            Some(json!({"k": "a,b:c", "m": 2}))
        );
        // A delimiter left open before another property is not closed: no guess.
        let two = json!({"k": {"type": "string"}, "m": {"type": "string"}});
        assert_eq!(repair("{k:<|\"|>one,m:<|\"|>two<|\"|>}", two), None);
        // A value already well written is not touched, nor a call merely cut off.
        assert_eq!(repair("{m:2}", props.clone()), None);
        assert_eq!(repair("{m:2", props), None);
    }
}
