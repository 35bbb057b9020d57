//! The sandbox of stdio servers: with `sandbox = true` (the default) the server process runs
//! under the Landlock ruleset of the run's sandbox policy and `no_new_privs`
//! ([`reagent_sandbox::ChildConfinement`]): it reads the system directories, the workspace,
//! its own program's directory and the readable roots; it writes the workspace (protected
//! paths excepted) and the writable roots; no TCP unless the policy allows the network.
//! Namespaces, seccomp and rlimits of `run_command` do not apply to a long-lived server. A
//! confined server starts in its workspace.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reagent_sandbox::{ChildConfinement, SandboxPolicy};

/// What confines the stdio servers of one [`McpClients`](crate::McpClients).
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The policy (the run's `[sandbox]` settings).
    pub policy: SandboxPolicy,
    /// The workspace the policy is about.
    pub workspace: PathBuf,
}

/// Confine `cmd` (spawning `program`) by `confinement`, unless the server opted out
/// (`sandbox = false`) or there is no confinement (`None`).
pub(crate) fn apply(
    cmd: &mut tokio::process::Command,
    program: &str,
    confinement: Option<&Confinement>,
) -> Result<(), String> {
    let Some(c) = confinement else {
        return Ok(());
    };
    // A server confined to a workspace starts in it (so its arguments may name it as `.`).
    cmd.current_dir(&c.workspace);
    let extra = program_dirs(program);
    let prepared = ChildConfinement::prepare(&c.policy, &c.workspace, &extra).map_err(|e| {
        format!("cannot sandbox the server (set `sandbox = false` to run it unconfined): {e}")
    })?;
    let prepared = Arc::new(prepared);
    // SAFETY: apply_in_child makes two raw syscalls and allocates nothing (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || prepared.apply_in_child());
    }
    Ok(())
}

/// The directory of `program` (resolved on PATH) and, for a symlink, its target's: a
/// program outside the system directories must be readable to start.
fn program_dirs(program: &str) -> Vec<PathBuf> {
    let path = Path::new(program);
    let found = if path.components().count() > 1 {
        Some(path.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
    };
    let mut dirs = Vec::new();
    if let Some(found) = found {
        if let Some(parent) = found.parent() {
            dirs.push(parent.to_path_buf());
        }
        if let Some(parent) = found.canonicalize().ok().as_deref().and_then(Path::parent) {
            dirs.push(parent.to_path_buf());
        }
    }
    dirs
}
