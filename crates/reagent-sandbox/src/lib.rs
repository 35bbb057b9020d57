//! OS-level confinement for the shell commands reagent runs.
//!
//! A string denylist cannot stop `r''m`, `$(printf rm)` or `base64 -d | sh`,
//! so [`exec`] confines the *process* instead, without needing root:
//!
//! - **Landlock**: reads limited to the workspace, the private temp dir and
//!   system directories; writes to the workspace and the private temp dir;
//!   TCP and abstract-socket/signal scoping when the kernel has them.
//! - **seccomp**: no non-UNIX sockets (unless the network is allowed), no
//!   ptrace, no io_uring, no mount/namespace/module/kexec calls.
//! - **Namespaces**: a PID namespace (every process the command starts dies
//!   with it), a mount namespace (fresh `/proc`, `/run` and home directories
//!   masked, protected paths bind-mounted read-only) and an empty network
//!   namespace. Created directly as root, or via a user namespace otherwise.
//! - **Process hygiene**: `PR_SET_NO_NEW_PRIVS`, all capabilities dropped,
//!   rlimits, a pids cgroup when available, stdin `/dev/null`, a scrubbed
//!   environment, a wall-clock timeout and capped, escaped output.
//!
//! When the kernel cannot enforce a layer, `exec` refuses with
//! [`SandboxError::Unsupported`] unless the policy sets `allow_unconfined`.
//! [`probe`] reports which layers this machine supports. [`CommandRules`]
//! (allow / ask / forbid by prefix) is advisory policy, not a boundary.
//!
//! ```no_run
//! use reagent_sandbox::{exec, ExecRequest};
//! let out = exec(&ExecRequest::new("ls -la", "/path/to/workspace"))?;
//! assert_eq!(out.exit_code, Some(0));
//! # Ok::<(), reagent_sandbox::SandboxError>(())
//! ```
//!
//! Key design decision: the child setup runs between `clone` and `execve` in
//! the supervisor's own process (no helper binary). Everything is prepared
//! before the clone (ruleset fd, BPF program, C strings), and the child only
//! makes raw syscalls, which keeps it async-signal-safe in a multi-threaded
//! agent. See `SECURITY.md` at the repository root for what each layer does
//! and does not stop.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cgroup;
mod child;
mod env;
mod error;
mod exec;
#[cfg(test)]
mod fallback_tests;
mod landlock_fs;
mod mounts;
mod output;
mod policy;
mod prepare;
mod probe;
mod request;
mod rules;
mod seccomp;
mod spawn_confined;
mod supervise;

pub use error::SandboxError;
pub use exec::exec;
pub use policy::{
    default_protected_paths, ParseModeError, ResourceLimits, SandboxMode, SandboxPolicy,
};
pub use probe::{probe, NamespaceSupport, SupportReport};
pub use request::{AppliedLayers, ExecOutput, ExecRequest, MAX_COMMAND_BYTES};
pub use rules::{CommandRules, RuleDecision};
pub use spawn_confined::ChildConfinement;
