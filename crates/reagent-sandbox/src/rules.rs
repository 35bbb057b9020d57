//! Command rules: allow / ask / forbid by command prefix.
//!
//! This is a policy convenience, **not** a security boundary: `r''m`,
//! `$(printf rm)` and `base64 -d | sh` walk past any string rule. The OS layer
//! (`exec`) is what confines a command; rules only decide whether to run it
//! without asking, ask first, or refuse outright.
//!
//! Matching is by whole words: the rule `git push` matches `git push origin`
//! but not `git pushx`. A command is split into simple commands at `;`, `&&`,
//! `||`, `|`, `&` and newlines, and the most restrictive decision over all of
//! them wins (forbid > ask > allow). A command that contains command
//! substitution, `eval` or backslashes cannot be matched reliably, so when any
//! ask or forbid rule exists it is at least `Ask`.

/// The outcome of [`CommandRules::decide`], ordered from least to most restrictive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RuleDecision {
    /// Run without asking.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse.
    Forbid,
}

/// Allow / ask / forbid rules by command prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRules {
    allow: Vec<Vec<String>>,
    ask: Vec<Vec<String>>,
    forbid: Vec<Vec<String>>,
    default: RuleDecision,
}

impl Default for CommandRules {
    /// No rules; every command is allowed (the sandbox still confines it).
    fn default() -> Self {
        CommandRules::new(RuleDecision::Allow)
    }
}

fn words(prefix: &str) -> Vec<String> {
    prefix.split_whitespace().map(str::to_string).collect()
}

impl CommandRules {
    /// Rules with no entries and the given decision for unmatched commands.
    pub fn new(default: RuleDecision) -> Self {
        CommandRules {
            allow: Vec::new(),
            ask: Vec::new(),
            forbid: Vec::new(),
            default,
        }
    }

    /// Rules from configuration lists (e.g. `[sandbox.commands]` `allow`,
    /// `ask`, `forbid`), with `default` for unmatched commands.
    pub fn from_lists<S: AsRef<str>>(
        allow: &[S],
        ask: &[S],
        forbid: &[S],
        default: RuleDecision,
    ) -> Self {
        let mut rules = CommandRules::new(default);
        allow
            .iter()
            .for_each(|p| push_rule(&mut rules.allow, p.as_ref()));
        ask.iter()
            .for_each(|p| push_rule(&mut rules.ask, p.as_ref()));
        forbid
            .iter()
            .for_each(|p| push_rule(&mut rules.forbid, p.as_ref()));
        rules
    }

    /// Adds an allow rule (builder style). Empty prefixes are ignored.
    pub fn allow(mut self, prefix: &str) -> Self {
        push_rule(&mut self.allow, prefix);
        self
    }

    /// Adds an ask rule (builder style). Empty prefixes are ignored.
    pub fn ask(mut self, prefix: &str) -> Self {
        push_rule(&mut self.ask, prefix);
        self
    }

    /// Adds a forbid rule (builder style). Empty prefixes are ignored.
    pub fn forbid(mut self, prefix: &str) -> Self {
        push_rule(&mut self.forbid, prefix);
        self
    }

    /// Decides what to do with `command` (see the module docs for the matching rules).
    pub fn decide(&self, command: &str) -> RuleDecision {
        let mut worst = RuleDecision::Allow;
        let mut any = false;
        for segment in split_simple_commands(command) {
            let toks: Vec<&str> = segment
                .split_whitespace()
                .skip_while(|t| is_assignment(t))
                .collect();
            if toks.is_empty() {
                continue;
            }
            any = true;
            worst = worst.max(self.decide_words(&toks));
        }
        if !any {
            worst = worst.max(self.default);
        }
        let opaque = command.contains("$(")
            || command.contains('`')
            || command.contains('\\')
            || command.split_whitespace().any(|w| w == "eval");
        if opaque && !(self.ask.is_empty() && self.forbid.is_empty()) {
            worst = worst.max(RuleDecision::Ask);
        }
        worst
    }

    fn decide_words(&self, toks: &[&str]) -> RuleDecision {
        let matches = |rules: &[Vec<String>]| {
            rules
                .iter()
                .any(|r| r.len() <= toks.len() && r.iter().zip(toks).all(|(a, b)| a == b))
        };
        if matches(&self.forbid) {
            RuleDecision::Forbid
        } else if matches(&self.ask) {
            RuleDecision::Ask
        } else if matches(&self.allow) {
            RuleDecision::Allow
        } else {
            self.default
        }
    }
}

fn push_rule(list: &mut Vec<Vec<String>>, prefix: &str) {
    let w = words(prefix);
    if !w.is_empty() {
        list.push(w);
    }
}

fn is_assignment(tok: &str) -> bool {
    match tok.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn split_simple_commands(command: &str) -> Vec<&str> {
    command
        .split(['\n', ';', '|', '&', '(', ')', '{', '}'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> CommandRules {
        CommandRules::new(RuleDecision::Ask)
            .allow("ls")
            .allow("git status")
            .allow("cargo test")
            .ask("git push")
            .forbid("rm -rf")
            .forbid("sudo")
    }

    #[test]
    fn decisions_by_prefix() {
        let r = rules();
        let cases = [
            ("ls -la", RuleDecision::Allow),
            ("git status --short", RuleDecision::Allow),
            ("git statusx", RuleDecision::Ask),
            ("git push origin main", RuleDecision::Ask),
            ("rm -rf /", RuleDecision::Forbid),
            ("rm -r x", RuleDecision::Ask),
            ("ls && sudo id", RuleDecision::Forbid),
            ("ls | cargo test", RuleDecision::Allow),
            ("FOO=1 sudo id", RuleDecision::Forbid),
            ("ls $(printf rm)", RuleDecision::Ask),
            ("", RuleDecision::Ask),
            ("  ;; ", RuleDecision::Ask),
            ("python3 x.py", RuleDecision::Ask),
        ];
        for (cmd, want) in cases {
            assert_eq!(r.decide(cmd), want, "command {cmd:?}");
        }
    }

    #[test]
    fn from_lists_matches_the_builder() {
        let built = CommandRules::from_lists(
            &["ls", "git status", "cargo test"],
            &["git push"],
            &["rm -rf", "sudo", "  "],
            RuleDecision::Ask,
        );
        assert_eq!(built, rules());
    }

    #[test]
    fn default_rules_allow_everything() {
        let r = CommandRules::default();
        assert_eq!(r.decide("rm -rf /"), RuleDecision::Allow);
        assert_eq!(r.decide("echo `id`"), RuleDecision::Allow);
    }
}
