//! gptme's tool format: a line `@NAME(CALL_ID): {JSON}` (the id optional; NAME may hold dots,
//! `@browser.view(c1): {…}`), at the very start of a line and outside code fences, its
//! arguments one whole JSON object (tolerantly read: a raw line break in a string; a missing
//! comma is not mended). Text before the `@` on its line, an object that never closes or does
//! not parse: no call. With tools offered, the name must be one of them (as for bare JSON, whose
//! family this is): otherwise the line stays text.

use serde_json::Value;

use crate::engine::Ctx;
use crate::family::Family;
use crate::hit::Hit;
use crate::json_at::{json_at, JsonAt};
use crate::ParsedCall;

/// The call whose arguments open with the `{` at `brace`, when its line is a gptme call head.
pub(crate) fn call_at(t: &str, brace: usize, ctx: &Ctx) -> Option<Hit> {
    let before = &t.as_bytes()[..brace];
    if !before.ends_with(b":") && !before.ends_with(b": ") {
        return None;
    }
    // A head is short: look back for its line start no further than that.
    let window = brace.saturating_sub(MAX_HEAD);
    let line = match memchr::memrchr(b'\n', &before[window..]) {
        Some(p) => window + p + 1,
        None if window == 0 => 0,
        None => return None,
    };
    let (name, id) = head(&t[line..brace])?;
    if !ctx.known(name) || ctx.memo.borrow_mut().in_fence(t, line) {
        return None;
    }
    let JsonAt::Value(arguments @ Value::Object(_), end) = json_at(ctx, t, brace) else {
        return None;
    };
    let call = ParsedCall {
        name: name.to_owned(),
        arguments,
        id: id.map(str::to_owned),
    };
    Some(Hit::new(line, end, Family::GenericJson, vec![call]))
}

/// The longest call head looked for, `@NAME(ID): `, in bytes.
const MAX_HEAD: usize = 256;

/// `@NAME(ID): ` (or `@NAME: `): the name and the id.
fn head(h: &str) -> Option<(&str, Option<&str>)> {
    let h = h.strip_prefix('@')?;
    let h = h.strip_suffix(' ').unwrap_or(h).strip_suffix(':')?;
    let (name, id) = match h.strip_suffix(')').and_then(|h| h.split_once('(')) {
        Some((name, id)) if !id.is_empty() && !id.contains(['(', ')', ' ']) => (name, Some(id)),
        Some(_) => return None,
        None => (h, None),
    };
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    (first_ok && rest_ok).then_some((name, id))
}

#[cfg(test)]
mod tests {
    use super::head;

    #[test]
    fn call_heads() {
        assert_eq!(head("@shell(c1): "), Some(("shell", Some("c1"))));
        assert_eq!(head("@patch: "), Some(("patch", None)));
        assert_eq!(
            head("@browser.view(call-1):"),
            Some(("browser.view", Some("call-1")))
        );
        assert_eq!(
            head("@ipython(functions.ipython:0): "),
            Some(("ipython", Some("functions.ipython:0")))
        );
        for not in [
            "some text @tool: ",
            "  @tool: ",
            "@: ",
            "@tool(): ",
            "@1x: ",
            "@a b: ",
            "@tool",
        ] {
            assert_eq!(head(not), None, "{not}");
        }
    }
}
