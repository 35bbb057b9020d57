//! Verification: checks run when the model ends a run ([`Check`]), what each found
//! ([`CheckResult`]), and the outcome they give.
//!
//! Commands (`command:`, `tests:`) run through the agent's own `run_command` tool — the same
//! sandbox, command rules and approvals as the model's commands — with the time limit
//! [`crate::VerifyConfig::check_timeout`]. File checks read through the confined [`Workspace`]. `git_clean` asks
//! `git status --porcelain` (hooks and fsmonitor off).

use std::time::{Duration, Instant};

use reagent_protocol::Outcome;
use reagent_tools::{ToolContext, ToolRegistry, ToolResult, Workspace};
use serde::{Deserialize, Serialize};
use serde_json::json;

mod check;

pub(crate) use check::quoted_runs;
pub use check::{auto_checks, resolve, Check};

/// Default time limit of a check's command ([`crate::VerifyConfig::check_timeout`]).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// What stands in for running a check (a replay answers with the recorded result).
pub(crate) type CheckRunner = dyn Fn(&Check) -> CheckResult + Send + Sync;

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The check, as written.
    pub check: String,
    /// Whether it passed.
    pub passed: bool,
    /// What it found (a command's status line and output), capped.
    pub output: String,
    /// How long it took.
    #[serde(default)]
    pub duration: Duration,
}

/// How checks run: the output cap (bytes, head and tail) and a command's time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckLimits {
    /// Bytes of output kept.
    pub output_cap: usize,
    /// Time limit of a command.
    pub timeout: Duration,
}

/// Run `check` in `ctx`'s workspace, commands through `tools`' `run_command`, within
/// `limits`. Blocking: commands run to their end.
pub fn run_check(
    check: &Check,
    tools: &ToolRegistry,
    ctx: &ToolContext,
    limits: CheckLimits,
) -> CheckResult {
    let started = Instant::now();
    let (passed, output) = match check {
        Check::FileExists(path) => file_exists(&ctx.workspace, path),
        Check::FileContains { path, text } => file_contains(&ctx.workspace, path, text),
        Check::Command(cmd) | Check::Tests(cmd) => command(tools, ctx, cmd, limits.timeout),
        Check::GitClean => git_clean(ctx.workspace.root()),
        Check::Auto => (
            false,
            "`auto` stands for the commands the task says must pass; it is resolved when the \
             run starts"
                .to_owned(),
        ),
    };
    CheckResult {
        check: check.to_string(),
        passed,
        output: cap_middle(&output, limits.output_cap),
        duration: started.elapsed(),
    }
}

/// The outcome of a run whose last round of checks gave `results`: `verified` when all
/// passed, `partial_pass` when some did, else `verification_failed`.
pub fn outcome_of(results: &[CheckResult]) -> Outcome {
    let passed = results.iter().filter(|r| r.passed).count();
    if passed == results.len() {
        Outcome::Verified
    } else if passed > 0 {
        Outcome::PartialPass
    } else {
        Outcome::VerificationFailed
    }
}

fn file_exists(workspace: &Workspace, path: &str) -> (bool, String) {
    match workspace.open_file(path) {
        Ok(file) => (true, format!("{path} exists ({} bytes)", file.size)),
        Err(e) => (false, format!("{path}: {e}")),
    }
}

fn file_contains(workspace: &Workspace, path: &str, text: &str) -> (bool, String) {
    use std::io::Read;
    let mut content = Vec::new();
    let read = workspace
        .open_file(path)
        .map_err(|e| e.to_string())
        .and_then(|f| {
            f.file
                .take(64 * 1024 * 1024)
                .read_to_end(&mut content)
                .map_err(|e| e.to_string())
        });
    if let Err(e) = read {
        return (false, format!("{path}: {e}"));
    }
    let content = String::from_utf8_lossy(&content);
    if content.contains(text) {
        (true, format!("{path} contains {text:?}"))
    } else {
        (false, format!("{path} does not contain {text:?}"))
    }
}

fn command(
    tools: &ToolRegistry,
    ctx: &ToolContext,
    cmd: &str,
    timeout: Duration,
) -> (bool, String) {
    if tools.get("run_command").is_none() {
        return (
            false,
            "command checks run through the run_command tool, which this agent does not have \
             (read-only, or the tool is disabled)"
                .to_owned(),
        );
    }
    let timeout_ms = u64::try_from(timeout.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    let args = json!({"command": cmd, "timeout_ms": timeout_ms});
    match tools.call("run_command", &args, ctx) {
        ToolResult::Ok { output, .. } => (true, text_of(output)),
        ToolResult::Err { error } => (false, error),
    }
}

fn text_of(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    }
}

fn git_clean(root: &std::path::Path) -> (bool, String) {
    match crate::checkpoint::git_status(root) {
        Ok(status) if status.trim().is_empty() => (true, "git status: clean".to_owned()),
        Ok(status) => (false, format!("git status --porcelain:\n{status}")),
        Err(e) => (false, e.to_string()),
    }
}

/// `text` cut to about `cap` bytes: its head and tail, with a note of what was dropped.
pub(crate) fn cap_middle(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_owned();
    }
    let half = cap / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes cut …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_cut_in_the_middle_on_char_boundaries() {
        assert_eq!(cap_middle("short", 10), "short");
        let long = "é".repeat(100);
        let cut = cap_middle(&long, 21);
        assert!(cut.starts_with("éééé") && cut.ends_with("éééé"), "{cut}");
        assert!(cut.contains("bytes cut"), "{cut}");
    }

    #[test]
    fn outcomes_follow_how_many_checks_passed() {
        let r = |passed| CheckResult {
            check: "c".into(),
            passed,
            output: String::new(),
            duration: Duration::ZERO,
        };
        assert_eq!(outcome_of(&[r(true), r(true)]), Outcome::Verified);
        assert_eq!(outcome_of(&[r(true), r(false)]), Outcome::PartialPass);
        assert_eq!(
            outcome_of(&[r(false), r(false)]),
            Outcome::VerificationFailed
        );
    }
}
