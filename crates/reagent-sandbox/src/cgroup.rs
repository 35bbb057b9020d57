//! A per-command pids cgroup: caps the number of processes (fork bombs) even
//! for root, where `RLIMIT_NPROC` does not apply, and can kill every member.
//!
//! Uses the cgroup v1 `pids` hierarchy or a cgroup v2 hierarchy with the
//! `pids` controller enabled for the agent's own cgroup, whichever this
//! process can write. Each command gets `<own cgroup>/reagent-<uuid>/` with
//! `pids.max` set; the directory is removed after the command's processes
//! are gone.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where the cgroup v1 `pids` hierarchy and the unified v2 hierarchy are
/// normally mounted.
const V1_PIDS: &str = "/sys/fs/cgroup/pids";
const V2: &str = "/sys/fs/cgroup";

/// A writable pids-controller directory, if this process may create cgroups.
///
/// The parent is the cgroup this process is already in (from
/// `/proc/self/cgroup`), so per-command cgroups nest under whatever limits
/// the agent itself runs with (a service manager's or a CI runner's) instead
/// of escaping them.
pub(crate) fn pids_root() -> Option<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    candidates(&own)
        .into_iter()
        .find(|dir| dir.join("cgroup.procs").exists() && writable_dir(dir))
}

/// Candidate parents from the text of `/proc/self/cgroup`.
fn candidates(own: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") && Path::new(V1_PIDS).join("tasks").exists()
        {
            out.push(Path::new(V1_PIDS).join(rel));
        } else if id == "0" && controllers.is_empty() {
            let dir = Path::new(V2).join(rel);
            // v2: children get a pids.max only when the controller is
            // enabled for this cgroup's subtree.
            let enabled = fs::read_to_string(dir.join("cgroup.subtree_control"))
                .map(|s| s.split_whitespace().any(|c| c == "pids"))
                .unwrap_or(false);
            if enabled && Path::new(V2).join("cgroup.controllers").exists() {
                out.push(dir);
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_the_own_cgroup() {
        let v1 = "9:name=systemd:/\n8:pids:/ci/job-1\n4:memory:/x\n0::/";
        let got = candidates(v1);
        if Path::new(V1_PIDS).join("tasks").exists() {
            assert_eq!(
                got.first(),
                Some(&PathBuf::from("/sys/fs/cgroup/pids/ci/job-1"))
            );
        } else {
            assert!(got.iter().all(|p| !p.starts_with(V1_PIDS)), "{got:?}");
        }
        assert!(candidates("garbage\n::\n").is_empty());
    }
}
