//! The seed-style loop's reply reading: three layers and no more. Native tool calls as the
//! server gives them; else one JSON object in the text (`{"name", "arguments"}`); else
//! `<tool_call>{...}</tool_call>` tags. Implemented as a provider wrapper that turns calls found
//! in the text into native calls, so the loop takes them as the first layer.

use std::sync::Arc;

use async_trait::async_trait;
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, ModelInfo, Provider, ProviderError, SignalSink,
    ToolCall,
};
use serde_json::Value;

/// A provider whose replies are read the seed loop's way: a call written in the text as a JSON
/// object or in `<tool_call>` tags becomes a native call, and its text is removed from the
/// content.
///
/// Limit: reagent's own text parser still looks at replies in which these layers found no call;
/// a call it finds there shows in the run's `parse_layers` as a layer other than `native`.
pub struct SeedParse {
    inner: Arc<dyn Provider>,
}

impl SeedParse {
    /// Wrap `inner`.
    pub fn new(inner: Arc<dyn Provider>) -> Self {
        SeedParse { inner }
    }
}

#[async_trait]
impl Provider for SeedParse {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        self.inner.model_info(model).await
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        let mut response = self.inner.chat(request, sink, cancel).await?;
        if response.message.tool_calls.is_empty() {
            if let Some((calls, rest)) = seed_parse(&response.message.content) {
                response.message.tool_calls = calls;
                response.message.content = rest;
            }
        }
        Ok(response)
    }
}

/// The seed loop's text layers: the calls in `text` and the text left around them, or `None`
/// when there are none.
pub fn seed_parse(text: &str) -> Option<(Vec<ToolCall>, String)> {
    if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}')) {
        if start < end {
            if let Some(call) = call_from_json(&text[start..=end]) {
                let rest = format!("{}{}", &text[..start], &text[end + 1..]);
                return Some((vec![call], rest.trim().to_owned()));
            }
        }
    }
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut tail = text;
    while let Some(open) = tail.find("<tool_call>") {
        let body_start = open + "<tool_call>".len();
        let Some(len) = tail[body_start..].find("</tool_call>") else {
            break;
        };
        if let Some(call) = call_from_json(&tail[body_start..body_start + len]) {
            calls.push(call);
        }
        rest.push_str(&tail[..open]);
        tail = &tail[body_start + len + "</tool_call>".len()..];
    }
    if calls.is_empty() {
        return None;
    }
    rest.push_str(tail);
    for (i, call) in calls.iter_mut().enumerate() {
        call.id = format!("call_{}", i + 1);
    }
    Some((calls, rest.trim().to_owned()))
}

/// `{"name": ..., "arguments": {...}}` (or `"parameters"`), arguments possibly a JSON string.
fn call_from_json(text: &str) -> Option<ToolCall> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let name = value.get("name")?.as_str()?.to_owned();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(s)) => serde_json::from_str(s).ok()?,
        Some(v @ Value::Object(_)) => v.clone(),
        None => Value::Object(Default::default()),
        Some(_) => return None,
    };
    Some(ToolCall {
        id: "call_1".to_owned(),
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_json_object_in_the_text_is_a_call() {
        let (calls, rest) =
            seed_parse("Sure: {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}")
                .unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "read_file");
        assert_eq!(calls[0].arguments, json!({"path": "a"}));
        assert_eq!(rest, "Sure:");
        let (calls, _) =
            seed_parse("{\"name\": \"f\", \"parameters\": \"{\\\"x\\\": 1}\"}").unwrap();
        assert_eq!(calls[0].arguments, json!({"x": 1}));
    }

    #[test]
    fn tool_call_tags_are_calls() {
        let text = "a <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call> b \
                    <tool_call>{\"name\": \"g\", \"arguments\": {\"k\": 2}}</tool_call>";
        let (calls, rest) = seed_parse(text).unwrap();
        assert_eq!(
            calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["f", "g"]
        );
        assert_eq!(calls[1].id, "call_2");
        assert_eq!(rest, "a  b");
    }

    #[test]
    fn other_formats_are_not_calls_here() {
        for text in [
            "The answer is 42.",
            "[read_file(path='a')]",
            "{\"final\": 1}",
            "<tool_call>{\"name\": \"f\"",
        ] {
            assert_eq!(seed_parse(text), None, "{text}");
        }
    }
}
