//! What exists near a path the model got wrong, and the workspace's file list.
//!
//! Small models guess paths (or copy an example's `"..."` literally); an error that only says
//! "no such file" leaves them to guess again. [`not_found_hint`] names the nearest existing
//! paths instead: the same file name elsewhere first, then the smallest edit distance. The
//! search is bounded: at most [`SCAN_ENTRIES`] files of the confined walk (gitignore respected),
//! within the search deadline.

use std::path::Path;

use crate::config::FileLimits;
use crate::tools::walk::walk_files;
use crate::workspace::{Workspace, WorkspaceError};

/// Most files looked at when searching for the nearest paths.
pub(crate) const SCAN_ENTRIES: usize = 5_000;

/// How many nearest paths an error names.
const SUGGESTIONS: usize = 3;

/// The first files of the workspace (a confined, gitignore-respecting walk in name order).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkspaceFiles {
    /// Workspace-relative paths, `/`-separated, at most the number asked for.
    pub paths: Vec<String>,
    /// Whether the workspace holds more files than listed (or the walk stopped early).
    pub more: bool,
}

/// Up to `max` files of `ws`, in the walk's name order. Never fails: an unreadable workspace
/// lists nothing.
pub fn workspace_files(ws: &Workspace, max: usize) -> WorkspaceFiles {
    let mut paths = Vec::new();
    let mut more = false;
    let walked = walk_files(ws, None, &FileLimits::default(), |found| {
        if paths.len() == max {
            more = true;
            return false;
        }
        paths.push(slash_path(found.rel));
        true
    });
    if !matches!(walked, Ok(None)) {
        more = true;
    }
    WorkspaceFiles { paths, more }
}

/// The error text for `err` about `path`, with the nearest existing paths named when the path
/// does not exist.
pub(crate) fn not_found_hint(
    ws: &Workspace,
    path: &str,
    err: &WorkspaceError,
    limits: &FileLimits,
) -> String {
    if !matches!(err, WorkspaceError::NotFound(_)) {
        return err.to_string();
    }
    let near = nearest_paths(ws, path, limits);
    if near.is_empty() {
        format!("{err}; the workspace has no files")
    } else {
        format!("{err}; the nearest existing paths are: {}", near.join(", "))
    }
}

/// The existing files nearest to `wanted`, best first.
pub(crate) fn nearest_paths(ws: &Workspace, wanted: &str, limits: &FileLimits) -> Vec<String> {
    let wanted = wanted.trim().trim_start_matches("./");
    let wanted_lower = wanted.to_lowercase();
    let wanted_base = base_name(&wanted_lower);
    let mut scored: Vec<(usize, String)> = Vec::new();
    let mut seen = 0usize;
    let _ = walk_files(ws, None, limits, |found| {
        seen += 1;
        let path = slash_path(found.rel);
        let lower = path.to_lowercase();
        let score = if base_name(&lower) == wanted_base {
            0
        } else {
            1 + edit_distance(&wanted_lower, &lower)
                .min(edit_distance(wanted_base, base_name(&lower)))
        };
        scored.push((score, path));
        seen < SCAN_ENTRIES
    });
    scored.sort();
    scored.truncate(SUGGESTIONS);
    scored.into_iter().map(|(_, p)| p).collect()
}

fn slash_path(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Levenshtein distance over chars, with one row of memory.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("notes.txt", "notes.txt"), 0);
        assert_eq!(edit_distance("note.txt", "notes.txt"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("héllo", "hello"), 1);
    }

    #[test]
    fn base_names_and_slash_paths() {
        assert_eq!(base_name("a/b/c.txt"), "c.txt");
        assert_eq!(base_name("c.txt"), "c.txt");
        assert_eq!(slash_path(Path::new("a/b/c.txt")), "a/b/c.txt");
    }
}
