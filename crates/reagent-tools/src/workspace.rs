//! The confined workspace directory (placeholder until the confinement work lands).

use std::path::{Path, PathBuf};

/// An open workspace directory; every file tool resolves paths beneath it.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Open `root` as the workspace.
    pub fn open(root: &Path) -> std::io::Result<Self> {
        Ok(Workspace {
            root: root.canonicalize()?,
        })
    }

    /// The workspace's absolute path.
    pub fn root(&self) -> &Path {
        &self.root
    }
}
