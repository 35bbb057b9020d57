//! The seccomp-BPF filter, compiled in the parent and installed in the child.
//!
//! Denied with `EPERM` (the process keeps running and sees an ordinary error):
//! - `socket()` with a domain other than `AF_UNIX` unless the network is allowed;
//! - `ptrace`, `process_vm_readv`, `process_vm_writev` (no debugging other processes);
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register` (io_uring bypasses
//!   per-syscall filtering);
//! - namespace, mount, module, kexec, reboot, bpf, perf, keyring, swap and
//!   clock-setting calls, and `open_by_handle_at` (a classic container escape);
//! - `clone()` with any `CLONE_NEW*` flag (no new user namespace with fresh
//!   capabilities, no new network namespace).
//!
//! A second filter answers `clone3` with `ENOSYS`: its flags live in memory a
//! filter cannot read, and libc falls back to `clone` on `ENOSYS`.
//!
//! Any syscall made with a foreign architecture (32-bit `int 0x80` on x86_64)
//! kills the process: seccompiler's arch check. The x32 ABI is not filtered
//! separately; it is compiled out of the kernels we target (see SECURITY.md).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

/// Syscalls denied unconditionally.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
];

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SandboxError::Unsupported {
        layer: "seccomp",
        reason: format!("no seccomp filter for this architecture: {e}"),
    })
}

/// Namespace flags refused in `clone()`.
const NS_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWCGROUP,
];

/// Compiles the filters for a policy (`network` allows non-UNIX sockets),
/// in installation order.
pub(crate) fn build_filters(network: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    Ok(vec![build_filter(network)?, build_clone3_filter()?])
}

fn prep(e: seccompiler::BackendError) -> SandboxError {
    SandboxError::Prepare {
        stage: "seccomp filter",
        reason: e.to_string(),
    }
}

fn build_clone3_filter() -> Result<BpfProgram, SandboxError> {
    let rules: BTreeMap<i64, Vec<SeccompRule>> =
        [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch()?,
    )
    .map_err(prep)?;
    BpfProgram::try_from(filter).map_err(prep)
}

fn build_filter(network: bool) -> Result<BpfProgram, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
    let mut clone_rules = Vec::new();
    for flag in NS_FLAGS {
        let bits = *flag as u64;
        let cond = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(bits),
            bits,
        )
        .map_err(prep)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(prep)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    if !network {
        let not_unix = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )
        .map_err(prep)?;
        rules.insert(
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(prep)?],
        );
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch()?,
    )
    .map_err(prep)?;
    BpfProgram::try_from(filter).map_err(prep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_both_ways() {
        assert_eq!(build_filters(false).map(|v| v.len()).ok(), Some(2));
        let closed = build_filter(false).map_err(|e| e.to_string());
        let open = build_filter(true).map_err(|e| e.to_string());
        match (closed, open) {
            (Ok(c), Ok(o)) => assert!(c.len() > o.len(), "socket rule adds instructions"),
            other => panic!("filter did not compile: {other:?}"),
        }
    }
}
