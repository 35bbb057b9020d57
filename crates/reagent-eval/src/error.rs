//! The harness's errors: each names the file and, where there is one, the task.

use std::path::PathBuf;

/// What went wrong loading a suite or a result file, or saving a result.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A suite file is not valid TOML of the suite format.
    #[error("{}: not a valid suite: {message}", path.display())]
    SuiteSyntax {
        /// The suite file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A task of a suite is wrong (empty prompt, no checks, a path outside the workspace...).
    #[error("{}: task `{task}`: {message}", path.display())]
    Task {
        /// The suite file.
        path: PathBuf,
        /// The task id (or its position when it has none).
        task: String,
        /// What is wrong.
        message: String,
    },
    /// A suite is wrong as a whole (no tasks, a filter naming no task...).
    #[error("{}: {message}", path.display())]
    Suite {
        /// The suite file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A result file is not a result of this harness.
    #[error("{}: not an eval result: {message}", path.display())]
    Result {
        /// The result file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A tool-mode list is wrong.
    #[error("tool modes: {0}")]
    Modes(String),
}
