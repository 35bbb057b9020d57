//! `run_command{command, timeout_ms?}`: a shell command in the workspace, confined by
//! `reagent-sandbox` (see [`crate::run_command`]). Exit code 0 is a success; anything else
//! is an error result that still carries the output.

use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::ToolSpec;
use reagent_sandbox::RuleDecision;
use serde_json::{json, Value};

use super::{opt_u64_arg, schema, str_arg};
use crate::registry::{Approval, Tool, ToolContext, ToolResult};
use crate::run_command::{run, CommandOutcome};
use crate::ToolsConfig;

/// The `run_command` tool.
pub(crate) struct RunCommand {
    cfg: Arc<ToolsConfig>,
}

impl RunCommand {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        RunCommand { cfg }
    }
}

impl RunCommand {
    /// Apply the command rules: forbidden commands are refused, `ask` commands need the
    /// approver's yes. Refusals are answered to the model as tool errors.
    fn check_rules(&self, command: &str, ctx: &ToolContext) -> Result<(), String> {
        match self.cfg.command.rules.decide(command) {
            RuleDecision::Allow => Ok(()),
            RuleDecision::Forbid => Err(format!(
                "command not run: it matches a `forbid` rule of this workspace's policy: {command}"
            )),
            RuleDecision::Ask => match &ctx.approver {
                Some(approver) => {
                    let request = Approval::Command {
                        command: command.to_owned(),
                    };
                    match approver.approve(&request).refusal("command not run") {
                        None => Ok(()),
                        Some(why) => Err(format!("{why}: {command}")),
                    }
                }
                None => Err(format!(
                    "command not run: it needs the user's approval (an `ask` rule matches) and no \
                     one can approve it in this run: {command}"
                )),
            },
        }
    }
}

impl Tool for RunCommand {
    fn spec(&self) -> ToolSpec {
        let secs = self.cfg.command.default_timeout.as_secs();
        ToolSpec {
            name: "run_command".into(),
            description: format!(
                "Run a shell command in the workspace folder and return its exit code and \
                 output. No input can be typed; it is stopped after {secs} s unless you set \
                 timeout_ms."
            ),
            parameters: schema(
                json!({
                    "command": {"type": "string", "description": "Shell command, e.g. cargo test"},
                    "timeout_ms": {"type": "integer", "minimum": 1, "description": format!("Time limit in milliseconds (default {})", secs * 1000)}
                }),
                &["command"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        true
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        let command = match str_arg(args, "command") {
            Ok(c) => c,
            Err(e) => return ToolResult::err(e),
        };
        if let Err(refusal) = self.check_rules(command, ctx) {
            return ToolResult::err(refusal);
        }
        let timeout = match opt_u64_arg(args, "timeout_ms") {
            Ok(t) => t.map(Duration::from_millis),
            Err(e) => return ToolResult::err(e),
        };
        match run(
            &ctx.workspace,
            command,
            timeout,
            &self.cfg.command,
            &self.cfg.protected,
            &ctx.cancel,
        ) {
            CommandOutcome::Success(text) => ToolResult::ok(text),
            CommandOutcome::Failed(text) | CommandOutcome::Refused(text) => ToolResult::err(text),
        }
    }
}
