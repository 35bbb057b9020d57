//! The blocking [`Tool`] trait, tool results, the context of a call, and the registry keyed
//! by tool name (which holds [`AsyncTool`]s; blocking tools enter through [`BlockingTool`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use reagent_protocol::{CancellationToken, EventKind, ToolSpec};
use serde_json::{json, Value};

use crate::async_tool::{call_async_catching_panics, AsyncTool, BlockingTool};
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
        /// The call ends the run, with `output` (a string) as its answer (`task_complete`).
        /// The loop reads this value; it never checks a tool's name.
        ends_run: bool,
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
            ends_run: false,
        }
    }

    /// A success that ends the run with `answer` as its final answer.
    pub fn ends_run(answer: impl Into<String>) -> Self {
        ToolResult::Ok {
            output: Value::String(answer.into()),
            changed: Vec::new(),
            ends_run: true,
        }
    }

    /// The answer of a result that ends the run (see [`ToolResult::ends_run`]), else `None`.
    pub fn run_answer(&self) -> Option<&str> {
        match self {
            ToolResult::Ok {
                output,
                ends_run: true,
                ..
            } => Some(output.as_str().unwrap_or_default()),
            _ => None,
        }
    }

    /// A success that created or modified the workspace-relative paths `changed`.
    pub fn ok_changed(output: impl Into<Value>, changed: Vec<String>) -> Self {
        ToolResult::Ok {
            output: output.into(),
            changed,
            ends_run: false,
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
    /// it changed and whether it ended the run are not part of that form and come back empty
    /// and false.
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

/// What a tool asks a person to allow before it acts.
#[derive(Debug, Clone, PartialEq)]
pub enum Approval {
    /// A shell command that matches an `ask` rule.
    Command {
        /// The command line, as the model wrote it.
        command: String,
    },
    /// A change to a file, while writes need approval.
    Write {
        /// The file, relative to the workspace.
        path: String,
        /// The unified diff of the change, whole.
        diff: String,
    },
    /// A call to a tool whose every call needs approval (an MCP server's, when its config asks).
    ToolCall {
        /// The tool's name, as offered to the model.
        tool: String,
        /// Its arguments, as JSON.
        arguments: String,
    },
}

impl Approval {
    /// The request in one line: the command, `write PATH`, or `TOOL ARGUMENTS`.
    pub fn summary(&self) -> String {
        match self {
            Approval::Command { command } => command.clone(),
            Approval::Write { path, .. } => format!("write {path}"),
            Approval::ToolCall { tool, arguments } => format!("{tool} {arguments}"),
        }
    }

    /// The diff to show with it, for a write.
    pub fn diff(&self) -> Option<&str> {
        match self {
            Approval::Write { diff, .. } => Some(diff),
            _ => None,
        }
    }
}

/// A person's answer to an [`Approval`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead.
    Allow,
    /// Do not; the note, when given, is passed to the model with the refusal.
    Deny {
        /// What the person wants the model to know.
        note: Option<String>,
    },
}

impl Verdict {
    /// A denial without a note.
    pub const DENY: Verdict = Verdict::Deny { note: None };

    /// Whether the action may go ahead.
    pub fn allowed(&self) -> bool {
        matches!(self, Verdict::Allow)
    }

    /// The error a tool answers the model with when it was denied `what` (`None` if allowed).
    pub fn refusal(&self, what: &str) -> Option<String> {
        match self {
            Verdict::Allow => None,
            Verdict::Deny { note: None } => Some(format!("{what}: the user denied it")),
            Verdict::Deny { note: Some(note) } => {
                Some(format!("{what}: the user denied it and says: {note}"))
            }
        }
    }
}

/// Decides what needs a person's approval: commands that match an `ask` rule, writes while
/// writes need approval, calls of tools that ask. The CLI asks the person at the terminal; with
/// no approver, such actions are refused.
pub trait Approver: Send + Sync {
    /// Whether the action may go ahead. Called from a blocking thread; may wait for a person.
    fn approve(&self, request: &Approval) -> Verdict;
}

/// Where a tool may report events of its run (the agent loop's event sink).
pub trait ToolEvents: Send + Sync {
    /// Number, stamp and deliver one event of the run.
    fn emit(&self, kind: EventKind);
}

/// Everything a tool call may use besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The confined workspace.
    pub workspace: Arc<Workspace>,
    /// Fires when the run is cancelled; long tools (run_command, MCP calls) stop early.
    pub cancel: CancellationToken,
    /// Who approves commands matching an `ask` rule (none: they are refused).
    pub approver: Option<Arc<dyn Approver>>,
    /// The id of the run the call belongs to (empty outside a run).
    pub run_id: Arc<str>,
    /// The run's event sink (none outside a run).
    pub events: Option<Arc<dyn ToolEvents>>,
}

impl ToolContext {
    /// A context over `workspace` with a fresh, unfired cancellation token, no approver, no
    /// run id and no event sink.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        ToolContext {
            workspace,
            cancel: CancellationToken::new(),
            approver: None,
            run_id: Arc::from(""),
            events: None,
        }
    }

    /// When `config` says writes need approval ([`ToolsConfig::approve_writes`]), ask the
    /// approver to allow changing the file at `path` from `old` (`None`: its current content,
    /// read now; a missing file is empty) to `new`, showing the whole unified diff. A denial,
    /// or no approver, is the error the tool answers with (a denial's note included). A
    /// protected path is not asked about: the write policy refuses it anyway.
    pub fn approve_write(
        &self,
        config: &ToolsConfig,
        path: &str,
        old: Option<&str>,
        new: &str,
    ) -> Result<(), String> {
        if !config.approve_writes {
            return Ok(());
        }
        let shown = self
            .workspace
            .relative(path)
            .map_err(|e| e.to_string())?
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect::<std::path::PathBuf>()
            .to_string_lossy()
            .into_owned();
        let components: Vec<String> = shown.split('/').map(str::to_owned).collect();
        if config
            .write_policy()
            .protected
            .covering(&components)
            .is_some()
        {
            return Ok(());
        }
        let current;
        let old = match old {
            Some(old) => old,
            None => {
                current = self.current_text(path)?;
                &current
            }
        };
        let diff = similar::TextDiff::configure()
            .timeout(std::time::Duration::from_secs(2))
            .diff_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{shown}"), &format!("b/{shown}"))
            .to_string();
        let what = format!("writing {shown}");
        let Some(approver) = &self.approver else {
            return Err(format!(
                "{what} needs approval (writes are asked about) and no one can approve here"
            ));
        };
        let request = Approval::Write { path: shown, diff };
        match approver.approve(&request).refusal(&what) {
            None => Ok(()),
            Some(refusal) => Err(refusal),
        }
    }

    /// The text of the file at `path` for a write's diff: empty when it does not exist yet.
    fn current_text(&self, path: &str) -> Result<String, String> {
        use std::io::Read;
        let mut opened = match self.workspace.open_file(path) {
            Ok(opened) => opened,
            Err(crate::workspace::WorkspaceError::NotFound(_)) => return Ok(String::new()),
            Err(e) => return Err(e.to_string()),
        };
        let mut bytes = Vec::new();
        opened
            .file
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{path}: {e}"))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Two tools registered under one name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("two tools are named `{0}`; tool names must be unique")]
pub struct DuplicateTool(pub String);

/// One blocking tool (the built-ins). The registry runs it through [`BlockingTool`], on a
/// blocking thread unless [`Tool::is_quick`].
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
    tools: BTreeMap<String, Arc<dyn AsyncTool>>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a blocking tool (through [`BlockingTool`]). A second tool of one name is an error.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateTool> {
        self.register_async(Arc::new(BlockingTool::new(tool)))
    }

    /// Add an asynchronous tool. A second tool of one name is an error.
    pub fn register_async(&mut self, tool: Arc<dyn AsyncTool>) -> Result<(), DuplicateTool> {
        let name = tool.spec().name;
        if self.tools.contains_key(&name) {
            return Err(DuplicateTool(name));
        }
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Remove a tool by name; returns whether it was there.
    pub fn remove(&mut self, name: &str) -> bool {
        self.tools.remove(name).is_some()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn AsyncTool>> {
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
    /// `config.read_only`, minus every tool that mutates (writes, edits, commands); then the
    /// tools `config.sources` offer right now (read at this call, so a source's tools may
    /// differ from one run to the next), under the same rules. A source tool whose name is
    /// taken is left out with a warning in the log.
    pub fn workspace_tools(config: &ToolsConfig) -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        let wanted = |name: &str, mutates: bool| {
            let disabled = config.disabled.iter().any(|d| d == name);
            !(disabled || config.read_only && mutates)
        };
        for tool in crate::tools::builtin(config) {
            if wanted(&tool.spec().name, tool.mutates()) {
                // Built-in names are distinct.
                let _ = registry.register(tool);
            }
        }
        for source in config.sources.iter() {
            for tool in source.tools() {
                if !wanted(&tool.spec().name, tool.mutates()) {
                    continue;
                }
                if let Err(e) = registry.register_async(tool) {
                    tracing::warn!(source = source.name(), "{e}; the later one is left out");
                }
            }
        }
        registry
    }

    /// An error result for the unknown tool `name`, listing the valid names.
    fn unknown(&self, name: &str) -> ToolResult {
        ToolResult::err(format!(
            "unknown tool `{}`; valid tools: {}",
            crate::workspace::escape_str(crate::tools::truncate_str(name, 200)),
            self.names().join(", ")
        ))
    }

    /// Call the blocking tool `name` on this thread. An unknown name is answered with an error
    /// listing the valid names; a tool that panics is answered with an error instead of
    /// unwinding further; an asynchronous tool is answered with an error naming
    /// [`ToolRegistry::call_async`].
    pub fn call(&self, name: &str, args: &Value, ctx: &ToolContext) -> ToolResult {
        let Some(tool) = self.tools.get(name) else {
            return self.unknown(name);
        };
        match tool.blocking() {
            Some(blocking) => call_catching_panics(blocking.as_ref(), name, args, ctx),
            None => ToolResult::err(format!(
                "the tool `{name}` is asynchronous; it is called with `call_async`"
            )),
        }
    }

    /// Call the tool `name`, blocking or asynchronous, as the agent loop does (see
    /// [`ToolRegistry::call`] for unknown names and panics).
    pub async fn call_async(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        let Some(tool) = self.tools.get(name) else {
            return self.unknown(name);
        };
        call_async_catching_panics(tool.as_ref(), name, args, ctx).await
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
