//! Confined, atomic writes: the content goes to a temporary file created beneath the parent
//! directory's fd and is renamed into place relative to that same fd.
//!
//! Refused: protected paths (checked on the lexical path *and* on the real location of the
//! opened parent directory, so a symlinked directory cannot reach `.git`), names with
//! invisible or control characters, symlinks as the final component (a dangling link to
//! `/tmp/pwn` never creates anything outside), directories, special files, and regular files
//! with more than one hard link.

use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::names::{escape_bytes, escape_str, has_hidden_chars, lexical_components};
use super::{ProtectedPaths, Workspace, WorkspaceError};

/// Deepest folder a write may create missing parents for.
const MAX_CREATED_DIRS: usize = 64;

/// What a write may do.
#[derive(Debug, Clone)]
pub struct WritePolicy {
    /// Paths that stay read-only.
    pub protected: ProtectedPaths,
    /// Largest content accepted, in bytes.
    pub max_bytes: u64,
}

impl Default for WritePolicy {
    fn default() -> Self {
        WritePolicy {
            protected: ProtectedPaths::default(),
            max_bytes: 10 * 1024 * 1024,
        }
    }
}

/// What a successful write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Workspace-relative path of the written file (its real location).
    pub path: String,
    /// Whether the file was created (rather than replaced).
    pub created: bool,
    /// Bytes written.
    pub bytes: u64,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Workspace {
    /// Write `content` to `input` atomically (temporary file + rename), creating missing
    /// parent directories. An existing file keeps its permission bits.
    pub fn write_file(
        &self,
        input: &str,
        content: &[u8],
        policy: &WritePolicy,
    ) -> Result<WriteOutcome, WorkspaceError> {
        let size = u64::try_from(content.len()).unwrap_or(u64::MAX);
        if size > policy.max_bytes {
            return Err(WorkspaceError::TooLarge {
                size,
                limit: policy.max_bytes,
            });
        }
        let rel = self.relative(input)?;
        if has_hidden_chars(input) {
            return Err(WorkspaceError::SuspiciousName(escape_str(input)));
        }
        let name = match rel.components().next_back() {
            Some(Component::Normal(name)) => name.to_os_string(),
            _ => return Err(WorkspaceError::IsDirectory(escape_str(input))),
        };
        if let Some(entry) = policy.protected.covering(&lexical_components(&rel)) {
            return Err(protected(input, entry));
        }
        let parent_rel = rel.parent().map(Path::to_path_buf).unwrap_or_default();
        let parent = self.ensure_dir(&parent_rel, input)?;

        // The real location of the parent decides, whatever symlinks led there.
        let real_parent = self
            .real_relative(parent.as_fd())
            .ok_or_else(|| WorkspaceError::Escapes(escape_str(input)))?;
        let real = real_parent.join(&name);
        if let Some(entry) = policy.protected.covering(&lexical_components(&real)) {
            return Err(protected(input, entry));
        }

        let mode = match rustix::fs::statat(&parent, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => None,
            Err(e) => return Err(WorkspaceError::from_errno(e, input)),
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile if st.st_nlink > 1 => {
                    return Err(WorkspaceError::HardLinked {
                        path: escape_str(input),
                        links: st.st_nlink,
                    })
                }
                FileType::RegularFile => Some(Mode::from_raw_mode(st.st_mode & 0o7777)),
                FileType::Directory => return Err(WorkspaceError::IsDirectory(escape_str(input))),
                FileType::Symlink => {
                    let target = rustix::fs::readlinkat(&parent, &name, Vec::new())
                        .map(|t| escape_bytes(t.as_bytes()))
                        .unwrap_or_else(|_| "?".to_string());
                    return Err(WorkspaceError::Symlink {
                        path: escape_str(input),
                        target,
                    });
                }
                _ => {
                    return Err(WorkspaceError::NotRegular {
                        path: escape_str(input),
                        kind: "special file",
                    })
                }
            },
        };

        replace_atomically(parent.as_fd(), &name, content, mode, input)?;
        Ok(WriteOutcome {
            path: real.to_string_lossy().into_owned(),
            created: mode.is_none(),
            bytes: size,
        })
    }

    /// Open directory `rel` (an `O_PATH` fd), creating missing components one at a time,
    /// each with `mkdirat` relative to its confined parent fd.
    fn ensure_dir(&self, rel: &Path, input: &str) -> Result<OwnedFd, WorkspaceError> {
        let rel = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let open = |p: &Path| {
            self.openat2(
                self.dir_fd(),
                p,
                OFlags::PATH | OFlags::DIRECTORY,
                Mode::empty(),
            )
        };
        match open(rel) {
            Ok(fd) => return Ok(fd),
            Err(Errno::NOENT) => {}
            Err(e) => return Err(WorkspaceError::from_errno(e, input)),
        }
        let depth = rel
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count();
        if depth > MAX_CREATED_DIRS {
            return Err(WorkspaceError::NameTooLong(format!(
                "{} (more than {MAX_CREATED_DIRS} folder levels)",
                escape_str(input)
            )));
        }
        let mut prefix = PathBuf::from(".");
        for comp in rel.components() {
            if let Component::Normal(name) = comp {
                let parent = open(&prefix).map_err(|e| WorkspaceError::from_errno(e, input))?;
                match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(WorkspaceError::from_errno(e, input)),
                }
            }
            prefix.push(comp);
        }
        open(rel).map_err(|e| WorkspaceError::from_errno(e, input))
    }
}

fn protected(input: &str, entry: &str) -> WorkspaceError {
    WorkspaceError::Protected(format!("{} (protected: {entry})", escape_str(input)))
}

/// Write `content` into a fresh temporary file beneath `parent` and rename it over `name`.
fn replace_atomically(
    parent: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    content: &[u8],
    mode: Option<Mode>,
    input: &str,
) -> Result<(), WorkspaceError> {
    let tmp = format!(
        ".reagent-tmp-{}-{}",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let fd = rustix::fs::openat(
        parent,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| WorkspaceError::from_errno(e, input))?;
    let result = (|| {
        let mut file = std::fs::File::from(fd);
        file.write_all(content)
            .map_err(|e| WorkspaceError::io(e, input))?;
        rustix::fs::fchmod(&file, mode.unwrap_or(Mode::from_raw_mode(0o644)))
            .map_err(|e| WorkspaceError::from_errno(e, input))?;
        rustix::fs::renameat(parent, tmp.as_str(), parent, name)
            .map_err(|e| WorkspaceError::from_errno(e, input))
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(parent, tmp.as_str(), AtFlags::empty());
    }
    result
}
