//! Inline approvals: what is asked (an exact command, or a write with its whole diff), the
//! answers (allow once, allow for this session, deny with a note), the session's grants (for
//! that command prefix or that file, never wider, never over a deny rule), and the rule that
//! keys typed before the prompt was on screen are not an answer.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How long after a prompt reached the screen before a key answers it: a key that arrives
/// sooner was typed before the person could have read the question (no one reacts that fast),
/// so it is ignored like the keys from before the prompt.
pub const ANSWER_GRACE: Duration = Duration::from_millis(250);

/// What needs approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalKind {
    /// `run_command` with a command the rules mark `ask`: the exact command line.
    Command {
        /// The command as the model gave it.
        command: String,
    },
    /// A write (in read-only mode): the file and the whole unified diff.
    Write {
        /// The file, relative to the workspace.
        path: String,
        /// The change as a unified diff, complete (the prompt scrolls; it never cuts).
        diff: String,
    },
}

/// One question to the person at the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// Matches the answer to the question.
    pub id: u64,
    /// What is asked about.
    pub kind: ApprovalKind,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Just this once.
    AllowOnce,
    /// For the rest of the session: this command prefix or this file (see [`Grants`]).
    AllowSession,
    /// No; the note (may be empty) goes to the model with the refusal.
    Deny {
        /// Said to the model.
        note: String,
    },
}

impl Decision {
    /// The decision's name as recorded (`allow_once`, `allow_session`, `deny`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowSession => "allow_session",
            Decision::Deny { .. } => "deny",
        }
    }
}

/// Characters that chain or substitute commands: a command holding one is never covered by a
/// prefix grant (`cargo test; rm -rf x` is not `cargo test`).
const SHELL_META: &[&str] = &[";", "&", "|", "`", "$(", ">", "<", "\n"];

/// The prefix a session grant for `command` covers: its program and, when the second word is a
/// subcommand (not a flag or a path), that word too — `cargo test --all` grants `cargo test`.
pub fn command_prefix(command: &str) -> String {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default();
    match words.next() {
        Some(sub)
            if !sub.starts_with('-')
                && !sub.contains('/')
                && !sub.contains('.')
                && !SHELL_META.iter().any(|m| sub.contains(m)) =>
        {
            format!("{program} {sub}")
        }
        _ => program.to_owned(),
    }
}

/// What this session allowed for the rest of it.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    prefixes: BTreeSet<String>,
    files: BTreeSet<String>,
}

impl Grants {
    /// Remember an "allow for this session" answer to `kind`.
    pub fn grant(&mut self, kind: &ApprovalKind) {
        match kind {
            ApprovalKind::Command { command } => {
                self.prefixes.insert(command_prefix(command));
            }
            ApprovalKind::Write { path, .. } => {
                self.files.insert(path.clone());
            }
        }
    }

    /// Whether `kind` is covered by a grant. `denied` is the deny rules' verdict on a command:
    /// a grant never overrides it. A command with shell chaining or substitution is never
    /// covered; a prefix covers whole words only.
    pub fn covers(&self, kind: &ApprovalKind, denied: impl Fn(&str) -> bool) -> bool {
        match kind {
            ApprovalKind::Command { command } => {
                if denied(command) || SHELL_META.iter().any(|m| command.contains(m)) {
                    return false;
                }
                let words: Vec<&str> = command.split_whitespace().collect();
                self.prefixes.iter().any(|prefix| {
                    let p: Vec<&str> = prefix.split_whitespace().collect();
                    words.len() >= p.len() && words[..p.len()] == p[..]
                })
            }
            ApprovalKind::Write { path, .. } => self.files.contains(path),
        }
    }

    /// The grants, for `/approvals` to show: command prefixes, then files.
    pub fn describe(&self) -> Vec<String> {
        let commands = self.prefixes.iter().map(|p| format!("command `{p} …`"));
        let files = self.files.iter().map(|f| format!("writes to {f}"));
        commands.chain(files).collect()
    }
}

/// The prompt on screen: the request, how far its text is scrolled, the deny note being typed,
/// and when it was first shown (keys from before then are not answers).
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The question.
    pub request: ApprovalRequest,
    /// First line of the command or diff shown.
    pub scroll: usize,
    /// `Some` while the user types a note for a denial.
    pub note: Option<String>,
    /// When a frame showing the prompt reached the terminal; `None` until then.
    pub shown_at: Option<Instant>,
    /// Keys that arrived before the prompt was shown, ignored (the prompt says how many).
    pub ignored_keys: usize,
}

impl Prompt {
    /// A prompt for `request`, not yet shown.
    pub fn new(request: ApprovalRequest) -> Self {
        Prompt {
            request,
            scroll: 0,
            note: None,
            shown_at: None,
            ignored_keys: 0,
        }
    }

    /// Whether a key pressed at `at` may answer: only once the prompt has been on screen for
    /// [`ANSWER_GRACE`].
    pub fn accepts_key_at(&self, at: Instant) -> bool {
        self.shown_at
            .is_some_and(|shown| at >= shown + ANSWER_GRACE)
    }

    /// The lines of the text under review (the command, or the diff), complete.
    pub fn body_lines(&self) -> Vec<&str> {
        match &self.request.kind {
            ApprovalKind::Command { command } => command.lines().collect(),
            ApprovalKind::Write { diff, .. } => diff.lines().collect(),
        }
    }

    /// Scroll by `delta` lines, kept within the text.
    pub fn scroll_by(&mut self, delta: isize) {
        let last = self.body_lines().len().saturating_sub(1);
        self.scroll = self.scroll.saturating_add_signed(delta).min(last);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn cmd(c: &str) -> ApprovalKind {
        ApprovalKind::Command { command: c.into() }
    }

    #[test]
    fn a_session_grant_covers_that_prefix_and_never_wider() {
        let mut g = Grants::default();
        g.grant(&cmd("cargo test --all"));
        let no_deny = |_: &str| false;
        assert!(g.covers(&cmd("cargo test"), no_deny));
        assert!(g.covers(&cmd("cargo   test -p x"), no_deny));
        assert!(
            !g.covers(&cmd("cargo build"), no_deny),
            "another subcommand"
        );
        assert!(!g.covers(&cmd("cargo testx"), no_deny), "whole words only");
        assert!(!g.covers(&cmd("cargo test; rm -rf ."), no_deny), "chained");
        assert!(
            !g.covers(&cmd("cargo test $(curl x)"), no_deny),
            "substituted"
        );
        assert!(!g.covers(&cmd("cargo test | sh"), no_deny), "piped");
        assert!(
            !g.covers(&cmd("cargo test --nocapture"), |c: &str| c
                .contains("nocapture")),
            "a deny rule wins over a grant"
        );
        assert_eq!(g.describe(), ["command `cargo test …`"]);
    }

    #[test]
    fn prefixes_stop_at_flags_and_paths() {
        assert_eq!(command_prefix("ls -la"), "ls");
        assert_eq!(command_prefix("python3 script.py"), "python3");
        assert_eq!(command_prefix("./run.sh now"), "./run.sh now");
        assert_eq!(command_prefix("git status"), "git status");
        assert_eq!(command_prefix(""), "");
    }

    #[test]
    fn a_file_grant_covers_that_file_only() {
        let mut g = Grants::default();
        let write = |p: &str| ApprovalKind::Write {
            path: p.into(),
            diff: String::new(),
        };
        g.grant(&write("src/lib.rs"));
        assert!(g.covers(&write("src/lib.rs"), |_: &str| false));
        assert!(!g.covers(&write("src/main.rs"), |_: &str| false));
        assert!(!g.covers(&cmd("src/lib.rs"), |_: &str| false));
    }

    #[test]
    fn keys_from_before_the_prompt_was_shown_do_not_answer() {
        let typed_ahead = Instant::now();
        let mut p = Prompt::new(ApprovalRequest {
            id: 1,
            kind: cmd("make"),
        });
        assert!(!p.accepts_key_at(typed_ahead), "not on screen yet");
        let shown = typed_ahead + Duration::from_millis(5);
        p.shown_at = Some(shown);
        assert!(!p.accepts_key_at(typed_ahead));
        assert!(
            !p.accepts_key_at(shown + Duration::from_millis(1)),
            "too soon after it appeared to have been read"
        );
        assert!(p.accepts_key_at(shown + ANSWER_GRACE));
    }

    #[test]
    fn a_long_diff_scrolls_within_its_lines() {
        let diff: String = (0..50).map(|i| format!("+line {i}\n")).collect();
        let mut p = Prompt::new(ApprovalRequest {
            id: 2,
            kind: ApprovalKind::Write {
                path: "a.txt".into(),
                diff,
            },
        });
        assert_eq!(p.body_lines().len(), 50, "never truncated");
        p.scroll_by(10);
        assert_eq!(p.scroll, 10);
        p.scroll_by(1000);
        assert_eq!(p.scroll, 49);
        p.scroll_by(-1000);
        assert_eq!(p.scroll, 0);
    }
}
