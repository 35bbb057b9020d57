//! Edit turns: for a small model whose task changes files
//! ([`crate::weak_model::Policy::edits_as_text`]), the run shows the workspace's files after
//! the task, each as a `<file path="…">…</file>` element, and asks for every file it changes
//! back whole in the same form — with no tools offered, under a system prompt that asks only
//! for that. The elements of the reply are read as `write_file` calls (`session::edits`) and
//! run through the tool path like any other call (a task that moves files may also answer with
//! shell commands in a ```` ```sh ```` block, run as `run_command`); once they all succeed the
//! run ends, and its checks (if any) judge it, a failure going back to the model for another
//! edit turn.
//!
//! A reply that holds no edit ends the edit turns: the run goes on as a tool loop (the tools
//! offered again under the run's own system prompt), the files still shown after the task.
//!
//! Measured (`benches/edit_formats.py`, BENCHMARKS.md): shown the files and asked this way,
//! Qwen2.5-Coder-1.5B made 25 of the coding suite's 28 edit tasks in its first reply and the
//! 0.5B 15, against 19 and 10 with fences headed by the path; the tool loop made 1 and 0 of the
//! held-out suite's 14.

use std::sync::Arc;

use reagent_protocol::{Message, Role};
use serde::{Deserialize, Serialize};

use super::{RunState, Session};
use crate::config::ToolMode;
use crate::weak_model::Policy;

/// Most files shown.
const SHOWN_MAX_FILES: usize = 8;
/// Largest file shown, in bytes.
const SHOWN_MAX_FILE_BYTES: u64 = 6_000;
/// Most bytes of all files shown together (about 4,000 tokens).
const SHOWN_MAX_BYTES: usize = 12_000;

/// A run's edit turns: what it shows and whether the next turn is still one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct EditTurns {
    /// The files shown, in the order shown.
    pub(crate) shown: Vec<String>,
    /// What follows the task in its message: the files, each as a `<file path="…">` element.
    pub(crate) files_text: String,
    /// The system prompt of an edit turn.
    pub(crate) system: String,
    /// The path the prompts show as the example: the first shown file the task names.
    pub(crate) example: String,
    /// Whether the next turn is an edit turn (no tools): until a second reply without an edit
    /// or a reply with calls of the tools.
    pub(crate) active: bool,
    /// A reply held no edit and was asked again.
    pub(crate) missed_once: bool,
    /// The task moves files: a block of shell commands is run (`Policy::moves_files`).
    #[serde(default)]
    pub(crate) commands: bool,
    /// An answer turn (no files shown; the content of one new file asked for).
    #[serde(default)]
    pub(crate) answer: bool,
}

impl EditTurns {
    /// An edit turn's reply held no edit: the request to write the files, the first time;
    /// after that `None`, and the tool loop from now on.
    pub(super) fn missed(&mut self) -> Option<String> {
        if !self.active {
            return None;
        }
        if self.missed_once {
            self.active = false;
            return None;
        }
        self.missed_once = true;
        if self.answer {
            // An answer turn: the content of the one file asked for.
            return Some(format!(
                "No file was changed. Reply with the content of {0} in a fenced code block \
                 whose opening line is three backticks followed by the file's path (```{0}).",
                self.example
            ));
        }
        Some(format!(
            "No file was changed. Reply with the complete new content of each file you \
             change as <file path=\"{}\">...</file>.",
            self.example
        ))
    }

    /// The answer of a run whose edit turn made its edits: the files it changed and the
    /// commands it ran (`commands`). `None` when the turn was no edit turn.
    pub(super) fn ended(&self, run: &RunState, commands: &[String]) -> Option<String> {
        let changed: Vec<&str> = run.files_changed.iter().map(String::as_str).collect();
        let mut done = Vec::new();
        if !commands.is_empty() {
            done.push(format!(
                "Ran `{}`.",
                commands.join("; ").replace('\n', "; ")
            ));
        }
        if !changed.is_empty() {
            done.push(format!("Changed {}.", changed.join(", ")));
        }
        (self.active && !done.is_empty()).then(|| done.join(" "))
    }
}

impl Session {
    /// At the first turn of a small model's run whose task changes files in place: show the
    /// workspace's files (all of a small workspace, else the ones the task names) and start
    /// the edit turns. Returns whether it did.
    pub(super) fn start_edit_turns(&self, run: &mut RunState) -> bool {
        let fresh = self.history.messages().len() == 2;
        let offered = self.agent.tools.get("write_file").is_some();
        let allowed = self.settled.as_ref().is_some_and(|s| s.settings.edit_turns);
        if !fresh
            || !offered
            || self.mode() != ToolMode::Native
            || !Policy::edits_as_text(allowed, &run.task)
        {
            return false;
        }
        let listed = self
            .settled
            .as_ref()
            .and_then(|s| s.settings.files.as_ref())
            .filter(|f| !f.more)
            .map(|f| f.paths.clone())
            .unwrap_or_default();
        let shown = self
            .file_texts(&listed)
            .filter(|files| !files.is_empty())
            .or_else(|| self.file_texts(&self.named_files(&run.task)));
        let Some(files) = shown else {
            return false;
        };
        let named = self.named_files(&run.task);
        // The example path: a shown file the task names, else the first shown, else the new
        // file the task asks for (an empty workspace).
        let example = files
            .iter()
            .map(|(path, _)| path)
            .find(|path| named.contains(path))
            .or(files.first().map(|(path, _)| path))
            .cloned()
            .or_else(|| self.output_file(run))
            .unwrap_or_else(|| "app.py".to_owned());
        let mut files_text = String::from("\n\nThe files:\n");
        for (path, text) in &files {
            files_text.push_str(&format!("\n<file path=\"{path}\">\n{text}"));
            if !text.ends_with('\n') {
                files_text.push('\n');
            }
            files_text.push_str("</file>\n");
        }
        let commands = Policy::moves_files(&run.task);
        let mut system = format!(
            "You are a coding assistant working on the files shown. To change or create a \
             file, reply with the file's complete new content as <file \
             path=\"{example}\">...</file>. Write one such element per file you change; do \
             not repeat files you leave unchanged."
        );
        if commands {
            system.push_str(
                " To move, rename, copy or delete files, write the shell commands (mkdir -p, \
                 mv, cp, rm) for the files that move in one fenced code block that opens with \
                 ```sh; they run in the folder of the files.",
            );
        }
        run.edit_turns = Some(EditTurns {
            shown: files.iter().map(|(path, _)| path.clone()).collect(),
            files_text,
            system,
            example,
            active: true,
            missed_once: false,
            commands,
            answer: false,
        });
        true
    }

    /// After a lookup task's search (`session::preload`): when the task asks for its answer
    /// in a new file, the next turn is an edit turn that shows no files and asks for only
    /// that file's content. With the tools, the 1.5B wrote the whole labelled search result
    /// into the file where the task asked for the count alone (held-out suite).
    pub(super) fn start_answer_turn(&self, run: &mut RunState) {
        let allowed = self.settled.as_ref().is_some_and(|s| s.settings.edit_turns);
        let Some(file) = self.output_file(run).filter(|_| allowed) else {
            return;
        };
        run.edit_turns = Some(EditTurns {
            system: format!(
                "You answer from the search result shown. Reply with only what the task asks \
                 to write into {file}, in a fenced code block whose opening line is three \
                 backticks followed by the file's path (```{file}). No explanation."
            ),
            example: file,
            active: true,
            answer: true,
            ..EditTurns::default()
        });
    }

    /// The text files among `paths` (empty ones left out), or `None` when one is too large
    /// or they are too many to show together.
    fn file_texts(&self, paths: &[String]) -> Option<Vec<(String, String)>> {
        let mut files = Vec::new();
        let mut total = 0;
        for path in paths {
            let Ok(opened) = self.workspace.open_file(path) else {
                continue;
            };
            if opened.size > SHOWN_MAX_FILE_BYTES {
                return None;
            }
            let (mut file, mut text) = (opened.file, String::new());
            if std::io::Read::read_to_string(&mut file, &mut text).is_err() {
                // Not text: a binary file is not shown.
                continue;
            }
            if text.trim().is_empty() {
                continue;
            }
            total += text.len();
            files.push((path.clone(), text));
        }
        (files.len() <= SHOWN_MAX_FILES && total <= SHOWN_MAX_BYTES).then_some(files)
    }

    /// The messages a turn of `run` sends, when they differ from the history: a small
    /// model's tool results in plain text (`weak_model::Policy::plain_tool_results`), the
    /// files shown after the task, and in an edit turn the edit system prompt in place of the
    /// run's.
    pub(super) fn turn_messages(&self, run: &RunState) -> Option<Vec<Arc<Message>>> {
        let plain = self.policy().plain_tool_results() && self.mode() == ToolMode::Native;
        let edit = run.edit_turns.as_ref();
        if edit.is_none() && !plain {
            return None;
        }
        let mut messages = self.history.messages().to_vec();
        if plain {
            crate::prompts::plain_tool_messages(&mut messages);
        }
        let Some(edit) = edit else {
            return Some(messages);
        };
        if let Some(task) = messages
            .iter_mut()
            .find(|m| m.role == Role::User && m.content == run.task)
        {
            *task = Arc::new(Message::user(format!("{}{}", run.task, edit.files_text)));
        }
        if edit.active {
            if let Some(system) = messages.first_mut().filter(|m| m.role == Role::System) {
                *system = Arc::new(Message::system(edit.system.clone()));
            }
        }
        Some(messages)
    }
}
