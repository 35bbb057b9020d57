//! Turning a request into a [`Prepared`] plan before the fork: which layers
//! apply (refusing when the kernel cannot enforce one and the user did not
//! opt out), the mounts, the Landlock ruleset, the seccomp program, rlimits,
//! the environment and the private temp dir.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::child::MountOp;
use crate::landlock_fs::{build_ruleset, read_access_bits, FsGrants};
use crate::probe::{kernel, NamespaceSupport};
use crate::request::{AppliedLayers, MAX_COMMAND_BYTES};
use crate::{cgroup::PidsCgroup, ExecRequest, SandboxError, SandboxMode};

/// Directories hidden behind an empty read-only tmpfs (unless a granted path
/// lies beneath one): sockets and secrets live there.
const MASKED: &[&str] = &[
    "/run", "/var/run", "/home", "/root", "/srv", "/mnt", "/media", "/var/tmp", "/tmp",
];

/// Owned data behind a [`crate::child::Plan`], kept alive across the fork.
pub(crate) struct Prepared {
    pub(crate) cwd: CString,
    pub(crate) argv: Vec<CString>,
    pub(crate) envp: Vec<CString>,
    pub(crate) mounts: Vec<MountOp>,
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    pub(crate) landlock: Option<OwnedFd>,
    pub(crate) proc_rule: Option<(CString, u64)>,
    pub(crate) seccomp: Option<seccompiler::BpfProgram>,
    pub(crate) clone_flags: libc::c_int,
    pub(crate) user_namespace: bool,
    pub(crate) drop_caps: bool,
    pub(crate) cap_last: u32,
    pub(crate) cgroup: Option<PidsCgroup>,
    pub(crate) layers: AppliedLayers,
    /// The private temp dir; removed when dropped.
    pub(crate) _tmp: tempfile::TempDir,
}

impl Prepared {
    /// The raw fd of the Landlock ruleset, if any.
    pub(crate) fn landlock_fd(&self) -> Option<i32> {
        self.landlock.as_ref().map(|f| f.as_raw_fd())
    }
}

fn cstring(bytes: &[u8], what: &'static str) -> Result<CString, SandboxError> {
    CString::new(bytes).map_err(|_| SandboxError::Prepare {
        stage: what,
        reason: "contains a NUL byte".into(),
    })
}

fn unsupported(layer: &'static str, reason: &str, allow: bool) -> Result<(), SandboxError> {
    if allow {
        tracing::warn!(
            layer,
            reason,
            "running with reduced confinement (allow_unconfined)"
        );
        Ok(())
    } else {
        Err(SandboxError::Unsupported {
            layer,
            reason: reason.to_string(),
        })
    }
}

/// Checks the command text before anything is spawned.
pub(crate) fn validate_command(command: &str) -> Result<(), SandboxError> {
    if command.trim().is_empty() {
        return Err(SandboxError::InvalidCommand("empty command".into()));
    }
    if command.contains('\0') {
        return Err(SandboxError::InvalidCommand(
            "the command contains a NUL byte".into(),
        ));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(SandboxError::InvalidCommand(format!(
            "the command is {} bytes; the limit is {MAX_COMMAND_BYTES}",
            command.len()
        )));
    }
    Ok(())
}

fn canonical_dir(path: &Path) -> Result<PathBuf, SandboxError> {
    let fail = |reason: String| SandboxError::Workspace {
        path: path.to_path_buf(),
        reason,
    };
    let canon = path.canonicalize().map_err(|e| fail(e.to_string()))?;
    if !canon.is_dir() {
        return Err(fail("not a directory".into()));
    }
    Ok(canon)
}

fn mount_flags_of(path: &Path) -> libc::c_ulong {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills a zeroed struct from a valid C string path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

fn rlimits(req: &ExecRequest) -> Vec<(libc::__rlimit_resource_t, libc::rlimit)> {
    let l = &req.policy.limits;
    let wanted = [
        (
            libc::RLIMIT_CPU,
            l.cpu_seconds,
            l.cpu_seconds.saturating_add(1),
        ),
        (
            libc::RLIMIT_AS,
            l.address_space_bytes,
            l.address_space_bytes,
        ),
        (libc::RLIMIT_FSIZE, l.file_size_bytes, l.file_size_bytes),
        (libc::RLIMIT_NOFILE, l.open_files, l.open_files),
        (libc::RLIMIT_NPROC, l.processes, l.processes),
        (libc::RLIMIT_CORE, l.core_bytes, l.core_bytes),
    ];
    wanted
        .iter()
        .map(|&(res, soft, hard)| {
            // Never ask for more than the current hard limit (EPERM otherwise).
            // SAFETY: getrlimit fills a zeroed struct.
            let mut cur: libc::rlimit = unsafe { std::mem::zeroed() };
            let cur_hard = if unsafe { libc::getrlimit(res, &mut cur) } == 0 {
                cur.rlim_max
            } else {
                libc::RLIM_INFINITY
            };
            let hard = hard.min(cur_hard);
            (
                res,
                libc::rlimit {
                    rlim_cur: soft.min(hard),
                    rlim_max: hard,
                },
            )
        })
        .collect()
}

fn mount_op(
    source: Option<&[u8]>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<MountOp, SandboxError> {
    Ok(MountOp {
        source: source.map(|s| cstring(s, "mount source")).transpose()?,
        target: cstring(target.as_os_str().as_bytes(), "mount target")?,
        fstype: fstype
            .map(|s| cstring(s.as_bytes(), "mount type"))
            .transpose()?,
        flags,
        data: data
            .map(|s| cstring(s.as_bytes(), "mount data"))
            .transpose()?,
    })
}

/// Builds everything the child needs.
pub(crate) fn prepare(req: &ExecRequest) -> Result<Prepared, SandboxError> {
    validate_command(&req.command)?;
    let policy = &req.policy;
    let allow = policy.allow_unconfined;
    let k = kernel();
    let ws = canonical_dir(&req.cwd)?;
    let confine_fs = policy.mode != SandboxMode::Full;
    let mut layers = AppliedLayers::default();

    let tmp = tempfile::Builder::new()
        .prefix("reagent-tmp-")
        .tempdir()
        .map_err(|e| SandboxError::io("creating the private temp dir", e))?;
    let tmp_path = canonical_dir(tmp.path())?;

    // Namespaces.
    let ns = k.namespaces;
    if ns == NamespaceSupport::Unavailable {
        unsupported(
            "pid-namespace",
            "cannot create PID/mount namespaces (no root, user namespaces disabled)",
            allow,
        )?;
    }
    let use_ns = ns != NamespaceSupport::Unavailable;
    let user_namespace = ns == NamespaceSupport::UserNamespace;
    let mut clone_flags = 0;
    if use_ns {
        clone_flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if !policy.network {
            clone_flags |= libc::CLONE_NEWNET;
            layers.net_namespace = true;
        }
        if user_namespace {
            clone_flags |= libc::CLONE_NEWUSER;
        }
        layers.pid_namespace = true;
        layers.user_namespace = user_namespace;
    }

    // Roots the command needs; masks never hide them.
    let readable: Vec<PathBuf> = policy
        .readable_roots
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let writable: Vec<PathBuf> = policy
        .writable_roots
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut needed: Vec<&Path> = vec![&ws, &tmp_path];
    needed.extend(readable.iter().map(PathBuf::as_path));
    needed.extend(writable.iter().map(PathBuf::as_path));

    let mut mounts = Vec::new();
    if use_ns {
        let private = libc::MS_REC | libc::MS_PRIVATE;
        mounts.push(mount_op(None, Path::new("/"), None, private, None)?);
        let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        mounts.push(mount_op(
            Some(b"proc"),
            Path::new("/proc"),
            Some("proc"),
            proc_flags,
            None,
        )?);
        if confine_fs {
            for m in MASKED {
                let p = Path::new(m);
                let is_real_dir = p.symlink_metadata().map(|md| md.is_dir()).unwrap_or(false);
                let hides_needed = needed.iter().any(|n| n.starts_with(p) || p.starts_with(n));
                if is_real_dir && !hides_needed {
                    let flags =
                        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
                    mounts.push(mount_op(
                        Some(b"tmpfs"),
                        p,
                        Some("tmpfs"),
                        flags,
                        Some("size=16k,mode=755"),
                    )?);
                    layers.masked.push(p.to_path_buf());
                }
            }
        }
        if policy.mode == SandboxMode::WorkspaceWrite {
            for prot in &policy.protected_paths {
                let abs = if prot.is_absolute() {
                    prot.clone()
                } else {
                    ws.join(prot)
                };
                let Ok(canon) = abs.canonicalize() else {
                    continue;
                };
                if !canon.starts_with(&ws) || canon == ws {
                    continue;
                }
                let bind = libc::MS_BIND | libc::MS_REC;
                mounts.push(mount_op(
                    Some(canon.as_os_str().as_bytes()),
                    &canon,
                    None,
                    bind,
                    None,
                )?);
                let ro = libc::MS_REMOUNT
                    | libc::MS_BIND
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV
                    | mount_flags_of(&canon);
                mounts.push(mount_op(None, &canon, None, ro, None)?);
                layers.protected_read_only.push(canon);
            }
        }
    }

    // Landlock.
    let mut landlock = None;
    let mut proc_rule = None;
    if confine_fs {
        match k.landlock_abi {
            Some(abi) => {
                let mut grants = FsGrants::default();
                if use_ns {
                    proc_rule = Some((cstring(b"/proc", "proc rule")?, read_access_bits(abi)));
                }
                grants.read.extend(readable.iter().cloned());
                grants.write.push(tmp_path.clone());
                grants.write.extend(writable.iter().cloned());
                match policy.mode {
                    SandboxMode::WorkspaceWrite => grants.write.push(ws.clone()),
                    SandboxMode::ReadOnly | SandboxMode::Full => grants.read.push(ws.clone()),
                }
                landlock = Some(build_ruleset(&grants, abi, policy.network)?);
                layers.landlock_abi = Some(abi);
            }
            None => unsupported("landlock", "the kernel has no Landlock support", allow)?,
        }
    }

    // seccomp.
    let mut seccomp = None;
    if k.seccomp {
        seccomp = Some(crate::seccomp::build_filter(policy.network)?);
        layers.seccomp = true;
        layers.network_blocked = !policy.network;
    } else {
        unsupported("seccomp", "the kernel has no seccomp filter support", allow)?;
    }

    // pids cgroup.
    let mut cgroup = None;
    match &k.pids_root {
        Some(root) => match PidsCgroup::create(root, policy.limits.processes) {
            Ok(cg) => {
                layers.pids_max = Some(cg.max());
                cgroup = Some(cg);
            }
            Err(e) if policy.require_pids_cgroup && !allow => {
                return Err(SandboxError::Unsupported {
                    layer: "pids-cgroup",
                    reason: e.to_string(),
                })
            }
            Err(e) => tracing::warn!(error = %e, "no pids cgroup for this command"),
        },
        None if policy.require_pids_cgroup => {
            unsupported("pids-cgroup", "no writable pids cgroup hierarchy", allow)?
        }
        None => {}
    }

    let env = crate::env::build_env(std::env::vars_os(), &policy.env_passthrough, &tmp_path);
    let envp = env
        .iter()
        .filter_map(|(k, v)| {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            CString::new(kv).ok()
        })
        .collect();
    let argv = vec![
        cstring(b"/bin/sh", "argv")?,
        cstring(b"-c", "argv")?,
        cstring(req.command.as_bytes(), "argv")?,
    ];
    let drop_caps = k.euid == 0 || user_namespace;
    layers.capabilities_dropped = drop_caps;
    Ok(Prepared {
        cwd: cstring(ws.as_os_str().as_bytes(), "cwd")?,
        argv,
        envp,
        mounts,
        rlimits: rlimits(req),
        landlock,
        proc_rule,
        seccomp,
        clone_flags,
        user_namespace,
        drop_caps,
        cap_last: k.cap_last,
        cgroup,
        layers,
        _tmp: tmp,
    })
}
