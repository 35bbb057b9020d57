//! The confined workspace: one open directory fd, and path resolution beneath it.
//!
//! Every model-supplied path is resolved by a single `openat2(dirfd, path, RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)` call relative to the workspace's directory fd, and
//! the tool then works on the returned fd. There is no "canonicalize, check, then open by
//! name", so a path swapped for a symlink between check and use can never lead outside: `..`
//! above the root, absolute symlinks, symlinks leading out, `/proc` magic links and (unless
//! [`WorkspaceOptions::cross_mounts`]) mount points are all refused by the kernel.
//!
//! Special files (FIFOs, sockets, devices) are recognised through an `O_PATH` fd and are never
//! opened for reading. Writes live in [`write`](self) (temporary file + rename, beneath fds).

mod error;
mod names;
mod write;

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

pub use error::WorkspaceError;
pub use names::{escape_bytes, escape_str, has_hidden_chars, ProtectedPaths};
pub use write::{WriteOutcome, WritePolicy};

/// Longest path accepted from the model (Linux `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// How a [`Workspace`] resolves paths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkspaceOptions {
    /// Allow paths that cross a mount point under the workspace (off by default:
    /// `RESOLVE_NO_XDEV` refuses them, so a bind mount cannot lead outside).
    pub cross_mounts: bool,
}

/// An open workspace directory; every file tool resolves paths beneath it.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    /// The root as given (absolute, possibly through symlinks), also accepted as a prefix.
    given_root: PathBuf,
    dir: OwnedFd,
    resolve: ResolveFlags,
}

/// A regular file opened for reading inside the workspace.
#[derive(Debug)]
pub struct OpenedFile {
    /// The open file.
    pub file: File,
    /// Size in bytes at open time.
    pub size: u64,
    /// Hard link count (more than one: the same data may be reachable from outside).
    pub nlink: u64,
}

/// Human name of a file type, for error messages.
fn kind_name(st: &Stat) -> &'static str {
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => "regular file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Unknown => "unknown file type",
    }
}

impl Workspace {
    /// Open `root` as the workspace (mount crossing refused).
    pub fn open(root: &Path) -> std::io::Result<Self> {
        Self::open_with(root, WorkspaceOptions::default())
    }

    /// Open `root` as the workspace with `options`.
    pub fn open_with(root: &Path, options: WorkspaceOptions) -> std::io::Result<Self> {
        let given_root = std::path::absolute(root)?;
        let root = root.canonicalize()?;
        let dir = rustix::fs::open(
            &root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if !options.cross_mounts {
            resolve |= ResolveFlags::NO_XDEV;
        }
        Ok(Workspace {
            root,
            given_root,
            dir,
            resolve,
        })
    }

    /// The workspace's absolute path (for display and for spawning commands only; file tools
    /// never open by this path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The open directory fd every path is resolved beneath.
    pub fn dir_fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Turn a model-supplied path into a relative path to resolve beneath the workspace.
    ///
    /// Purely lexical and never used to decide confinement (the kernel does that): rejects
    /// empty paths, NUL bytes and overlong paths; turns an absolute path lexically under the
    /// root into a relative one and refuses any other absolute path; drops trailing slashes.
    /// Nothing is decoded or expanded: `%2e%2e`, `~` and `$HOME` are literal names.
    pub fn relative(&self, input: &str) -> Result<PathBuf, WorkspaceError> {
        if input.contains('\0') {
            return Err(WorkspaceError::NulByte);
        }
        if input.is_empty() {
            return Err(WorkspaceError::EmptyPath);
        }
        if input.len() > PATH_MAX {
            return Err(WorkspaceError::NameTooLong(format!(
                "{}... ({} bytes)",
                escape_str(&input.chars().take(60).collect::<String>()),
                input.len()
            )));
        }
        let path = Path::new(input);
        let rel = if path.is_absolute() {
            match path
                .strip_prefix(&self.root)
                .or_else(|_| path.strip_prefix(&self.given_root))
            {
                Ok(rest) => rest.to_path_buf(),
                Err(_) => return Err(WorkspaceError::OutsideAbsolute(escape_str(input))),
            }
        } else {
            path.to_path_buf()
        };
        // `Path::components` already ignores repeated and trailing slashes.
        let clean: PathBuf = rel.components().collect();
        if clean.as_os_str().is_empty() {
            return Ok(PathBuf::from("."));
        }
        Ok(clean)
    }

    /// `openat2` beneath the workspace fd, retrying the `EAGAIN` the kernel returns when a
    /// concurrent rename raced the lookup.
    pub(crate) fn openat2(
        &self,
        dir: BorrowedFd<'_>,
        rel: &Path,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Errno> {
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(dir, rel, flags | OFlags::CLOEXEC, mode, self.resolve) {
                Err(Errno::AGAIN | Errno::INTR) if tries < 64 => tries += 1,
                other => return other,
            }
        }
    }

    /// Resolve `input` to an `O_PATH` fd and its metadata (no file is opened for I/O).
    pub fn stat_path(&self, input: &str) -> Result<(OwnedFd, Stat), WorkspaceError> {
        let rel = self.relative(input)?;
        let fd = self
            .openat2(self.dir_fd(), &rel, OFlags::PATH, Mode::empty())
            .map_err(|e| WorkspaceError::from_errno(e, input))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| WorkspaceError::from_errno(e, input))?;
        Ok((fd, st))
    }

    /// Open the regular file at `input` for reading. Directories, FIFOs, sockets and devices
    /// are refused before they are opened (checked on an `O_PATH` fd), and the opened file is
    /// checked again to be the same regular file.
    pub fn open_file(&self, input: &str) -> Result<OpenedFile, WorkspaceError> {
        let rel = self.relative(input)?;
        self.open_file_rel(&rel, input)
    }

    /// [`Workspace::open_file`] for a relative path already prepared (e.g. found by a walk);
    /// `shown` names it in errors.
    pub(crate) fn open_file_rel(
        &self,
        rel: &Path,
        shown: &str,
    ) -> Result<OpenedFile, WorkspaceError> {
        let err = |e| WorkspaceError::from_errno(e, shown);
        let pfd = self
            .openat2(self.dir_fd(), rel, OFlags::PATH, Mode::empty())
            .map_err(err)?;
        let st = rustix::fs::fstat(&pfd).map_err(err)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Err(WorkspaceError::IsDirectory(escape_str(shown))),
            _ => {
                return Err(WorkspaceError::NotRegular {
                    path: escape_str(shown),
                    kind: kind_name(&st),
                })
            }
        }
        let fd = self
            .openat2(
                self.dir_fd(),
                rel,
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::empty(),
            )
            .map_err(err)?;
        let st2 = rustix::fs::fstat(&fd).map_err(err)?;
        if FileType::from_raw_mode(st2.st_mode) != FileType::RegularFile
            || st2.st_dev != st.st_dev
            || st2.st_ino != st.st_ino
        {
            return Err(WorkspaceError::Changed(escape_str(shown)));
        }
        Ok(OpenedFile {
            file: File::from(fd),
            size: u64::try_from(st2.st_size).unwrap_or(0),
            nlink: st2.st_nlink,
        })
    }

    /// Resolve an already prepared relative path to an `O_PATH` fd (nothing is opened for I/O).
    pub(crate) fn stat_rel(&self, rel: &Path, shown: &str) -> Result<Stat, WorkspaceError> {
        let fd = self
            .openat2(
                self.dir_fd(),
                rel,
                OFlags::PATH | OFlags::NOFOLLOW,
                Mode::empty(),
            )
            .map_err(|e| WorkspaceError::from_errno(e, shown))?;
        rustix::fs::fstat(&fd).map_err(|e| WorkspaceError::from_errno(e, shown))
    }

    /// Whether paths may cross mount points under the workspace.
    pub fn cross_mounts(&self) -> bool {
        !self.resolve.contains(ResolveFlags::NO_XDEV)
    }

    /// Open the directory at `input` (`""` or `"."` is the root) for reading its entries.
    pub fn open_dir(&self, input: &str) -> Result<OwnedFd, WorkspaceError> {
        let rel = if input.is_empty() {
            PathBuf::from(".")
        } else {
            self.relative(input)?
        };
        self.openat2(
            self.dir_fd(),
            &rel,
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .map_err(|e| WorkspaceError::from_errno(e, input))
    }

    /// Where an fd opened beneath the workspace really is, relative to the root (from
    /// `/proc/self/fd`). `None` when that cannot be told (no `/proc`, deleted, or moved out).
    pub fn real_relative(&self, fd: BorrowedFd<'_>) -> Option<PathBuf> {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
        link.strip_prefix(&self.root).ok().map(Path::to_path_buf)
    }
}
