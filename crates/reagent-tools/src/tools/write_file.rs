//! `write_file{path, content}`: create or replace a file (atomically, parents created).

use std::sync::Arc;

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

use super::{schema, str_arg};
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::ToolsConfig;

/// The `write_file` tool.
pub(crate) struct WriteFile {
    cfg: Arc<ToolsConfig>,
}

impl WriteFile {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        WriteFile { cfg }
    }
}

impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_file".into(),
            description: "Create a file, or replace all of its content. Missing folders are \
                          created. To change part of a file, use edit_file."
                .into(),
            parameters: schema(
                json!({
                    "path": {"type": "string", "description": "File path relative to the workspace"},
                    "content": {"type": "string", "description": "The complete new content"}
                }),
                &["path", "content"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        true
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        let (path, content) = match (str_arg(args, "path"), str_arg(args, "content")) {
            (Ok(p), Ok(c)) => (p, c),
            (Err(e), _) | (_, Err(e)) => return ToolResult::err(e),
        };
        if let Err(e) = ctx.approve_write(&self.cfg, path, None, content) {
            return ToolResult::err(e);
        }
        match ctx
            .workspace
            .write_file(path, content.as_bytes(), &self.cfg.write_policy())
        {
            Ok(done) => {
                let verb = if done.created { "created" } else { "overwrote" };
                ToolResult::ok_changed(
                    format!("{verb} {} ({} bytes)", done.path, done.bytes),
                    vec![done.path],
                )
            }
            Err(e) => ToolResult::err(e.to_string()),
        }
    }
}
