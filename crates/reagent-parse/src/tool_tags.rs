//! Calls written as XML whose tag is the tool's name and whose child elements are the
//! arguments, as Cline, Roo Code and agents prompted like them ask for:
//!
//! ```text
//! <read_file>
//! <path>src/main.rs</path>
//! </read_file>
//! ```
//!
//! Only a tag naming an offered tool opens a call (any other tag is text, as in HTML), and
//! it must be followed by an argument element or its own closer. A value is raw text up to
//! its closer (the first one followed by another argument or the call's closer, so a file's
//! content may quote the tag), typed by the tool's schema (a string stays as written); one
//! line break at each end of it is layout. A call whose closer was lost after complete arguments is read,
//! as for GLM; a call cut off inside an argument is never guessed. A body of plain text
//! (`<shell>ls</shell>`, gptme's form) is the value of the tool's one string parameter, when its
//! schema names exactly one.

use serde_json::{Map, Value};

use crate::engine::{Ctx, Hit};
use crate::scan::skip_ws;
use crate::Family;

const FAMILY: Family = Family::ToolTags;

/// The call opened by the offered tool's tag at `t[i..]` (which starts with `<`); inside a
/// markdown code fence the tag is an example, text (as Cline reads it).
pub(crate) fn try_lt(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let hit = call_at(t, i, ctx)?;
    (!ctx.memo.borrow_mut().in_fence(t, i)).then_some(hit)
}

fn call_at(t: &str, i: usize, ctx: &Ctx) -> Option<Hit> {
    let after_lt = &t[i + 1..];
    let name = ctx
        .opts
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .find(|name| {
            after_lt
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with('>') || r.trim_start().starts_with("/>"))
        })?;
    // `<NAME/>` (or `<NAME />`): a call with no arguments.
    if let Some(r) = after_lt[name.len()..].trim_start().strip_prefix("/>") {
        let end = t.len() - r.len();
        return Some(Hit::one_call(
            i,
            end,
            FAMILY,
            name,
            Value::Object(Map::new()),
        ));
    }
    let close = format!("</{name}>");
    let mut p = i + 1 + name.len() + 1;
    let mut args = Map::new();
    let mut repeated = Vec::new();
    loop {
        p = skip_ws(t.as_bytes(), p);
        let rest = &t[p..];
        if rest.starts_with(close.as_str()) {
            let end = p + close.len();
            return Some(Hit::one_call(i, end, FAMILY, name, Value::Object(args)));
        }
        if rest.is_empty() || close.starts_with(rest) {
            // The output ends after complete arguments (or inside the call's closer).
            return Some(Hit::one_call(i, t.len(), FAMILY, name, Value::Object(args)));
        }
        let Some(key) = argument_key(rest) else {
            if args.is_empty() {
                // A body of plain text for a tool that takes one string, or else the tag in
                // prose (`<read_file> is the tool to use`).
                return plain_body_call(t, i, &close, name, ctx);
            }
            // Text after complete arguments: the call's closer was lost there.
            return Some(Hit::one_call(i, p, FAMILY, name, Value::Object(args)));
        };
        let Some(key) = key else {
            // Cut off inside an argument's tag.
            return Some(Hit::truncated(i, t.len(), FAMILY));
        };
        let value_start = p + key.len() + 2;
        let key_close = format!("</{key}>");
        let Some(len) = value_len(&t[value_start..], &key_close, &close) else {
            return Some(Hit::truncated(i, t.len(), FAMILY));
        };
        let raw = crate::scan::without_layout_newlines(&t[value_start..value_start + len]);
        let schema = crate::schema::property_schema(&ctx.opts.tools, name, key);
        let array = schema.is_some_and(|s| s.get("type").is_some_and(|t| t == "array"));
        let items = schema.and_then(|s| s.get("items"));
        let value = match array.then(|| item_list(raw, items)).flatten() {
            Some(list) => list,
            None => crate::xml_fmts::typed(ctx, FAMILY, name, key, raw),
        };
        // A parameter the schema makes an array, given again: its next element.
        if array {
            crate::xml_fmts::insert_repeatable(&mut args, &mut repeated, key.to_string(), value);
        } else {
            args.insert(key.to_string(), value);
        }
        p = value_start + len + key_close.len();
    }
}

/// An array value written as `<item>` elements (attributes allowed), each typed by the
/// schema's `items`; `None` when the text is anything else.
fn item_list(raw: &str, items: Option<&Value>) -> Option<Value> {
    let mut rest = raw.trim_start();
    if !rest.starts_with("<item") {
        return None;
    }
    let mut list = Vec::new();
    while !rest.is_empty() {
        let after = rest.strip_prefix("<item")?;
        if !after.starts_with(['>', ' ']) {
            return None;
        }
        let gt = after.find('>')?;
        let body = &after[gt + 1..];
        let end = body.find("</item>")?;
        list.push(crate::schema::type_raw(body[..end].trim(), items, true));
        rest = body[end + "</item>".len()..].trim_start();
    }
    Some(Value::Array(list))
}

/// `<NAME>text</NAME>` for a tool whose one parameter takes a string: the text (its layout
/// line breaks dropped) is that parameter. The closer must come; the text may not be empty.
fn plain_body_call(t: &str, i: usize, close: &str, name: &str, ctx: &Ctx) -> Option<Hit> {
    let key = crate::schema::sole_string_property(&ctx.opts.tools, name)?;
    let body_start = i + name.len() + 2;
    let end = ctx.memo.borrow_mut().next_closer(t, close, body_start)?;
    let text = crate::scan::without_layout_newlines(&t[body_start..end]);
    if text.trim().is_empty() {
        return None;
    }
    let mut args = Map::new();
    args.insert(key.to_owned(), Value::String(text.to_owned()));
    Some(Hit::one_call(
        i,
        end + close.len(),
        FAMILY,
        name,
        Value::Object(args),
    ))
}

/// The length of the value at the start of `rest`, up to its closer `key_close`: the first
/// one followed by another argument, the call's closer `call_close` or the end of the
/// output (a file's content may hold the closer itself); the first one when none is.
fn value_len(rest: &str, key_close: &str, call_close: &str) -> Option<usize> {
    let mut closers = rest.match_indices(key_close).map(|(p, _)| p);
    let first = closers.next()?;
    let ends_value = |p: usize| {
        let after = rest[p + key_close.len()..].trim_start();
        after.is_empty() || after.starts_with(call_close) || argument_key(after).is_some()
    };
    if ends_value(first) {
        return Some(first);
    }
    // A bounded look (the closer quoted a few times at most): linear work on any input.
    Some(closers.take(64).find(|&p| ends_value(p)).unwrap_or(first))
}

/// The argument element opening `rest`: `Some(Some(key))` for `<key>`, `Some(None)` when the
/// output ends inside such a tag, `None` when `rest` opens no argument.
fn argument_key(rest: &str) -> Option<Option<&str>> {
    let inner = rest.strip_prefix('<')?;
    let len = inner
        .find(|c: char| !crate::scan::is_name_char(c))
        .unwrap_or(inner.len());
    let key = &inner[..len];
    if key.is_empty() || key.len() > 64 {
        return None;
    }
    match inner[len..].chars().next() {
        Some('>') => Some(Some(key)),
        None => Some(None),
        Some(_) => None,
    }
}
