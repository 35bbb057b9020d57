//! For a small model that calls tools ([`crate::weak_model::Policy::helps_coding`]) on a task
//! its edit turns do not take (`session::edit_turn`): what the task points to is done for it
//! before its first turn, as calls of its own in the history (parse layer `preload`), so the
//! conversation shows it a well-formed call of an offered tool before it writes one and its
//! first edit copies real text instead of guessing it:
//!
//! - a task that asks to run a command it quotes ("Execute `sh summary.sh` and report…") gets
//!   the command run (Qwen2.5-Coder-1.5B, shown the script instead, answered "Executed
//!   `python3 calc.py` and printed the result." without running it);
//! - a lookup task that names the text to look for ("Which host reported the ERROR…",
//!   `weak_model::lookup`) gets that text searched for in the file or folder it names, and
//!   when it asks for the answer in a new file, an answer turn for that file's content
//!   (`session::edit_turn`);
//! - any other gets the files it names read. Qwen2.5-Coder-0.5B otherwise answers most coding
//!   tasks with a call object naming a tool that does not exist (BENCHMARKS.md). Only files
//!   of the workspace named as a whole word of the task (`pick.py`, `geo/_version.py`, or a
//!   name that is the last part of exactly one listed file's path) and small enough to show
//!   whole are read.
//!
//! The calls run through the tool path like any other (events, sandbox, approvals).

use std::ops::ControlFlow;

use reagent_protocol::{CancellationToken, Message, ToolCall};
use serde_json::json;

use super::edits::named_paths;
use super::{Ending, RunState, Session};
use crate::config::ToolMode;
use crate::events::EventSink;
use crate::text_edits::looks_like_path;
use crate::weak_model::asks_to_run;

/// Most commands run up front.
const PRELOAD_MAX_RUNS: usize = 2;

/// Most files read up front.
const PRELOAD_MAX_FILES: usize = 4;

/// Largest file read up front, in bytes: a file the task says is too long to read at once is
/// left to the model's own search.
const PRELOAD_MAX_BYTES: u64 = 6_000;

impl Session {
    /// Before a small model's first turn of a run: read the files its task names (see the
    /// module's docs). The run ends here only when a read ends it (it cannot, short of a
    /// repetition stop).
    pub(super) async fn preload_named_files(
        &mut self,
        run: &mut RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        let first_turn = run.iterations == 0 && run.tool_calls == 0;
        if !first_turn || self.start_edit_turns(run) || !self.preloads() {
            return ControlFlow::Continue(());
        }
        let calls: Vec<ToolCall> = self
            .preloaded_calls(&run.task)
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| ToolCall {
                id: format!("preload_{}", i + 1),
                name: name.to_owned(),
                arguments,
            })
            .collect();
        if calls.is_empty() {
            return ControlFlow::Continue(());
        }
        let searched = calls.iter().any(|c| c.name == "grep_search");
        // A search or a command made for the model is not run again when it copies it; a
        // read again is harmless (and the tool loop's reads are the model's own).
        run.preloaded = calls
            .iter()
            .filter(|c| c.name != "read_file")
            .cloned()
            .collect();
        let mut message = Message::assistant("");
        message.tool_calls = calls.clone();
        self.record_assistant(0, message, &calls, Some("preload".to_owned()), None, events);
        self.run_calls(run, calls, events, cancel).await?;
        if searched {
            self.start_answer_turn(run);
        }
        ControlFlow::Continue(())
    }

    /// The calls made for the model before its first turn (see the module's docs): the
    /// commands a task that asks to run one quotes, else the search a lookup task asks for,
    /// else reads of the files it names.
    fn preloaded_calls(&self, task: &str) -> Vec<(&'static str, serde_json::Value)> {
        let offered = |name: &str| self.agent.tools.get(name).is_some();
        let runs = crate::verify::quoted_runs(task);
        if offered("run_command") && asks_to_run(task) && !runs.is_empty() {
            return runs
                .into_iter()
                .take(PRELOAD_MAX_RUNS)
                .map(|command| ("run_command", json!({ "command": command })))
                .collect();
        }
        if let Some(lookup) = self
            .policy()
            .lookup(task)
            .filter(|_| offered("grep_search"))
        {
            let mut args = json!({ "pattern": lookup.pattern, "word": true });
            if let Some(scope) = self.named_scope(task) {
                args["path"] = json!(scope);
            }
            if let Some(include) = lookup.include {
                args["include"] = json!(include);
            }
            return vec![("grep_search", args)];
        }
        if !offered("read_file") {
            return Vec::new();
        }
        self.named_files(task)
            .into_iter()
            .map(|path| ("read_file", json!({ "path": path })))
            .collect()
    }

    /// The first workspace file or folder `task` names (`hosts.ini`, `config/`), of any size.
    fn named_scope(&self, task: &str) -> Option<String> {
        named_paths(task)
            .map(|(_, word)| word.trim_end_matches('/'))
            .filter(|word| !word.is_empty() && *word != "." && !word.contains(".."))
            .find(|word| {
                self.workspace.open_file(word).is_ok() || self.workspace.open_dir(word).is_ok()
            })
            .map(str::to_owned)
    }

    fn preloads(&self) -> bool {
        self.policy().helps_coding() && self.mode() == ToolMode::Native
    }

    /// The workspace files `task` names, in the order named, without repeats, small enough to
    /// read whole.
    pub(super) fn named_files(&self, task: &str) -> Vec<String> {
        let listed = self
            .settled
            .as_ref()
            .and_then(|s| s.settings.files.as_ref())
            .map_or(&[][..], |f| f.paths.as_slice());
        let mut out: Vec<String> = Vec::new();
        for (_, word) in named_paths(task) {
            if out.len() == PRELOAD_MAX_FILES {
                break;
            }
            if !looks_like_path(word) {
                continue;
            }
            // The word as a path, else the one listed file it ends (opened once either way).
            let (path, opened) = match self.workspace.open_file(word) {
                Ok(opened) => (word.to_owned(), opened),
                Err(_) => {
                    let suffix = format!("/{word}");
                    let mut ends = listed.iter().filter(|p| p.ends_with(&suffix));
                    let (Some(only), None) = (ends.next(), ends.next()) else {
                        continue;
                    };
                    let Ok(opened) = self.workspace.open_file(only) else {
                        continue;
                    };
                    (only.clone(), opened)
                }
            };
            if opened.size <= PRELOAD_MAX_BYTES && !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }
}
