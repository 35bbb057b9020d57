//! Checkpoints: the workspace as it was before a run (or a turn) changed it, and restoring it.
//!
//! In a git work tree a checkpoint is a commit of the work tree's state — tracked and
//! untracked files, not ignored ones — on a private ref, `refs/reagent/checkpoints/<id>`, made
//! through a temporary index (`GIT_INDEX_FILE`): the user's index, `HEAD` and branches are
//! never touched; an ignored file the file tools write is copied into
//! `.git/reagent-checkpoints/<id>` first. Elsewhere it is a folder of copies: each file is copied before the run first
//! changes it (a file that did not exist is recorded, so restoring deletes it), and before a
//! command (which may change anything) every file of the workspace is copied once.
//!
//! The loop takes one before a run's first mutating tool call when
//! [`VerifyConfig::checkpoints`](crate::VerifyConfig::checkpoints) is on and announces it in a
//! `checkpoint` event; [`Checkpoint::from_event`] reads it back (`reagent runs undo`). A
//! library user (an interactive console's `/undo`) may take one before any turn with
//! [`Checkpoint::take`] and restore it with [`Checkpoint::restore`].
//!
//! ```no_run
//! use reagent_core::checkpoint::Checkpoint;
//! # fn demo() -> Result<(), reagent_core::checkpoint::CheckpointError> {
//! let workspace = std::path::Path::new("my-project");
//! let checkpoint = Checkpoint::take(workspace, "turn-3", None)?;
//! checkpoint.before_change(None)?; // outside git: copy everything now (git: nothing to do)
//! // ... the turn changes files ...
//! let restored = checkpoint.restore()?;
//! println!("restored {:?}, deleted {:?}", restored.restored, restored.deleted);
//! # Ok(()) }
//! ```

use std::path::{Component, Path, PathBuf};

use reagent_protocol::EventKind;
use serde::{Deserialize, Serialize};

mod files;
mod git;

/// Why a checkpoint could not be taken, extended or restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointError(pub String);

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CheckpointError {}

/// How a checkpoint keeps the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    /// A commit on a private ref of the workspace's git repository.
    Git {
        /// The ref (`refs/reagent/checkpoints/<id>`).
        reference: String,
        /// The commit.
        commit: String,
    },
    /// Copies of files and a manifest in a folder.
    Files {
        /// The folder (`<dir>/<id>`).
        dir: PathBuf,
    },
}

/// The workspace as it was when the checkpoint was taken (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Its id (a run's id for the loop's checkpoints).
    pub id: String,
    /// The workspace directory.
    pub workspace: PathBuf,
    /// How it is kept.
    pub method: Method,
}

/// What restoring a checkpoint did (workspace-relative paths).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restored {
    /// Files written back with their recorded content.
    pub restored: Vec<String>,
    /// Files deleted because they did not exist when the checkpoint was taken.
    pub deleted: Vec<String>,
}

impl Checkpoint {
    /// Record `workspace` now as checkpoint `id`: a commit on a private ref inside a git work
    /// tree, else an (empty, filled by [`Checkpoint::before_change`]) folder of copies under
    /// `files_dir` (default `<workspace>/.reagent/checkpoints`).
    pub fn take(
        workspace: &Path,
        id: &str,
        files_dir: Option<&Path>,
    ) -> Result<Checkpoint, CheckpointError> {
        check_id(id)?;
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError(format!("workspace {}: {e}", workspace.display())))?;
        let method = match git::Repo::find(&workspace)? {
            Some(repo) => repo.take(id)?,
            None => {
                let base =
                    files_dir.map_or_else(|| default_files_dir(&workspace), Path::to_path_buf);
                files::create(&base.join(id))?
            }
        };
        Ok(Checkpoint {
            id: id.to_owned(),
            workspace,
            method,
        })
    }

    /// Before a change: outside git, copy the file at `path` (workspace-relative) unless it
    /// already is, or with `None` (a command, which may change anything) every file of the
    /// workspace. Inside git the commit holds every file but the ignored ones: an ignored file
    /// at `path` is copied into the git folder (what commands do to ignored files, such as
    /// build output, is not kept).
    pub fn before_change(&self, path: Option<&str>) -> Result<(), CheckpointError> {
        match &self.method {
            Method::Git { .. } => {
                let Some(rel) = path.and_then(|p| plain_relative(&self.workspace, p)) else {
                    return Ok(());
                };
                let rel = rel.to_string_lossy();
                let repo = git::Repo::open(&self.workspace)?;
                if !repo.ignores(&self.workspace, &rel) {
                    return Ok(());
                }
                let copies = repo.copies(&self.id);
                if !copies.join("manifest.json").is_file() {
                    files::create(&copies)?;
                }
                files::save_one(&self.workspace, &copies, &rel)
            }
            Method::Files { dir } => match path {
                Some(path) => files::save_one(&self.workspace, dir, path),
                None => files::save_all(&self.workspace, dir),
            },
        }
    }

    /// Put the workspace back as it was: files changed since are written back, files created
    /// since are deleted (outside git: among those recorded or, after a command, any).
    pub fn restore(&self) -> Result<Restored, CheckpointError> {
        self.restore_or_preview(true)
    }

    /// What [`Checkpoint::restore`] would write back and delete, without doing it.
    pub fn preview(&self) -> Result<Restored, CheckpointError> {
        self.restore_or_preview(false)
    }

    fn restore_or_preview(&self, apply: bool) -> Result<Restored, CheckpointError> {
        match &self.method {
            Method::Git { commit, .. } => {
                let repo = git::Repo::open(&self.workspace)?;
                let mut done = repo.restore(commit, apply)?;
                let copies = repo.copies(&self.id);
                if copies.join("manifest.json").is_file() {
                    let ignored = files::restore(&self.workspace, &copies, apply)?;
                    done.restored.extend(ignored.restored);
                    done.deleted.extend(ignored.deleted);
                }
                Ok(done)
            }
            Method::Files { dir } => files::restore(&self.workspace, dir, apply),
        }
    }

    /// Record the workspace as it is now, covering what this checkpoint covers, as checkpoint
    /// `id` (kept beside this one): restoring it later brings back this state.
    pub fn capture(&self, id: &str) -> Result<Checkpoint, CheckpointError> {
        check_id(id)?;
        let method = match &self.method {
            Method::Git { .. } => git::Repo::open(&self.workspace)?.take(id)?,
            Method::Files { dir } => {
                let target = dir
                    .parent()
                    .map_or_else(|| PathBuf::from(id), |p| p.join(id));
                files::capture(&self.workspace, dir, &target)?
            }
        };
        Ok(Checkpoint {
            id: id.to_owned(),
            workspace: self.workspace.clone(),
            method,
        })
    }

    /// Delete what keeps the checkpoint (the ref, or the folder of copies).
    pub fn discard(&self) -> Result<(), CheckpointError> {
        match &self.method {
            Method::Git { reference, .. } if reference.starts_with(git::REF_PREFIX) => {
                let repo = git::Repo::open(&self.workspace)?;
                let copies = repo.copies(&self.id);
                if copies.join("manifest.json").is_file() {
                    std::fs::remove_dir_all(&copies).map_err(|e| {
                        CheckpointError(format!("cannot delete {}: {e}", copies.display()))
                    })?;
                }
                repo.delete_ref(reference)
            }
            Method::Files { dir } if dir.join("manifest.json").is_file() => {
                std::fs::remove_dir_all(dir)
                    .map_err(|e| CheckpointError(format!("cannot delete {}: {e}", dir.display())))
            }
            _ => Err(CheckpointError(format!(
                "{self:?} is not a checkpoint reagent made; left alone"
            ))),
        }
    }

    /// The `checkpoint` event announcing it: with `after` false, the workspace before the run's
    /// first change; with `after` true, as the run left it.
    pub fn event(&self, after: bool) -> EventKind {
        let (method, location, commit) = match &self.method {
            Method::Git { reference, commit } => ("git", reference.clone(), Some(commit.clone())),
            Method::Files { dir } => ("files", dir.display().to_string(), None),
        };
        EventKind::Checkpoint {
            method: method.to_owned(),
            workspace: self.workspace.display().to_string(),
            location,
            commit,
            after,
        }
    }

    /// The checkpoint a `checkpoint` event of run `run_id` announced, and whether it is the
    /// state the run left (`after`) rather than the one before its first change.
    pub fn from_event(run_id: &str, kind: &EventKind) -> Option<(Checkpoint, bool)> {
        let EventKind::Checkpoint {
            method,
            workspace,
            location,
            commit,
            after,
        } = kind
        else {
            return None;
        };
        let method = match (method.as_str(), commit) {
            ("git", Some(commit)) => Method::Git {
                reference: location.clone(),
                commit: commit.clone(),
            },
            ("files", _) => Method::Files {
                dir: PathBuf::from(location),
            },
            _ => return None,
        };
        let id = if *after {
            format!("{run_id}-end")
        } else {
            run_id.to_owned()
        };
        let checkpoint = Checkpoint {
            id,
            workspace: PathBuf::from(workspace),
            method,
        };
        Some((checkpoint, *after))
    }
}

/// `<workspace>/.reagent/checkpoints`: beside the workspace's files, where the tools never
/// write (`.reagent` is a protected path).
pub fn default_files_dir(workspace: &Path) -> PathBuf {
    workspace.join(".reagent").join("checkpoints")
}

/// An id is one plain path component (it names a ref and a folder).
fn check_id(id: &str) -> Result<(), CheckpointError> {
    let plain = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if plain {
        Ok(())
    } else {
        Err(CheckpointError(format!(
            "checkpoint id `{id}`: use letters, digits, `-` and `_` only"
        )))
    }
}

/// `path` as a plain workspace-relative path (no `..`, not absolute outside the workspace),
/// or `None`.
pub(crate) fn plain_relative(workspace: &Path, path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        p.strip_prefix(workspace).ok()?
    } else {
        p
    };
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// `git status --porcelain` of the work tree holding `workspace` (an error outside one).
pub(crate) fn git_status(workspace: &Path) -> Result<String, CheckpointError> {
    if git::Repo::find(workspace)?.is_none() {
        return Err(CheckpointError(format!(
            "{} is not in a git work tree",
            workspace.display()
        )));
    }
    git::git(workspace, None, &["status", "--porcelain"], None)
}
