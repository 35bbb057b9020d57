//! A JSON value at an offset of the text: its end found by a string-aware bracket scan,
//! read strictly, then tolerantly (single quotes, Python literals, HTML-escaped quotes),
//! then, where that fails, with the repairs weak models need and only when they yield a
//! call: a string that lost its closing quote at a line break, bare keys and bare words.

use serde_json::Value;

use crate::calls::{calls_from_value, CallRules};
use crate::engine::Ctx;
use crate::scan::{
    parse_json_bare_words, parse_json_html_escaped, parse_json_lenient, parse_json_line_bound,
    skip_ws, End,
};

/// A JSON value found at a position.
pub(crate) enum JsonAt {
    /// The value and the exclusive end offset.
    Value(Value, usize),
    /// The input ended inside the value.
    Truncated,
    /// Not a (tolerantly) valid value; carries the end offset if brackets balanced.
    Bad(Option<usize>),
}

/// Parse the `{…}`/`[…]` starting at `j` (after whitespace).
pub(crate) fn json_at(ctx: &Ctx, t: &str, j: usize) -> JsonAt {
    let b = t.as_bytes();
    let j = skip_ws(b, j);
    if j >= b.len() {
        return JsonAt::Truncated;
    }
    if b[j] != b'{' && b[j] != b'[' {
        return JsonAt::Bad(None);
    }
    let end = ctx.memo.borrow_mut().end(t, j);
    let first = match end {
        End::Complete(e) => {
            match parse_json_lenient(&t[j..e]).or_else(|| parse_json_html_escaped(&t[j..e])) {
                Some(v) => return JsonAt::Value(v, e),
                None => JsonAt::Bad(Some(e)),
            }
        }
        End::Incomplete => JsonAt::Truncated,
        End::Invalid => JsonAt::Bad(None),
    };
    // Bare words only where the object's first key is bare too: `{request: foo, …}` is
    // written that way throughout, while `{"name": "f", "arguments": invalid}` is a call
    // gone wrong.
    let bare_words = || match end {
        End::Complete(e)
            if b[j] == b'{'
                && b.get(skip_ws(b, j + 1))
                    .is_some_and(u8::is_ascii_alphabetic) =>
        {
            parse_json_bare_words(&t[j..e]).map(|v| JsonAt::Value(v, e))
        }
        _ => None,
    };
    // A second look counts only where it finds a call: other text in braces stays as the
    // first look left it.
    lost_quote_object(ctx, t, j)
        .or_else(bare_words)
        .filter(|v| matches!(v, JsonAt::Value(v, _) if calls_from_value(v, CallRules::default()).is_some()))
        .unwrap_or(first)
}

/// An object that does not parse because a string lost its closing quote at a line break
/// (`{"value": "oops` + newline + `}`, then the next object): read with such strings ending
/// at their line break. Only where more text follows the object read so: at the end of
/// the output, an open string is a stream cut off mid-value, not a lost quote.
fn lost_quote_object(ctx: &Ctx, t: &str, j: usize) -> Option<JsonAt> {
    if t.as_bytes()[j] != b'{' {
        return None;
    }
    let End::Complete(e) = ctx.memo.borrow_mut().line_bound_end(t, j) else {
        return None;
    };
    if t[e..].trim().is_empty() {
        return None;
    }
    let v = parse_json_line_bound(&t[j..e])?;
    Some(JsonAt::Value(v, e))
}
