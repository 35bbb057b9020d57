//! Calls and edits a small model that can call tools gets wrong, made safer: a reply that is
//! a call object naming no offered tool is answered with the tools (a call object whose
//! arguments stand beside its name is read as the call); and for small models
//! ([`crate::weak_model::Policy::guards_edits`]) an edit of a file the run has not read is
//! answered with the file's current text instead of being applied blind, and an edit written
//! as text (a whole file in a fenced block naming it, search/replace blocks; see
//! [`crate::text_edits`]) is read as the call it stands for.
//!
//! The call objects are read in the general loop: a reply that is nothing but
//! `{"name": …, "arguments": …}` is a call whatever model wrote it, never an answer.

use reagent_protocol::{ToolCall, ToolSpec};
use reagent_tools::{call_async_catching_panics, ToolContext, ToolResult, Workspace};
use serde_json::{json, Value};
use std::io::Read;

use super::{RunState, Session};
use crate::config::ToolMode;
use crate::text_edits::{self, EditTargets};
use crate::turn::Turn;

/// Most bytes of a file read to tell a whole file from a snippet or an unchanged copy.
const COUNTED_FILE_MAX_BYTES: u64 = 1 << 20;

impl Session {
    /// Whether the loop's edit safeguards apply (see the module's docs).
    fn guards_edits(&self) -> bool {
        self.policy().guards_edits()
    }

    /// A reply without calls (outside the constrained mode) read once more: a call object
    /// naming no offered tool becomes an unread call (the nudge lists the tools), one with its
    /// arguments beside the name becomes the call (layer `call_object`), and for a small model
    /// edits written as text become their calls (layer `text_edit`).
    pub(super) fn read_text_calls(&self, run: &RunState, turn: &mut Turn) {
        if !turn.calls.is_empty()
            || turn.final_answer.is_some()
            || self.mode() == ToolMode::Constrained
        {
            return;
        }
        match self.call_object(&turn.text) {
            Some(Ok(call)) => return self.set_calls(turn, vec![call], "call_object"),
            Some(Err(why)) => {
                turn.unread_call = Some(why);
                return;
            }
            None => {}
        }
        if self.guards_edits() {
            self.read_text_edits(run, turn);
        }
    }

    /// A reply that is one JSON call object (in a code fence or not) the parser did not read:
    /// `Err` with what to tell the model when its name is no offered tool, the call when its
    /// arguments stand beside the name (`{"name": "task_complete", "summary": …}`).
    fn call_object(&self, text: &str) -> Option<Result<ToolCall, String>> {
        let body = text.trim();
        let body = body
            .strip_prefix("```json")
            .or_else(|| body.strip_prefix("```"))
            .and_then(|b| b.strip_suffix("```"))
            .unwrap_or(body);
        let Value::Object(mut object) = serde_json::from_str::<Value>(body.trim()).ok()? else {
            return None;
        };
        let name = object.get("name")?.as_str()?.to_owned();
        let Some(spec) = self.agent.specs.iter().find(|s| s.name == name) else {
            return Some(Err(self.not_a_tool(&name).unwrap_or_else(|| {
                format!("`{name}` is not a tool. {}", self.valid_tools())
            })));
        };
        object.remove("name");
        let properties = spec.parameters.get("properties").and_then(Value::as_object);
        let beside = !object.is_empty()
            && properties.is_some_and(|p| object.keys().all(|k| p.contains_key(k)));
        beside.then(|| {
            Ok(ToolCall {
                id: "call_1".to_owned(),
                name,
                arguments: Value::Object(object),
            })
        })
    }

    /// The error for a call that names a workspace file (or a file's name without its
    /// extension: `test_calc` for `test_calc.py`) instead of a tool, as small models write
    /// `{"name": "report.py", …}`: what the file is, how to read it, and the tools.
    pub(super) fn not_a_tool(&self, name: &str) -> Option<String> {
        if self.agent.tools.get(name).is_some() {
            return None;
        }
        let listed = self
            .settled
            .as_ref()
            .and_then(|s| s.settings.files.as_ref())
            .map_or(&[][..], |f| f.paths.as_slice());
        let stem = |p: &str| p.rsplit_once('.').map_or(p, |(stem, _)| stem).to_owned();
        let path = if self.workspace.open_file(name).is_ok() {
            name.to_owned()
        } else {
            listed.iter().find(|p| stem(p) == name)?.clone()
        };
        let read = json!({"name": "read_file", "arguments": {"path": path}});
        Some(format!(
            "`{name}` is not a tool: {path} is a file of the workspace. To read it, call \
             read_file: {read}; to run a command, call run_command with {{\"command\": …}}. {}",
            self.valid_tools()
        ))
    }

    /// `Valid tools: a, b, c.`
    fn valid_tools(&self) -> String {
        let tools: Vec<&str> = self.agent.specs.iter().map(|s| s.name.as_str()).collect();
        format!("Valid tools: {}.", tools.join(", "))
    }

    fn set_calls(&self, turn: &mut Turn, calls: Vec<ToolCall>, layer: &str) {
        if self.mode() == ToolMode::Native {
            turn.message.tool_calls = calls.clone();
        }
        turn.calls = calls;
        turn.layer = Some(layer.to_owned());
        turn.unread_call = None;
    }

    /// A reply without calls that holds edits written as text gets them as its calls (layer
    /// `text_edit`), when the tools they stand for are offered.
    fn read_text_edits(&self, run: &RunState, turn: &mut Turn) {
        let targets = Targets {
            workspace: &self.workspace,
            task: &run.task,
        };
        let offered = |name: &str| self.agent.specs.iter().any(|s: &ToolSpec| s.name == name);
        let calls: Vec<ToolCall> = text_edits::read_edits(&turn.text, &targets)
            .into_iter()
            .filter(|e| offered(e.tool))
            .enumerate()
            .map(|(i, e)| ToolCall {
                id: format!("text_edit_{}", i + 1),
                name: e.tool.to_owned(),
                arguments: e.arguments,
            })
            .collect();
        if calls.is_empty() {
            return;
        }
        tracing::debug!(calls = calls.len(), "edits written as text read as calls");
        self.set_calls(turn, calls, "text_edit");
    }

    /// An `edit_file` call of a workspace file the run has neither read nor changed: refused,
    /// with the file's current text (as `read_file` shows it), so the next edit copies its
    /// old text from the file instead of guessing it. The file counts as read from then on.
    pub(super) async fn unread_edit(
        &self,
        run: &mut RunState,
        call: &ToolCall,
        ctx: &ToolContext,
    ) -> Option<ToolResult> {
        if call.name != "edit_file" || !self.guards_edits() {
            return None;
        }
        let path = call.arguments.get("path").and_then(Value::as_str)?;
        if run.read_files.contains(path) || run.files_changed.contains(path) {
            return None;
        }
        let read = self.agent.tools.get("read_file")?.clone();
        let shown = call_async_catching_panics(
            read.as_ref(),
            "read_file",
            json!({ "path": path }),
            ctx.clone(),
        )
        .await;
        let ToolResult::Ok { output, .. } = shown else {
            // No such file: edit_file says so itself.
            return None;
        };
        run.read_files.insert(path.to_owned());
        let text = match output {
            Value::String(s) => s,
            other => other.to_string(),
        };
        Some(ToolResult::err(format!(
            "the edit was not made: {path} was not read in this run, and old_string must be \
             copied exactly from it. Its current text:\n{text}\nCall edit_file again with \
             old_string taken from this text."
        )))
    }

    /// Note what a finished call showed the model: a file read successfully counts as read.
    pub(super) fn note_read(run: &mut RunState, call: &ToolCall, result: &ToolResult) {
        if call.name == "read_file" && result.is_ok() {
            if let Some(path) = call.arguments.get("path").and_then(Value::as_str) {
                run.read_files.insert(path.to_owned());
            }
        }
    }
}

/// The workspace and task, as the text-edit reader asks about them.
struct Targets<'a> {
    workspace: &'a Workspace,
    task: &'a str,
}

impl EditTargets for Targets<'_> {
    fn file_text(&self, path: &str) -> Option<String> {
        let opened = self.workspace.open_file(path).ok()?;
        let mut text = String::new();
        opened
            .file
            .take(COUNTED_FILE_MAX_BYTES)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    }

    fn task_names(&self, path: &str) -> bool {
        self.task
            .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | '(' | ')'))
            .any(|w| w.trim_end_matches(['.', ':', ';', '!', '?']) == path)
    }
}
