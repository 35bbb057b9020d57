//! Reference solutions of a suite's tasks, kept in a separate file beside the suite (never
//! shown to a model, never read by a run), so that a suite's own test can show each task's
//! checks are sound: they fail on the starting files and pass on a correct solution.
//!
//! ```toml
//! # evals/coding-tasks.solutions.toml: one table per task id
//! [fix-add.files]                 # written over the task's starting files
//! "calc.py" = "def add(a, b):\n    return a + b\n"
//!
//! [move-logs]
//! remove = ["a.log"]              # deleted from the workspace
//! answer = "moved"                # the final answer the answer checks see
//! [move-logs.files]
//! "logs/a.log" = "alpha\n"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::check::{evaluate, prepare, CheckOutcome};
use crate::error::EvalError;
use crate::suite::{relative, Suite, Task};

/// One task's reference solution: the workspace changes and the final answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Solution {
    /// Files written (created or replaced): relative path to content.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Files deleted, before `files` are written.
    #[serde(default)]
    pub remove: Vec<String>,
    /// The final answer.
    #[serde(default)]
    pub answer: String,
}

/// The solutions of one suite, by task id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solutions {
    /// By task id.
    pub by_task: BTreeMap<String, Solution>,
    /// The file they were loaded from.
    pub path: PathBuf,
}

impl Solutions {
    /// Load a solutions file, and check that it solves exactly the tasks of `suite` (every task
    /// has one solution, no solution names an unknown task) with workspace-relative paths.
    pub fn load(path: &Path, suite: &Suite) -> Result<Solutions, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            path: path.to_owned(),
            source,
        })?;
        let by_task: BTreeMap<String, Solution> =
            toml::from_str(&text).map_err(|e| EvalError::SuiteSyntax {
                path: path.to_owned(),
                message: e.to_string().trim_end().to_owned(),
            })?;
        let fail = |task: &str, message: String| EvalError::Task {
            path: path.to_owned(),
            task: task.to_owned(),
            message,
        };
        for (id, solution) in &by_task {
            if !suite.tasks.iter().any(|t| &t.id == id) {
                return Err(fail(
                    id,
                    format!("no such task in {}", suite.path.display()),
                ));
            }
            for p in solution.files.keys().chain(&solution.remove) {
                relative(p).map_err(|e| fail(id, e))?;
            }
        }
        if let Some(task) = suite.tasks.iter().find(|t| !by_task.contains_key(&t.id)) {
            return Err(fail(&task.id, "the task has no solution".to_owned()));
        }
        Ok(Solutions {
            by_task,
            path: path.to_owned(),
        })
    }
}

/// Evaluate `task`'s checks without a model: in a fresh workspace of its starting files with
/// `solution` applied (none: the untouched workspace and an empty answer).
pub fn check_solution(
    task: &Task,
    solution: Option<&Solution>,
) -> std::io::Result<Vec<CheckOutcome>> {
    let dir = prepare(task)?;
    let empty = Solution::default();
    let solution = solution.unwrap_or(&empty);
    for path in &solution.remove {
        let rel = relative(path).map_err(std::io::Error::other)?;
        std::fs::remove_file(dir.path().join(rel))?;
    }
    for (path, content) in &solution.files {
        let full = dir
            .path()
            .join(relative(path).map_err(std::io::Error::other)?);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, content)?;
    }
    Ok(evaluate(&task.checks, &solution.answer, dir.path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = r#"
[[task]]
id = "fix"
category = "c"
prompt = "p"
files = { "a.txt" = "old\n", "b.txt" = "gone\n" }
checks = [{ command = "grep -qx new a.txt && test ! -e b.txt" }, { answer_contains = "done" }]
"#;

    fn suite() -> Suite {
        Suite::parse(SUITE, Path::new("s.toml")).unwrap()
    }

    fn load(text: &str) -> Result<Solutions, EvalError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.solutions.toml");
        std::fs::write(&path, text).unwrap();
        Solutions::load(&path, &suite())
    }

    #[test]
    fn a_solution_passes_and_the_untouched_workspace_fails() {
        let solutions = load(
            "[fix]\nremove = [\"b.txt\"]\nanswer = \"done\"\n[fix.files]\n\"a.txt\" = \"new\\n\"\n",
        )
        .unwrap();
        let task = &suite().tasks[0];
        let solved = check_solution(task, solutions.by_task.get("fix")).unwrap();
        assert!(solved.iter().all(|o| o.passed), "{solved:?}");
        let untouched = check_solution(task, None).unwrap();
        assert!(untouched.iter().all(|o| !o.passed), "{untouched:?}");
    }

    #[test]
    fn missing_unknown_and_escaping_solutions_are_named() {
        let cases = [
            ("", "task `fix`: the task has no solution"),
            ("[fix]\n[other]\n", "task `other`: no such task in s.toml"),
            (
                "[fix]\nremove = [\"../x\"]\n",
                "task `fix`: path `../x` must be relative",
            ),
            ("[fix]\nanwser = \"x\"\n", "anwser"),
        ];
        for (text, want) in cases {
            let msg = load(text).unwrap_err().to_string();
            assert!(msg.contains("s.solutions.toml"), "{msg}");
            assert!(msg.contains(want), "{msg} (wanted {want})");
        }
    }
}
