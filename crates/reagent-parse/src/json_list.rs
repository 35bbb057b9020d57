//! JSON lists of call objects read one element at a time, so that one malformed element
//! or a cut at the end does not lose the good calls; and call objects joined by commas with
//! no list around them.

use serde_json::Value;

use crate::calls::{call_from_object, calls_from_owned};
use crate::engine::{Ctx, Hit};
use crate::json_at::{json_at, JsonAt};
use crate::json_fmts::skip_close;
use crate::scan::{parse_json_html_escaped, parse_json_lenient, skip_ws, End};
use crate::{Family, ParsedCall};

/// A JSON list of call objects read one element at a time.
pub(crate) struct ListCalls {
    /// The elements that are complete call objects, in order.
    pub(crate) calls: Vec<ParsedCall>,
    /// Elements that are not valid JSON or not a call.
    pub(crate) bad: usize,
    /// The offset after `]`; `None` when the input ends inside the list.
    pub(crate) end: Option<usize>,
}

impl ListCalls {
    /// The hit for this list: a cut list keeps the calls completed before the cut.
    pub(crate) fn into_hit(self, start: usize, len: usize, fam: Family) -> Hit {
        let mut h = match self.end {
            Some(e) => Hit::new(start, e, fam, self.calls),
            None => Hit::cut_after(start, len, fam, self.calls),
        };
        if self.bad > 0 {
            h.errors.push(format!(
                "{} tool call(s) in the list are not valid",
                self.bad
            ));
        }
        h
    }
}

/// Read the list of call objects at `j` element by element, so that one malformed element
/// or a cut at the end does not lose the good calls. `None` when it is not a list of
/// objects.
pub(crate) fn list_calls(ctx: &Ctx, t: &str, j: usize, fam: Family) -> Option<ListCalls> {
    let b = t.as_bytes();
    let j = skip_ws(b, j);
    if b.get(j) != Some(&b'[') {
        return None;
    }
    let mut out = ListCalls {
        calls: Vec::new(),
        bad: 0,
        end: None,
    };
    let mut k = j + 1;
    loop {
        k = skip_ws(b, k);
        match b.get(k) {
            None => return Some(out),
            Some(b']') => {
                out.end = Some(k + 1);
                return Some(out);
            }
            Some(b'{') => {}
            Some(_) => return None,
        }
        let end = ctx.memo.borrow_mut().end(t, k);
        let e = match end {
            End::Complete(e) => e,
            End::Incomplete => return Some(out),
            End::Invalid => return None,
        };
        let item = &t[k..e];
        match parse_json_lenient(item).or_else(|| parse_json_html_escaped(item)) {
            Some(Value::Object(m)) => match call_from_object(m, ctx.rules(fam)) {
                Some(c) => out.calls.push(c),
                None => out.bad += 1,
            },
            _ => out.bad += 1,
        }
        k = skip_ws(b, e);
        match b.get(k) {
            Some(b',') => k += 1,
            // The comma between two call objects is missing: the next one starts here.
            Some(b'{') => {}
            Some(b']') => {
                out.end = Some(k + 1);
                return Some(out);
            }
            None => return Some(out),
            Some(_) => return None,
        }
    }
}

/// A JSON list at `j` that did not parse whole (cut off, or an element that is not a
/// call) read element by element, closing with `close`; `None` when it is not a list of
/// objects.
pub(crate) fn list_hit(
    ctx: &Ctx,
    t: &str,
    start: usize,
    j: usize,
    close: &str,
    fam: Family,
) -> Option<Hit> {
    let list = list_calls(ctx, t, j, fam)?;
    let end = list.end.map(|e| skip_close(t, e, close));
    let mut h = list.into_hit(start, t.len(), fam);
    if let Some(e) = end {
        h.end = e;
    }
    Some(h)
}

/// Call objects joined by commas with no list around them (`{…}, {…}`, Phi-4-mini's parallel
/// calls): each one after `e` that is a call is added to `calls`; returns the end of the last.
pub(crate) fn joined_calls(
    ctx: &Ctx,
    t: &str,
    mut e: usize,
    family: Family,
    calls: &mut Vec<ParsedCall>,
) -> usize {
    loop {
        let comma = skip_ws(t.as_bytes(), e);
        if !t[comma..].starts_with(',') {
            return e;
        }
        let JsonAt::Value(v @ Value::Object(_), next) = json_at(ctx, t, comma + 1) else {
            return e;
        };
        match calls_from_owned(v, ctx.rules(family)) {
            Some(more) => calls.extend(more),
            None => return e,
        }
        e = next;
    }
}
