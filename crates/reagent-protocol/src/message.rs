//! Conversation types: messages, tool calls and tool specifications.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the runtime.
    System,
    /// The task, nudges and operator input.
    User,
    /// The model.
    Assistant,
    /// A tool result fed back to the model.
    Tool,
}

impl Role {
    /// The lowercase name used by every chat API (`"system"`, `"user"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    /// Call id: the server's when it gave one, otherwise one reagent made up (`call_N`).
    pub id: String,
    /// Tool name as the model wrote it.
    pub name: String,
    /// Arguments, normally a JSON object.
    pub arguments: Value,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// Author.
    pub role: Role,
    /// Visible text (for tool messages: the JSON result).
    pub content: String,
    /// Reasoning kept apart from content (`thinking`, `<think>` blocks), assistant only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool calls, assistant only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For tool messages: the tool that produced this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// For tool messages: the id of the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Message {
            role,
            content: content.into(),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_name: None,
            tool_call_id: None,
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message without tool calls.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A tool result answering `call`.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Message {
            tool_name: Some(call.name.clone()),
            tool_call_id: Some(call.id.clone()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// A tool as offered to the model: name, description and a JSON Schema for its arguments
/// (the Ollama/OpenAI "function" format).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Tool name, e.g. `read_file`.
    pub name: String,
    /// One or two sentences for the model.
    pub description: String,
    /// JSON Schema (`{"type": "object", "properties": ..., "required": [...]}`).
    pub parameters: Value,
}

impl ToolSpec {
    /// The OpenAI/Ollama wire form: `{"type": "function", "function": {name, description, parameters}}`.
    pub fn to_function_json(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}
