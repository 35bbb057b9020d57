//! Checkpoints of a git work tree: a commit on `refs/reagent/checkpoints/<id>` made through a
//! temporary index, and restoring the workspace's part of the work tree from it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::{CheckpointError, Method, Restored};

/// The prefix of checkpoint refs.
pub(crate) const REF_PREFIX: &str = "refs/reagent/checkpoints/";

/// A repository the workspace lies in.
pub(super) struct Repo {
    /// The work tree's top folder.
    top: PathBuf,
    /// The workspace's path below `top` (`""` when it is the top), with a trailing `/`.
    prefix: String,
    /// The repository's git folder.
    git_dir: PathBuf,
}

impl Repo {
    /// The repository whose work tree holds `workspace`, if any.
    pub(super) fn find(workspace: &Path) -> Result<Option<Repo>, CheckpointError> {
        let inside = git(
            workspace,
            None,
            &["rev-parse", "--is-inside-work-tree"],
            None,
        );
        if !matches!(inside.as_deref().map(str::trim), Ok("true")) {
            return Ok(None);
        }
        let top = git(workspace, None, &["rev-parse", "--show-toplevel"], None)?;
        let prefix = git(workspace, None, &["rev-parse", "--show-prefix"], None)?;
        let git_dir = git(workspace, None, &["rev-parse", "--absolute-git-dir"], None)?;
        Ok(Some(Repo {
            top: PathBuf::from(top.trim_end_matches('\n')),
            prefix: prefix.trim_end_matches('\n').to_owned(),
            git_dir: PathBuf::from(git_dir.trim_end_matches('\n')),
        }))
    }

    /// The repository of a workspace that had one when its checkpoint was taken.
    pub(super) fn open(workspace: &Path) -> Result<Repo, CheckpointError> {
        Repo::find(workspace)?.ok_or_else(|| {
            CheckpointError(format!(
                "{} is no longer in a git work tree",
                workspace.display()
            ))
        })
    }

    /// The pathspec of the workspace's part of the work tree.
    fn pathspec(&self) -> String {
        if self.prefix.is_empty() {
            ".".to_owned()
        } else {
            self.prefix.clone()
        }
    }

    /// A tree of the work tree as it is now: the user's index (else `base`, a commit or `HEAD`;
    /// none: empty) outside the workspace, the files on disk inside it (untracked included,
    /// ignored ones not).
    fn tree_now(&self, base: Option<&str>) -> Result<String, CheckpointError> {
        let index = TempIndex::new(&self.git_dir);
        // A copy of the user's index keeps its file stat cache, so `add` hashes only the files
        // that changed (a large repository stays quick); only the workspace's part is compared.
        let copied = std::fs::copy(self.git_dir.join("index"), &index.0).is_ok();
        match base {
            _ if copied => String::new(),
            Some(base) => git(&self.top, Some(&index.0), &["read-tree", base], None)?,
            None => git(&self.top, Some(&index.0), &["read-tree", "--empty"], None)?,
        };
        git(
            &self.top,
            Some(&index.0),
            &["add", "-A", "--", &self.pathspec()],
            None,
        )?;
        Ok(git(&self.top, Some(&index.0), &["write-tree"], None)?
            .trim()
            .to_owned())
    }

    /// `HEAD`'s commit, if the repository has one.
    fn head(&self) -> Option<String> {
        git(
            &self.top,
            None,
            &["rev-parse", "--verify", "-q", "HEAD^{commit}"],
            None,
        )
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
    }

    /// Commit the work tree's state onto `refs/reagent/checkpoints/<id>`.
    pub(super) fn take(&self, id: &str) -> Result<Method, CheckpointError> {
        let head = self.head();
        let tree = self.tree_now(head.as_deref())?;
        let message = format!("reagent checkpoint {id}");
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
        if let Some(head) = &head {
            args.extend(["-p", head.as_str()]);
        }
        let commit = git(&self.top, None, &args, None)?.trim().to_owned();
        let reference = format!("{REF_PREFIX}{id}");
        git(&self.top, None, &["update-ref", &reference, &commit], None)?;
        Ok(Method::Git { reference, commit })
    }

    /// Make the workspace's part of the work tree what `commit` holds (with `apply` false,
    /// only say what that would change).
    pub(super) fn restore(&self, commit: &str, apply: bool) -> Result<Restored, CheckpointError> {
        let saved = format!("{commit}^{{tree}}");
        let now = self.tree_now(Some(commit))?;
        let diff = git(
            &self.top,
            None,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                &saved,
                &now,
                "--",
                &self.pathspec(),
            ],
            None,
        )?;
        let mut fields = diff.split('\0').filter(|f| !f.is_empty());
        let (mut back, mut created) = (Vec::new(), Vec::new());
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            if status == "A" {
                created.push(path.to_owned());
            } else {
                back.push(path.to_owned());
            }
        }
        if apply && !back.is_empty() {
            let index = TempIndex::new(&self.git_dir);
            git(&self.top, Some(&index.0), &["read-tree", commit], None)?;
            let list: String = back.iter().map(|p| format!("{p}\0")).collect();
            git(
                &self.top,
                Some(&index.0),
                &["checkout-index", "-f", "-z", "--stdin"],
                Some(&list),
            )?;
        }
        for path in created.iter().filter(|_| apply) {
            let full = self.top.join(path);
            std::fs::remove_file(&full)
                .map_err(|e| CheckpointError(format!("cannot delete {}: {e}", full.display())))?;
            remove_empty_parents(&full, &self.top.join(&self.prefix));
        }
        let shown = |p: &String| p.strip_prefix(&self.prefix).unwrap_or(p).to_owned();
        Ok(Restored {
            restored: back.iter().map(shown).collect(),
            deleted: created.iter().map(shown).collect(),
        })
    }

    /// Where copies of the ignored files a run writes are kept for checkpoint `id`: inside the
    /// git folder, which the tools never write and git never tracks.
    pub(super) fn copies(&self, id: &str) -> PathBuf {
        self.git_dir.join("reagent-checkpoints").join(id)
    }

    /// Whether git ignores `rel` (relative to `workspace`), so a commit does not keep it.
    pub(super) fn ignores(&self, workspace: &Path, rel: &str) -> bool {
        git(workspace, None, &["check-ignore", "-q", "--", rel], None).is_ok()
    }

    /// Delete a checkpoint ref.
    pub(super) fn delete_ref(&self, reference: &str) -> Result<(), CheckpointError> {
        git(&self.top, None, &["update-ref", "-d", reference], None).map(|_| ())
    }
}

/// Remove the now empty folders between `file` and `stop` (exclusive).
fn remove_empty_parents(file: &Path, stop: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == stop || !d.starts_with(stop) || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// A temporary index file in the git folder, removed when dropped.
struct TempIndex(PathBuf);

impl TempIndex {
    fn new(git_dir: &Path) -> Self {
        TempIndex(git_dir.join(format!("reagent-index-{}", crate::new_run_id())))
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Run `git args` in `dir` (with `index` as its index, `input` on stdin); its stdout, or an
/// error naming the command and what git said. Hooks and the fsmonitor are off: a
/// checkpoint runs no program the repository names.
pub(crate) fn git(
    dir: &Path,
    index: Option<&Path>,
    args: &[&str],
    input: Option<&str>,
) -> Result<String, CheckpointError> {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_AUTHOR_NAME", "reagent")
        .env("GIT_AUTHOR_EMAIL", "reagent@localhost")
        .env("GIT_COMMITTER_NAME", "reagent")
        .env("GIT_COMMITTER_EMAIL", "reagent@localhost")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let shown = || format!("git {}", args.join(" "));
    let mut child = cmd
        .spawn()
        .map_err(|e| CheckpointError(format!("cannot run {}: {e}", shown())))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        use std::io::Write;
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| CheckpointError(format!("{}: {e}", shown())))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| CheckpointError(format!("{}: {e}", shown())))?;
    if !out.status.success() {
        return Err(CheckpointError(format!(
            "{} failed ({}): {}",
            shown(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
