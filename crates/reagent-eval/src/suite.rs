//! The suite format (TOML) and its loading, with errors that name the file and the task.
//!
//! ```toml
//! name = "small-tasks"
//!
//! [[task]]
//! id = "read-notes"
//! category = "read_answer"
//! prompt = "Read notes.txt and tell me which flower it names."
//! files = { "notes.txt" = "The flower is an orchid.\n", "empty/" = "" }
//! checks = [{ answer_contains = "orchid" }]
//! ```
//!
//! Check kinds: `answer_contains` / `answer_lacks` (the final answer; case-insensitive, a word
//! or number matched whole), `file_exists`, `file_contains` / `file_lacks` (case-sensitive) and
//! `command` (`sh -c` in the workspace, exit 0 passes). An answer check that a dump of the
//! workspace or of the prompt would pass needs an `answer_lacks` distractor beside it.
//!
//! A `files` key ending in `/` is an (empty) directory.

use std::collections::{BTreeMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::EvalError;

/// One check of a run's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// The final answer contains this text: case-insensitive, and a word or number is matched
    /// whole (`7` is not found in `17`).
    AnswerContains(String),
    /// The final answer does not contain this text, matched as [`Check::AnswerContains`] does.
    /// For a distractor (another file's name, another key's value) that an answer restating the
    /// whole workspace or prompt would carry and a right answer would not: it keeps an
    /// `answer_contains` check from passing a dump.
    AnswerLacks(String),
    /// This workspace file (or directory) exists after the run.
    FileExists(String),
    /// This workspace file contains this text (case-sensitive).
    FileContains {
        /// Workspace-relative path.
        path: String,
        /// The text.
        text: String,
    },
    /// This workspace file exists and does not contain this text (case-sensitive).
    FileLacks {
        /// Workspace-relative path.
        path: String,
        /// The text.
        text: String,
    },
    /// This shell command (`sh -c`), run in the workspace after the run, exits with 0 within
    /// [`crate::COMMAND_CHECK_TIMEOUT`].
    Command(String),
}

impl Check {
    /// The workspace path the check looks at, if any.
    fn path(&self) -> Option<&str> {
        match self {
            Check::FileExists(p) | Check::FileContains { path: p, .. } => Some(p),
            Check::FileLacks { path: p, .. } => Some(p),
            Check::AnswerContains(_) | Check::AnswerLacks(_) | Check::Command(_) => None,
        }
    }

    /// A one-line description, for reports.
    pub fn describe(&self) -> String {
        match self {
            Check::AnswerContains(t) => format!("answer contains {t:?}"),
            Check::AnswerLacks(t) => format!("answer lacks {t:?}"),
            Check::FileExists(p) => format!("{p} exists"),
            Check::FileContains { path, text } => format!("{path} contains {text:?}"),
            Check::FileLacks { path, text } => format!("{path} lacks {text:?}"),
            Check::Command(c) => format!("command `{c}` succeeds"),
        }
    }
}

/// One task: a prompt, the workspace it starts with, and the checks of its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Unique id within the suite.
    pub id: String,
    /// Category, for the per-category summary.
    pub category: String,
    /// What the agent is asked.
    pub prompt: String,
    /// Workspace files: relative path to content; a path ending in `/` is an empty directory.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// All must pass for the run to pass.
    pub checks: Vec<Check>,
}

impl Task {
    /// A new temporary directory holding the task's files, as a run of it starts.
    pub fn prepare_workspace(&self) -> std::io::Result<tempfile::TempDir> {
        crate::check::prepare(self)
    }
}

/// A suite of tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Name shown in reports (default: the file name without extension).
    #[serde(default)]
    pub name: String,
    /// What the suite measures.
    #[serde(default)]
    pub description: String,
    /// The tasks, in order.
    #[serde(rename = "task", default)]
    pub tasks: Vec<Task>,
    /// The file it was loaded from.
    #[serde(skip)]
    pub path: PathBuf,
}

impl Suite {
    /// Load and check a suite file.
    pub fn load(path: &Path) -> Result<Suite, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            path: path.to_owned(),
            source,
        })?;
        Suite::parse(&text, path)
    }

    /// Parse and check suite text; `path` is named in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, EvalError> {
        let mut suite: Suite = toml::from_str(text).map_err(|e| EvalError::SuiteSyntax {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        suite.path = path.to_owned();
        if suite.name.is_empty() {
            suite.name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        if suite.tasks.is_empty() {
            return Err(EvalError::Suite {
                path: path.to_owned(),
                message: "no tasks: add at least one [[task]] table".to_owned(),
            });
        }
        let mut seen = HashSet::new();
        for (i, task) in suite.tasks.iter().enumerate() {
            let fail = |message: String| EvalError::Task {
                path: path.to_owned(),
                task: if task.id.is_empty() {
                    format!("#{}", i + 1)
                } else {
                    task.id.clone()
                },
                message,
            };
            validate(task).map_err(fail)?;
            if !seen.insert(task.id.as_str()) {
                return Err(fail("the id is used by an earlier task too".to_owned()));
            }
        }
        Ok(suite)
    }

    /// Keep only the tasks with these ids (all when `ids` is empty); an unknown id is an error.
    pub fn select(&mut self, ids: &[String]) -> Result<(), EvalError> {
        if ids.is_empty() {
            return Ok(());
        }
        if let Some(missing) = ids
            .iter()
            .find(|id| !self.tasks.iter().any(|t| &t.id == *id))
        {
            return Err(EvalError::Suite {
                path: self.path.clone(),
                message: format!("no task with id `{missing}`"),
            });
        }
        self.tasks.retain(|t| ids.contains(&t.id));
        Ok(())
    }
}

fn validate(task: &Task) -> Result<(), String> {
    for (field, value) in [
        ("id", &task.id),
        ("category", &task.category),
        ("prompt", &task.prompt),
    ] {
        if value.trim().is_empty() {
            return Err(format!("`{field}` is empty"));
        }
    }
    if task.checks.is_empty() {
        return Err("no checks: a task needs at least one".to_owned());
    }
    for path in task.files.keys() {
        relative(path).map_err(|e| format!("files: {e}"))?;
    }
    for check in &task.checks {
        if let Some(path) = check.path() {
            relative(path).map_err(|e| format!("check `{}`: {e}", check.describe()))?;
        }
        match check {
            Check::AnswerContains(t) | Check::AnswerLacks(t) | Check::Command(t)
                if t.trim().is_empty() =>
            {
                return Err(format!("check `{}` is empty", check.describe()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A workspace-relative path: not empty, not absolute, no `..`.
pub(crate) fn relative(path: &str) -> Result<&Path, String> {
    let p = Path::new(path);
    if path.trim().is_empty() {
        return Err("a path is empty".to_owned());
    }
    if p.components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "path `{path}` must be relative to the workspace, without `..`"
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Suite, EvalError> {
        Suite::parse(text, Path::new("suites/x.toml"))
    }

    const GOOD: &str = r#"
[[task]]
id = "a"
category = "read"
prompt = "Read notes.txt"
files = { "notes.txt" = "orchid", "sub/" = "" }
checks = [{ answer_contains = "orchid" }, { file_contains = { path = "notes.txt", text = "o" } }]

[[task]]
id = "b"
category = "run"
prompt = "Run it"
checks = [{ command = "true" }, { file_exists = "x" }, { file_lacks = { path = "x", text = "y" } }, { answer_lacks = "spoon" }]
"#;

    #[test]
    fn a_good_suite_loads_with_every_check_kind() {
        let suite = parse(GOOD).unwrap();
        assert_eq!(suite.name, "x");
        assert_eq!(suite.tasks.len(), 2);
        assert_eq!(suite.tasks[0].files["sub/"], "");
        assert_eq!(
            suite.tasks[0].checks[1],
            Check::FileContains {
                path: "notes.txt".into(),
                text: "o".into()
            }
        );
        assert_eq!(suite.tasks[1].checks[0], Check::Command("true".into()));
        assert_eq!(suite.tasks[1].checks.len(), 4);
        assert_eq!(suite.tasks[1].checks[3], Check::AnswerLacks("spoon".into()));
    }

    #[test]
    fn syntax_errors_name_the_file_and_the_line() {
        let e = parse("[[task]]\nid = \"a\"\ncategory = \n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("suites/x.toml: not a valid suite"), "{msg}");
        assert!(msg.contains("line 3"), "{msg}");
    }

    #[test]
    fn an_unknown_check_kind_is_named() {
        let e = parse(
            "[[task]]\nid = \"a\"\ncategory = \"c\"\nprompt = \"p\"\nchecks = [{ answer_is = \"x\" }]\n",
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("answer_is"), "{msg}");
        assert!(msg.contains("answer_contains"), "{msg}");
    }

    #[test]
    fn task_errors_name_the_file_and_the_task() {
        let cases = [
            ("prompt = \"p\"\nchecks = []", "task `a`: no checks"),
            (
                "prompt = \" \"\nchecks = [{ command = \"true\" }]",
                "task `a`: `prompt` is empty",
            ),
            (
                "prompt = \"p\"\nfiles = { \"../up.txt\" = \"x\" }\nchecks = [{ command = \"true\" }]",
                "task `a`: files: path `../up.txt` must be relative",
            ),
            (
                "prompt = \"p\"\nchecks = [{ file_exists = \"/etc/passwd\" }]",
                "task `a`: check `/etc/passwd exists`: path `/etc/passwd` must be relative",
            ),
            (
                "prompt = \"p\"\nchecks = [{ answer_contains = \"\" }]",
                "task `a`: check `answer contains \"\"` is empty",
            ),
            (
                "prompt = \"p\"\nchecks = [{ answer_lacks = \" \" }]",
                "task `a`: check `answer lacks \" \"` is empty",
            ),
        ];
        for (body, want) in cases {
            let text = format!("[[task]]\nid = \"a\"\ncategory = \"c\"\n{body}\n");
            let msg = parse(&text).unwrap_err().to_string();
            assert!(msg.starts_with("suites/x.toml: "), "{msg}");
            assert!(msg.contains(want), "{msg} (wanted {want})");
        }
    }

    #[test]
    fn duplicate_ids_and_empty_suites_are_refused() {
        let one = "[[task]]\nid = \"a\"\ncategory = \"c\"\nprompt = \"p\"\nchecks = [{ command = \"true\" }]\n";
        let msg = parse(&format!("{one}{one}")).unwrap_err().to_string();
        assert!(
            msg.contains("task `a`: the id is used by an earlier task"),
            "{msg}"
        );
        let msg = parse("name = \"n\"\n").unwrap_err().to_string();
        assert_eq!(
            msg,
            "suites/x.toml: no tasks: add at least one [[task]] table"
        );
    }

    #[test]
    fn a_missing_file_is_named() {
        let msg = Suite::load(Path::new("/nonexistent/suite.toml"))
            .unwrap_err()
            .to_string();
        assert!(msg.starts_with("/nonexistent/suite.toml: "), "{msg}");
    }

    #[test]
    fn select_keeps_named_tasks_and_refuses_unknown_ids() {
        let mut suite = parse(GOOD).unwrap();
        suite.select(&["b".to_owned()]).unwrap();
        assert_eq!(suite.tasks.len(), 1);
        assert_eq!(suite.tasks[0].id, "b");
        let msg = suite.select(&["zz".to_owned()]).unwrap_err().to_string();
        assert_eq!(msg, "suites/x.toml: no task with id `zz`");
    }
}
