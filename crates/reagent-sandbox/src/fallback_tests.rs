//! Tests of the refusal and degraded paths, against simulated kernels: a
//! missing layer is refused with a clear error unless the policy opts out,
//! and the opted-out runs still kill background processes (pids cgroup) and
//! keep protected paths read-only (Landlock-only grants).

use std::path::Path;
use std::time::Duration;

use crate::exec::exec_with;
use crate::probe::{kernel, Kernel, NamespaceSupport};
use crate::{ExecRequest, SandboxError};

fn req(ws: &Path, command: &str) -> ExecRequest {
    let mut r = ExecRequest::new(command, ws);
    r.timeout = Duration::from_secs(20);
    r
}

fn with(f: impl FnOnce(&mut Kernel)) -> Kernel {
    let mut k = kernel().clone();
    f(&mut k);
    k
}

fn survivors(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read(e.path().join("cmdline"))
                        .map(|c| String::from_utf8_lossy(&c).contains(marker))
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn missing_layers_are_refused_by_name() {
    let ws = tempfile::tempdir().unwrap();
    let cases: [(&str, Kernel); 4] = [
        ("landlock", with(|k| k.landlock_abi = None)),
        ("landlock", with(|k| k.landlock_abi = Some(2))),
        ("seccomp", with(|k| k.seccomp = false)),
        (
            "pid-namespace",
            with(|k| k.namespaces = NamespaceSupport::Unavailable),
        ),
    ];
    for (layer, k) in cases {
        let r = req(ws.path(), "touch ran");
        match exec_with(&r, &k) {
            Err(SandboxError::Unsupported { layer: got, .. }) => assert_eq!(got, layer),
            other => panic!("expected refusal naming {layer}, got {other:?}"),
        }
        assert!(!ws.path().join("ran").exists(), "{layer}: the command ran");
    }
    let mut r = req(ws.path(), "true");
    r.policy.require_pids_cgroup = true;
    let k = with(|k| k.pids_root = None);
    assert!(matches!(
        exec_with(&r, &k),
        Err(SandboxError::Unsupported {
            layer: "pids-cgroup",
            ..
        })
    ));
    let msg = exec_with(&req(ws.path(), "true"), &with(|k| k.seccomp = false))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("allow_unconfined"), "{msg}");
}

#[test]
fn opt_out_runs_with_the_layers_that_remain() {
    let ws = tempfile::tempdir().unwrap();
    let mut r = req(ws.path(), "echo hi");
    r.policy.allow_unconfined = true;
    let out = exec_with(&r, &with(|k| k.landlock_abi = None)).unwrap();
    assert_eq!(out.stdout, "hi\n");
    assert_eq!(out.layers.landlock_abi, None);
    assert!(out.layers.seccomp && out.layers.pid_namespace);
}

#[test]
fn without_namespaces_the_cgroup_still_reaps_background_processes() {
    let k = with(|k| k.namespaces = NamespaceSupport::Unavailable);
    assert!(
        k.pids_root.is_some(),
        "KERNEL FEATURE MISSING: pids cgroup (run as root)"
    );
    let ws = tempfile::tempdir().unwrap();
    let marker = format!(
        "1000.{:012}",
        uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000
    );
    let mut r = req(
        ws.path(),
        &format!("setsid sleep {marker} & nohup sleep {marker} & echo bg"),
    );
    r.policy.allow_unconfined = true;
    let out = exec_with(&r, &k).unwrap();
    assert_eq!(out.stdout, "bg\n", "{out:?}");
    assert!(!out.layers.pid_namespace);
    assert_eq!(survivors(&marker), 0, "a background process survived");
    // Timeout path without a namespace: the process group and the cgroup die.
    r.command = format!("setsid sleep {marker} & sleep {marker}");
    r.timeout = Duration::from_millis(500);
    let out = exec_with(&r, &k).unwrap();
    assert!(out.timed_out);
    assert_eq!(
        survivors(&marker),
        0,
        "a background process survived the timeout"
    );
}

#[test]
fn without_namespaces_protected_paths_stay_read_only_via_landlock() {
    let k = with(|k| k.namespaces = NamespaceSupport::Unavailable);
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join(".env"), "KEEP=1\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "old\n").unwrap();
    let mut r = req(
        root,
        "echo evil > .git/hooks/pre-commit; echo EVIL=1 >> .env; echo new > src/lib.rs; \
         echo more > src/new.rs; echo top > top.txt; true",
    );
    r.policy.allow_unconfined = true;
    let out = exec_with(&r, &k).unwrap();
    assert!(!root.join(".git/hooks/pre-commit").exists(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(root.join(".env")).unwrap(),
        "KEEP=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("src/new.rs")).unwrap(),
        "more\n"
    );
    // The documented cost: no new entries next to protected ones.
    assert!(!root.join("top.txt").exists());
    assert_eq!(out.layers.protected_read_only.len(), 2);
}
