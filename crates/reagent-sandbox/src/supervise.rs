//! The supervision loop: poll the pipes, watch the clock, the cancellation
//! token and the output volume, kill on timeout, and build the [`ExecOutput`].

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::exec::{set_nonblocking, InitGuard};
use crate::output::CappedBuf;
use crate::prepare::Prepared;
use crate::{ExecOutput, ExecRequest};

/// Time between SIGTERM and SIGKILL on timeout.
const GRACE: Duration = Duration::from_millis(500);
/// How long to drain the pipes after the command has exited.
const DRAIN: Duration = Duration::from_secs(2);
/// Kill the command once it has written this many times the cap...
const FLOOD_FACTOR: u64 = 64;
/// ... but never before this much output.
const FLOOD_MIN: u64 = 16 << 20;
/// Poll slice: how often the clock and the token are checked.
const SLICE_MS: i32 = 20;

struct Stream {
    fd: OwnedFd,
    buf: CappedBuf,
    eof: bool,
}

impl Stream {
    fn new(fd: OwnedFd, cap: usize) -> Self {
        set_nonblocking(fd.as_raw_fd());
        Stream {
            fd,
            buf: CappedBuf::new(cap),
            eof: false,
        }
    }

    /// Reads whatever is available without blocking.
    fn pump(&mut self) {
        let mut chunk = [0u8; 65536];
        while !self.eof {
            // SAFETY: reading into a stack buffer from an fd we own.
            let n =
                unsafe { libc::read(self.fd.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
            match n {
                0 => self.eof = true,
                n if n > 0 => self.buf.push(&chunk[..n as usize]),
                _ => {
                    let e = std::io::Error::last_os_error().raw_os_error();
                    if e != Some(libc::EINTR) && e != Some(libc::EAGAIN) {
                        self.eof = true;
                    }
                    if e != Some(libc::EINTR) {
                        return;
                    }
                }
            }
        }
    }
}

/// Why the supervisor killed the command, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    Timeout,
    Cancelled,
    Flood,
}

pub(crate) struct Supervisor {
    timeout: Duration,
    cap: usize,
    cancel: Option<CancellationToken>,
    out: Stream,
    err: Stream,
    kill: Option<Kill>,
}

impl Supervisor {
    pub(crate) fn new(req: &ExecRequest, out: OwnedFd, err: OwnedFd) -> Self {
        Supervisor {
            timeout: req.timeout,
            cap: req.output_cap,
            cancel: req.cancel.clone(),
            out: Stream::new(out, req.output_cap),
            err: Stream::new(err, req.output_cap),
            kill: None,
        }
    }

    fn poll(&mut self, ms: i32) {
        let mut fds: Vec<libc::pollfd> = [&self.out, &self.err]
            .iter()
            .filter(|s| !s.eof)
            .map(|s| libc::pollfd {
                fd: s.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        if fds.is_empty() {
            std::thread::sleep(Duration::from_millis(ms.max(0) as u64));
            return;
        }
        // SAFETY: fds is a valid array of pollfd for the duration of the call.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        self.out.pump();
        self.err.pump();
    }

    fn flood_limit(&self) -> u64 {
        (self.cap as u64)
            .saturating_mul(FLOOD_FACTOR)
            .max(FLOOD_MIN)
    }

    /// Supervises until init has exited and the pipes are drained (or the
    /// drain time is up). Returns init's wait status.
    pub(crate) fn run(&mut self, guard: &mut InitGuard, prepared: &Prepared) -> Option<i32> {
        let start = Instant::now();
        // A huge timeout means "no deadline" rather than an Instant overflow.
        let deadline = start
            .checked_add(self.timeout)
            .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut hard_kill_at: Option<Instant> = None;
        let mut init_status = None;
        let mut drain_until: Option<Instant> = None;
        loop {
            if init_status.is_none() {
                if let Some(st) = guard.try_reap() {
                    init_status = Some(st);
                    drain_until = Some(Instant::now() + DRAIN);
                }
            }
            let now = Instant::now();
            if let Some(until) = drain_until {
                if (self.out.eof && self.err.eof) || now >= until {
                    // Without a PID namespace a straggler may hold the pipe:
                    // the cgroup (if any) is killed by the caller.
                    if let Some(cg) = &prepared.cgroup {
                        cg.kill_all(Duration::from_millis(500));
                    }
                    return init_status;
                }
            } else {
                let cancelled = self.cancel.as_ref().is_some_and(|c| c.is_cancelled());
                let flood =
                    self.out.buf.total().saturating_add(self.err.buf.total()) > self.flood_limit();
                if self.kill.is_none() {
                    let why = if cancelled {
                        Some(Kill::Cancelled)
                    } else if flood {
                        Some(Kill::Flood)
                    } else if now >= deadline {
                        Some(Kill::Timeout)
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        self.kill = Some(why);
                        if why == Kill::Timeout {
                            guard.signal(libc::SIGTERM);
                            hard_kill_at = Some(now + GRACE);
                        } else {
                            hard_kill_at = Some(now);
                        }
                    }
                }
                if hard_kill_at.is_some_and(|t| now >= t) {
                    guard.signal(libc::SIGKILL);
                    if let Some(cg) = &prepared.cgroup {
                        cg.kill_all(Duration::from_millis(100));
                    }
                    hard_kill_at = Some(now + Duration::from_millis(200));
                }
            }
            self.poll(SLICE_MS);
        }
    }

    /// Builds the result from the command's wait status (reported by init).
    pub(crate) fn finish(
        self,
        wait_status: Option<i32>,
        init_status: Option<i32>,
        prepared: &Prepared,
        start: Instant,
    ) -> ExecOutput {
        let status = wait_status.or(init_status);
        let (mut exit_code, signal) = match status {
            Some(st) if libc::WIFEXITED(st) && wait_status.is_some() => {
                (Some(libc::WEXITSTATUS(st)), None)
            }
            Some(st) if libc::WIFSIGNALED(st) => (None, Some(libc::WTERMSIG(st))),
            _ => (None, None),
        };
        let timed_out = self.kill == Some(Kill::Timeout);
        if timed_out {
            exit_code = Some(124);
        }
        let stderr_text = self.err.buf.render();
        let limits = &prepared_limits(prepared);
        let limit_hit = match self.kill {
            Some(Kill::Timeout) => Some(format!("wall-clock timeout ({:?})", self.timeout)),
            Some(Kill::Cancelled) => Some("cancelled".to_string()),
            Some(Kill::Flood) => Some(format!(
                "output limit ({} bytes written)",
                self.flood_limit()
            )),
            // A shell reports a child killed by a signal as exit 128+signal.
            None => match signal.or(exit_code.map(|c| c - 128)) {
                Some(libc::SIGXCPU) => Some(format!("cpu time limit ({} s)", limits.0)),
                Some(libc::SIGXFSZ) => Some(format!("file size limit ({} bytes)", limits.1)),
                _ => pids_limit_hit(prepared).or_else(|| memory_limit_hit(&stderr_text, limits.2)),
            },
        };
        ExecOutput {
            exit_code,
            signal,
            timed_out,
            truncated_bytes: self
                .out
                .buf
                .truncated()
                .saturating_add(self.err.buf.truncated()),
            stdout: self.out.buf.render(),
            stderr: stderr_text,
            duration: start.elapsed(),
            limit_hit,
            layers: prepared.layers.clone(),
        }
    }
}

fn prepared_limits(p: &Prepared) -> (u64, u64, u64) {
    let get = |res| {
        p.rlimits
            .iter()
            .find(|(r, _)| *r == res)
            .map(|(_, l)| l.rlim_cur)
            .unwrap_or(0)
    };
    (
        get(libc::RLIMIT_CPU),
        get(libc::RLIMIT_FSIZE),
        get(libc::RLIMIT_AS),
    )
}

/// The pids cgroup counts refused forks in `pids.events` (`max N`).
fn pids_limit_hit(p: &Prepared) -> Option<String> {
    let cg = p.cgroup.as_ref()?;
    let events = std::fs::read_to_string(cg.dir().join("pids.events")).ok()?;
    let refused: u64 = events
        .lines()
        .find_map(|l| l.strip_prefix("max "))
        .and_then(|n| n.trim().parse().ok())?;
    (refused > 0).then(|| {
        format!(
            "process limit (pids.max {}, {refused} forks refused)",
            cg.max()
        )
    })
}

fn memory_limit_hit(stderr: &str, address_space: u64) -> Option<String> {
    const SIGNS: &[&str] = &[
        "MemoryError",
        "Cannot allocate memory",
        "memory exhausted",
        "out of memory",
        "bad_alloc",
    ];
    SIGNS
        .iter()
        .any(|s| stderr.contains(s))
        .then(|| format!("memory limit (address space {address_space} bytes)"))
}
