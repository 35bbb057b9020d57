//! What a suite run produces: every run of every task, and the summary per mode, category and
//! task. Saved as one JSON document: a file, and (by the CLI) a run store, which keeps the
//! document as opaque text; [`EvalResult::from_json`] reads it back from either.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::check::CheckOutcome;
use crate::error::EvalError;
use crate::spread::Spread;

/// The version of the result document; bumped when a field changes meaning.
pub const RESULT_FORMAT: u32 = 1;

/// One run of one task in one mode with one seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRun {
    /// Task id.
    pub task: String,
    /// Task category.
    pub category: String,
    /// Mode name (`constrained`, `seed`...).
    pub mode: String,
    /// The tool mode the loop actually used (`auto` resolved).
    pub tool_mode: String,
    /// Sampling seed.
    pub seed: i64,
    /// Every check held.
    pub passed: bool,
    /// How the run ended (`completed`, `max_iterations`...).
    pub outcome: String,
    /// Model calls.
    pub iterations: u32,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Wall time of the run in milliseconds (checks not included).
    pub wall_ms: u64,
    /// The final answer (at most 500 characters).
    pub answer: String,
    /// The layer that found the calls of each reply that had calls (`native`, `constrained`,
    /// a parser family).
    pub parse_layers: Vec<String>,
    /// Each tool call in order: its name, arguments and the first line of its result
    /// (`read_file {"path":"a.txt"} -> ok: first line`), so a failure can be read without
    /// running the task again.
    #[serde(default)]
    pub calls: Vec<String>,
    /// Each check's verdict.
    pub checks: Vec<CheckOutcome>,
    /// The run's error, for error outcomes (or why the workspace could not be prepared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The id of the run's events (what `reagent runs show ID` opens when they were recorded);
    /// none when the run never started (its workspace could not be prepared) and in results
    /// saved before runs had ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Attempts made (`--attempts`: another one follows a failed verification); the counts
    /// and times above add up every attempt's, the answer and ending are the best one's.
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

impl TaskRun {
    /// Prompt plus completion tokens.
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// Pass rate and means over a set of runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Runs.
    pub runs: u32,
    /// Runs whose checks all held.
    pub passed: u32,
    /// `passed / runs` (0 without runs).
    pub pass_rate: f64,
    /// Mean model calls per run.
    pub mean_iterations: f64,
    /// Mean tokens (prompt + completion) per run.
    pub mean_tokens: f64,
    /// Mean wall time per run, milliseconds.
    pub mean_wall_ms: f64,
    /// Mean tool calls per run.
    #[serde(default)]
    pub mean_tool_calls: f64,
    /// Tokens of every run per run that passed: what a finished task costs (none when nothing
    /// passed).
    #[serde(default)]
    pub tokens_per_pass: Option<f64>,
    /// Wall time of every run per run that passed, milliseconds (none when nothing passed).
    #[serde(default)]
    pub wall_ms_per_pass: Option<f64>,
    /// Model calls of every run per run that passed (none when nothing passed).
    #[serde(default)]
    pub model_calls_per_pass: Option<f64>,
    /// Mean attempts per run (1 without `--attempts`).
    #[serde(default)]
    pub mean_attempts: f64,
    /// The pass rates of the samples (seeds) and their spread.
    #[serde(default)]
    pub spread: Spread,
}

impl Stats {
    /// The stats of `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a TaskRun>) -> Stats {
        let runs: Vec<&TaskRun> = runs.into_iter().collect();
        let (mut n, mut passed, mut iterations, mut tokens, mut wall, mut calls, mut attempts) =
            (0u32, 0u32, 0u64, 0u64, 0u64, 0u64, 0u64);
        for r in &runs {
            n += 1;
            passed += u32::from(r.passed);
            iterations += u64::from(r.iterations);
            tokens += r.tokens();
            wall += r.wall_ms;
            calls += u64::from(r.tool_calls);
            attempts += u64::from(r.attempts);
        }
        let per_pass = |total: u64| (passed > 0).then(|| total as f64 / f64::from(passed));
        let mean = |total: u64| {
            if n == 0 {
                0.0
            } else {
                total as f64 / f64::from(n)
            }
        };
        Stats {
            runs: n,
            passed,
            pass_rate: if n == 0 {
                0.0
            } else {
                f64::from(passed) / f64::from(n)
            },
            mean_iterations: mean(iterations),
            mean_tokens: mean(tokens),
            mean_wall_ms: mean(wall),
            mean_tool_calls: mean(calls),
            tokens_per_pass: per_pass(tokens),
            wall_ms_per_pass: per_pass(wall),
            model_calls_per_pass: per_pass(iterations),
            mean_attempts: mean(attempts),
            spread: Spread::of(runs.iter().copied()),
        }
    }
}

/// Stats with the name of what they are about (a category or a task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedStats {
    /// Category or task id.
    pub name: String,
    /// The stats.
    #[serde(flatten)]
    pub stats: Stats,
}

/// The summary of one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeSummary {
    /// Mode name.
    pub mode: String,
    /// Over every run of the mode.
    pub overall: Stats,
    /// Per category, in the suite's order.
    pub categories: Vec<NamedStats>,
    /// Per task, in the suite's order.
    pub tasks: Vec<NamedStats>,
}

/// Summaries per mode of `runs`, modes in `modes` order (modes without runs are left out);
/// categories and tasks in the order they first appear.
pub fn summarize(runs: &[TaskRun], modes: &[String]) -> Vec<ModeSummary> {
    modes
        .iter()
        .filter_map(|mode| {
            let of_mode: Vec<&TaskRun> = runs.iter().filter(|r| &r.mode == mode).collect();
            if of_mode.is_empty() {
                return None;
            }
            let group = |key: fn(&TaskRun) -> &str| -> Vec<NamedStats> {
                let mut names: Vec<&str> = Vec::new();
                for r in &of_mode {
                    if !names.contains(&key(r)) {
                        names.push(key(r));
                    }
                }
                names
                    .into_iter()
                    .map(|name| NamedStats {
                        name: name.to_owned(),
                        stats: Stats::of(of_mode.iter().copied().filter(|r| key(r) == name)),
                    })
                    .collect()
            };
            Some(ModeSummary {
                mode: mode.clone(),
                overall: Stats::of(of_mode.iter().copied()),
                categories: group(|r| &r.category),
                tasks: group(|r| &r.task),
            })
        })
        .collect()
}

/// A suite run: what was run, every run, and the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalResult {
    /// [`RESULT_FORMAT`].
    pub format: u32,
    /// Suite name.
    pub suite: String,
    /// Suite file as given.
    pub suite_file: String,
    /// Tasks in the suite (after any selection).
    pub tasks: u32,
    /// When the run started (RFC 3339, UTC).
    pub started: String,
    /// Model name.
    pub model: String,
    /// Provider name (`ollama`, `openai`...).
    pub provider: String,
    /// Modes, in the order they ran.
    pub modes: Vec<String>,
    /// Seeds 1..=seeds were used.
    pub seeds: u32,
    /// Every run.
    pub runs: Vec<TaskRun>,
    /// Per mode: overall, per category, per task.
    pub summary: Vec<ModeSummary>,
    /// The suite was stopped (Ctrl-C, SIGTERM) before every run was done: `runs` holds the
    /// finished ones only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

impl EvalResult {
    /// Write as pretty JSON, creating the parent directory.
    pub fn save(&self, path: &Path) -> Result<(), EvalError> {
        let io = |source| EvalError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| io(e.into()))?;
        std::fs::write(path, text + "\n").map_err(io)
    }

    /// Read a result file; its summary is recomputed from its runs.
    pub fn load(path: &Path) -> Result<EvalResult, EvalError> {
        let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
            path: path.to_owned(),
            source,
        })?;
        EvalResult::from_json(&text).map_err(|message| EvalError::Result {
            path: path.to_owned(),
            message,
        })
    }

    /// Read a result document (as [`EvalResult::save`] writes it, wherever it was kept); its
    /// summary is recomputed from its runs. The error says what is wrong with the text.
    pub fn from_json(text: &str) -> Result<EvalResult, String> {
        let mut result: EvalResult = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if result.format != RESULT_FORMAT {
            return Err(format!(
                "format {} (this reagent reads format {RESULT_FORMAT})",
                result.format
            ));
        }
        result.summary = summarize(&result.runs, &result.modes);
        Ok(result)
    }

    /// Runs whose checks all held, and all runs (every mode and seed).
    pub fn passed_of_total(&self) -> (u32, u32) {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let passed = self.runs.iter().filter(|r| r.passed).count();
        (count(passed), count(self.runs.len()))
    }
}

/// `t` as RFC 3339 UTC to the second (`2026-11-23T20:00:00Z`), as in [`EvalResult::started`].
pub fn timestamp(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Where a result is saved by default: `<dir>/.reagent/evals/<started>.json`, the timestamp
/// with `:` replaced so the name is valid everywhere.
pub fn default_result_path(dir: &Path, started: &str) -> PathBuf {
    dir.join(".reagent")
        .join("evals")
        .join(format!("{}.json", started.replace(':', "-")))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A run for tests.
    pub(crate) fn run(
        task: &str,
        category: &str,
        mode: &str,
        passed: bool,
        iterations: u32,
    ) -> TaskRun {
        TaskRun {
            task: task.into(),
            category: category.into(),
            mode: mode.into(),
            tool_mode: mode.into(),
            seed: 1,
            passed,
            outcome: "completed".into(),
            iterations,
            tool_calls: iterations.saturating_sub(1),
            prompt_tokens: 100 * u64::from(iterations),
            completion_tokens: 10,
            wall_ms: 1000,
            answer: String::new(),
            parse_layers: vec![],
            calls: vec![],
            checks: vec![],
            error: None,
            run_id: Some(format!("{task}-{mode}")),
            attempts: 1,
        }
    }

    #[test]
    fn summaries_group_by_mode_category_and_task() {
        let runs = vec![
            run("a", "read", "constrained", true, 2),
            run("b", "read", "constrained", false, 4),
            run("c", "edit", "constrained", true, 3),
            run("a", "read", "seed", false, 1),
            run("a", "read", "constrained", false, 6),
        ];
        let modes = vec![
            "constrained".to_owned(),
            "seed".to_owned(),
            "prompt".to_owned(),
        ];
        let s = summarize(&runs, &modes);
        assert_eq!(s.len(), 2, "prompt has no runs");
        let c = &s[0];
        assert_eq!(c.mode, "constrained");
        assert_eq!((c.overall.runs, c.overall.passed), (4, 2));
        assert_eq!(c.overall.pass_rate, 0.5);
        assert_eq!(c.overall.mean_iterations, 15.0 / 4.0);
        assert_eq!(c.overall.mean_tokens, (1500.0 + 40.0) / 4.0);
        // Every run's model calls per run that passed: a finished task's cost.
        assert_eq!(c.overall.model_calls_per_pass, Some(15.0 / 2.0));
        assert_eq!(c.overall.mean_attempts, 1.0);
        assert_eq!(s[1].overall.model_calls_per_pass, None);
        let names: Vec<&str> = c.categories.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["read", "edit"]);
        assert_eq!(
            (c.categories[0].stats.runs, c.categories[0].stats.passed),
            (3, 1)
        );
        assert_eq!(c.tasks[0].name, "a");
        assert_eq!((c.tasks[0].stats.runs, c.tasks[0].stats.passed), (2, 1));
        assert_eq!(s[1].overall.pass_rate, 0.0);
        assert_eq!(Stats::of([]).pass_rate, 0.0);
    }

    pub(crate) fn result(runs: Vec<TaskRun>, modes: &[&str]) -> EvalResult {
        let modes: Vec<String> = modes.iter().map(|m| m.to_string()).collect();
        EvalResult {
            format: RESULT_FORMAT,
            suite: "s".into(),
            suite_file: "s.toml".into(),
            tasks: 3,
            started: "2026-11-23T20:00:00Z".into(),
            model: "m".into(),
            provider: "openai".into(),
            summary: summarize(&runs, &modes),
            modes,
            seeds: 1,
            runs,
            interrupted: false,
        }
    }

    #[test]
    fn results_round_trip_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let r = result(vec![run("a", "read", "native", true, 2)], &["native"]);
        let path = default_result_path(dir.path(), &r.started);
        assert!(path.ends_with(".reagent/evals/2026-11-23T20-00-00Z.json"));
        r.save(&path).unwrap();
        assert_eq!(EvalResult::load(&path).unwrap(), r);
        assert_eq!(r.runs[0].run_id.as_deref(), Some("a-native"));
    }

    #[test]
    fn results_saved_before_runs_had_ids_still_load() {
        let r = result(
            vec![
                run("a", "read", "native", true, 2),
                run("b", "read", "native", false, 2),
            ],
            &["native"],
        );
        assert_eq!(r.passed_of_total(), (1, 2));
        let mut older = serde_json::to_value(&r).unwrap();
        for run in older["runs"].as_array_mut().unwrap() {
            let run = run.as_object_mut().unwrap();
            run.remove("run_id").unwrap();
            run.remove("attempts").unwrap();
        }
        let loaded = EvalResult::from_json(&older.to_string()).unwrap();
        assert!(loaded.runs.iter().all(|run| run.run_id.is_none()));
        assert!(loaded.runs.iter().all(|run| run.attempts == 1));
        assert_eq!(loaded.summary, r.summary);
    }

    #[test]
    fn foreign_files_are_refused_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.json");
        std::fs::write(&path, "{\"hello\": 1}").unwrap();
        let msg = EvalResult::load(&path).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("{}: not an eval result: ", path.display())),
            "{msg}"
        );
        let mut r = result(vec![], &["native"]);
        r.format = 99;
        r.save(&path).unwrap();
        let msg = EvalResult::load(&path).unwrap_err().to_string();
        assert!(
            msg.ends_with("format 99 (this reagent reads format 1)"),
            "{msg}"
        );
    }
}
