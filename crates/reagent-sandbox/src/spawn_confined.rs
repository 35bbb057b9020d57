//! Confinement of a long-lived process that the caller spawns itself and talks to over pipes
//! (an MCP server): the Landlock layer of the workspace policy and `PR_SET_NO_NEW_PRIVS`,
//! applied between fork and exec. Unlike [`exec`](crate::exec), there are no namespaces,
//! seccomp filter, rlimits or timeout: the process lives as long as its caller wants.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::landlock_fs::{build_ruleset, FsGrants};
use crate::prepare::write_except;
use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// A prepared confinement for one child process.
#[derive(Debug)]
pub struct ChildConfinement {
    landlock: Option<OwnedFd>,
    abi: Option<i32>,
}

impl ChildConfinement {
    /// Build the ruleset for `policy` over `workspace`: reads of the system directories, the
    /// workspace, the policy's readable roots and `extra_read` (the program's own directory,
    /// say); writes to the workspace (workspace-write mode) and the writable roots. With
    /// protected paths present in the workspace, writes are granted entry by entry of its top
    /// level, the protected ones skipped (there is no mount namespace to make them read-only),
    /// so new files can be made inside its existing directories but not beside them; no TCP unless the policy allows the network (Landlock ABI 4+).
    /// `full` mode builds no ruleset. A kernel without Landlock is an error unless the policy
    /// sets `allow_unconfined`.
    pub fn prepare(
        policy: &SandboxPolicy,
        workspace: &Path,
        extra_read: &[PathBuf],
    ) -> Result<Self, SandboxError> {
        let abi = crate::probe::kernel().landlock_abi;
        if policy.mode == SandboxMode::Full {
            return Ok(ChildConfinement {
                landlock: None,
                abi,
            });
        }
        let Some(version) = abi else {
            if policy.allow_unconfined {
                tracing::warn!(
                    "no Landlock: the server process runs unconfined (allow_unconfined)"
                );
                return Ok(ChildConfinement {
                    landlock: None,
                    abi,
                });
            }
            return Err(SandboxError::Unsupported {
                layer: "landlock",
                reason: "the kernel has no Landlock support".into(),
            });
        };
        let ws = workspace
            .canonicalize()
            .map_err(|e| SandboxError::Prepare {
                stage: "workspace",
                reason: format!("{}: {e}", workspace.display()),
            })?;
        let existing = |roots: &[PathBuf]| -> Vec<PathBuf> {
            roots.iter().filter_map(|r| r.canonicalize().ok()).collect()
        };
        let mut grants = FsGrants::default();
        grants.read.extend(existing(&policy.readable_roots));
        grants.read.extend(existing(extra_read));
        grants.write.extend(existing(&policy.writable_roots));
        grants.read.push(ws.clone());
        if policy.mode == SandboxMode::WorkspaceWrite {
            let protected: Vec<PathBuf> = policy
                .protected_paths
                .iter()
                .map(|p| {
                    if p.is_absolute() {
                        p.clone()
                    } else {
                        ws.join(p)
                    }
                })
                .filter_map(|p| p.canonicalize().ok())
                .filter(|p| p.starts_with(&ws) && *p != ws)
                .collect();
            if protected.is_empty() {
                grants.write.push(ws.clone());
            } else {
                write_except(&ws, &protected, &mut grants);
            }
        }
        Ok(ChildConfinement {
            landlock: Some(build_ruleset(&grants, version, policy.network)?),
            abi,
        })
    }

    /// The Landlock ABI the ruleset was built for (none: no ruleset applies).
    pub fn landlock_abi(&self) -> Option<i32> {
        self.landlock.as_ref().and(self.abi)
    }

    /// Confine the calling process: `PR_SET_NO_NEW_PRIVS`, then the ruleset. Meant for the
    /// child between fork and exec (`pre_exec`): it makes two raw syscalls and allocates
    /// nothing, so it is async-signal-safe.
    pub fn apply_in_child(&self) -> std::io::Result<()> {
        // SAFETY: prctl with constant arguments has no memory effects.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(fd) = &self.landlock {
            // SAFETY: a raw syscall on an fd this value owns; no memory is passed.
            let r =
                unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    use std::sync::Arc;

    use super::*;

    /// A confined shell writes in the workspace but not next to it, and not into a protected
    /// path. Needs a kernel with Landlock (as `run_command`'s own tests do).
    #[test]
    fn a_confined_child_writes_only_in_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let policy = SandboxPolicy {
            protected_paths: vec![".git".into()],
            ..SandboxPolicy::default()
        };
        let confinement = match ChildConfinement::prepare(&policy, &ws, &[]) {
            Ok(c) => Arc::new(c),
            Err(e) => panic!("this test needs a kernel with Landlock: {e}"),
        };
        assert!(confinement.landlock_abi().is_some());
        let outside = root.path().join("outside.txt");
        let script = format!(
            "echo in > {ws}/src/in.txt; echo out > {out} ; echo git > {ws}/.git/x; true",
            ws = ws.display(),
            out = outside.display()
        );
        let c = confinement.clone();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(&script);
        // SAFETY: apply_in_child is async-signal-safe.
        unsafe {
            cmd.pre_exec(move || c.apply_in_child());
        }
        let status = cmd.status().unwrap();
        assert!(status.success());
        assert_eq!(
            std::fs::read_to_string(ws.join("src/in.txt")).unwrap(),
            "in\n"
        );
        assert!(!outside.exists(), "wrote outside the workspace");
        assert!(!ws.join(".git/x").exists(), "wrote into a protected path");
    }
}
