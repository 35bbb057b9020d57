//! A task's fresh workspace, and its checks evaluated after a run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::suite::{relative, Check, Task};

/// How long a `command` check may run before it counts as failed.
pub const COMMAND_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// What was checked ([`Check::describe`]).
    pub check: String,
    /// Whether it held.
    pub passed: bool,
    /// Why not, when it failed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// A fresh temporary workspace holding the task's files.
pub(crate) fn prepare(task: &Task) -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("reagent-eval-").tempdir()?;
    for (path, content) in &task.files {
        let rel = relative(path).map_err(std::io::Error::other)?;
        let full = dir.path().join(rel);
        if path.ends_with('/') {
            std::fs::create_dir_all(&full)?;
            continue;
        }
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, content)?;
    }
    Ok(dir)
}

/// Whether `answer` contains `needle`, case-insensitively; where the needle begins or ends with
/// a letter or digit, the match must not continue a word there (`7` is not in `17`, `cat` is
/// not in `catalog`).
pub fn answer_contains(answer: &str, needle: &str) -> bool {
    let hay = answer.to_lowercase();
    let needle = needle.to_lowercase();
    if needle.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let starts_word = word(needle.chars().next());
    let ends_word = word(needle.chars().last());
    hay.match_indices(&needle).any(|(i, m)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + m.len()..].chars().next();
        !((starts_word && word(before)) || (ends_word && word(after)))
    })
}

/// Evaluate every check of a run.
pub(crate) fn evaluate(checks: &[Check], answer: &str, workspace: &Path) -> Vec<CheckOutcome> {
    checks
        .iter()
        .map(|check| {
            let detail = match check {
                Check::AnswerContains(text) => {
                    if answer_contains(answer, text) {
                        String::new()
                    } else {
                        format!("the answer was {:?}", clip(answer, 200))
                    }
                }
                Check::AnswerLacks(text) => {
                    if answer_contains(answer, text) {
                        format!("the answer names {text:?}: {:?}", clip(answer, 200))
                    } else {
                        String::new()
                    }
                }
                Check::FileExists(path) => match std::fs::symlink_metadata(workspace.join(path)) {
                    Ok(_) => String::new(),
                    Err(e) => format!("{path}: {e}"),
                },
                Check::FileContains { path, text } => match read(workspace, path) {
                    Ok(content) if content.contains(text.as_str()) => String::new(),
                    Ok(content) => format!("{path} holds {:?}", clip(&content, 200)),
                    Err(e) => e,
                },
                Check::FileLacks { path, text } => match read(workspace, path) {
                    Ok(content) if !content.contains(text.as_str()) => String::new(),
                    Ok(_) => format!("{path} still contains {text:?}"),
                    Err(e) => e,
                },
                Check::Command(command) => run_command(command, workspace),
            };
            CheckOutcome {
                check: check.describe(),
                passed: detail.is_empty(),
                detail,
            }
        })
        .collect()
}

fn read(workspace: &Path, path: &str) -> Result<String, String> {
    std::fs::read(workspace.join(path))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("{path}: {e}"))
}

/// Run `command` with `sh -c` in `workspace`; empty when it exited with 0 in time, else why not.
fn run_command(command: &str, workspace: &Path) -> String {
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return format!("cannot start sh: {e}"),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return String::new(),
            Ok(Some(status)) => {
                let mut err = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
                }
                return format!("{status}; stderr: {:?}", clip(&err, 200));
            }
            Ok(None) if started.elapsed() >= COMMAND_CHECK_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("timed out after {}s", COMMAND_CHECK_TIMEOUT.as_secs());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return format!("cannot wait for sh: {e}"),
        }
    }
}

/// At most `max` characters of `s`, with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn task(files: &[(&str, &str)]) -> Task {
        Task {
            id: "t".into(),
            category: "c".into(),
            prompt: "p".into(),
            files: files
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            checks: vec![],
        }
    }

    fn one(check: Check, answer: &str, ws: &Path) -> CheckOutcome {
        evaluate(&[check], answer, ws).remove(0)
    }

    #[test]
    fn the_workspace_holds_the_files_and_directories() {
        let dir = prepare(&task(&[
            ("a/b/c.txt", "deep"),
            ("empty/", ""),
            ("top", "x"),
        ]))
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
            "deep"
        );
        assert!(dir.path().join("empty").is_dir());
        assert_eq!(
            std::fs::read_dir(dir.path().join("empty")).unwrap().count(),
            0
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("top")).unwrap(),
            "x"
        );
    }

    #[test]
    fn answers_match_case_insensitively_and_whole_words() {
        assert!(answer_contains("The flower is an ORCHID.", "orchid"));
        assert!(answer_contains("It has 7 lines", "7"));
        assert!(!answer_contains("It has 17 lines", "7"));
        assert!(!answer_contains("It has 70 lines", "7"));
        assert!(!answer_contains("a catalog", "cat"));
        assert!(answer_contains("port=8080;", "port=8080"));
        assert!(answer_contains("(blue-42)", "blue-42"));
        assert!(!answer_contains("anything", ""));
        assert!(answer_contains("Ünïcode ÄBC", "äbc"));
    }

    #[test]
    fn answer_check_passes_and_fails() {
        let dir = tempfile::tempdir().unwrap();
        let ok = one(
            Check::AnswerContains("orchid".into()),
            "an Orchid",
            dir.path(),
        );
        assert!(ok.passed, "{ok:?}");
        assert!(ok.detail.is_empty());
        let bad = one(Check::AnswerContains("orchid".into()), "a rose", dir.path());
        assert!(!bad.passed);
        assert_eq!(bad.detail, "the answer was \"a rose\"");
    }

    #[test]
    fn answer_lacks_fails_an_answer_that_names_the_distractor() {
        let dir = tempfile::tempdir().unwrap();
        let lacks = |answer: &str| one(Check::AnswerLacks("a.txt".into()), answer, dir.path());
        assert!(lacks("It is in b.txt.").passed);
        assert!(lacks("It is in data.txt.").passed, "matched inside a word");
        let dump = lacks("The workspace holds 3 files: A.txt, b.txt, c.txt.");
        assert!(!dump.passed);
        assert_eq!(
            dump.detail,
            "the answer names \"a.txt\": \"The workspace holds 3 files: A.txt, b.txt, c.txt.\""
        );
    }

    #[test]
    fn file_checks_pass_and_fail() {
        let dir = prepare(&task(&[("a.txt", "hello world"), ("d/", "")])).unwrap();
        let ws = dir.path();
        assert!(one(Check::FileExists("a.txt".into()), "", ws).passed);
        assert!(one(Check::FileExists("d".into()), "", ws).passed);
        let missing = one(Check::FileExists("b.txt".into()), "", ws);
        assert!(!missing.passed);
        assert!(missing.detail.starts_with("b.txt: "), "{missing:?}");
        let contains = |text: &str| Check::FileContains {
            path: "a.txt".into(),
            text: text.into(),
        };
        assert!(one(contains("world"), "", ws).passed);
        let no = one(contains("World"), "", ws);
        assert!(!no.passed);
        assert_eq!(no.detail, "a.txt holds \"hello world\"");
        let lacks = |path: &str, text: &str| Check::FileLacks {
            path: path.into(),
            text: text.into(),
        };
        assert!(one(lacks("a.txt", "mars"), "", ws).passed);
        assert!(!one(lacks("a.txt", "hello"), "", ws).passed);
        assert!(!one(lacks("gone.txt", "hello"), "", ws).passed);
    }

    #[test]
    fn command_checks_run_in_the_workspace() {
        let dir = prepare(&task(&[("a.txt", "one\ntwo\n")])).unwrap();
        let ws = dir.path();
        assert!(
            one(
                Check::Command("test \"$(wc -l < a.txt)\" -eq 2".into()),
                "",
                ws
            )
            .passed
        );
        let failed = one(Check::Command("echo nope >&2; exit 3".into()), "", ws);
        assert!(!failed.passed);
        assert!(failed.detail.contains("exit status: 3"), "{failed:?}");
        assert!(failed.detail.contains("nope"), "{failed:?}");
    }

    #[test]
    fn a_command_check_that_hangs_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = one(Check::Command("sleep 60".into()), "", dir.path());
        assert!(!out.passed);
        assert_eq!(out.detail, "timed out after 10s");
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn clip_cuts_on_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("hi", 5), "hi");
    }
}
