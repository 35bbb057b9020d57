//! The inputs and outputs of `exec`: [`ExecRequest`], [`ExecOutput`] and
//! [`AppliedLayers`] (what confinement was actually in force for a call).

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::SandboxPolicy;

/// Longest command accepted (bytes); longer ones are refused before spawning.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// One command to run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Shell text, run as `/bin/sh -c <command>`.
    pub command: String,
    /// The workspace; the command's working directory.
    pub cwd: PathBuf,
    /// Wall-clock limit. At the limit the command gets SIGTERM, then SIGKILL
    /// after a short grace period (the whole PID namespace dies with it).
    pub timeout: Duration,
    /// Bytes of stdout (and, separately, of stderr) kept: head and tail halves.
    pub output_cap: usize,
    /// What the command may do.
    pub policy: SandboxPolicy,
    /// Cancels the call: the command is killed at once.
    pub cancel: Option<CancellationToken>,
}

impl ExecRequest {
    /// A request with the default policy, a 10 s timeout and a 64 KiB cap.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        ExecRequest {
            command: command.into(),
            cwd: cwd.into(),
            timeout: Duration::from_secs(10),
            output_cap: 64 * 1024,
            policy: SandboxPolicy::default(),
            cancel: None,
        }
    }
}

/// What happened to a command that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Exit code; `Some(124)` when the call timed out (like `timeout(1)`).
    pub exit_code: Option<i32>,
    /// The signal that ended the command, if a signal did.
    pub signal: Option<i32>,
    /// The wall-clock timeout fired.
    pub timed_out: bool,
    /// Captured stdout: escaped, capped (head and tail), with a
    /// `[truncated N bytes]` note when bytes were dropped.
    pub stdout: String,
    /// Captured stderr, treated like stdout.
    pub stderr: String,
    /// Bytes dropped from stdout and stderr together.
    pub truncated_bytes: u64,
    /// Wall-clock duration of the call.
    pub duration: Duration,
    /// Which limit stopped the command, if one evidently did (e.g.
    /// "cpu time limit", "file size limit", "process limit", "output limit",
    /// "memory limit", "cancelled").
    pub limit_hit: Option<String>,
    /// The confinement that was in force.
    pub layers: AppliedLayers,
}

/// The confinement layers in force for one call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppliedLayers {
    /// Landlock ABI used (None: no filesystem confinement).
    pub landlock_abi: Option<i32>,
    /// A seccomp filter was installed.
    pub seccomp: bool,
    /// Network sockets other than AF_UNIX are denied.
    pub network_blocked: bool,
    /// The command ran in its own PID namespace with a fresh /proc.
    pub pid_namespace: bool,
    /// The command ran in its own (empty) network namespace.
    pub net_namespace: bool,
    /// Namespaces were created through a user namespace.
    pub user_namespace: bool,
    /// The cgroup `pids.max` in force, if a pids cgroup was used.
    pub pids_max: Option<u64>,
    /// All capabilities were dropped (the supervisor was root or in a user namespace).
    pub capabilities_dropped: bool,
    /// Protected paths kept read-only for this call (read-only bind mounts;
    /// without a mount namespace, Landlock grants that skip them).
    pub protected_read_only: Vec<PathBuf>,
    /// Directories hidden under an empty read-only tmpfs.
    pub masked: Vec<PathBuf>,
}
