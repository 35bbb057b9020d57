//! Shared helpers: a workspace, sentinels outside it, running commands, and
//! looking for surviving processes by a unique marker.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reagent_sandbox::{exec, ExecOutput, ExecRequest, SandboxPolicy};

/// A temp workspace plus a sentinel file outside it under /tmp.
pub(crate) struct Fixture {
    pub(crate) ws: tempfile::TempDir,
    pub(crate) sentinel: PathBuf,
    pub(crate) sentinel_text: String,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let ws = tempfile::Builder::new()
            .prefix("reagent-ws-")
            .tempdir()
            .unwrap();
        let id = uuid::Uuid::new_v4();
        let sentinel = PathBuf::from(format!("/tmp/sentinel-{id}"));
        let sentinel_text = format!("sentinel {id}\n");
        std::fs::write(&sentinel, &sentinel_text).unwrap();
        Fixture {
            ws,
            sentinel,
            sentinel_text,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.ws.path()
    }

    pub(crate) fn req(&self, command: &str) -> ExecRequest {
        ExecRequest {
            command: command.to_string(),
            cwd: self.path().to_path_buf(),
            timeout: Duration::from_secs(10),
            output_cap: 64 * 1024,
            policy: SandboxPolicy::default(),
            cancel: None,
        }
    }

    pub(crate) fn run(&self, command: &str) -> ExecOutput {
        exec(&self.req(command)).unwrap()
    }

    pub(crate) fn assert_sentinel_intact(&self) {
        let now = std::fs::read_to_string(&self.sentinel)
            .unwrap_or_else(|e| panic!("sentinel {} is gone: {e}", self.sentinel.display()));
        assert_eq!(now, self.sentinel_text, "sentinel was modified");
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.sentinel);
    }
}

/// Pids whose command line contains `marker` (from the host's /proc).
pub(crate) fn processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// A unique marker usable as a `sleep` argument: "1000.<digits>".
pub(crate) fn sleep_marker() -> String {
    let n = uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000;
    format!("1000.{n:012}")
}
