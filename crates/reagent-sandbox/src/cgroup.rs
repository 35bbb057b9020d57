//! A per-command pids cgroup: caps the number of processes (fork bombs) even
//! for root, where `RLIMIT_NPROC` does not apply, and can kill every member.
//!
//! Uses the cgroup v1 `pids` hierarchy or a cgroup v2 hierarchy with the
//! `pids` controller enabled, whichever this process can write. Each command
//! gets `<root>/reagent-<uuid>/` with `pids.max` set; the directory is
//! removed after the command's processes are gone.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Candidate parents for per-command cgroups.
const CANDIDATES: &[&str] = &["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];

/// A writable pids-controller directory, if this process may create cgroups.
pub(crate) fn pids_root() -> Option<PathBuf> {
    for c in CANDIDATES {
        let root = Path::new(c);
        let usable = root.join("cgroup.procs").exists()
            && (root.join("pids.max").exists() || is_v1_pids_root(root) || v2_has_pids(root));
        if usable && writable_dir(root) {
            return Some(root.to_path_buf());
        }
    }
    None
}

fn is_v1_pids_root(root: &Path) -> bool {
    root.ends_with("pids") && root.join("tasks").exists()
}

fn v2_has_pids(root: &Path) -> bool {
    fs::read_to_string(root.join("cgroup.subtree_control"))
        .map(|s| s.split_whitespace().any(|c| c == "pids"))
        .unwrap_or(false)
}

fn writable_dir(p: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access() on a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// One command's cgroup. Dropping it kills its members and removes it.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    max: u64,
}

impl PidsCgroup {
    /// Creates `<root>/reagent-<uuid>` with `pids.max = max`.
    pub(crate) fn create(root: &Path, max: u64) -> io::Result<Self> {
        let dir = root.join(format!("reagent-{}", uuid::Uuid::new_v4()));
        fs::create_dir(&dir)?;
        let cg = PidsCgroup { dir, max };
        fs::write(cg.dir.join("pids.max"), max.to_string())?;
        let read_back = fs::read_to_string(cg.dir.join("pids.max"))?;
        if read_back.trim() != max.to_string() {
            return Err(io::Error::other(format!(
                "pids.max reads back as {:?}",
                read_back.trim()
            )));
        }
        Ok(cg)
    }

    /// The enforced `pids.max`.
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// The cgroup's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves a process into the cgroup.
    pub(crate) fn add(&self, pid: libc::pid_t) -> io::Result<()> {
        fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    /// Members right now.
    pub(crate) fn members(&self) -> Vec<libc::pid_t> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// SIGKILLs members until the cgroup is empty (or `within` elapses).
    /// Returns true when it is empty.
    pub(crate) fn kill_all(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let members = self.members();
            if members.is_empty() {
                return true;
            }
            for pid in members {
                // SAFETY: kill(2) has no memory-safety preconditions.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        let emptied = self.kill_all(Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(2);
        while fs::remove_dir(&self.dir).is_err() && emptied && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if self.dir.exists() {
            tracing::warn!(dir = %self.dir.display(), "could not remove the command's cgroup");
        }
    }
}
