//! Where a run is checked: the checkpoint before its first change, the verification checks
//! when the model ends it (failures go back to the model a few times), and the endings that
//! are not reported as `completed` although the model says it is done.

use std::ops::ControlFlow::{self, Break, Continue};

use reagent_protocol::{
    CancellationToken, EventKind, Guardrail, Outcome, ToolCall, UserMessageReason,
};
use reagent_tools::ToolResult;

use super::{Ending, RunState, Session};
use crate::checkpoint::Checkpoint;
use crate::events::EventSink;
use crate::prompts;
use crate::verify::{self, CheckResult};

/// Failed tool calls whose errors are kept to compare the answer with.
const KEPT_ERRORS: usize = 16;
/// Bytes of each kept error.
const KEPT_ERROR_BYTES: usize = 2000;
/// An answer shorter than this (normalized) is never called a copy of an error.
const MIN_COPIED: usize = 12;

impl Session {
    /// Before a call of a tool that may change the workspace: take the run's checkpoint (once,
    /// when checkpoints are on) and, outside git, copy what the call may change.
    pub(super) async fn checkpoint_before(
        &self,
        run: &mut RunState,
        call: &ToolCall,
        events: &EventSink,
    ) {
        let config = &self.agent.config.verify;
        let mutates = self
            .agent
            .tools
            .get(&call.name)
            .is_some_and(|t| t.mutates());
        if !config.checkpoints || !mutates || run.checkpoint_failed {
            return;
        }
        // A command may change any file; the file tools change the one at `path`.
        let path = match call.name.as_str() {
            "run_command" => None,
            _ => call
                .arguments
                .get("path")
                .and_then(|p| p.as_str())
                .map(str::to_owned),
        };
        let existing = run.checkpoint.clone();
        let (root, id, dir) = (
            self.workspace.root().to_path_buf(),
            run.run_id.clone(),
            config.checkpoint_dir.clone(),
        );
        let work = tokio::task::spawn_blocking(move || {
            let checkpoint = match existing {
                Some(c) => c,
                None => Checkpoint::take(&root, &id, dir.as_deref())?,
            };
            checkpoint.before_change(path.as_deref())?;
            Ok::<_, crate::checkpoint::CheckpointError>(checkpoint)
        })
        .await;
        match work {
            Ok(Ok(checkpoint)) => {
                if run.checkpoint.is_none() {
                    events.emit(checkpoint.event(false));
                }
                run.checkpoint = Some(checkpoint);
            }
            Ok(Err(e)) => self.checkpoint_failed(run, &e.to_string(), events),
            Err(e) => self.checkpoint_failed(run, &e.to_string(), events),
        }
    }

    /// At the end of a run that took a checkpoint: record the workspace as the run left it
    /// (`<run_id>-end`), so an undo can tell what changed since.
    pub(super) async fn checkpoint_end(&self, run: &RunState, events: &EventSink) {
        let Some(start) = run.checkpoint.clone() else {
            return;
        };
        let id = format!("{}-end", start.id);
        let end = tokio::task::spawn_blocking(move || start.capture(&id)).await;
        match end {
            Ok(Ok(end)) => events.emit(end.event(true)),
            Ok(Err(e)) => self.end_not_recorded(&e.to_string(), events),
            Err(e) => self.end_not_recorded(&e.to_string(), events),
        }
    }

    fn end_not_recorded(&self, why: &str, events: &EventSink) {
        events.guardrail(
            Guardrail::Checkpoint,
            reagent_protocol::GuardrailAction::Warn,
            format!("the workspace as the run left it was not recorded: {why}; `reagent runs undo` cannot tell what changed since"),
        );
    }

    fn checkpoint_failed(&self, run: &mut RunState, why: &str, events: &EventSink) {
        run.checkpoint_failed = true;
        events.guardrail(
            Guardrail::Checkpoint,
            reagent_protocol::GuardrailAction::Warn,
            if run.checkpoint.is_some() {
                format!("the checkpoint misses what this run changes from now on: {why}; `reagent runs undo` may not restore all of it")
            } else {
                format!("no checkpoint of the workspace: {why}; `reagent runs undo` cannot restore this run")
            },
        );
    }

    /// Note what a call's result says for the endings: a change nothing checked yet, a
    /// command that succeeded after it, the error of a failed call.
    pub(super) fn note_result(run: &mut RunState, call: &ToolCall, result: &ToolResult) {
        run.ran_command |= call.name == "run_command" && result.is_ok();
        if let (ToolResult::Ok { output, .. }, "run_command") = (result, call.name.as_str()) {
            run.last_stdout = output
                .as_str()
                .and_then(prompts::clean_stdout)
                .map(str::to_owned);
        }
        if let (ToolResult::Ok { output, .. }, "grep_search") = (result, call.name.as_str()) {
            let lines = output.as_str().filter(|o| !o.starts_with("no matches"));
            if let Some(lines) = lines {
                run.last_found = Some(lines.to_owned());
            }
        }
        match result {
            ToolResult::Ok { changed, .. } if !changed.is_empty() => run.unchecked_change = true,
            ToolResult::Ok { .. } if call.name == "run_command" => run.unchecked_change = false,
            ToolResult::Ok { .. } => {}
            ToolResult::Err { error } => {
                if run.errors.len() == KEPT_ERRORS {
                    run.errors.remove(0);
                }
                let mut end = error.len().min(KEPT_ERROR_BYTES);
                while !error.is_char_boundary(end) {
                    end -= 1;
                }
                run.errors.push(error[..end].to_owned());
            }
        }
    }

    /// The model ended the run: with checks to run, run them. All pass: `verified`. Some fail:
    /// their output goes back to the model (up to the configured retries), then the run ends
    /// `partial_pass` or `verification_failed`.
    pub(super) async fn verify_ending(
        &mut self,
        run: &mut RunState,
        ending: Ending,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ControlFlow<Ending> {
        if ending.outcome == Outcome::Completed && !run.work_asked {
            // A moving task's commands are its change (`mv` changes no file's content).
            let moved = run.ran_command && run.edit_turns.as_ref().is_some_and(|e| e.commands);
            let changed = !run.files_changed.is_empty() || moved;
            // The first line the last command printed, when the answer does not hold it.
            let unsaid = run
                .last_stdout
                .as_deref()
                .and_then(|out| out.lines().map(str::trim).find(|l| !l.is_empty()))
                .filter(|line| !ending.answer.contains(line));
            let unfound = run.last_found.as_deref().is_some_and(|found| {
                crate::weak_model::lookup::leaves_out(&ending.answer, found, &run.task)
            });
            let asked = self.policy().work_not_done(
                &run.task,
                changed,
                run.ran_command,
                unsaid.is_some(),
                unfound,
            );
            if let Some(ask) = asked {
                run.work_asked = true;
                self.push_loop_message(UserMessageReason::Nudge, ask.to_owned(), events);
                return Continue(());
            }
        }
        if ending.outcome != Outcome::Completed || run.checks.is_empty() {
            return Break(ending);
        }
        run.verify_rounds += 1;
        let results = self.run_checks(run, events, cancel).await;
        let outcome = verify::outcome_of(&results);
        let failed = prompts::verification_failed(&results);
        run.last_checks = results;
        if outcome == Outcome::Verified
            || run.verify_rounds > self.agent.config.verify.retries
            || cancel.is_cancelled()
        {
            return Break(Ending { outcome, ..ending });
        }
        self.push_loop_message(UserMessageReason::VerificationFailed, failed, events);
        Continue(())
    }

    /// Run the run's checks one after another on a blocking thread, each a
    /// `verification_check` event.
    async fn run_checks(
        &self,
        run: &RunState,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Vec<CheckResult> {
        let ctx = self.tool_context(events, cancel);
        let verify = &self.agent.config.verify;
        let limits = verify::CheckLimits {
            output_cap: verify.output_cap,
            timeout: verify.check_timeout,
        };
        let mut results = Vec::new();
        for check in &run.checks {
            let result = match &self.agent.check_runner {
                Some(stand_in) => stand_in(check),
                None => {
                    let (tools, ctx, check) =
                        (self.agent.tools.clone(), ctx.clone(), check.clone());
                    let shown = check.to_string();
                    tokio::task::spawn_blocking(move || {
                        verify::run_check(&check, &tools, &ctx, limits)
                    })
                    .await
                    .unwrap_or_else(|e| CheckResult {
                        check: shown,
                        passed: false,
                        output: format!("the check was stopped: {e}"),
                        duration: std::time::Duration::ZERO,
                    })
                }
            };
            events.emit(EventKind::VerificationCheck {
                round: run.verify_rounds,
                check: result.check.clone(),
                passed: result.passed,
                output: result.output.clone(),
                duration_ms: result.duration.as_millis() as u64,
            });
            results.push(result);
        }
        results
    }
}

/// Why a run the model completed is not reported `completed`, if it is not: every call failed
/// (`no_progress`), the answer repeats a tool's error (`copied_error`), or it changed files and
/// nothing checked them (`unchecked`).
pub(super) fn dishonest_ending(
    run: &RunState,
    ending: &Ending,
) -> Option<(Guardrail, Outcome, String)> {
    if let Some(detail) = run.tally.only_failures() {
        return Some((Guardrail::NoProgress, Outcome::NoProgress, detail));
    }
    let copied = (!asks_about_errors(&run.task))
        .then(|| copied_error(&ending.answer, &run.errors))
        .flatten();
    if let Some(error) = copied {
        let detail = format!("the answer only repeats the error of a tool call: {error}");
        return Some((Guardrail::CopiedError, Outcome::CopiedError, detail));
    }
    if run.unchecked_change && run.checks.is_empty() {
        let detail = format!(
            "the run changed {} and nothing checked it: no verification was asked for and no \
             command succeeded after the last change (pass --verify)",
            run.files_changed
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
        return Some((Guardrail::Unchecked, Outcome::Unchecked, detail));
    }
    None
}

/// Words of a task that asks for an error itself ("what error does `make` give?"): then an
/// answer that repeats one is the answer.
const ERROR_WORDS: &[&str] = &[
    "error",
    "errors",
    "fail",
    "fails",
    "failing",
    "failed",
    "failure",
    "exception",
    "traceback",
    "stderr",
    "warning",
    "warnings",
    "message",
    "complain",
    "complains",
];

/// Whether `task` asks about an error (see [`ERROR_WORDS`]).
fn asks_about_errors(task: &str) -> bool {
    task.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ERROR_WORDS.contains(&w))
}

/// Lower case, words only, single spaces.
fn normalized(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && !"./_-".contains(c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error `answer` only repeats, if any: the answer lies within the error, or the error's
/// first line makes up most of the answer.
pub(super) fn copied_error<'a>(answer: &str, errors: &'a [String]) -> Option<&'a str> {
    let answer = normalized(answer);
    let answer = answer.strip_prefix("error ").unwrap_or(&answer);
    if answer.len() < MIN_COPIED {
        return None;
    }
    errors.iter().map(String::as_str).find(|error| {
        let whole = normalized(error);
        let first = normalized(error.lines().next().unwrap_or_default());
        whole.contains(answer)
            || (first.len() >= MIN_COPIED
                && answer.contains(&first)
                && first.len() * 2 >= answer.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_repeats_an_error_is_a_copy_and_others_are_not() {
        let errors = vec![
            "file not found: notes.txt (did you mean note.txt?)".to_owned(),
            "exit code 1\n--- stderr ---\nModuleNotFoundError: No module named 'yaml'".to_owned(),
        ];
        assert!(copied_error("Error: file not found: notes.txt", &errors).is_some());
        assert!(
            copied_error("exit code 1", &errors).is_none(),
            "too short to tell"
        );
        assert!(copied_error("ModuleNotFoundError: No module named 'yaml'", &errors).is_some());
        assert!(copied_error(
            "notes.txt did not exist, so I created it with the three items you listed.",
            &errors
        )
        .is_none());
        assert!(copied_error("anything at all here", &[]).is_none());
    }

    #[test]
    fn a_task_that_asks_for_an_error_may_be_answered_with_it() {
        assert!(asks_about_errors("What error does `make` print?"));
        assert!(asks_about_errors("Why does the build fail?"));
        assert!(!asks_about_errors(
            "Build the project and tell me where the binary is."
        ));
        assert!(!asks_about_errors("Read terror.txt"), "whole words only");
    }
}
