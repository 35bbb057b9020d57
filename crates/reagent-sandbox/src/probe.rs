//! What this machine's kernel can enforce: [`probe`] and [`SupportReport`]
//! (shown by `reagent doctor`), plus the cached facts `exec` plans with.

use std::fmt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Which confinement layers this machine supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupportReport {
    /// Landlock ABI version (None: Landlock unavailable).
    pub landlock_abi: Option<i32>,
    /// seccomp-BPF filters can be installed.
    pub seccomp: bool,
    /// A PID + mount (+ network) namespace can be created, and how.
    pub namespaces: NamespaceSupport,
    /// A writable pids cgroup parent directory.
    pub pids_cgroup: Option<PathBuf>,
    /// The supervisor runs as root (commands then run as capability-less root).
    pub running_as_root: bool,
    /// `bwrap` is installed and can create namespaces here.
    pub bubblewrap: Option<PathBuf>,
}

/// How this process can create namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceSupport {
    /// As root, directly (no user namespace needed).
    Privileged,
    /// Through an unprivileged user namespace.
    UserNamespace,
    /// Not at all.
    Unavailable,
}

impl SupportReport {
    /// True when every default layer (Landlock, seccomp, PID namespace) works.
    pub fn fully_supported(&self) -> bool {
        self.landlock_abi.is_some()
            && self.seccomp
            && self.namespaces != NamespaceSupport::Unavailable
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

impl fmt::Display for SupportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.landlock_abi {
            Some(v) => writeln!(
                f,
                "landlock            : yes (ABI {v}{}{})",
                if v >= 4 { ", TCP rules" } else { "" },
                if v >= 6 {
                    ", signal + abstract-socket scoping"
                } else {
                    ""
                }
            )?,
            None => writeln!(
                f,
                "landlock            : NO (commands are refused unless allow_unconfined)"
            )?,
        }
        writeln!(f, "seccomp             : {}", yes_no(self.seccomp))?;
        writeln!(f, "no_new_privs        : yes")?;
        let ns = match self.namespaces {
            NamespaceSupport::Privileged => "yes (as root)",
            NamespaceSupport::UserNamespace => "yes (user namespace)",
            NamespaceSupport::Unavailable => "NO (background processes may outlive a call)",
        };
        writeln!(f, "pid/mount/net ns    : {ns}")?;
        match &self.pids_cgroup {
            Some(p) => writeln!(f, "pids cgroup         : yes ({})", p.display())?,
            None => writeln!(
                f,
                "pids cgroup         : NO (fork bombs bounded by RLIMIT_NPROC only)"
            )?,
        }
        writeln!(
            f,
            "commands run as     : {}",
            if self.running_as_root {
                "root without capabilities"
            } else {
                "the invoking user"
            }
        )?;
        match &self.bubblewrap {
            Some(p) => write!(
                f,
                "bubblewrap          : available ({}), not needed: namespaces are built in",
                p.display()
            ),
            None => write!(f, "bubblewrap          : not installed (optional)"),
        }
    }
}

/// Facts `exec` plans with, probed once per process.
#[derive(Debug, Clone)]
pub(crate) struct Kernel {
    pub(crate) landlock_abi: Option<i32>,
    pub(crate) seccomp: bool,
    pub(crate) namespaces: NamespaceSupport,
    pub(crate) pids_root: Option<PathBuf>,
    pub(crate) euid: u32,
    pub(crate) cap_last: u32,
}

pub(crate) fn kernel() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        Kernel {
            landlock_abi: landlock_abi(),
            seccomp: seccomp_available(),
            namespaces: namespace_support(euid),
            pids_root: crate::cgroup::pids_root(),
            euid,
            cap_last: std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(40),
        }
    })
}

fn landlock_abi() -> Option<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the documented way to query the ABI: null attr, size 0.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as i32)
}

fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP has no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Runs `/bin/true` after `unshare(flags)` in the child; true when it worked.
fn try_unshare(flags: libc::c_int) -> bool {
    let mut cmd = Command::new("/bin/true");
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: unshare is a raw syscall, async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.status().map(|s| s.success()).unwrap_or(false)
}

fn namespace_support(euid: u32) -> NamespaceSupport {
    let base = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWNET;
    if euid == 0 && try_unshare(base) {
        NamespaceSupport::Privileged
    } else if try_unshare(base | libc::CLONE_NEWUSER) {
        NamespaceSupport::UserNamespace
    } else {
        NamespaceSupport::Unavailable
    }
}

fn bubblewrap() -> Option<PathBuf> {
    let path = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .iter()
        .map(Path::new)
        .find(|p| p.exists())?;
    let ok = Command::new(path)
        .args(["--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    ok.then(|| path.to_path_buf())
}

/// Probes which confinement layers this machine supports.
pub fn probe() -> SupportReport {
    let k = kernel();
    SupportReport {
        landlock_abi: k.landlock_abi,
        seccomp: k.seccomp,
        namespaces: k.namespaces,
        pids_cgroup: k.pids_root.clone(),
        running_as_root: k.euid == 0,
        bubblewrap: bubblewrap(),
    }
}
