//! The checks a run can be verified by, as written on the command line and in the config
//! file, and `auto`: the command a task says must pass.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One verification check. Written `file_exists:PATH`, `file_contains:PATH:TEXT`,
/// `command:CMD`, `tests:CMD`, `git_clean` or `auto`; the written form is its JSON form too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Check {
    /// The workspace holds a regular file at the path.
    FileExists(String),
    /// The file at the path contains the text.
    FileContains {
        /// Workspace-relative path.
        path: String,
        /// Text the file must contain.
        text: String,
    },
    /// The command exits 0, run in the sandbox as `run_command` runs commands.
    Command(String),
    /// The test command exits 0 (a `command` whose failing output is what the model fixes).
    Tests(String),
    /// `git status --porcelain` lists nothing: every change committed, nothing untracked.
    GitClean,
    /// The commands the task says must pass (`so that \`pytest tests/test_x.py\` passes`),
    /// each as a `tests` check; resolved when the run starts (none found: nothing checked).
    Auto,
}

impl FromStr for Check {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (kind, rest) = s.split_once(':').unwrap_or((s, ""));
        let need = |what: &str| {
            if rest.trim().is_empty() {
                Err(format!(
                    "check `{s}`: `{kind}:` needs {what} after the colon"
                ))
            } else {
                Ok(rest.trim().to_owned())
            }
        };
        match kind.trim() {
            "file_exists" => need("a path").map(Check::FileExists),
            "file_contains" => {
                let (path, text) = rest.split_once(':').ok_or_else(|| {
                    format!("check `{s}`: write file_contains:PATH:TEXT (the text after the path's colon)")
                })?;
                if path.trim().is_empty() || text.is_empty() {
                    return Err(format!(
                        "check `{s}`: file_contains needs a path and a text (file_contains:PATH:TEXT)"
                    ));
                }
                Ok(Check::FileContains {
                    path: path.trim().to_owned(),
                    text: text.to_owned(),
                })
            }
            "command" => need("a command").map(Check::Command),
            "tests" => need("a test command").map(Check::Tests),
            "git_clean" if rest.is_empty() => Ok(Check::GitClean),
            "auto" if rest.is_empty() => Ok(Check::Auto),
            _ => Err(format!(
                "unknown check `{s}` (expected file_exists:PATH, file_contains:PATH:TEXT, \
                 command:CMD, tests:CMD, git_clean or auto)"
            )),
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::FileExists(path) => write!(f, "file_exists:{path}"),
            Check::FileContains { path, text } => write!(f, "file_contains:{path}:{text}"),
            Check::Command(cmd) => write!(f, "command:{cmd}"),
            Check::Tests(cmd) => write!(f, "tests:{cmd}"),
            Check::GitClean => f.write_str("git_clean"),
            Check::Auto => f.write_str("auto"),
        }
    }
}

impl TryFrom<String> for Check {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Check> for String {
    fn from(check: Check) -> String {
        check.to_string()
    }
}

/// Words around a quoted command that say it must succeed.
#[rustfmt::skip]
const MUST_PASS: &[&str] = &[
    "pass", "passes", "succeed", "succeeds", "exit 0", "exits 0", "exits with 0", "green",
    "works", "runs cleanly", "to check", "to verify", "to confirm",
];

/// Programs a quoted test or build command starts with.
const RUNNERS: &[&str] = &[
    "pytest", "python", "python3", "cargo", "npm", "npx", "yarn", "pnpm", "node", "make", "go",
    "sh", "bash", "uv", "tox", "ruby", "rspec", "rake", "jest", "mvn", "gradle", "ctest", "deno",
    "bun", "dotnet", "mix", "php", "phpunit", "swift", "zig", "just", "nox", "test",
];

/// The checks `checks` stands for in a run of `task`: `auto` becomes a `tests` check per
/// command the task says must pass; duplicates are dropped.
pub fn resolve(checks: &[Check], task: &str) -> Vec<Check> {
    let mut out: Vec<Check> = Vec::new();
    for check in checks {
        let expanded = match check {
            Check::Auto => auto_checks(task),
            other => vec![other.clone()],
        };
        for c in expanded {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Each command `task` quotes (in backticks or double quotes) and says must pass ("so that
/// `pytest tests/test_parser.py` passes", "make sure \"cargo test\" succeeds", "run `make
/// test` to check"), as a `tests` check.
pub fn auto_checks(task: &str) -> Vec<Check> {
    let mut checks = Vec::new();
    for quote in ['`', '"'] {
        for check in quoted_commands(task, quote) {
            if !checks.contains(&check) {
                checks.push(check);
            }
        }
    }
    checks
}

/// Words around a quoted command that say it fails now ("`python3 -m unittest test_pick`
/// fails"): in a task that asks for a repair ([`REPAIRS`]), it must pass afterwards.
const FAILS_NOW: &[&str] = &["fails", "is failing", "is red", "is broken", "crashes"];

/// Verbs of a task that asks for something broken to be repaired.
const REPAIRS: &[&str] = &["fix", "repair", "correct"];

/// [`auto_checks`] for one kind of quote: a command the words around it say must pass, or
/// that the change is for ("… so `python3 loader.py` prints 42"); one they say fails now, in a
/// task that asks for a repair.
fn quoted_commands(task: &str, quote: char) -> Vec<Check> {
    let lower = task.to_lowercase();
    let repair = REPAIRS.iter().any(|w| contains_word(&lower, w));
    quoted_programs(task, quote)
        .into_iter()
        .filter(|(_, before, after)| {
            let around = format!("{before} {after}");
            let before = before.trim_end();
            MUST_PASS.iter().any(|w| contains_word(&around, w))
                || (repair && FAILS_NOW.iter().any(|w| contains_word(&around, w)))
                || before.ends_with(" so")
                || before.ends_with(" so that")
        })
        .map(|(command, _, _)| Check::Tests(command.to_owned()))
        .collect()
}

/// The commands `task` quotes in backticks that start with a test or build program (or
/// `./`), in order: "What does `python3 calc.py` print?".
pub(crate) fn quoted_runs(task: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for (command, _, _) in quoted_programs(task, '`') {
        if !out.contains(&command) {
            out.push(command);
        }
    }
    out
}

/// Each command `task` quotes in `quote`s whose first word is one of [`RUNNERS`] (or starts
/// with `./`), with its sentence before it and after it, in lower case.
fn quoted_programs(task: &str, quote: char) -> Vec<(&str, String, String)> {
    let parts: Vec<&str> = task.split(quote).collect();
    let pairs = parts.len().saturating_sub(1) / 2;
    let mut out = Vec::new();
    for i in (1..).step_by(2).take(pairs) {
        let command = parts[i].trim();
        let first = command.split_whitespace().next().unwrap_or_default();
        let runner = RUNNERS.contains(&first) || first.starts_with("./");
        if command.is_empty() || !runner || command.contains('\n') {
            continue;
        }
        let after = parts.get(i + 1).copied().unwrap_or_default();
        let after = after.split(['.', ';', '\n']).next().unwrap_or_default();
        let before = parts[i - 1]
            .rsplit(['.', ';', '\n'])
            .next()
            .unwrap_or_default();
        out.push((command, before.to_lowercase(), after.to_lowercase()));
    }
    out
}

/// Whether `text` holds `phrase` as whole words.
fn contains_word(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_parse_and_print_as_written() {
        for written in [
            "file_exists:src/a.py",
            "file_contains:notes.txt:hello: world",
            "command:grep -q x a.txt",
            "tests:pytest -q",
            "git_clean",
            "auto",
        ] {
            let check: Check = written.parse().unwrap();
            assert_eq!(check.to_string(), written);
        }
        assert_eq!(
            "file_contains:a.txt:x:y".parse::<Check>(),
            Ok(Check::FileContains {
                path: "a.txt".into(),
                text: "x:y".into()
            })
        );
        for bad in [
            "",
            "file_exists",
            "file_exists:",
            "file_contains:a.txt",
            "lint:x",
            "git_clean:x",
        ] {
            let err = bad.parse::<Check>().unwrap_err();
            assert!(
                err.contains("check") || err.contains("needs"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn auto_finds_the_command_the_task_says_must_pass() {
        let task =
            "Fix the parser so that `pytest tests/test_parser.py` passes. Do not touch `setup.py`.";
        assert_eq!(
            auto_checks(task),
            vec![Check::Tests("pytest tests/test_parser.py".into())]
        );
        assert_eq!(
            auto_checks("Make sure `cargo test -p foo` succeeds and `make lint` is green"),
            vec![
                Check::Tests("cargo test -p foo".into()),
                Check::Tests("make lint".into())
            ]
        );
        assert_eq!(
            auto_checks("Fix the off-by-one. Run \"python3 -m pytest -q\" to check."),
            vec![Check::Tests("python3 -m pytest -q".into())]
        );
        // A command that fails now, in a task that asks for the repair; a fix "so" it runs.
        assert_eq!(
            auto_checks("`python3 -m unittest test_pick` fails. The bug is in pick.py; repair it."),
            vec![Check::Tests("python3 -m unittest test_pick".into())]
        );
        assert_eq!(
            auto_checks("The script is broken. Fix it so `sh list.sh` prints one, two."),
            vec![Check::Tests("sh list.sh".into())]
        );
        assert_eq!(
            auto_checks(
                "Rename a.json to b.json and update loader.py so `python3 loader.py` prints 42."
            ),
            vec![Check::Tests("python3 loader.py".into())]
        );
        assert!(auto_checks("`make` fails. Why? Tell me what it prints").is_empty());
        assert!(auto_checks("Execute `sh summary.sh` and report the line it prints.").is_empty());
        assert!(auto_checks("Rename `foo` to `bar` so it passes review").is_empty());
        assert!(auto_checks("Run `pytest` and tell me what it prints").is_empty());
        assert!(auto_checks("no quotes here").is_empty());
        let resolved = resolve(
            &[
                Check::Auto,
                Check::Tests("pytest tests/test_parser.py".into()),
                Check::GitClean,
            ],
            task,
        );
        assert_eq!(
            resolved,
            vec![
                Check::Tests("pytest tests/test_parser.py".into()),
                Check::GitClean
            ]
        );
    }
}
