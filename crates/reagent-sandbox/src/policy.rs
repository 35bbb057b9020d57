//! What a command may do: [`SandboxMode`], [`SandboxPolicy`] and [`ResourceLimits`].
//!
//! These are plain data; `exec` turns them into Landlock rules, a seccomp
//! filter, namespaces, a cgroup and rlimits. Defaults are the safe choice:
//! workspace-write, no network, `.git/`, `.env` and `reagent.toml` protected,
//! and refusal to run when the kernel cannot enforce the policy.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// How much of the filesystem a command may change (named after Codex's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// The workspace is readable, nothing but the private temp dir is writable.
    ReadOnly,
    /// The workspace (minus protected paths) and the private temp dir are writable.
    #[default]
    WorkspaceWrite,
    /// No filesystem or network confinement; process hygiene (env scrub, PID
    /// namespace, rlimits, timeout, output cap) still applies.
    Full,
}

impl SandboxMode {
    /// The config-file spelling: `read-only`, `workspace-write` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Full => "full",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for an unknown sandbox mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (expected read-only, workspace-write or full)")]
pub struct ParseModeError(pub String);

impl FromStr for SandboxMode {
    type Err = ParseModeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "full" => Ok(SandboxMode::Full),
            other => Err(ParseModeError(other.to_string())),
        }
    }
}

/// Kernel resource limits applied to every command (rlimits plus a pids cgroup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLimits {
    /// `RLIMIT_CPU` in seconds (SIGXCPU at the limit, SIGKILL one second later).
    pub cpu_seconds: u64,
    /// `RLIMIT_AS` in bytes (allocations beyond it fail).
    pub address_space_bytes: u64,
    /// `RLIMIT_FSIZE` in bytes (SIGXFSZ / EFBIG beyond it).
    pub file_size_bytes: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u64,
    /// Maximum number of live processes: cgroup `pids.max` when a pids cgroup
    /// is available, and `RLIMIT_NPROC` (which only binds non-root uids).
    pub processes: u64,
    /// `RLIMIT_CORE` in bytes (0: no core dumps).
    pub core_bytes: u64,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_seconds: 60,
            address_space_bytes: 4 << 30,
            file_size_bytes: 1 << 30,
            open_files: 1024,
            processes: 256,
            core_bytes: 0,
        }
    }
}

/// Everything `exec` needs to know about what a command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Filesystem mode.
    pub mode: SandboxMode,
    /// Extra writable roots beyond the workspace and the private temp dir
    /// (e.g. `~/.cargo` for a build). Writable roots are readable too.
    pub writable_roots: Vec<PathBuf>,
    /// Extra readable roots beyond the workspace and the system directories.
    pub readable_roots: Vec<PathBuf>,
    /// Allow network sockets (AF_INET, AF_INET6, ...). Off by default.
    pub network: bool,
    /// Paths that stay read-only even in workspace-write mode. Relative paths
    /// are taken relative to the workspace.
    pub protected_paths: Vec<PathBuf>,
    /// Resource limits.
    pub limits: ResourceLimits,
    /// Run anyway, with whatever layers work, when the kernel cannot enforce
    /// a layer. The user must opt in explicitly; the default refuses.
    pub allow_unconfined: bool,
    /// Require a pids cgroup (refuse to run without one). Off by default
    /// because unprivileged users usually cannot create cgroups; the PID
    /// namespace still reaps every process.
    pub require_pids_cgroup: bool,
    /// Extra environment variable names passed through from the parent (still
    /// subject to the KEY/SECRET/TOKEN/PASSWORD filter).
    pub env_passthrough: Vec<String>,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::WorkspaceWrite,
            writable_roots: Vec::new(),
            readable_roots: Vec::new(),
            network: false,
            protected_paths: default_protected_paths(),
            limits: ResourceLimits::default(),
            allow_unconfined: false,
            require_pids_cgroup: false,
            env_passthrough: Vec::new(),
        }
    }
}

/// The default protected paths inside the workspace: `.git`, `.env`, `reagent.toml`.
pub fn default_protected_paths() -> Vec<PathBuf> {
    [".git", ".env", "reagent.toml"]
        .iter()
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_round_trips_through_its_names() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::Full,
        ] {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        }
        assert_eq!(
            "danger-full-access".parse::<SandboxMode>(),
            Err(ParseModeError("danger-full-access".into()))
        );
        assert_eq!(
            "Read-Only".parse::<SandboxMode>(),
            Err(ParseModeError("Read-Only".into()))
        );
    }

    #[test]
    fn default_policy_is_workspace_write_without_network() {
        let p = SandboxPolicy::default();
        assert_eq!(p.mode, SandboxMode::WorkspaceWrite);
        assert!(!p.network);
        assert!(!p.allow_unconfined);
        assert_eq!(p.protected_paths, default_protected_paths());
    }
}
