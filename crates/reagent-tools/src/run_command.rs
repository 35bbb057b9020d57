//! `run_command` settings ([`CommandConfig`]) and the thin adapter over
//! [`reagent_sandbox::exec`]: build the request (cwd = workspace, timeout, output cap, the
//! sandbox policy plus the workspace's protected paths), run it, and render the outcome.
//!
//! Process confinement (Landlock, seccomp, namespaces, rlimits, environment scrubbing,
//! stdin `/dev/null`, killing everything at the timeout, head-and-tail output capping) is
//! `reagent-sandbox`'s job; this module only validates arguments and words the result.

use std::path::PathBuf;
use std::time::Duration;

use reagent_protocol::CancellationToken;
use reagent_sandbox::{CommandRules, ExecOutput, ExecRequest, SandboxPolicy};

use crate::workspace::Workspace;

/// Settings of `run_command`.
#[derive(Debug, Clone)]
pub struct CommandConfig {
    /// Timeout when the model gives none (60 s).
    pub default_timeout: Duration,
    /// Largest timeout the model may ask for (10 min).
    pub max_timeout: Duration,
    /// Bytes of output kept per stream, head and tail halves (16 KiB: small models have
    /// small contexts).
    pub output_cap: usize,
    /// Longest command accepted, in bytes (64 KiB).
    pub max_command_bytes: usize,
    /// What commands may do (the workspace's protected paths are added to
    /// `protected_paths` on every call).
    pub policy: SandboxPolicy,
    /// Allow / ask / forbid by command prefix (a convenience, not a security boundary: the
    /// sandbox confines whatever runs).
    pub rules: CommandRules,
}

impl Default for CommandConfig {
    fn default() -> Self {
        CommandConfig {
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            output_cap: 16 * 1024,
            max_command_bytes: reagent_sandbox::MAX_COMMAND_BYTES.min(64 * 1024),
            policy: SandboxPolicy::default(),
            rules: CommandRules::default(),
        }
    }
}

/// How a command call ended, worded for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandOutcome {
    /// Exit code 0; the rendered output.
    Success(String),
    /// It ran but failed (non-zero exit, signal, timeout, limit); the rendered output.
    Failed(String),
    /// It was not run; why.
    Refused(String),
}

/// Run `command` in `workspace` under `config` (protected paths `protected` added to the
/// sandbox policy). `timeout` is the model's `timeout_ms`, if it gave one.
pub fn run(
    workspace: &Workspace,
    command: &str,
    timeout: Option<Duration>,
    config: &CommandConfig,
    protected: &[String],
    cancel: &CancellationToken,
) -> CommandOutcome {
    if command.trim().is_empty() {
        return CommandOutcome::Refused("command is empty".into());
    }
    if command.contains('\0') {
        return CommandOutcome::Refused("command contains a NUL byte".into());
    }
    if command.len() > config.max_command_bytes {
        return CommandOutcome::Refused(format!(
            "command is {} bytes, over the limit of {} bytes; write a script file and run that",
            command.len(),
            config.max_command_bytes
        ));
    }
    let timeout = match timeout {
        Some(t) if t.is_zero() => {
            return CommandOutcome::Refused("timeout_ms must be at least 1".into())
        }
        Some(t) => t.min(config.max_timeout),
        None => config.default_timeout,
    };
    let mut policy = config.policy.clone();
    for p in protected {
        let p = PathBuf::from(p);
        if !policy.protected_paths.contains(&p) {
            policy.protected_paths.push(p);
        }
    }
    let request = ExecRequest {
        command: command.to_string(),
        cwd: workspace.root().to_path_buf(),
        timeout,
        output_cap: config.output_cap,
        policy,
        cancel: Some(cancel.clone()),
    };
    match reagent_sandbox::exec(&request) {
        Ok(out) => {
            let mut text = render(&out, timeout);
            if out.exit_code == Some(0) && !out.timed_out && out.signal.is_none() {
                CommandOutcome::Success(text)
            } else {
                if let Some(hint) = script_hint(workspace, command, out.exit_code) {
                    text.push_str(&format!("\nhint: {hint}"));
                }
                CommandOutcome::Failed(text)
            }
        }
        Err(e) => CommandOutcome::Refused(format!("command not run: {e}")),
    }
}

/// When a command was not found (exit 127) or not executable (126) and its first word names a
/// file of the workspace, how to run that file: measured with SmolLM2-135M on held-out tasks
/// (BENCHMARKS.md), "Execute hello.sh with sh" gave the command `hello.sh`, twice.
fn script_hint(workspace: &Workspace, command: &str, exit_code: Option<i32>) -> Option<String> {
    if !matches!(exit_code, Some(126 | 127)) {
        return None;
    }
    let first = command.split_whitespace().next()?;
    let name = first.strip_prefix("./").unwrap_or(first);
    workspace.open_file(name).ok()?;
    let runner = if name.ends_with(".py") {
        "python3"
    } else {
        "sh"
    };
    let rest = command[command.find(first)? + first.len()..].trim_start();
    let again = format!("{runner} {name} {rest}");
    Some(format!(
        "{name} is a file in the workspace; run it with `{}`",
        again.trim_end()
    ))
}

/// The text the model sees: a status line, then stdout and stderr (already escaped and
/// capped by the sandbox, with `[truncated N bytes]` notes where bytes were cut).
fn render(out: &ExecOutput, timeout: Duration) -> String {
    let mut status = if out.timed_out {
        format!(
            "timed out after {} ms; the command and everything it started were killed",
            timeout.as_millis()
        )
    } else if let Some(sig) = out.signal {
        format!("killed by signal {sig}")
    } else {
        match out.exit_code {
            Some(code) => format!("exit code {code}"),
            None => "exit status unknown".to_string(),
        }
    };
    if let Some(limit) = &out.limit_hit {
        status.push_str(&format!(" ({limit})"));
    }
    if out.truncated_bytes > 0 {
        status.push_str(&format!(
            "; output cut: {} bytes dropped from the middle",
            out.truncated_bytes
        ));
    }
    let mut text = status;
    for (name, stream) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        if !stream.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("--- {name} ---\n"));
            text.push_str(stream);
        }
    }
    if out.stdout.is_empty() && out.stderr.is_empty() {
        text.push_str("\n(no output)");
    }
    text
}
