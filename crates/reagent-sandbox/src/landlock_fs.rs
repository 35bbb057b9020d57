//! The Landlock ruleset: which paths a command may read and write.
//!
//! Built in the parent (opening path fds, creating the ruleset) and only
//! *applied* in the child with a raw `landlock_restrict_self`, which is
//! async-signal-safe.
//!
//! Readable: the system directories programs need (`/usr`, `/bin`, `/sbin`,
//! `/lib*`, `/opt`, `/etc` minus credential files such as `shadow`, `sudoers`
//! and ssh host keys), a few device files, the fresh `/proc` of the command's
//! PID namespace, the workspace and configured readable roots. Writable: the
//! workspace (workspace-write mode), the private temp dir, `/dev/null`-style
//! devices and configured writable roots. Everything else (home directories,
//! `/root`, `/tmp`, `/var`, `/srv`, `/mnt`, ...) is neither.
//!
//! With the network off, Landlock also handles TCP bind/connect (ABI 4+) with
//! no rule, and scopes abstract UNIX sockets and signals to the sandbox
//! (ABI 6+).

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

use crate::SandboxError;

/// System directories readable by default.
pub(crate) const SYSTEM_READ_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// Entries of `/etc` that are never readable.
const ETC_DENY: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl",
    "security",
    "libvirt",
    "docker",
    "credstore",
    "credstore.encrypted",
];

/// Device files readable and writable.
const DEV_RW: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
/// Device files readable only.
const DEV_RO: &[&str] = &["/dev/random", "/dev/urandom"];

/// What the ruleset grants.
#[derive(Debug, Default)]
pub(crate) struct FsGrants {
    /// Read (and execute) beneath these.
    pub(crate) read: Vec<PathBuf>,
    /// Read and write beneath these.
    pub(crate) write: Vec<PathBuf>,
}

fn abi_from(version: i32) -> ABI {
    match version {
        i32::MIN..=1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    }
}

fn prep(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Prepare {
        stage: "landlock ruleset",
        reason: e.to_string(),
    }
}

/// The default read list: system dirs plus the readable entries of `/etc`.
fn system_reads() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM_READ_DIRS.iter().map(PathBuf::from).collect();
    if let Ok(entries) = std::fs::read_dir("/etc") {
        for e in entries.flatten() {
            let name = e.file_name();
            let deny = ETC_DENY.iter().any(|d| name == *d);
            if !deny {
                out.push(e.path());
            }
        }
    }
    out
}

/// The access bits for read-only directories on this ABI (for rules the
/// child adds itself, such as the fresh `/proc`).
pub(crate) fn read_access_bits(abi_version: i32) -> u64 {
    AccessFs::from_read(abi_from(abi_version)).bits()
}

/// All access bits on this ABI (for the private `/dev/shm` the child adds).
pub(crate) fn all_access_bits(abi_version: i32) -> u64 {
    AccessFs::from_all(abi_from(abi_version)).bits()
}

/// Creates the ruleset for `grants` on a kernel with Landlock ABI `abi_version`.
pub(crate) fn build_ruleset(
    grants: &FsGrants,
    abi_version: i32,
    network: bool,
) -> Result<OwnedFd, SandboxError> {
    let abi = abi_from(abi_version);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(prep)?;
    if !network && abi_version >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(prep)?;
    }
    if abi_version >= 6 {
        ruleset = ruleset
            .scope(Scope::AbstractUnixSocket | Scope::Signal)
            .map_err(prep)?;
    }
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    rules.extend(system_reads().into_iter().map(|p| (p, read)));
    rules.extend(DEV_RO.iter().map(|d| (PathBuf::from(d), read)));
    rules.extend(DEV_RW.iter().map(|d| (PathBuf::from(d), all)));
    rules.extend(grants.read.iter().map(|p| (p.clone(), read)));
    rules.extend(grants.write.iter().map(|p| (p.clone(), all)));
    let mut created = ruleset.create().map_err(prep)?;
    for (path, access) in rules {
        // A missing optional path (no /lib32 here, say) is simply not granted.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(prep)?;
    }
    Option::<OwnedFd>::from(created).ok_or_else(|| SandboxError::Unsupported {
        layer: "landlock",
        reason: "the kernel did not create a ruleset".into(),
    })
}
