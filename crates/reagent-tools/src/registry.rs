//! The [`Tool`] trait, tool results, and the registry keyed by tool name.

use std::collections::BTreeMap;
use std::sync::Arc;

use reagent_protocol::{CancellationToken, ToolSpec};
use serde_json::{json, Value};

use crate::workspace::Workspace;
use crate::ToolsConfig;

/// What a tool returns. Serialized for the model by [`ToolResult::to_json`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResult {
    /// Success: `{"ok": true, "output": ...}`.
    Ok {
        /// The output shown to the model.
        output: Value,
        /// Workspace-relative paths the call created or modified.
        changed: Vec<String>,
    },
    /// Failure answered to the model: `{"ok": false, "error": ...}`.
    Err {
        /// A precise, actionable message.
        error: String,
    },
}

impl ToolResult {
    /// A success with no file changes.
    pub fn ok(output: impl Into<Value>) -> Self {
        ToolResult::Ok {
            output: output.into(),
            changed: Vec::new(),
        }
    }

    /// A success that created or modified the workspace-relative paths `changed`.
    pub fn ok_changed(output: impl Into<Value>, changed: Vec<String>) -> Self {
        ToolResult::Ok {
            output: output.into(),
            changed,
        }
    }

    /// A failure.
    pub fn err(error: impl Into<String>) -> Self {
        ToolResult::Err {
            error: error.into(),
        }
    }

    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, ToolResult::Ok { .. })
    }

    /// A result read back from [`ToolResult::to_json`]'s form (a recorded result); the files
    /// it changed are not part of that form and come back empty.
    pub fn from_json(value: &Value) -> Self {
        match value.get("ok").and_then(Value::as_bool) {
            Some(true) => ToolResult::ok(value.get("output").cloned().unwrap_or(Value::Null)),
            _ => ToolResult::err(
                value
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
        }
    }

    /// The JSON the model sees.
    pub fn to_json(&self) -> Value {
        match self {
            ToolResult::Ok { output, .. } => json!({"ok": true, "output": output}),
            ToolResult::Err { error } => json!({"ok": false, "error": error}),
        }
    }
}

/// Decides commands that match an `ask` rule. The CLI asks the person at the terminal; with
/// no approver, such commands are refused.
pub trait Approver: Send + Sync {
    /// Whether `command` may run. Called from a blocking thread; may wait for a person.
    fn approve(&self, command: &str) -> bool;
}

/// Everything a tool call may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The confined workspace.
    pub workspace: Arc<Workspace>,
    /// Fires when the run is cancelled; long tools (run_command) stop early.
    pub cancel: CancellationToken,
    /// Who approves commands matching an `ask` rule (none: they are refused).
    pub approver: Option<Arc<dyn Approver>>,
}

impl ToolContext {
    /// A context over `workspace` with a fresh, unfired cancellation token and no approver.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        ToolContext {
            workspace,
            cancel: CancellationToken::new(),
            approver: None,
        }
    }
}

/// One tool.
pub trait Tool: Send + Sync {
    /// Name, description and JSON Schema of the arguments.
    fn spec(&self) -> ToolSpec;
    /// Whether the tool writes files or runs commands (disabled in read-only mode).
    fn mutates(&self) -> bool;
    /// Run the tool. Arguments have been coerced and validated against [`Tool::spec`].
    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult;
    /// Whether this call is bounded, quick work on the workspace (no process, no network, a
    /// capped amount of file data) that the loop may run on its own task instead of a blocking
    /// thread, saving two thread hand-offs per call. Default: no.
    fn is_quick(&self, _args: &Value) -> bool {
        false
    }
}

/// Tools keyed by name, iterated in a stable order (so the tool schema the model sees never
/// changes between iterations, which keeps the server's prompt cache valid).
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add (or replace) a tool.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.spec().name, tool);
    }

    /// Remove a tool by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Tool names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// Specs of every tool, sorted by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|t| t.spec()).collect()
    }

    /// Every built-in tool, minus those named in `config.disabled` and, when
    /// `config.read_only`, minus every tool that mutates (writes, edits, commands).
    pub fn workspace_tools(config: &ToolsConfig) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for tool in crate::tools::builtin(config) {
            let name = tool.spec().name;
            if config.disabled.contains(&name) || (config.read_only && tool.mutates()) {
                continue;
            }
            registry.register(tool);
        }
        registry
    }

    /// Call the tool `name`. An unknown name is answered with an error listing the valid
    /// names; a tool that panics is answered with an error instead of unwinding further.
    pub fn call(&self, name: &str, args: &Value, ctx: &ToolContext) -> ToolResult {
        let Some(tool) = self.tools.get(name) else {
            return ToolResult::err(format!(
                "unknown tool `{}`; valid tools: {}",
                crate::workspace::escape_str(crate::tools::truncate_str(name, 200)),
                self.names().join(", ")
            ));
        };
        call_catching_panics(tool.as_ref(), name, args, ctx)
    }
}

/// Run `tool` (registered as `name`); a panic becomes an error result instead of unwinding
/// into the caller. The one place where tool panics are caught, for the registry and the
/// agent loop alike.
pub fn call_catching_panics(
    tool: &dyn Tool,
    name: &str,
    args: &Value,
    ctx: &ToolContext,
) -> ToolResult {
    let run = std::panic::AssertUnwindSafe(|| tool.call(args, ctx));
    std::panic::catch_unwind(run).unwrap_or_else(|_| {
        ToolResult::err(format!("the tool `{name}` failed internally (it panicked)"))
    })
}

/// Call `name` in `registry` (see [`ToolRegistry::call`]).
pub fn call_tool(
    registry: &ToolRegistry,
    name: &str,
    args: &Value,
    ctx: &ToolContext,
) -> ToolResult {
    registry.call(name, args, ctx)
}
