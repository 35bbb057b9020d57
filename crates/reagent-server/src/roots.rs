//! Workspace roots: a run's workspace must lie under one of them once symlinks and `..` are
//! resolved. A path that is missing, unreadable or outside every root gets one and the same
//! answer, so a client cannot learn whether a path outside the roots exists.

use std::path::{Path, PathBuf};

use crate::error::{ApiError, ServerError};

/// The canonical workspace roots.
#[derive(Debug, Clone)]
pub(crate) struct WorkspaceRoots(Vec<PathBuf>);

impl WorkspaceRoots {
    /// Canonicalise `roots` (the current directory when empty); each must be a directory.
    pub(crate) fn new(roots: &[PathBuf]) -> Result<Self, ServerError> {
        let given = if roots.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            roots.to_vec()
        };
        given
            .into_iter()
            .map(|root| match std::fs::canonicalize(&root) {
                Ok(c) if c.is_dir() => Ok(c),
                Ok(_) => Err(ServerError::WorkspaceRoot {
                    path: root,
                    message: "not a directory".into(),
                }),
                Err(e) => Err(ServerError::WorkspaceRoot {
                    path: root,
                    message: e.to_string(),
                }),
            })
            .collect::<Result<_, _>>()
            .map(WorkspaceRoots)
    }

    /// The canonical form of `workspace` when it lies under a root. 400 when it is empty or
    /// relative, or is a file under a root; the same 403 whether it is missing, unreadable or
    /// outside every root.
    pub(crate) fn check(&self, workspace: &str) -> Result<PathBuf, ApiError> {
        if workspace.trim().is_empty() {
            return Err(ApiError::bad_request(
                "`workspace` is empty: give a directory under one of the server's workspace roots",
            ));
        }
        let path = Path::new(workspace);
        if !path.is_absolute() {
            return Err(ApiError::bad_request(format!(
                "`workspace` must be an absolute path, got `{workspace}`"
            )));
        }
        let refused = || {
            ApiError::forbidden(format!(
                "workspace `{workspace}` is not an existing directory under the server's \
                 workspace roots (a missing path and one outside the roots get this same answer)"
            ))
        };
        let canonical = std::fs::canonicalize(path).map_err(|_| refused())?;
        if !self.0.iter().any(|root| canonical.starts_with(root)) {
            return Err(refused());
        }
        if !canonical.is_dir() {
            return Err(ApiError::bad_request(format!(
                "workspace `{workspace}` is a file, not a directory"
            )));
        }
        Ok(canonical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_and_dotdot_cannot_leave_the_roots() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path().join("root");
        let outside = base.path().join("outside");
        std::fs::create_dir_all(root.join("project")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        let roots = WorkspaceRoots::new(std::slice::from_ref(&root)).unwrap();
        let inside = roots.check(root.join("project").to_str().unwrap()).unwrap();
        assert!(inside.ends_with("root/project"));
        std::fs::write(root.join("file.txt"), "x").unwrap();
        std::fs::write(outside.join("file.txt"), "x").unwrap();
        for bad in [
            root.join("escape"),
            root.join("escape/file.txt"),
            root.join("project/../../outside"),
            outside.clone(),
            outside.join("file.txt"),
            outside.join("missing"),
            root.join("missing"),
            root.join("escape/missing"),
        ] {
            let err = roots.check(bad.to_str().unwrap()).unwrap_err();
            assert_eq!(err.code(), "forbidden", "{}", bad.display());
        }
        assert_eq!(
            roots.check("relative/dir").unwrap_err().code(),
            "bad_request"
        );
        assert_eq!(
            roots
                .check(root.join("file.txt").to_str().unwrap())
                .unwrap_err()
                .code(),
            "bad_request"
        );
    }
}
