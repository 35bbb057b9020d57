//! `task_complete{summary}`: the model says it is done. The call echoes the summary in a
//! result that ends the run ([`ToolResult::ends_run`]).

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

use super::{schema, str_arg};
use crate::registry::{Tool, ToolContext, ToolResult};

/// The `task_complete` tool.
pub(crate) struct TaskComplete;

impl Tool for TaskComplete {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "task_complete".into(),
            description: "Call this once the task is done, with a short summary of what you did."
                .into(),
            parameters: schema(
                json!({"summary": {"type": "string", "description": "What was done"}}),
                &["summary"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, _ctx: &ToolContext) -> ToolResult {
        match str_arg(args, "summary") {
            Ok(summary) => ToolResult::ends_run(summary),
            Err(e) => ToolResult::err(e),
        }
    }
}
