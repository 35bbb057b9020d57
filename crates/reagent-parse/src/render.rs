//! Renderings of a [`Parsed`] for `reagent parse` (human text or JSON).

use serde_json::{json, Value};

use crate::Parsed;

/// Human-readable rendering: content, reasoning, each call pretty-printed, format,
/// truncation and errors.
pub fn render_human(p: &Parsed) -> String {
    let mut out = String::new();
    if let Some(r) = &p.reasoning {
        out.push_str("reasoning:\n");
        for line in r.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if let Some(c) = &p.content {
        out.push_str("content:\n");
        for line in c.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    for (n, call) in p.calls.iter().enumerate() {
        let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
        out.push_str(&format!("call {}: {}", n + 1, call.name));
        if let Some(id) = &call.id {
            out.push_str(&format!(" (id {id})"));
        }
        out.push('\n');
        for line in args.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
    }
    match p.format {
        Some(f) => out.push_str(&format!("format: {f}\n")),
        None => out.push_str("format: none\n"),
    }
    if p.truncated {
        out.push_str("truncated: yes (a call was cut off; nothing was guessed)\n");
    }
    for e in &p.errors {
        out.push_str(&format!("error: {e}\n"));
    }
    out
}

/// JSON rendering: `{"content","reasoning","calls":[{"name","arguments"}],"format","truncated"}`
/// (calls carry `"id"` when the format gave one; `"errors"` is added when non-empty).
pub fn render_json(p: &Parsed) -> Value {
    let calls: Vec<Value> = p
        .calls
        .iter()
        .map(|c| {
            let mut v = json!({"name": c.name, "arguments": c.arguments});
            if let (Some(id), Value::Object(m)) = (&c.id, &mut v) {
                m.insert("id".to_string(), json!(id));
            }
            v
        })
        .collect();
    let mut v = json!({
        "content": p.content,
        "reasoning": p.reasoning,
        "calls": calls,
        "format": p.format.map(|f| f.name()),
        "truncated": p.truncated,
    });
    if !p.errors.is_empty() {
        if let Value::Object(m) = &mut v {
            m.insert("errors".to_string(), json!(p.errors));
        }
    }
    v
}
