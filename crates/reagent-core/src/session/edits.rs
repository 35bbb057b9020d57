//! Calls and edits a small model that can call tools gets wrong, made safer: a reply that is
//! a call object naming no offered tool is answered with the tools (a call object whose
//! arguments stand beside its name is read as the call); and for small models
//! ([`crate::weak_model::Policy::helps_coding`]) a call object naming no tool whose arguments
//! fit exactly one offered tool is read as that tool's call, and an edit written as text (a
//! whole file in a fenced block naming it, search/replace blocks, the content of the one new
//! file the task names; see [`crate::text_edits`]) is read as the call it stands for.
//!
//! The call objects are read in the general loop: a reply that is nothing but
//! `{"name": …, "arguments": …}` is a call whatever model wrote it, never an answer.

use reagent_protocol::{ToolCall, ToolSpec};
use reagent_tools::Workspace;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::io::Read;

use super::{RunState, Session};
use crate::config::ToolMode;
use crate::text_edits::{self, EditTargets};
use crate::turn::Turn;

/// Most bytes of a file read to tell a whole file from a snippet or an unchanged copy.
const COUNTED_FILE_MAX_BYTES: u64 = 1 << 20;

impl Session {
    /// Whether the loop's help for small coding models applies (see the module's docs).
    fn helps_coding(&self) -> bool {
        self.policy().helps_coding()
    }

    /// A reply without calls (outside the constrained mode) read once more: a call object
    /// naming no offered tool becomes an unread call (the nudge lists the tools), one with its
    /// arguments beside the name becomes the call (layer `call_object`), and for a small model
    /// edits written as text become their calls (layer `text_edit`).
    pub(super) fn read_text_calls(&self, run: &RunState, turn: &mut Turn) {
        if turn.final_answer.is_some() || self.mode() == ToolMode::Constrained {
            return;
        }
        let copies = |c: &ToolCall| {
            run.preloaded
                .iter()
                .any(|p| p.name == c.name && p.arguments == c.arguments)
        };
        if !turn.calls.is_empty() && turn.calls.iter().all(copies) {
            // A small model writes the call made for it again (the 0.5B, three times, until
            // the repetition stop): its result is already in the history.
            self.set_calls(turn, Vec::new(), "preload_copy");
            turn.copied_preload = true;
            return;
        }
        if !turn.calls.is_empty() {
            // A small model's edit written as text beside its `task_complete` call (the
            // 1.5B's "Here's the updated code for initials() in names.py: ```…```") is made
            // instead of ending the run; the model ends it once it has seen the result.
            let only_ending = turn.calls.iter().all(|c| c.name == "task_complete");
            if only_ending && self.helps_coding() {
                self.read_text_edits(run, turn);
            }
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
        if self.helps_coding() {
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
            if let Some(why) = self.not_a_tool(&name) {
                return Some(Err(why));
            }
            let fitted = self
                .helps_coding()
                .then(|| fit_arguments(&self.agent.specs, &object))
                .flatten();
            return Some(
                fitted.ok_or_else(|| format!("`{name}` is not a tool. {}", self.valid_tools())),
            );
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

    /// The one new file `run`'s task asks for (see [`EditTargets::new_output_file`]).
    pub(super) fn output_file(&self, run: &RunState) -> Option<String> {
        Targets {
            workspace: &self.workspace,
            task: &run.task,
            changed: &run.files_changed,
            shown: &[],
            commands: false,
        }
        .new_output_file()
    }

    /// A reply that holds edits written as text gets them as its calls (layer `text_edit`),
    /// when the tools they stand for are offered.
    fn read_text_edits(&self, run: &RunState, turn: &mut Turn) {
        let targets = Targets {
            workspace: &self.workspace,
            task: &run.task,
            changed: &run.files_changed,
            shown: run
                .edit_turns
                .as_ref()
                .filter(|e| e.active)
                .map_or(&[][..], |e| e.shown.as_slice()),
            commands: run
                .edit_turns
                .as_ref()
                .is_some_and(|e| e.active && e.commands),
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
}

/// The workspace and task, as the text-edit reader asks about them.
struct Targets<'a> {
    workspace: &'a Workspace,
    task: &'a str,
    /// Files the run changed so far.
    changed: &'a BTreeSet<String>,
    /// The files an active edit turn showed.
    shown: &'a [String],
    /// An active edit turn takes shell commands.
    commands: bool,
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
        named_paths(self.task).any(|(_, w)| w == path)
    }

    fn shown_files(&self) -> &[String] {
        self.shown
    }

    fn takes_commands(&self) -> bool {
        self.commands
    }

    fn new_output_file(&self) -> Option<String> {
        let mut new = named_paths(self.task)
            .filter(|(before, _)| !EXAMPLE_WORDS.contains(&before.to_lowercase().as_str()))
            .map(|(_, w)| w)
            .filter(|w| text_edits::looks_like_path(w) && self.workspace.open_file(w).is_err());
        let first = new.next()?;
        let only = new.all(|w| w == first) && !self.changed.contains(first);
        only.then(|| first.to_owned())
    }
}

/// Words before a path that make it an example, not the file to write (`like config/x.cfg`).
const EXAMPLE_WORDS: [&str; 4] = ["like", "e.g.", "as", "such"];

/// The words of `task` that may be paths, each with the word before it: split at spaces,
/// quotes, commas and parentheses, closing punctuation and a possessive `'s` trimmed. The
/// task's words for the small-model measures too (`weak_model::lookup`,
/// `Policy::moves_files`).
pub(crate) fn named_paths(task: &str) -> impl Iterator<Item = (&str, &str)> {
    let words = task
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | ',' | '(' | ')'))
        .map(|w| {
            let w = w.trim_end_matches(['.', ':', ';', '!', '?']);
            let w = w.strip_suffix("'s").unwrap_or(w);
            w.trim_matches('\'')
        })
        .filter(|w| !w.is_empty());
    let mut before = "";
    words.map(move |w| {
        let pair = (before, w);
        before = w;
        pair
    })
}

/// The arguments of a call object naming no tool (`{"name": "repair_pick", "arguments":
/// {"path": …, "old_string": …, "new_string": …}}`, as Qwen2.5-Coder-0.5B names the task
/// instead of the tool) read as the call of the one offered tool they fit: every key one of its
/// parameters (`file_path`, `filename` and `file` standing for `path`) and every required
/// parameter given. An argument `"tool"` naming an offered tool picks that tool, and keys it
/// does not take are left out. `None` when no tool or more than one fits.
fn fit_arguments(specs: &[ToolSpec], object: &Map<String, Value>) -> Option<ToolCall> {
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        Some(Value::Object(a)) => a.clone(),
        Some(_) => return None,
        None => object
            .iter()
            .filter(|(k, _)| k.as_str() != "name")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let named = arguments.get("tool").and_then(Value::as_str);
    let chosen = |spec: &ToolSpec| -> Option<Map<String, Value>> {
        let properties = spec
            .parameters
            .get("properties")
            .and_then(Value::as_object)?;
        let mut args = Map::new();
        for (key, value) in &arguments {
            let key = match key.as_str() {
                "file_path" | "filename" | "file" if !properties.contains_key(key) => "path",
                k => k,
            };
            if properties.contains_key(key) {
                args.insert(key.to_owned(), value.clone());
            } else if named.is_none() {
                return None;
            }
        }
        let required = spec.parameters.get("required").and_then(Value::as_array);
        let complete = required.is_none_or(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .all(|k| args.contains_key(k))
        });
        (complete && !args.is_empty()).then_some(args)
    };
    let mut fits = specs
        .iter()
        .filter(|s| named.is_none_or(|n| s.name == n))
        .filter_map(|s| chosen(s).map(|args| (s, args)));
    let (spec, args) = fits.next()?;
    fits.next().is_none().then(|| ToolCall {
        id: "call_1".to_owned(),
        name: spec.name.clone(),
        arguments: Value::Object(args),
    })
}
