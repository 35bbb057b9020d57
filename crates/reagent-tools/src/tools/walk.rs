//! The confined file walk shared by `find_files` and `grep_search`.
//!
//! The start folder is first opened beneath the workspace fd (so `..`, symlinks leading out
//! and mount points are refused exactly as for the other tools), and its real location is
//! read back from that fd. The walk itself (the `ignore` crate, as in ripgrep) starts from the
//! start folder with the `.gitignore` rules of the folders above it (read through the
//! workspace fd), never follows symlinks, skips `.git`, stays on one filesystem unless mounts may be
//! crossed, and stops at a depth limit and a deadline. Files are then opened through the
//! workspace fd again, never by the walked path.

use std::path::{Path, PathBuf};
use std::time::Instant;

use std::io::Read;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::WalkBuilder;

use crate::config::FileLimits;
use crate::workspace::Workspace;

/// Largest `.gitignore` read from a folder above the start.
const MAX_GITIGNORE_BYTES: u64 = 1024 * 1024;

/// Why a walk ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The visitor asked to stop (result cap reached).
    Full,
    /// The deadline passed.
    Timeout,
}

/// A regular file found by the walk.
pub(crate) struct Found<'a> {
    /// Path relative to the workspace root.
    pub(crate) rel: &'a Path,
    /// Path relative to the start folder.
    pub(crate) under_start: &'a Path,
}

/// Walk the regular files under `start` (a model-supplied folder, default the root), calling
/// `visit` for each; `visit` returns false to stop. Returns why the walk stopped early, if it did.
pub(crate) fn walk_files(
    ws: &Workspace,
    start: Option<&str>,
    limits: &FileLimits,
    mut visit: impl FnMut(Found<'_>) -> bool,
) -> Result<Option<Stop>, String> {
    let deadline = Instant::now() + limits.search_timeout;
    let start = start.unwrap_or(".");
    let dir = ws.open_dir(start).map_err(|e| e.to_string())?;
    let start_rel = ws
        .real_relative(std::os::fd::AsFd::as_fd(&dir))
        .ok_or_else(|| format!("cannot tell where {start} is inside the workspace"))?;
    let root = ws.root().to_path_buf();
    let start_abs = root.join(&start_rel);
    let ancestors = ancestor_gitignores(ws, &start_rel);

    let walker = WalkBuilder::new(&start_abs)
        .follow_links(false)
        .hidden(false)
        .parents(false)
        .git_ignore(true)
        .git_exclude(false)
        .git_global(false)
        .require_git(false)
        .ignore(true)
        .same_file_system(!ws.cross_mounts())
        .sort_by_file_name(|a, b| a.cmp(b))
        .max_depth(Some(limits.search_max_depth))
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            e.file_name() != ".git"
                && !ancestors
                    .iter()
                    .any(|g| g.matched(e.path(), is_dir).is_ignore())
        })
        .build();

    for entry in walker {
        if Instant::now() > deadline {
            return Ok(Some(Stop::Timeout));
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path: PathBuf = entry.into_path();
        let (Ok(rel), Ok(under_start)) = (path.strip_prefix(&root), path.strip_prefix(&start_abs))
        else {
            continue;
        };
        if !visit(Found { rel, under_start }) {
            return Ok(Some(Stop::Full));
        }
    }
    Ok(None)
}

/// The `.gitignore` rules of the folders between the workspace root and the start folder
/// (the walk itself reads those at and below the start). They are read through the
/// workspace fd, and they apply only below the start: a folder the model names explicitly is
/// searched even when it is ignored itself (like ripgrep with an explicit path).
fn ancestor_gitignores(ws: &Workspace, start_rel: &Path) -> Vec<Gitignore> {
    let mut out = Vec::new();
    let mut dir = PathBuf::new();
    for comp in start_rel.components() {
        let file = dir.join(".gitignore");
        let shown = file.to_string_lossy().into_owned();
        if let Ok(opened) = ws.open_file_rel(&file, &shown) {
            let mut text = String::new();
            let _ = opened
                .file
                .take(MAX_GITIGNORE_BYTES)
                .read_to_string(&mut text);
            let mut builder = GitignoreBuilder::new(ws.root().join(&dir));
            for line in text.lines() {
                let _ = builder.add_line(None, line);
            }
            if let Ok(gi) = builder.build() {
                out.push(gi);
            }
        }
        dir.push(comp);
    }
    out
}
