//! `run_command{command, timeout_ms?}` (placeholder until `reagent-sandbox` lands).

use std::sync::Arc;

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

use super::schema;
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::ToolsConfig;

/// The `run_command` tool.
pub(crate) struct RunCommand {
    _cfg: Arc<ToolsConfig>,
}

impl RunCommand {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        RunCommand { _cfg: cfg }
    }
}

impl Tool for RunCommand {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "run_command".into(),
            description: "Run a shell command in the workspace folder and return its output."
                .into(),
            parameters: schema(
                json!({
                    "command": {"type": "string", "description": "Shell command, e.g. cargo test"},
                    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Time limit in milliseconds (default 60000)"}
                }),
                &["command"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        true
    }

    fn call(&self, _args: &Value, _ctx: &ToolContext) -> ToolResult {
        ToolResult::err("run_command is not available yet")
    }
}
