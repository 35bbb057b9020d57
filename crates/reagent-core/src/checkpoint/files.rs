//! Checkpoints outside git: a folder `<dir>` holding `manifest.json` and, under `files/`,
//! a copy of each file as it was before the run first changed it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{plain_relative, CheckpointError, Method, Restored};

/// Most files one copy of the whole workspace takes.
const MAX_FILES: usize = 20_000;
/// Most bytes one copy of the whole workspace takes (256 MiB).
const MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Folders never copied nor deleted: the repository's, and reagent's own.
const SKIPPED: &[&str] = &[".git", ".reagent"];

/// What a folder of copies records.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Manifest {
    /// Files copied under `files/` (workspace-relative).
    saved: BTreeSet<String>,
    /// Files that did not exist (restoring deletes them).
    absent: BTreeSet<String>,
    /// After a whole copy: every file the workspace held (restoring deletes any other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    whole: Option<BTreeSet<String>>,
}

fn err(what: &str, path: &Path, e: impl std::fmt::Display) -> CheckpointError {
    CheckpointError(format!("{what} {}: {e}", path.display()))
}

fn load(dir: &Path) -> Result<Manifest, CheckpointError> {
    let path = dir.join("manifest.json");
    let text = fs::read_to_string(&path).map_err(|e| err("cannot read", &path, e))?;
    serde_json::from_str(&text).map_err(|e| err("cannot parse", &path, e))
}

fn store(dir: &Path, manifest: &Manifest) -> Result<(), CheckpointError> {
    let path = dir.join("manifest.json");
    let text = serde_json::to_string(manifest).map_err(|e| err("cannot encode", &path, e))?;
    let tmp = dir.join("manifest.json.tmp");
    fs::write(&tmp, text).map_err(|e| err("cannot write", &tmp, e))?;
    fs::rename(&tmp, &path).map_err(|e| err("cannot write", &path, e))
}

/// A new, empty folder of copies at `dir`.
pub(super) fn create(dir: &Path) -> Result<Method, CheckpointError> {
    fs::create_dir_all(dir.join("files")).map_err(|e| err("cannot create", dir, e))?;
    store(dir, &Manifest::default())?;
    Ok(Method::Files {
        dir: dir.to_path_buf(),
    })
}

/// Copy `rel`'s file into the folder, or record it absent (nothing when it is already).
fn record(
    workspace: &Path,
    dir: &Path,
    manifest: &mut Manifest,
    rel: &str,
) -> Result<(), CheckpointError> {
    if manifest.saved.contains(rel) || manifest.absent.contains(rel) {
        return Ok(());
    }
    let from = workspace.join(rel);
    match fs::symlink_metadata(&from) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A whole copy listed every file: one missing from it needs no record of its own.
            if manifest.whole.as_ref().is_none_or(|w| w.contains(rel)) {
                manifest.absent.insert(rel.to_owned());
            }
        }
        Err(e) => return Err(err("cannot read", &from, e)),
        Ok(meta) if meta.is_file() => {
            let to = dir.join("files").join(rel);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(|e| err("cannot create", parent, e))?;
            }
            fs::copy(&from, &to).map_err(|e| err("cannot copy", &from, e))?;
            manifest.saved.insert(rel.to_owned());
        }
        // Folders, links and special files are never written by the tools: nothing to keep.
        Ok(_) => {}
    }
    Ok(())
}

/// Before a change of `path`: copy its file (or record that there is none) once.
pub(super) fn save_one(workspace: &Path, dir: &Path, path: &str) -> Result<(), CheckpointError> {
    let Some(rel) = plain_relative(workspace, path) else {
        // A path that is not plainly beneath the workspace (an absolute one through another
        // name of it, `..`): the tool may still resolve it inside, so copy everything.
        return save_all(workspace, dir);
    };
    let rel = rel.to_string_lossy().into_owned();
    if SKIPPED
        .iter()
        .any(|s| rel == *s || rel.starts_with(&format!("{s}/")))
    {
        return Ok(());
    }
    let mut manifest = load(dir)?;
    record(workspace, dir, &mut manifest, &rel)?;
    store(dir, &manifest)
}

/// Before a command: copy every file of the workspace not yet copied, once.
pub(super) fn save_all(workspace: &Path, dir: &Path) -> Result<(), CheckpointError> {
    let mut manifest = load(dir)?;
    if manifest.whole.is_some() {
        return Ok(());
    }
    let all = walk(workspace)?;
    for rel in &all {
        record(workspace, dir, &mut manifest, rel)?;
    }
    manifest.whole = Some(all);
    store(dir, &manifest)
}

/// Every regular file of the workspace (workspace-relative), skipping [`SKIPPED`] folders and
/// never following links; an error past [`MAX_FILES`] or [`MAX_BYTES`].
fn walk(workspace: &Path) -> Result<BTreeSet<String>, CheckpointError> {
    let mut found = BTreeSet::new();
    let mut bytes = 0u64;
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let here = workspace.join(&rel);
        let entries = fs::read_dir(&here).map_err(|e| err("cannot list", &here, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| err("cannot list", &here, e))?;
            let name = entry.file_name();
            if rel.as_os_str().is_empty() && SKIPPED.iter().any(|s| name == *s) {
                continue;
            }
            let child = rel.join(&name);
            let kind = entry
                .file_type()
                .map_err(|e| err("cannot read", &child, e))?;
            if kind.is_dir() {
                pending.push(child);
            } else if kind.is_file() {
                bytes += entry.metadata().map(|m| m.len()).unwrap_or(0);
                found.insert(child.to_string_lossy().into_owned());
                if found.len() > MAX_FILES || bytes > MAX_BYTES {
                    return Err(CheckpointError(format!(
                        "{} is too large to copy before a command (over {MAX_FILES} files or \
                         {} MiB); use a git repository, whose checkpoints are commits",
                        workspace.display(),
                        MAX_BYTES / (1024 * 1024)
                    )));
                }
            }
        }
    }
    Ok(found)
}

/// Whether writing to `rel` beneath `workspace` stays inside it (no linked folder leads out).
fn inside(workspace: &Path, rel: &str) -> bool {
    let mut parent = workspace.join(rel);
    parent.pop();
    while !parent.exists() {
        if !parent.pop() {
            return false;
        }
    }
    parent
        .canonicalize()
        .is_ok_and(|real| real.starts_with(workspace))
}

/// Put the recorded files back, delete those recorded absent and, after a whole copy, every
/// file not in it.
pub(super) fn restore(
    workspace: &Path,
    dir: &Path,
    apply: bool,
) -> Result<Restored, CheckpointError> {
    let manifest = load(dir)?;
    let mut done = Restored::default();
    for rel in &manifest.saved {
        let (from, to) = (dir.join("files").join(rel), workspace.join(rel));
        if fs::read(&to).ok() == fs::read(&from).ok() {
            continue;
        }
        if !apply {
            done.restored.push(rel.clone());
            continue;
        }
        if !inside(workspace, rel) {
            return Err(CheckpointError(format!(
                "{rel}: a folder on its path now leads outside {}; not restored",
                workspace.display()
            )));
        }
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| err("cannot create", parent, e))?;
        }
        if fs::symlink_metadata(&to).is_ok_and(|m| !m.is_file()) {
            remove(&to)?;
        }
        fs::copy(&from, &to).map_err(|e| err("cannot restore", &to, e))?;
        done.restored.push(rel.clone());
    }
    let mut gone: BTreeSet<String> = manifest.absent.clone();
    if let Some(whole) = &manifest.whole {
        gone.extend(walk(workspace)?.into_iter().filter(|f| !whole.contains(f)));
    }
    for rel in gone {
        let path = workspace.join(&rel);
        if fs::symlink_metadata(&path).is_ok() && inside(workspace, &rel) {
            if apply {
                remove(&path)?;
            }
            done.deleted.push(rel);
        }
    }
    Ok(done)
}

fn remove(path: &Path) -> Result<(), CheckpointError> {
    let meta = fs::symlink_metadata(path).map_err(|e| err("cannot read", path, e))?;
    if meta.is_dir() {
        fs::remove_dir_all(path).map_err(|e| err("cannot delete", path, e))
    } else {
        fs::remove_file(path).map_err(|e| err("cannot delete", path, e))
    }
}

/// The workspace as it is now, over what the checkpoint at `dir` covers, into a new folder at
/// `target`.
pub(super) fn capture(
    workspace: &Path,
    dir: &Path,
    target: &Path,
) -> Result<Method, CheckpointError> {
    let base = load(dir)?;
    let method = create(target)?;
    let mut manifest = Manifest::default();
    if base.whole.is_some() {
        let all = walk(workspace)?;
        for rel in &all {
            record(workspace, target, &mut manifest, rel)?;
        }
        manifest.whole = Some(all);
    }
    for rel in base.saved.iter().chain(&base.absent) {
        record(workspace, target, &mut manifest, rel)?;
    }
    store(target, &manifest)?;
    Ok(method)
}
