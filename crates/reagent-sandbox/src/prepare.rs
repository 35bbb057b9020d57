//! Turning a request into a [`Prepared`] plan before the fork: which layers
//! apply (refusing when the kernel cannot enforce one and the user did not
//! opt out), the mounts, the Landlock ruleset, the seccomp program, rlimits,
//! the environment and the private temp dir.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::landlock_fs::{all_access_bits, build_ruleset, read_access_bits, FsGrants};
use crate::mounts::{cstring, MountPlan};
use crate::probe::{Kernel, NamespaceSupport};
use crate::request::{AppliedLayers, MAX_COMMAND_BYTES};
use crate::{cgroup::PidsCgroup, ExecRequest, SandboxError, SandboxMode};

/// Oldest Landlock ABI accepted without `allow_unconfined`: ABI 3 adds
/// `LANDLOCK_ACCESS_FS_TRUNCATE`; before it `truncate -s0 /etc/passwd` by a
/// capability-less root is not stopped by Landlock.
const MIN_LANDLOCK_ABI: i32 = 3;

/// Owned data behind a [`crate::child::Plan`], kept alive across the fork.
pub(crate) struct Prepared {
    pub(crate) cwd: CString,
    pub(crate) argv: Vec<CString>,
    pub(crate) envp: Vec<CString>,
    pub(crate) mounts: MountPlan,
    pub(crate) rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    pub(crate) landlock: Option<OwnedFd>,
    pub(crate) child_rules: Vec<(CString, u64)>,
    pub(crate) seccomp: Vec<seccompiler::BpfProgram>,
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

/// Landlock-only protection of `protected` paths under `dir`: write access on
/// every entry of `dir` except protected ones, recursing into directories
/// that contain a protected path. New entries cannot be created directly in
/// `dir` or in such directories (Landlock grants are inherited downwards, so
/// granting creation there would cover the protected paths too).
pub(crate) fn write_except(dir: &Path, protected: &[PathBuf], grants: &mut FsGrants) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if protected.contains(&path) {
            continue;
        }
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir && protected.iter().any(|p| p.starts_with(&path)) {
            grants.read.push(path.clone());
            write_except(&path, protected, grants);
        } else {
            grants.write.push(path);
        }
    }
}

/// Canonical forms of the configured roots that exist; missing ones are
/// skipped with a warning (a build directory may not exist yet).
fn existing_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .filter_map(|p| match p.canonicalize() {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(root = %p.display(), error = %e, "sandbox root skipped");
                None
            }
        })
        .collect()
}

/// Builds everything the child needs.
pub(crate) fn prepare(req: &ExecRequest, k: &Kernel) -> Result<Prepared, SandboxError> {
    validate_command(&req.command)?;
    let policy = &req.policy;
    let allow = policy.allow_unconfined;
    let ws = canonical_dir(&req.cwd)?;
    if ws == Path::new("/") && policy.mode != SandboxMode::Full {
        // Granting the workspace would grant the whole filesystem.
        return Err(SandboxError::Workspace {
            path: ws,
            reason: "the filesystem root cannot be a confined workspace".into(),
        });
    }
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
    let readable = existing_roots(&policy.readable_roots);
    let writable = existing_roots(&policy.writable_roots);
    let mut needed: Vec<PathBuf> = vec![ws.clone(), tmp_path.clone()];
    needed.extend(readable.iter().cloned());
    needed.extend(writable.iter().cloned());

    let mut mounts = MountPlan::default();
    let mut protected = Vec::new();
    if policy.mode == SandboxMode::WorkspaceWrite {
        for prot in &policy.protected_paths {
            let abs = if prot.is_absolute() {
                prot.clone()
            } else {
                ws.join(prot)
            };
            if let Ok(canon) = abs.canonicalize() {
                if canon.starts_with(&ws) && canon != ws {
                    protected.push(canon);
                }
            }
        }
    }
    if use_ns {
        mounts = crate::mounts::plan(&needed, &protected, confine_fs)?;
        layers.masked = mounts.masked.clone();
        layers.protected_read_only = mounts.protected.clone();
    }

    // Landlock.
    let mut landlock = None;
    let mut child_rules = Vec::new();
    if confine_fs {
        match k.landlock_abi {
            Some(abi) => {
                if abi < MIN_LANDLOCK_ABI {
                    // With the opt-out, the partial ruleset still applies.
                    unsupported(
                        "landlock",
                        &format!("Landlock ABI {abi} cannot deny truncate(2); ABI {MIN_LANDLOCK_ABI} (Linux 6.2) is needed"),
                        allow,
                    )?;
                }
                let mut grants = FsGrants::default();
                if use_ns {
                    child_rules.push((cstring(b"/proc", "child rule")?, read_access_bits(abi)));
                    if mounts.private_shm {
                        let shm = cstring(crate::mounts::SHM.as_bytes(), "child rule")?;
                        child_rules.push((shm, all_access_bits(abi)));
                    }
                }
                grants.read.extend(readable.iter().cloned());
                grants.write.push(tmp_path.clone());
                grants.write.extend(writable.iter().cloned());
                match policy.mode {
                    SandboxMode::WorkspaceWrite if !use_ns && !protected.is_empty() => {
                        // No mount namespace for read-only binds: grant write
                        // entry by entry, skipping protected paths.
                        grants.read.push(ws.clone());
                        write_except(&ws, &protected, &mut grants);
                        layers.protected_read_only = protected.clone();
                    }
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
    let mut seccomp = Vec::new();
    if k.seccomp {
        seccomp = crate::seccomp::build_filters(policy.network)?;
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
        child_rules,
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
