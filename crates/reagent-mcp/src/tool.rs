//! A server's tool as one of reagent's tools ([`McpTool`]): namespaced name, the server's
//! schema, and its result (text, images as a note, resources) as a capped [`ToolResult`].

use std::sync::Arc;

use reagent_protocol::ToolSpec;
use reagent_tools::{Approval, AsyncTool, ToolContext, ToolResult, Verdict};
use rmcp::model::{CallToolResult, Tool as McpToolInfo};
use serde_json::{json, Value};

use crate::supervisor::Supervised;

/// The most bytes of one MCP result the model sees (as `read_file`'s page, 256 KiB).
pub const RESULT_MAX_BYTES: usize = 256 * 1024;

/// Separates the server's name from its tool's name (`files__read_text_file`).
pub const SEPARATOR: &str = "__";

/// One tool of one server.
pub(crate) struct McpTool {
    server: Arc<Supervised>,
    /// The tool's own name on its server.
    remote: String,
    spec: ToolSpec,
    mutates: bool,
    /// Whether every call needs the run's approver (the server's `approval` settings).
    asks: bool,
}

impl McpTool {
    pub(crate) fn new(server: Arc<Supervised>, info: &McpToolInfo) -> Self {
        let spec = spec_of(&server.spec.name, info);
        let read_only = info
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let asks = server.spec.approval.asks(&info.name, read_only);
        McpTool {
            server,
            remote: info.name.to_string(),
            spec,
            mutates: !read_only,
            asks,
        }
    }

    /// `None` when the call may go ahead: it needs no approval, or the run's approver allowed
    /// it; otherwise the error the model sees.
    async fn refusal(&self, args: &Value, ctx: &ToolContext) -> Option<String> {
        if !self.asks {
            return None;
        }
        let server = &self.server.spec.name;
        let Some(approver) = ctx.approver.clone() else {
            return Some(format!(
                "tool not called: the MCP server `{server}`'s calls of `{}` need the user's \
                 approval ([mcp.servers.{server}] approval settings) and no one can approve it \
                 in this run",
                self.remote
            ));
        };
        let request = Approval::ToolCall {
            tool: self.spec.name.clone(),
            arguments: args.to_string(),
        };
        // An approver may wait for a person: keep it off the runtime's threads.
        let verdict = tokio::task::spawn_blocking(move || approver.approve(&request))
            .await
            .unwrap_or(Verdict::DENY);
        verdict.refusal("tool not called")
    }
}

#[async_trait::async_trait]
impl AsyncTool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn mutates(&self) -> bool {
        self.mutates
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> ToolResult {
        if let Some(why) = self.refusal(&args, &ctx).await {
            return ToolResult::err(why);
        }
        match self.server.call(&self.remote, args, &ctx.cancel).await {
            Ok(result) => convert(&result),
            Err(error) => ToolResult::err(error),
        }
    }
}

/// The name the model sees: `server__tool`, with characters outside `[A-Za-z0-9_-]` as `_`
/// (what every provider accepts).
pub fn namespaced(server: &str, tool: &str) -> String {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{server}{SEPARATOR}{clean}")
}

/// The spec of `info` on `server`: namespaced name, description, and the input schema (an
/// object schema, whatever the server sent).
pub(crate) fn spec_of(server: &str, info: &McpToolInfo) -> ToolSpec {
    let mut parameters = Value::Object((*info.input_schema).clone());
    if parameters.get("type").is_none() {
        parameters["type"] = json!("object");
    }
    if parameters.get("properties").is_none() {
        parameters["properties"] = json!({});
    }
    // Draft markers confuse no validator reagent uses, but cost small models tokens.
    if let Some(map) = parameters.as_object_mut() {
        map.remove("$schema");
    }
    let description = info
        .description
        .as_deref()
        .or(info.title.as_deref())
        .unwrap_or("")
        .to_owned();
    ToolSpec {
        name: namespaced(server, &info.name),
        description,
        parameters,
    }
}

/// A server's result as a tool result: the text of its content blocks (images and binary
/// resources as a note), its structured content when it sent no blocks; an error when it
/// flagged one; capped at [`RESULT_MAX_BYTES`].
pub fn convert(result: &CallToolResult) -> ToolResult {
    let blocks = serde_json::to_value(&result.content).unwrap_or(Value::Null);
    let mut parts: Vec<String> = blocks
        .as_array()
        .map(|a| a.iter().map(block_text).collect())
        .unwrap_or_default();
    if parts.is_empty() {
        if let Some(structured) = &result.structured_content {
            parts.push(structured.to_string());
        }
    }
    let text = cap(parts.join("\n"));
    if result.is_error == Some(true) {
        let text = if text.is_empty() {
            "the tool failed without a message".to_owned()
        } else {
            text
        };
        ToolResult::err(text)
    } else {
        ToolResult::ok(text)
    }
}

/// One content block as text.
fn block_text(block: &Value) -> String {
    let s = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or("");
    let base64_bytes = |data: &str| data.len() / 4 * 3;
    match s("type") {
        "text" => s("text").to_owned(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes, not shown]",
            s("type"),
            s("mimeType"),
            base64_bytes(s("data"))
        ),
        "resource" => {
            let r = block.get("resource").cloned().unwrap_or(Value::Null);
            let rs = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or("");
            match r.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {}]\n{text}", rs("uri")),
                None => format!(
                    "[resource {}: {}, {} bytes, not shown]",
                    rs("uri"),
                    rs("mimeType"),
                    base64_bytes(rs("blob"))
                ),
            }
        }
        "resource_link" => format!("[resource link {} ({})]", s("uri"), s("name")),
        other => format!("[{other} content, not shown]"),
    }
}

/// `text` cut to [`RESULT_MAX_BYTES`] on a character boundary, with a note saying so.
fn cap(text: String) -> String {
    if text.len() <= RESULT_MAX_BYTES {
        return text;
    }
    let mut end = RESULT_MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut: {} more bytes not shown]",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn blocks_become_text_and_notes() {
        let r = convert(&result(json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAAAAAA", "mimeType": "application/pdf"}}
        ]})));
        assert_eq!(
            r,
            ToolResult::ok(
                "hello\n[image image/png, 3 bytes, not shown]\n[resource file:///a]\nA\n\
                 [resource file:///b: application/pdf, 6 bytes, not shown]"
            )
        );
    }

    #[test]
    fn errors_structured_content_and_the_cap() {
        let r = convert(&result(
            json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
        ));
        assert_eq!(r, ToolResult::err("no"));
        let r = convert(&result(
            json!({"content": [], "structuredContent": {"n": 3}}),
        ));
        assert_eq!(r, ToolResult::ok("{\"n\":3}"));
        let big = "é".repeat(RESULT_MAX_BYTES);
        let r = convert(&result(json!({"content": [{"type": "text", "text": big}]})));
        let ToolResult::Ok { output, .. } = r else {
            panic!("{r:?}")
        };
        let text = output.as_str().unwrap();
        assert!(text.len() < RESULT_MAX_BYTES + 100);
        assert!(text.ends_with(&format!("[cut: {} more bytes not shown]", RESULT_MAX_BYTES)));
    }

    #[test]
    fn names_are_namespaced_and_clean() {
        assert_eq!(
            namespaced("files", "read_text_file"),
            "files__read_text_file"
        );
        assert_eq!(namespaced("t", "issues.list/all"), "t__issues_list_all");
    }
}
