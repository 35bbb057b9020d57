//! [`WorkspaceError`]: every way a confined file operation can fail, worded for the model.

use rustix::io::Errno;
use thiserror::Error;

use super::names::escape_str;

/// A refused or failed file operation inside the workspace. The `Display` text is what the
/// model sees, so every message names the path and says what to do instead.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The path was empty.
    #[error("empty path: give a path relative to the workspace")]
    EmptyPath,
    /// The path contained a NUL byte.
    #[error("path contains a NUL byte")]
    NulByte,
    /// An absolute path outside the workspace.
    #[error("absolute path outside the workspace: {0} (use a path relative to the workspace)")]
    OutsideAbsolute(String),
    /// Resolution left the workspace (`..`, a symlink leading out, or a mount point crossed).
    #[error("path escapes the workspace: {0}")]
    Escapes(String),
    /// Too many symlinks, or a `/proc` magic link.
    #[error("too many levels of symbolic links, or a /proc magic link: {0}")]
    Loop(String),
    /// Nothing at that path.
    #[error("no such file or directory: {0}")]
    NotFound(String),
    /// A directory where a file was needed.
    #[error("is a directory: {0}")]
    IsDirectory(String),
    /// A file where a directory was needed.
    #[error("not a directory: {0}")]
    NotADirectory(String),
    /// A FIFO, socket, device or other special file.
    #[error("not a regular file ({kind}): {path}")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// The path or one of its names is too long.
    #[error("file name too long: {0}")]
    NameTooLong(String),
    /// The path is protected and stays read-only.
    #[error("path is protected and read-only: {0}")]
    Protected(String),
    /// A name with invisible, bidi or control characters (refused for writes).
    #[error("name contains invisible, bidi or control characters: {0}")]
    SuspiciousName(String),
    /// The write target is a symlink; reagent does not write through symlinks.
    #[error("is a symbolic link (to {target}); write to the target path instead: {path}")]
    Symlink {
        /// The path as given.
        path: String,
        /// Where the link points (escaped).
        target: String,
    },
    /// The write target has more than one hard link.
    #[error("{path} has {links} hard links; refusing to write through a hard link")]
    HardLinked {
        /// The path as given.
        path: String,
        /// The link count.
        links: u64,
    },
    /// Content over the size cap.
    #[error("content is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Size of the content.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The file changed between two steps of one operation.
    #[error("file changed while it was being opened, try again: {0}")]
    Changed(String),
    /// The operating system refused (permissions, read-only filesystem, ...).
    #[error("permission denied: {0}")]
    PermissionDenied(String),
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl WorkspaceError {
    /// Map an errno from resolving or opening `path` to an error for the model.
    pub(crate) fn from_errno(errno: Errno, path: &str) -> Self {
        let shown = escape_str(path);
        match errno {
            Errno::XDEV => WorkspaceError::Escapes(shown),
            Errno::LOOP => WorkspaceError::Loop(shown),
            Errno::NOENT => WorkspaceError::NotFound(shown),
            Errno::ISDIR => WorkspaceError::IsDirectory(shown),
            Errno::NOTDIR => WorkspaceError::NotADirectory(shown),
            Errno::NAMETOOLONG => WorkspaceError::NameTooLong(shown),
            Errno::ACCESS | Errno::PERM | Errno::ROFS => WorkspaceError::PermissionDenied(shown),
            Errno::NXIO => WorkspaceError::NotRegular {
                path: shown,
                kind: "socket or device",
            },
            other => WorkspaceError::Io {
                path: shown,
                source: std::io::Error::from(other),
            },
        }
    }

    /// Wrap a `std::io::Error` about `path`.
    pub(crate) fn io(err: std::io::Error, path: &str) -> Self {
        match err.raw_os_error() {
            Some(code) => Self::from_errno(Errno::from_raw_os_error(code), path),
            None => WorkspaceError::Io {
                path: escape_str(path),
                source: err,
            },
        }
    }
}
