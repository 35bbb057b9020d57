//! The code that runs between fork and exec. Everything here is
//! async-signal-safe: raw syscalls on data prepared by the parent, no
//! allocation, no locks, no panics (the parent may have other threads).
//!
//! Process tree:
//! ```text
//! agent (supervisor) ──clone(CLONE_NEWPID|CLONE_NEWNS[|CLONE_NEWNET][|CLONE_NEWUSER])──▶ init (pid 1)
//!    init: waits for the go byte, makes / private, mounts a fresh /proc,
//!          masks /run, home dirs..., binds protected paths read-only,
//!          forks ──▶ command (pid 2): stdin=/dev/null, setsid, rlimits,
//!          drop capabilities, no_new_privs, Landlock, seccomp, exec /bin/sh -c
//!    init reaps everything; when the command exits it reports the wait
//!    status and exits, and the kernel kills every process left in the namespace.
//! ```
//! Killing init (SIGKILL from the supervisor) kills the whole namespace.

use std::ffi::CString;
use std::os::fd::RawFd;

/// Stages a child can fail at; the index travels over the status pipe.
pub(crate) const STAGES: &[&str] = &[
    "waiting for the supervisor",
    "mount",
    "fork",
    "stdio",
    "chdir",
    "setrlimit",
    "drop capabilities",
    "no_new_privs",
    "landlock_restrict_self",
    "seccomp",
    "execve",
    "setsid",
    "landlock rule for /proc or /dev/shm",
];
const ST_SYNC: u32 = 0;
const ST_MOUNT: u32 = 1;
const ST_FORK: u32 = 2;
const ST_STDIO: u32 = 3;
const ST_CHDIR: u32 = 4;
const ST_RLIMIT: u32 = 5;
const ST_CAPS: u32 = 6;
const ST_NNP: u32 = 7;
const ST_LANDLOCK: u32 = 8;
const ST_SECCOMP: u32 = 9;
const ST_EXEC: u32 = 10;
const ST_SETSID: u32 = 11;
const ST_CHILD_RULE: u32 = 12;

/// Status record kinds.
pub(crate) const REC_SETUP_ERROR: u32 = 1;
/// The command's raw wait status, reported by init.
pub(crate) const REC_WAIT_STATUS: u32 = 2;
/// Size of one status record: kind, value, stage (native-endian u32 each).
pub(crate) const REC_LEN: usize = 12;

/// A mount performed by init, with every string prepared before the fork.
#[derive(Debug)]
pub(crate) struct MountOp {
    pub(crate) source: Option<CString>,
    pub(crate) target: CString,
    pub(crate) fstype: Option<CString>,
    pub(crate) flags: libc::c_ulong,
    pub(crate) data: Option<CString>,
}

/// One filesystem step of init, prepared before the fork.
#[derive(Debug)]
pub(crate) enum ChildOp {
    /// mount(2).
    Mount(MountOp),
    /// mkdir(2) with mode 0755; an existing directory is fine.
    Mkdir(CString),
    /// Creates an empty file (a mount point for a file bind).
    Touch(CString),
    /// Opens `path` with `O_PATH` and moves the fd to number `fd`.
    OpenPath {
        /// The path.
        path: CString,
        /// The fd number to park it on.
        fd: RawFd,
    },
}

/// Everything the children need, prepared in the parent.
pub(crate) struct Plan<'a> {
    pub(crate) sync_read: RawFd,
    pub(crate) status_write: RawFd,
    pub(crate) stdout_write: RawFd,
    pub(crate) stderr_write: RawFd,
    pub(crate) devnull: RawFd,
    pub(crate) pid_namespace: bool,
    pub(crate) fs_ops: &'a [ChildOp],
    pub(crate) cwd: CString,
    pub(crate) argv: Vec<*const libc::c_char>,
    pub(crate) envp: Vec<*const libc::c_char>,
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    pub(crate) drop_caps: bool,
    pub(crate) cap_last: u32,
    pub(crate) landlock_fd: Option<RawFd>,
    /// Rules added to the ruleset in the child, for filesystems init mounted
    /// itself (the fresh `/proc`, the private `/dev/shm`): a rule made in the
    /// parent would name the host's inodes.
    pub(crate) child_rules: &'a [(CString, u64)],
    /// The supervisor's argument and environment blocks `[start, end)`,
    /// inherited by init's copy of the address space; init zeroes them so
    /// `/proc/1/cmdline` and `/proc/1/environ` reveal nothing of the agent.
    pub(crate) scrub_blocks: [Option<(usize, usize)>; 2],
    /// seccomp programs, installed in order after everything else.
    pub(crate) seccomp: &'a [libc::sock_fprog],
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const PR_SET_SECUREBITS: libc::c_int = 28;
/// NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE, each locked, plus KEEP_CAPS_LOCKED.
const SECUREBITS: libc::c_ulong = 0xEF;
const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes one status record; errors are ignored (nothing else can be done).
fn report(fd: RawFd, kind: u32, value: i32, stage: u32) {
    let mut rec = [0u8; REC_LEN];
    rec[0..4].copy_from_slice(&kind.to_ne_bytes());
    rec[4..8].copy_from_slice(&value.to_ne_bytes());
    rec[8..12].copy_from_slice(&stage.to_ne_bytes());
    // SAFETY: writing a stack buffer to an fd we own.
    unsafe {
        libc::write(fd, rec.as_ptr().cast(), REC_LEN);
    }
}

fn fail(plan: &Plan<'_>, stage: u32) -> ! {
    report(plan.status_write, REC_SETUP_ERROR, errno(), stage);
    // SAFETY: _exit is async-signal-safe and never returns.
    unsafe { libc::_exit(127) }
}

/// A `fork()` that does not touch libc's atfork machinery or locks.
///
/// # Safety
/// Only async-signal-safe code may run in the child.
pub(crate) unsafe fn raw_clone(flags: libc::c_int) -> libc::pid_t {
    libc::syscall(
        libc::SYS_clone,
        (flags | libc::SIGCHLD) as libc::c_ulong,
        0usize,
        0usize,
        0usize,
        0usize,
    ) as libc::pid_t
}

/// Closes every fd init inherited except the plan's own, so that init does
/// not hold other concurrent calls' pipe ends (which would delay their EOF).
unsafe fn close_other_fds(plan: &Plan<'_>) {
    let mut keep = [
        plan.sync_read,
        plan.status_write,
        plan.stdout_write,
        plan.stderr_write,
        plan.devnull,
        plan.landlock_fd.unwrap_or(-1),
    ];
    // Insertion sort: no allocation.
    for i in 1..keep.len() {
        let mut j = i;
        while j > 0 && keep[j - 1] > keep[j] {
            keep.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut next: i64 = 3;
    for fd in keep {
        let fd = i64::from(fd);
        if fd < next {
            continue;
        }
        if fd > next {
            libc::syscall(libc::SYS_close_range, next as u32, (fd - 1) as u32, 0u32);
        }
        next = fd + 1;
    }
    libc::syscall(libc::SYS_close_range, next as u32, u32::MAX, 0u32);
}

extern "C" fn forward_term(_sig: libc::c_int) {
    // SAFETY: kill is async-signal-safe. As pid 1 of the namespace, -1 means
    // "every other process in the namespace".
    unsafe {
        libc::kill(-1, libc::SIGTERM);
    }
}

/// The namespace init (or, without a PID namespace, the session leader that
/// supervises the command). Never returns.
///
/// # Safety
/// Must only be called in a freshly cloned child of the supervisor.
pub(crate) unsafe fn run_init(plan: &Plan<'_>) -> ! {
    close_other_fds(plan);
    libc::prctl(
        libc::PR_SET_PDEATHSIG,
        libc::SIGKILL as libc::c_ulong,
        0,
        0,
        0,
    );
    let mut go = 0u8;
    loop {
        let r = libc::read(plan.sync_read, (&mut go as *mut u8).cast(), 1);
        if r == 1 {
            break;
        }
        if r < 0 && errno() == libc::EINTR {
            continue;
        }
        // The supervisor went away or declined: run nothing.
        report(plan.status_write, REC_SETUP_ERROR, libc::ECANCELED, ST_SYNC);
        libc::_exit(126);
    }
    libc::close(plan.sync_read);
    for (start, end) in plan.scrub_blocks.iter().flatten() {
        if end > start {
            // The ranges are the (writable, stack-resident) argument and
            // environment blocks of the supervisor, copied into this process.
            std::ptr::write_bytes(*start as *mut u8, 0, end - start);
        }
    }
    const NAME: &[u8] = b"reagent-init\0";
    if let Some((start, end)) = plan.scrub_blocks[0] {
        if end.saturating_sub(start) >= NAME.len() {
            std::ptr::copy_nonoverlapping(NAME.as_ptr(), start as *mut u8, NAME.len());
        }
    }
    libc::prctl(libc::PR_SET_NAME, NAME.as_ptr() as libc::c_ulong, 0, 0, 0);
    // Own session and process group: detached from the agent's terminal, and
    // without a PID namespace the supervisor kills the group by this pid.
    if libc::setsid() < 0 {
        fail(plan, ST_SETSID);
    }
    for op in plan.fs_ops {
        let ok = match op {
            ChildOp::Mount(m) => {
                let opt = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
                libc::mount(
                    opt(&m.source),
                    m.target.as_ptr(),
                    opt(&m.fstype),
                    m.flags,
                    opt(&m.data).cast(),
                ) == 0
            }
            ChildOp::Mkdir(p) => libc::mkdir(p.as_ptr(), 0o755) == 0 || errno() == libc::EEXIST,
            ChildOp::OpenPath { path, fd } => {
                let own = [
                    plan.status_write,
                    plan.stdout_write,
                    plan.stderr_write,
                    plan.devnull,
                    plan.landlock_fd.unwrap_or(-1),
                ];
                let t = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
                let ok = t >= 0
                    && !own.contains(fd)
                    && (t == *fd || libc::dup3(t, *fd, libc::O_CLOEXEC) == *fd);
                if t >= 0 && t != *fd {
                    libc::close(t);
                }
                ok
            }
            ChildOp::Touch(p) => {
                let fd = libc::open(
                    p.as_ptr(),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                );
                fd >= 0 && libc::close(fd) == 0
            }
        };
        if !ok {
            fail(plan, ST_MOUNT);
        }
    }
    if plan.pid_namespace {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = forward_term as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
    let child = raw_clone(0);
    if child < 0 {
        fail(plan, ST_FORK);
    }
    if child == 0 {
        run_command(plan);
    }
    loop {
        let mut status = 0;
        let w = libc::waitpid(-1, &mut status, 0);
        if w == child {
            report(plan.status_write, REC_WAIT_STATUS, status, 0);
            libc::_exit(0);
        }
        if w < 0 && errno() == libc::ECHILD {
            libc::_exit(0);
        }
    }
}

unsafe fn drop_capabilities(plan: &Plan<'_>) -> Result<(), ()> {
    if libc::prctl(PR_SET_SECUREBITS, SECUREBITS, 0, 0, 0) != 0 {
        return Err(());
    }
    for cap in 0..=plan.cap_last {
        if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
            && errno() != libc::EINVAL
        {
            return Err(());
        }
    }
    libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
        0,
        0,
    );
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    if libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) != 0 {
        return Err(());
    }
    Ok(())
}

/// The command process: confine, then exec. Never returns.
unsafe fn run_command(plan: &Plan<'_>) -> ! {
    // Signals: default dispositions for what the supervisor changed, empty mask.
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = libc::SIG_DFL;
    libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    libc::sigaction(libc::SIGPIPE, &sa, std::ptr::null_mut());
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());

    if libc::dup2(plan.devnull, 0) < 0
        || libc::dup2(plan.stdout_write, 1) < 0
        || libc::dup2(plan.stderr_write, 2) < 0
    {
        fail(plan, ST_STDIO);
    }
    // Nothing but 0, 1 and 2 crosses the exec (other threads of the agent may
    // have opened fds without O_CLOEXEC). Failure (old kernel) is tolerable:
    // everything the supervisor opens is O_CLOEXEC.
    libc::syscall(
        libc::SYS_close_range,
        3u32,
        u32::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    );
    // Every call starts from the same umask, whatever the agent's is.
    libc::umask(0o022);
    if libc::chdir(plan.cwd.as_ptr()) != 0 {
        fail(plan, ST_CHDIR);
    }
    for (res, lim) in &plan.rlimits {
        if libc::setrlimit(*res, lim) != 0 {
            fail(plan, ST_RLIMIT);
        }
    }
    if plan.drop_caps && drop_capabilities(plan).is_err() {
        fail(plan, ST_CAPS);
    }
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        fail(plan, ST_NNP);
    }
    for (path, access) in plan.child_rules {
        let Some(ruleset) = plan.landlock_fd else {
            break;
        };
        let fd = libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        );
        if fd < 0 {
            fail(plan, ST_CHILD_RULE);
        }
        let attr = PathBeneathAttr {
            allowed_access: *access,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        );
        if r != 0 {
            fail(plan, ST_CHILD_RULE);
        }
        libc::close(fd);
    }
    if let Some(fd) = plan.landlock_fd {
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            fail(plan, ST_LANDLOCK);
        }
    }
    for prog in plan.seccomp {
        if libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            0u64,
            prog as *const libc::sock_fprog,
        ) != 0
        {
            fail(plan, ST_SECCOMP);
        }
    }
    if let Some(path) = plan.argv.first() {
        libc::execve(*path, plan.argv.as_ptr(), plan.envp.as_ptr());
    }
    fail(plan, ST_EXEC)
}
