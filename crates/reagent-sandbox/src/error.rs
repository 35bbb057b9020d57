//! [`SandboxError`]: why `exec` refused or failed to run a command.
//!
//! A command that runs and fails (non-zero exit, killed by a limit, timed
//! out) is not an error: it is an [`crate::ExecOutput`]. Errors are reserved
//! for "the command was not run as asked".

use std::path::PathBuf;

/// Why a command was not run (or could not be supervised).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The command itself is unacceptable (empty, NUL byte, too long).
    #[error("invalid command: {0}")]
    InvalidCommand(String),
    /// The working directory is missing or not a directory.
    #[error("workspace {path} is not a usable directory: {reason}")]
    Workspace {
        /// The configured workspace.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The kernel cannot enforce a layer the policy needs, and the user did
    /// not opt out with `allow_unconfined`.
    #[error(
        "refusing to run: the sandbox layer `{layer}` is not available on this machine ({reason}); \
         set allow_unconfined (sandbox.allow_unconfined = true) to run with reduced confinement"
    )]
    Unsupported {
        /// The layer (landlock, seccomp, pid-namespace, ...).
        layer: &'static str,
        /// Why it is unavailable.
        reason: String,
    },
    /// Preparing a layer before the fork failed.
    #[error("sandbox setup failed while preparing {stage}: {reason}")]
    Prepare {
        /// What was being prepared.
        stage: &'static str,
        /// The underlying error.
        reason: String,
    },
    /// A confinement step inside the child failed; the command was not run.
    #[error("sandbox setup failed in the child at {stage}: {source}")]
    ChildSetup {
        /// The step that failed.
        stage: &'static str,
        /// The errno it failed with.
        source: std::io::Error,
    },
    /// An operating-system call in the supervisor failed.
    #[error("{context}: {source}")]
    Io {
        /// What the supervisor was doing.
        context: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl SandboxError {
    /// True when the error should be shown to the model as a tool result
    /// (the command is at fault) rather than treated as a fatal setup problem.
    pub fn is_command_error(&self) -> bool {
        match self {
            SandboxError::InvalidCommand(_) | SandboxError::Workspace { .. } => true,
            SandboxError::Unsupported { .. }
            | SandboxError::Prepare { .. }
            | SandboxError::ChildSetup { .. }
            | SandboxError::Io { .. } => false,
        }
    }

    pub(crate) fn io(context: &'static str, source: std::io::Error) -> Self {
        SandboxError::Io { context, source }
    }
}
