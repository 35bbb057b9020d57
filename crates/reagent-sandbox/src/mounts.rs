//! The mount-namespace plan: what init does to the filesystem view before
//! the command starts.
//!
//! 1. `/` becomes a private mount tree (nothing propagates to the host).
//! 2. A fresh `/proc` for the command's PID namespace and a private tmpfs
//!    on `/dev/shm`.
//! 3. Masks: `/run`, `/var` (with `/var/run`), `/home`, `/root`, `/srv`,
//!    `/mnt`, `/media` and `/tmp` are covered by an empty tmpfs, so host sockets
//!    (docker.sock, D-Bus, X11, tmux, ssh-agent) and home directories are
//!    not even reachable by path. When a path the command needs (workspace,
//!    private temp dir, configured roots) lies beneath a masked directory,
//!    the tmpfs gets a skeleton of directories and the needed path is
//!    bind-mounted back from an `O_PATH` fd opened before the mask, after
//!    which the skeleton is made read-only.
//! 4. Protected paths inside the workspace that exist are bind-mounted
//!    read-only over themselves (renaming or removing a mount point fails
//!    with EBUSY, writing beneath it with EROFS).

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::child::{ChildOp, MountOp};
use crate::SandboxError;

/// Directories hidden behind an empty tmpfs.
const MASKED: &[&str] = &[
    "/run", "/var", "/home", "/root", "/srv", "/mnt", "/media", "/tmp",
];

/// The planned operations plus what must stay alive until the clone.
#[derive(Default)]
pub(crate) struct MountPlan {
    pub(crate) ops: Vec<ChildOp>,
    pub(crate) masked: Vec<PathBuf>,
    pub(crate) protected: Vec<PathBuf>,
    /// A private tmpfs was planned on `/dev/shm`.
    pub(crate) private_shm: bool,
}

/// Where POSIX shared memory lives.
pub(crate) const SHM: &str = "/dev/shm";

pub(crate) fn cstring(bytes: &[u8], what: &'static str) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|_| SandboxError::Prepare {
        stage: what,
        reason: "contains a NUL byte".into(),
    })
}

fn path_c(p: &Path) -> Result<CString, SandboxError> {
    cstring(p.as_os_str().as_bytes(), "mount path")
}

fn mount(
    source: Option<&[u8]>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<ChildOp, SandboxError> {
    Ok(ChildOp::Mount(MountOp {
        source: source.map(|s| cstring(s, "mount source")).transpose()?,
        target: path_c(target)?,
        fstype: fstype
            .map(|s| cstring(s.as_bytes(), "mount type"))
            .transpose()?,
        flags,
        data: data
            .map(|s| cstring(s.as_bytes(), "mount data"))
            .transpose()?,
    }))
}

fn mount_flags_of(path: &Path) -> libc::c_ulong {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills a zeroed struct from a valid C string path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

/// The fd numbers init parks its `O_PATH` fds on: just below the soft
/// `RLIMIT_NOFILE`, far from anything the supervisor normally has open (init
/// refuses to clobber one of its own plan fds).
fn parking_fds() -> impl Iterator<Item = RawFd> {
    // SAFETY: getrlimit fills a zeroed struct.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur.min(65536) as RawFd
    } else {
        1024
    };
    (64..soft).rev()
}

/// Plans the mounts. `needed` are canonical paths the command must keep
/// seeing; `protected` are canonical paths to make read-only; `mask` turns
/// the masking step on (off in full mode).
pub(crate) fn plan(
    needed: &[PathBuf],
    protected: &[PathBuf],
    mask: bool,
) -> Result<MountPlan, SandboxError> {
    let mut plan = MountPlan::default();
    let mut parking = parking_fds();
    plan.ops.push(mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?);
    let hard = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    plan.ops.push(mount(
        Some(b"proc"),
        Path::new("/proc"),
        Some("proc"),
        hard,
        None,
    )?);
    // A private, size-limited /dev/shm (POSIX shared memory and semaphores,
    // e.g. Python's multiprocessing) instead of the host's. The child adds
    // the Landlock rule for it (see `Plan::child_rules`).
    if Path::new(SHM).is_dir() {
        plan.ops.push(mount(
            Some(b"tmpfs"),
            Path::new(SHM),
            Some("tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some("size=64m,mode=1777"),
        )?);
        plan.private_shm = true;
    }
    if mask {
        for m in MASKED {
            let dir = Path::new(m);
            let is_real_dir = dir
                .symlink_metadata()
                .map(|md| md.is_dir())
                .unwrap_or(false);
            // Never mask a needed path itself or anything above one (e.g. a
            // workspace at /tmp or at /).
            if !is_real_dir || needed.iter().any(|n| dir.starts_with(n)) {
                continue;
            }
            let mut inside: Vec<&PathBuf> = needed.iter().filter(|n| n.starts_with(dir)).collect();
            inside.sort_by_key(|p| p.as_os_str().len());
            if inside.is_empty() {
                plan.ops.push(mount(
                    Some(b"tmpfs"),
                    dir,
                    Some("tmpfs"),
                    hard | libc::MS_RDONLY,
                    Some("size=16k,mode=755"),
                )?);
            } else {
                let mut sources = Vec::new();
                for n in &inside {
                    let fd = parking.next().ok_or_else(|| SandboxError::Prepare {
                        stage: "mount plan",
                        reason: "RLIMIT_NOFILE too low to park path fds".into(),
                    })?;
                    plan.ops.push(ChildOp::OpenPath {
                        path: path_c(n)?,
                        fd,
                    });
                    sources.push(format!("/proc/self/fd/{fd}"));
                }
                plan.ops.push(mount(
                    Some(b"tmpfs"),
                    dir,
                    Some("tmpfs"),
                    hard,
                    Some("size=1m,mode=755"),
                )?);
                for (n, source) in inside.iter().zip(sources) {
                    let mut ancestors: Vec<&Path> = n
                        .ancestors()
                        .skip(1)
                        .take_while(|a| a.starts_with(dir) && *a != dir)
                        .collect();
                    ancestors.reverse();
                    for a in ancestors {
                        plan.ops.push(ChildOp::Mkdir(path_c(a)?));
                    }
                    plan.ops.push(if n.is_dir() {
                        ChildOp::Mkdir(path_c(n)?)
                    } else {
                        ChildOp::Touch(path_c(n)?)
                    });
                    plan.ops.push(mount(
                        Some(source.as_bytes()),
                        n,
                        None,
                        libc::MS_BIND | libc::MS_REC,
                        None,
                    )?);
                }
                let ro = libc::MS_REMOUNT | libc::MS_RDONLY | hard;
                plan.ops.push(mount(None, dir, None, ro, None)?);
            }
            plan.masked.push(dir.to_path_buf());
        }
    }
    for p in protected {
        plan.ops.push(mount(
            Some(p.as_os_str().as_bytes()),
            p,
            None,
            libc::MS_BIND | libc::MS_REC,
            None,
        )?);
        let ro = libc::MS_REMOUNT
            | libc::MS_BIND
            | libc::MS_RDONLY
            | libc::MS_NOSUID
            | libc::MS_NODEV
            | mount_flags_of(p);
        plan.ops.push(mount(None, p, None, ro, None)?);
        plan.protected.push(p.clone());
    }
    Ok(plan)
}
