//! The test modules and their shared helpers.

mod catalog;
mod install;
mod ollama;
mod server;
mod warm;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use reagent_local::{Locations, ServerFiles};

/// The cached llama-server and model. Fails (never skips) when they are not installed: run
/// `scripts/install-model-server.sh` first.
pub(crate) fn cached_files() -> ServerFiles {
    let files = Locations::from_env().expect("a cache directory").files();
    assert!(
        files.is_complete(),
        "the local model server is not installed ({:?} missing): run scripts/install-model-server.sh",
        files.missing()
    );
    files
}

/// An executable shell script at `dir/name`.
pub(crate) fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Whether a process with this pid exists (a reaped child no longer does).
pub(crate) fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}
