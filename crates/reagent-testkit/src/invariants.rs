//! Request invariants every well-behaved client keeps, checked on the recorded chat requests:
//! the conversation is not empty, and every tool result answers a tool call made earlier in it
//! (Ollama: `tool_name` = an earlier call's name; OpenAI: `tool_call_id` = an earlier call's
//! `id`; Anthropic: `tool_use_id` = an earlier `tool_use` block's `id`; Gemini:
//! `functionResponse.name` = an earlier `functionCall.name`).

use serde_json::Value;

use crate::server::Wire;

/// A tool call made, or a tool result given, identified the way the wire links them.
enum Link {
    Call(String),
    Result(String),
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or("").to_owned()
}

/// The calls and results of one message, in order.
fn links(wire: Wire, m: &Value) -> Vec<Link> {
    let list = |k: &str| {
        m.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    match wire {
        Wire::Ollama | Wire::OpenAi => {
            let mut out: Vec<Link> = list("tool_calls")
                .iter()
                .map(|c| {
                    Link::Call(text(if wire == Wire::Ollama {
                        c.pointer("/function/name")
                    } else {
                        c.get("id")
                    }))
                })
                .collect();
            if m.get("role").and_then(Value::as_str) == Some("tool") {
                let key = if wire == Wire::Ollama {
                    "tool_name"
                } else {
                    "tool_call_id"
                };
                out.push(Link::Result(text(m.get(key))));
            }
            out
        }
        Wire::Anthropic => list("content")
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("tool_use") => Some(Link::Call(text(b.get("id")))),
                Some("tool_result") => Some(Link::Result(text(b.get("tool_use_id")))),
                _ => None,
            })
            .collect(),
        Wire::Gemini => list("parts")
            .iter()
            .filter_map(|p| {
                if let Some(c) = p.get("functionCall") {
                    Some(Link::Call(text(c.get("name"))))
                } else {
                    p.get("functionResponse")
                        .map(|r| Link::Result(text(r.get("name"))))
                }
            })
            .collect(),
    }
}

/// Problems with one request body, as sentences naming the message index.
pub(crate) fn check(wire: Wire, body: &Value) -> Vec<String> {
    let key = if wire == Wire::Gemini {
        "contents"
    } else {
        "messages"
    };
    let Some(msgs) = body.get(key).and_then(Value::as_array) else {
        return vec![format!("the request has no `{key}` array")];
    };
    if msgs.is_empty() {
        return vec![format!("`{key}` is empty")];
    }
    let mut calls = Vec::new();
    let mut problems = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        for link in links(wire, m) {
            match link {
                Link::Call(id) => calls.push(id),
                Link::Result(id) if !calls.contains(&id) => problems.push(format!(
                    "{key}[{i}]: the tool result for '{id}' answers no earlier tool call"
                )),
                Link::Result(_) => {}
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_must_answer_earlier_calls() {
        let ok = json!({"messages": [
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {}}}]},
            {"role": "tool", "content": "x", "tool_name": "read_file"}]});
        assert!(check(Wire::Ollama, &ok).is_empty());
        let bad = json!({"messages": [{"role": "tool", "content": "x", "tool_call_id": "call_1"}]});
        assert_eq!(
            check(Wire::OpenAi, &bad),
            vec!["messages[0]: the tool result for 'call_1' answers no earlier tool call"]
        );
        let anthropic = json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": ""}]}]});
        assert_eq!(check(Wire::Anthropic, &anthropic).len(), 1);
        let gemini = json!({"contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]});
        assert!(check(Wire::Gemini, &gemini).is_empty());
        assert_eq!(
            check(Wire::Gemini, &json!({"contents": []})),
            vec!["`contents` is empty"]
        );
    }
}
