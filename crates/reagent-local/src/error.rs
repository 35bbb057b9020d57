//! The crate's one error type. Messages are written for the person running reagent: they say
//! what failed, show the server's or installer's last output lines, and what to try.

use std::path::PathBuf;
use std::time::Duration;

/// Errors of finding, installing and starting the local model server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// Neither `$REAGENT_CACHE` nor `$HOME` is set.
    #[error("cannot find a cache directory: set REAGENT_CACHE (or HOME)")]
    NoCacheDir,
    /// A file set by an environment override does not exist (reagent will not install over it).
    #[error("{what} not found at {path} (set by {var}); fix or unset {var}")]
    OverrideMissing {
        /// Which file (`llama-server` or `model`).
        what: &'static str,
        /// The path given.
        path: PathBuf,
        /// The environment variable that gave it.
        var: &'static str,
    },
    /// A model name that is not in the catalog.
    #[error("no local model named `{name}`: the local models are {known} (or serve any GGUF file with --model-file)")]
    UnknownModel {
        /// The name given.
        name: String,
        /// The catalog's names.
        known: String,
    },
    /// The install script failed, timed out, or did not produce the files.
    #[error("installing the local model server failed: {detail}\n--- installer output (last lines) ---\n{tail}")]
    Install {
        /// What went wrong.
        detail: String,
        /// The installer's last output lines.
        tail: String,
    },
    /// The llama-server process could not be started at all.
    #[error("cannot start {}: {source}", server.display())]
    Spawn {
        /// The binary.
        server: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// llama-server exited before it was ready.
    #[error("llama-server exited before it was ready ({status})\n--- llama-server stderr (last lines) ---\n{tail}")]
    Exited {
        /// The exit status.
        status: String,
        /// Its last stderr lines.
        tail: String,
    },
    /// llama-server did not report healthy in time.
    #[error("llama-server did not become ready within {after:?} (the machine may be overloaded)\n--- llama-server stderr (last lines) ---\n{tail}")]
    StartTimeout {
        /// The timeout that expired.
        after: Duration,
        /// Its last stderr lines.
        tail: String,
    },
    /// Any other I/O failure (free port, HTTP client).
    #[error("{context}: {detail}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The error.
        detail: String,
    },
}
