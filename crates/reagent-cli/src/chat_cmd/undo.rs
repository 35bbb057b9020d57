//! `/undo` and `/diff`: each turn of the chat remembers the conversation before it and the
//! checkpoints its runs took before their first change (reagent-core's run checkpoints).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use reagent_core::checkpoint::{Checkpoint, Method};
use reagent_core::SessionSnapshot;

/// One turn of this chat, as far as undoing it goes.
pub(crate) struct TurnRecord {
    /// The conversation before the turn's message.
    pub(crate) before: SessionSnapshot,
    /// The checkpoints of the turn's runs (a retried turn has several), oldest first.
    pub(crate) checkpoints: Vec<Checkpoint>,
}

/// Put the files back as they were before the turn: its runs' checkpoints, newest first. The
/// lines say what was restored and deleted.
pub(crate) fn restore_files(record: &TurnRecord) -> anyhow::Result<Vec<String>> {
    let mut said = Vec::new();
    for checkpoint in record.checkpoints.iter().rev() {
        let done = checkpoint
            .restore()
            .map_err(|e| anyhow::anyhow!("cannot restore checkpoint {}: {e}", checkpoint.id))?;
        said.extend(done.restored.iter().map(|p| format!("restored {p}")));
        said.extend(done.deleted.iter().map(|p| format!("deleted {p}")));
    }
    Ok(said)
}

/// `/diff`: every file the chat's turns changed, as a unified diff from its content before the
/// first turn that changed it to its content now; empty when nothing differs.
pub(crate) fn session_diff(workspace: &Path, turns: &[TurnRecord]) -> anyhow::Result<String> {
    diff_since(workspace, turns.iter().flat_map(|t| &t.checkpoints))
}

/// The unified diff of every file `checkpoints` (oldest first) cover, from its content at the
/// oldest one that covers it to now.
fn diff_since<'a>(
    workspace: &Path,
    checkpoints: impl Iterator<Item = &'a Checkpoint>,
) -> anyhow::Result<String> {
    // The content each file had at the oldest checkpoint that covers it (`None`: absent).
    let mut first: BTreeMap<String, Option<String>> = BTreeMap::new();
    for checkpoint in checkpoints {
        let changed = checkpoint
            .preview()
            .map_err(|e| anyhow::anyhow!("cannot read checkpoint {}: {e}", checkpoint.id))?;
        for path in changed.restored {
            if let std::collections::btree_map::Entry::Vacant(slot) = first.entry(path) {
                let old = content_at(checkpoint, slot.key())?;
                slot.insert(Some(old));
            }
        }
        for path in changed.deleted {
            first.entry(path).or_insert(None);
        }
    }
    let mut out = String::new();
    for (path, old) in first {
        let now = std::fs::read_to_string(workspace.join(&path)).ok();
        if now == old {
            continue;
        }
        let from = if old.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".to_owned()
        };
        let to = if now.is_some() {
            format!("b/{path}")
        } else {
            "/dev/null".to_owned()
        };
        let old = old.unwrap_or_default();
        let now = now.unwrap_or_default();
        out.push_str(
            &similar::TextDiff::from_lines(&old, &now)
                .unified_diff()
                .context_radius(3)
                .header(&from, &to)
                .to_string(),
        );
    }
    Ok(out)
}

/// The content `path` (workspace-relative) had when `checkpoint` was taken.
fn content_at(checkpoint: &Checkpoint, path: &str) -> anyhow::Result<String> {
    match &checkpoint.method {
        Method::Files { dir } => {
            let copy = dir.join("files").join(path);
            std::fs::read_to_string(&copy)
                .with_context(|| format!("cannot read the copy {}", copy.display()))
        }
        Method::Git { commit, .. } => {
            let out = std::process::Command::new("git")
                .arg("-C")
                .arg(&checkpoint.workspace)
                .args(["show", &format!("{commit}:./{path}")])
                .output()
                .context("cannot run git")?;
            if !out.status.success() {
                anyhow::bail!(
                    "git show {commit}:{path}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .expect("git is needed for this test");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn the_diff_runs_from_the_oldest_checkpoint_inside_git() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::write(ws.join("a.txt"), "one\ntwo\n").unwrap();
        git(ws, &["init", "-q"]);
        git(ws, &["add", "."]);
        git(ws, &["commit", "-qm", "first"]);
        let turn1 = Checkpoint::take(ws, "turn1", None).unwrap();
        std::fs::write(ws.join("a.txt"), "one\nTWO\n").unwrap();
        let turn2 = Checkpoint::take(ws, "turn2", None).unwrap();
        std::fs::write(ws.join("a.txt"), "one\nTWO\nthree\n").unwrap();
        std::fs::write(ws.join("new.txt"), "fresh\n").unwrap();

        let diff = diff_since(ws, [&turn1, &turn2].into_iter()).unwrap();
        assert!(
            diff.contains("--- a/a.txt\n+++ b/a.txt\n"),
            "from the first checkpoint: {diff}"
        );
        assert!(diff.contains("-two\n+TWO\n+three\n"), "{diff}");
        assert!(
            diff.contains("--- /dev/null\n+++ b/new.txt\n") && diff.contains("+fresh"),
            "a created file: {diff}"
        );
        for c in [turn1, turn2] {
            c.discard().unwrap();
        }
    }

    #[test]
    fn the_diff_reads_the_copies_outside_git() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(ws.join("a.txt"), "old\n").unwrap();
        let copies = dir.path().join("copies");
        let checkpoint = Checkpoint::take(&ws, "turn1", Some(&copies)).unwrap();
        checkpoint.before_change(Some("a.txt")).unwrap();
        std::fs::write(ws.join("a.txt"), "new\n").unwrap();
        let diff = diff_since(&ws, std::iter::once(&checkpoint)).unwrap();
        assert!(diff.contains("-old\n+new\n"), "{diff}");

        // Put back: nothing differs any more.
        checkpoint.restore().unwrap();
        assert_eq!(diff_since(&ws, std::iter::once(&checkpoint)).unwrap(), "");
    }
}
