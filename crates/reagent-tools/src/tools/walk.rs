//! The confined file walk shared by `find_files` and `grep_search`.
//!
//! The start folder is first opened beneath the workspace fd (so `..`, symlinks leading out
//! and mount points are refused exactly as for the other tools), and its real location is
//! read back from that fd. The walk itself (the `ignore` crate, as in ripgrep) starts from the
//! workspace root so the root `.gitignore` applies, descends only towards and into the start
//! folder, never follows symlinks, skips `.git`, stays on one filesystem unless mounts may be
//! crossed, and stops at a depth limit and a deadline. Files are then opened through the
//! workspace fd again, never by the walked path.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ignore::WalkBuilder;

use crate::config::FileLimits;
use crate::workspace::Workspace;

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
    let depth_below_root = start_rel.components().count();

    let filter_start = start_abs.clone();
    let walker = WalkBuilder::new(&root)
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
        .max_depth(Some(
            limits.search_max_depth.saturating_add(depth_below_root),
        ))
        .filter_entry(move |e| {
            let p = e.path();
            e.file_name() != ".git" && (p.starts_with(&filter_start) || filter_start.starts_with(p))
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
