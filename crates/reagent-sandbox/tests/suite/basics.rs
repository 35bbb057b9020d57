//! exec basics: exit codes, stdin, output capture, cwd, env, timeouts.

use reagent_sandbox::{exec, NamespaceSupport, SandboxError, SandboxMode};

use super::harness::Fixture;

#[test]
fn echo_and_exit_code() {
    let f = Fixture::new();
    let out = f.run("echo hello; echo oops >&2; exit 3");
    assert_eq!(out.stdout, "hello\n");
    assert_eq!(out.stderr, "oops\n");
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert!(!out.timed_out);
    assert_eq!(out.truncated_bytes, 0);
}

#[test]
fn cwd_is_the_workspace_and_writes_land_there() {
    let f = Fixture::new();
    let out = f.run("pwd; echo data > made.txt");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    let ws = f.path().canonicalize().unwrap();
    assert_eq!(out.stdout.trim_end(), ws.to_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(f.path().join("made.txt")).unwrap(),
        "data\n"
    );
}

#[test]
fn probe_reports_every_layer_supported_here() {
    let r = reagent_sandbox::probe();
    let text = r.to_string();
    println!("{text}");
    // This machine kind (and CI) must support every default layer; if not,
    // fail naming the missing one instead of passing quietly.
    assert!(
        r.landlock_abi.is_some(),
        "KERNEL FEATURE MISSING: landlock\n{text}"
    );
    assert!(r.seccomp, "KERNEL FEATURE MISSING: seccomp\n{text}");
    assert_ne!(
        r.namespaces,
        NamespaceSupport::Unavailable,
        "KERNEL FEATURE MISSING: namespaces\n{text}"
    );
    assert!(r.fully_supported());
}

/// Negative control: the sentinel checks used by the red-team tests do
/// notice a write outside WS when confinement is off (full mode).
#[test]
fn control_full_mode_can_reach_the_sentinel() {
    let f = Fixture::new();
    let mut req = f.req(&f.fill("echo changed > $S"));
    req.policy.mode = SandboxMode::Full;
    let out = exec(&req).unwrap();
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&f.sentinel).unwrap(), "changed\n");
}

#[test]
fn read_only_mode_forbids_workspace_writes() {
    let f = Fixture::new();
    std::fs::write(f.path().join("keep.txt"), "keep\n").unwrap();
    let mut req = f.req(
        "cat keep.txt; echo x > keep.txt; echo y > new.txt; echo t > \"$TMPDIR/ok\" && echo tmp-ok",
    );
    req.policy.mode = SandboxMode::ReadOnly;
    let out = exec(&req).unwrap();
    assert_eq!(out.stdout, "keep\ntmp-ok\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(f.path().join("keep.txt")).unwrap(),
        "keep\n"
    );
    assert!(!f.path().join("new.txt").exists());
}

#[test]
fn extra_writable_root_is_writable_and_others_are_not() {
    let f = Fixture::new();
    let extra = tempfile::Builder::new()
        .prefix("reagent-extra-")
        .tempdir()
        .unwrap();
    let mut req = f.req(&format!(
        "echo ok > {}/made; echo no > $HOME/.nope; true",
        extra.path().display()
    ));
    req.policy.writable_roots = vec![extra.path().to_path_buf()];
    let out = exec(&req).unwrap();
    assert_eq!(
        std::fs::read_to_string(extra.path().join("made")).unwrap(),
        "ok\n",
        "{out:?}"
    );
    assert!(!std::path::Path::new("/root/.nope").exists());
}

#[test]
fn private_tmp_is_removed_after_the_call() {
    let f = Fixture::new();
    let out = f.run("echo $TMPDIR; touch \"$TMPDIR/file\"");
    let tmp = std::path::PathBuf::from(out.stdout.trim());
    assert!(tmp.starts_with(std::env::temp_dir()), "{out:?}");
    assert!(!tmp.exists(), "private temp dir left behind");
}

#[test]
fn cancellation_kills_the_command() {
    let f = Fixture::new();
    let marker = super::harness::sleep_marker();
    let token = tokio_util::sync::CancellationToken::new();
    let mut req = f.req(&format!("sleep {marker}"));
    req.timeout = std::time::Duration::from_secs(30);
    req.cancel = Some(token.clone());
    let t = std::thread::spawn(move || exec(&req));
    std::thread::sleep(std::time::Duration::from_millis(300));
    token.cancel();
    let out = t.join().unwrap().unwrap();
    assert_eq!(out.limit_hit.as_deref(), Some("cancelled"));
    assert!(out.duration < std::time::Duration::from_secs(5));
    assert!(super::harness::processes_with(&marker).is_empty());
}

#[test]
fn mknod_fails_and_the_root_is_no_workspace() {
    let f = Fixture::new();
    let out = f.run("mknod devmem c 1 1; mknod null c 1 3; mkfifo fifo; ls");
    assert_eq!(out.stdout, "fifo\n", "{out:?}");
    let mut req = f.req("true");
    req.cwd = "/".into();
    assert!(matches!(exec(&req), Err(SandboxError::Workspace { .. })));
}

#[test]
fn empty_command_and_missing_workspace_are_errors() {
    let f = Fixture::new();
    assert!(matches!(
        exec(&f.req("  ")),
        Err(SandboxError::InvalidCommand(_))
    ));
    let mut req = f.req("true");
    req.cwd = f.path().join("missing");
    let err = exec(&req).unwrap_err();
    assert!(matches!(err, SandboxError::Workspace { .. }), "{err}");
    assert!(err.is_command_error());
}

#[test]
fn odd_parameters_do_not_panic() {
    let f = Fixture::new();
    let mut req = f.req("echo hi");
    req.timeout = std::time::Duration::MAX;
    req.output_cap = 0;
    let out = exec(&req).unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout, "[truncated 3 bytes]\n");
    assert_eq!(out.truncated_bytes, 3);
    req.timeout = std::time::Duration::ZERO;
    req.command = "sleep 5".into();
    let out = exec(&req).unwrap();
    assert!(out.timed_out);
}

#[test]
fn hard_links_to_outside_files_cannot_be_created() {
    let f = Fixture::new();
    let out = f.run(&f.fill("ln $S hl1; ln /etc/hostname hl2; ln /usr/bin/env hl3; ls"));
    for name in ["hl1", "hl2", "hl3"] {
        assert!(!f.path().join(name).exists(), "{name} created: {out:?}");
    }
    f.assert_sentinels_intact();
}

#[test]
fn private_dev_shm_works_and_is_not_the_hosts() {
    let f = Fixture::new();
    let name = format!("reagent-shm-{}", uuid::Uuid::new_v4().simple());
    let out = f.run(&format!(
        "python3 -c 'import multiprocessing as m; print(m.Pool(2).map(abs, [-1, -2]))'; echo x > /dev/shm/{name} && echo shm-ok"
    ));
    assert_eq!(out.stdout, "[1, 2]\nshm-ok\n", "{out:?}");
    assert!(
        !std::path::Path::new("/dev/shm").join(&name).exists(),
        "wrote the host's /dev/shm"
    );
}

#[test]
fn concurrent_calls_do_not_delay_each_other() {
    let f = Fixture::new();
    let slow = f.req("sleep 3");
    let t = std::thread::spawn(move || exec(&slow));
    let start = std::time::Instant::now();
    // Quick calls are not held up by a slow one running at the same time (a
    // call that had to wait out the 2 s drain would push 5 calls past 10 s).
    for _ in 0..5 {
        let out = f.run("echo quick");
        assert_eq!(out.stdout, "quick\n");
    }
    assert!(
        start.elapsed() < std::time::Duration::from_millis(6000),
        "{:?}",
        start.elapsed()
    );
    t.join().unwrap().unwrap();
}

/// An fd the agent has open (here a pipe without O_CLOEXEC) is not held by
/// the command or its init: closing the agent's copy gives EOF at once even
/// while a command runs.
#[test]
fn agent_fds_do_not_leak_into_the_sandbox() {
    let f = Fixture::new();
    let mut fds = [0; 2];
    // SAFETY: pipe fills two fds.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let [r, w] = fds;
    let req = f.req("sleep 2");
    let t = std::thread::spawn(move || exec(&req));
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: closing our own write end; then polling our read end.
    unsafe { libc::close(w) };
    let mut pfd = libc::pollfd {
        fd: r,
        events: libc::POLLIN,
        revents: 0,
    };
    let ready = unsafe { libc::poll(&mut pfd, 1, 1000) };
    let mut buf = [0u8; 1];
    let n = unsafe { libc::read(r, buf.as_mut_ptr().cast(), 1) };
    unsafe { libc::close(r) };
    let out = t.join().unwrap().unwrap();
    assert!(
        ready == 1 && n == 0,
        "no EOF while the command ran: the write end leaked"
    );
    assert!(out.duration >= std::time::Duration::from_secs(2), "{out:?}");
}

/// The guard that protects the destructive red-team tests trips when confinement is off (full
/// mode) and holds under the default policy. Nothing destructive follows the guard here.
#[test]
fn guard_trips_without_confinement_and_holds_with_it() {
    let f = Fixture::new();
    let mut req = f.req(&format!("{}\necho ran", super::harness::GUARD));
    req.policy.mode = SandboxMode::Full;
    let out = exec(&req).unwrap();
    assert_eq!(out.exit_code, Some(super::harness::GUARD_EXIT), "{out:?}");
    assert!(!out.stdout.contains("ran"), "{out:?}");
    let out = f.run("echo ran");
    assert_eq!(out.stdout, "ran\n", "{out:?}");
}
