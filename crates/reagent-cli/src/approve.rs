//! Asking the person at the terminal before a command that matches an `ask` rule runs:
//! allow once, allow for the rest of this run, or deny (reported to the model as a tool error).

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use reagent_tools::{Approval, Approver, Verdict};

/// Asks on stderr, reads the answer from stdin.
#[derive(Default)]
pub(crate) struct TerminalApprover {
    allowed_for_run: Mutex<HashSet<String>>,
}

impl TerminalApprover {
    /// An approver when a person can answer (stdin and stderr are terminals), else `None`, in
    /// which case commands that need approval are refused.
    pub(crate) fn if_interactive() -> Option<Arc<dyn Approver>> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal())
            .then(|| Arc::new(TerminalApprover::default()) as Arc<dyn Approver>)
    }
}

impl Approver for TerminalApprover {
    fn approve(&self, request: &Approval) -> Verdict {
        let Ok(mut allowed) = self.allowed_for_run.lock() else {
            return Verdict::DENY;
        };
        let what = request.summary();
        if allowed.contains(&what) {
            return Verdict::Allow;
        }
        let mut err = std::io::stderr().lock();
        let _ = match request.diff() {
            Some(diff) => write!(
                err,
                "\nreagent: the model wants to change a file:\n{diff}\n"
            ),
            None => write!(err, "\nreagent: the model wants to run\n    {what}\n"),
        };
        let _ = write!(err, "Allow? [y] once, [a] for this run, [N] deny: ");
        let _ = err.flush();
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            return Verdict::DENY;
        }
        match answer.trim().to_lowercase().as_str() {
            "y" | "yes" => Verdict::Allow,
            "a" | "always" => {
                allowed.insert(what);
                Verdict::Allow
            }
            _ => Verdict::DENY,
        }
    }
}
