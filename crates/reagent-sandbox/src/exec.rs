//! [`exec`]: run one command confined, supervise it, and collect its output.
//!
//! The supervisor (this thread) clones the namespace init, configures it from
//! outside (user-namespace maps, cgroup membership), releases it with a go
//! byte, then polls stdout/stderr while watching the clock, the cancellation
//! token and the output volume. When init exits every process of the command
//! is already gone (the kernel reaps the whole PID namespace before init's
//! exit completes); the pipes are then drained with a time limit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::child::{self, Plan, REC_LEN, REC_SETUP_ERROR, REC_WAIT_STATUS, STAGES};
use crate::prepare::{prepare, Prepared};
use crate::probe::Kernel;
use crate::supervise::Supervisor;
use crate::{ExecOutput, ExecRequest, SandboxError};

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(SandboxError::io(
            "creating a pipe",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: both fds are fresh and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub(crate) fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
}

fn open_devnull() -> Result<OwnedFd, SandboxError> {
    std::fs::File::open("/dev/null")
        .map(OwnedFd::from)
        .map_err(|e| SandboxError::io("opening /dev/null", e))
}

/// Runs `req.command` under `req.policy` and waits for it (synchronous: call
/// it from a blocking thread). Refuses with [`SandboxError::Unsupported`]
/// when the kernel cannot enforce the policy and `allow_unconfined` is off.
pub fn exec(req: &ExecRequest) -> Result<ExecOutput, SandboxError> {
    exec_with(req, crate::probe::kernel())
}

/// [`exec`] against explicit kernel facts (tests simulate missing features).
pub(crate) fn exec_with(req: &ExecRequest, k: &Kernel) -> Result<ExecOutput, SandboxError> {
    let start = Instant::now();
    let prepared = prepare(req, k)?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let (status_r, status_w) = pipe()?;
    let (sync_r, sync_w) = pipe()?;
    let devnull = open_devnull()?;

    let argv_ptrs = null_terminated(&prepared.argv);
    let fprogs: Vec<libc::sock_fprog> = prepared
        .seccomp
        .iter()
        .map(|p| libc::sock_fprog {
            len: p.len().min(usize::from(u16::MAX)) as u16,
            filter: p.as_ptr() as *mut libc::sock_filter,
        })
        .collect();
    let envp_ptrs = null_terminated(&prepared.envp);
    let plan = Plan {
        sync_read: sync_r.as_raw_fd(),
        status_write: status_w.as_raw_fd(),
        stdout_write: out_w.as_raw_fd(),
        stderr_write: err_w.as_raw_fd(),
        devnull: devnull.as_raw_fd(),
        pid_namespace: prepared.layers.pid_namespace,
        fs_ops: &prepared.mounts.ops,
        cwd: prepared.cwd.clone(),
        argv: argv_ptrs,
        envp: envp_ptrs,
        rlimits: prepared.rlimits.clone(),
        drop_caps: prepared.drop_caps,
        cap_last: prepared.cap_last,
        landlock_fd: prepared.landlock_fd(),
        child_rules: &prepared.child_rules,
        scrub_blocks: scrub_blocks(),
        seccomp: &fprogs,
    };

    // SAFETY: the child only runs async-signal-safe code on `plan`.
    let pid = unsafe { child::raw_clone(prepared.clone_flags) };
    if pid == 0 {
        // SAFETY: we are the freshly cloned child.
        unsafe { child::run_init(&plan) }
    }
    if pid < 0 {
        return Err(SandboxError::io("clone", io::Error::last_os_error()));
    }
    drop((out_w, err_w, status_w, sync_r, devnull));
    let mut guard = InitGuard {
        pid,
        reaped: false,
        pidns: prepared.layers.pid_namespace,
    };

    release(&prepared, pid, &sync_w)?;
    drop(sync_w);

    let mut sup = Supervisor::new(req, out_r, err_r);
    let status = sup.run(&mut guard, &prepared);
    if let Some(cg) = &prepared.cgroup {
        cg.kill_all(Duration::from_secs(2));
    }
    let records = read_records(&status_r);
    for (kind, value, stage) in &records {
        if *kind == REC_SETUP_ERROR {
            let stage = STAGES.get(*stage as usize).copied().unwrap_or("unknown");
            return Err(SandboxError::ChildSetup {
                stage,
                source: io::Error::from_raw_os_error(*value),
            });
        }
    }
    let wait_status = records.iter().find(|r| r.0 == REC_WAIT_STATUS).map(|r| r.1);
    Ok(sup.finish(wait_status, status, &prepared, start))
}

/// `[arg_start, arg_end)` and `[env_start, env_end)` of this process
/// (fields 48–51 of `/proc/self/stat`, counted after the parenthesised
/// command name): init scrubs its copies so `/proc/1/cmdline` and
/// `/proc/1/environ` reveal nothing of the agent (e.g. `--api-key …`).
fn scrub_blocks() -> [Option<(usize, usize)>; 2] {
    let read = || -> Option<Vec<usize>> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let after = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // After ")" the fields start at #3 (state).
        (48..=51)
            .map(|n| fields.get(n - 3).and_then(|f| f.parse().ok()))
            .collect()
    };
    match read().as_deref() {
        Some(&[a0, a1, e0, e1]) => [Some((a0, a1)), Some((e0, e1))],
        _ => [None, None],
    }
}

fn null_terminated(v: &[std::ffi::CString]) -> Vec<*const libc::c_char> {
    v.iter()
        .map(|c| c.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Configures the child from outside, then sends the go byte.
fn release(p: &Prepared, pid: libc::pid_t, sync_w: &OwnedFd) -> Result<(), SandboxError> {
    if p.user_namespace {
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let base = format!("/proc/{pid}");
        let w = |file: &str, text: String| {
            std::fs::write(format!("{base}/{file}"), text)
                .map_err(|e| SandboxError::io("writing the user-namespace maps", e))
        };
        w("setgroups", "deny".into())?;
        w("uid_map", format!("{uid} {uid} 1"))?;
        w("gid_map", format!("{gid} {gid} 1"))?;
    }
    if let Some(cg) = &p.cgroup {
        cg.add(pid)
            .map_err(|e| SandboxError::io("joining the pids cgroup", e))?;
    }
    let go = [1u8];
    // SAFETY: writing one byte from a stack buffer.
    if unsafe { libc::write(sync_w.as_raw_fd(), go.as_ptr().cast(), 1) } != 1 {
        return Err(SandboxError::io(
            "releasing the child",
            io::Error::last_os_error(),
        ));
    }
    Ok(())
}

fn read_records(fd: &OwnedFd) -> Vec<(u32, i32, u32)> {
    set_nonblocking(fd.as_raw_fd());
    let mut bytes = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        // SAFETY: reading into a stack buffer.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        bytes.extend_from_slice(&buf[..n as usize]);
    }
    bytes
        .chunks_exact(REC_LEN)
        .map(|c| {
            let word = |i: usize| [c[i], c[i + 1], c[i + 2], c[i + 3]];
            (
                u32::from_ne_bytes(word(0)),
                i32::from_ne_bytes(word(4)),
                u32::from_ne_bytes(word(8)),
            )
        })
        .collect()
}

/// Kills and reaps the init process if the supervisor bails out early.
pub(crate) struct InitGuard {
    pid: libc::pid_t,
    reaped: bool,
    pidns: bool,
}

impl InitGuard {
    pub(crate) fn signal(&self, sig: libc::c_int) {
        if self.reaped {
            return;
        }
        // SAFETY: kill(2) has no memory-safety preconditions. Without a PID
        // namespace init leads its own process group, so signal the group.
        unsafe {
            libc::kill(self.pid, sig);
            if !self.pidns {
                libc::kill(-self.pid, sig);
            }
        }
    }

    /// Non-blocking reap; returns init's wait status once it has exited.
    pub(crate) fn try_reap(&mut self) -> Option<i32> {
        if self.reaped {
            return None;
        }
        let mut st = 0;
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
        if r == self.pid
            || (r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
        {
            self.reaped = true;
            return Some(st);
        }
        None
    }
}

impl Drop for InitGuard {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(libc::SIGKILL);
            let mut st = 0;
            // SAFETY: blocking reap of our own child after SIGKILL.
            unsafe { libc::waitpid(self.pid, &mut st, 0) };
            self.reaped = true;
        }
    }
}
