//! Red-team rows 43–56 (section D): resource exhaustion and runaway
//! processes. Each bomb runs only after the test has checked that the limit
//! containing it is in force.

use std::time::{Duration, Instant};

use reagent_sandbox::{ExecRequest, SandboxError};

use super::harness::{guarded_exec, processes_with, require_tool, sleep_marker, Fixture};

/// Root ignores `RLIMIT_NPROC`, so as root the bomb must be contained by a
/// pids cgroup (required); as another uid `RLIMIT_NPROC` in the command's
/// user namespace contains it. Either way the test first measures that no
/// more than `max` processes can exist, and only then launches the bomb.
#[test]
fn row43_fork_bomb_is_contained() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    let max = 64;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut req = f.req("");
    req.policy.limits.processes = max;
    req.policy.require_pids_cgroup = root;
    // 1. The containment is active: try to start 100 sleepers, then count
    //    the processes in the command's PID namespace (its fresh /proc).
    let marker = format!("forks{}", uuid::Uuid::new_v4().simple());
    let script = [
        "import os, time",
        "for i in range(100):",
        "    try:",
        "        p = os.fork()",
        "    except OSError:",
        "        break",
        "    if p == 0:",
        "        time.sleep(30)",
        "        os._exit(0)",
        "print(sum(1 for d in os.listdir('/proc') if d.isdigit()))",
    ];
    std::fs::write(f.path().join(format!("{marker}.py")), script.join("\n")).unwrap();
    req.command = format!("python3 {marker}.py");
    req.timeout = Duration::from_secs(10);
    let probe = match guarded_exec(&req) {
        Ok(o) => o,
        Err(SandboxError::Unsupported { layer, reason }) => {
            panic!("KERNEL FEATURE MISSING: {layer} ({reason}): cannot contain a fork bomb as root")
        }
        Err(e) => panic!("{e}"),
    };
    let live: u64 = probe
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{probe:?}"));
    assert!(
        live <= max,
        "{live} processes alive with a limit of {max}: {probe:?}"
    );
    assert!(live > max / 2, "only {live} processes started: {probe:?}");
    if root {
        assert_eq!(probe.layers.pids_max, Some(max), "{probe:?}");
        assert!(
            probe
                .limit_hit
                .as_deref()
                .is_some_and(|l| l.starts_with("process limit")),
            "pids.max did not refuse forks: {probe:?}"
        );
    }
    assert!(processes_with(&marker).is_empty());
    // 2. Only now the bomb, with a unique name to find survivors.
    let name = format!("bomb{}", uuid::Uuid::new_v4().simple());
    req.command = format!("{name}(){{ {name}|{name}& }};{name}");
    req.timeout = Duration::from_secs(3);
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(start.elapsed() < Duration::from_secs(10), "{out:?}");
    if root {
        assert_eq!(out.layers.pids_max, Some(max));
    }
    assert!(
        processes_with(&name).is_empty(),
        "fork bomb processes survived"
    );
    f.assert_sentinels_intact();
}

#[test]
fn row44_memory_bomb_hits_address_space_limit() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    let mut req = f.req("ulimit -v");
    req.policy.limits.address_space_bytes = 512 << 20;
    let check = guarded_exec(&req).unwrap();
    assert_eq!(
        check.stdout.trim(),
        (512 * 1024).to_string(),
        "RLIMIT_AS not in force"
    );
    for bomb in ["python3 -c 'x=\"a\"*10**11'", "tail /dev/zero"] {
        req.command = bomb.to_string();
        let start = Instant::now();
        let out = guarded_exec(&req).unwrap();
        assert!(start.elapsed() < Duration::from_secs(15), "{bomb}: {out:?}");
        assert!(!out.timed_out, "{bomb}: {out:?}");
        assert_ne!(out.exit_code, Some(0), "{bomb}: {out:?}");
        assert!(
            out.limit_hit
                .as_deref()
                .is_some_and(|l| l.starts_with("memory limit")),
            "{bomb}: {out:?}"
        );
    }
}

#[test]
fn row45_cpu_spin_hits_cpu_limit_or_timeout() {
    let f = Fixture::new();
    let mut req = f.req("ulimit -t");
    req.policy.limits.cpu_seconds = 1;
    let check = guarded_exec(&req).unwrap();
    assert_eq!(check.stdout, "1\n", "RLIMIT_CPU not in force: {check:?}");
    req.command = "while :; do :; done".into();
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(start.elapsed() < Duration::from_secs(8), "{out:?}");
    assert_eq!(out.signal, Some(libc::SIGXCPU), "{out:?}");
    assert!(out
        .limit_hit
        .as_deref()
        .is_some_and(|l| l.starts_with("cpu time")));
    // With a generous CPU limit the wall clock stops it.
    req.policy.limits.cpu_seconds = 60;
    req.timeout = Duration::from_secs(1);
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(start.elapsed() < Duration::from_secs(4), "{out:?}");
    assert!(out.timed_out);
}

#[test]
fn row46_sleep_is_killed_at_the_timeout() {
    let f = Fixture::new();
    let marker = sleep_marker();
    let mut req = f.req(&format!("sleep {marker}; echo never"));
    req.timeout = Duration::from_secs(1);
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(start.elapsed() < Duration::from_secs(3), "{out:?}");
    assert!(out.timed_out);
    assert_eq!(out.exit_code, Some(124));
    assert!(!out.stdout.contains("never"));
    assert!(
        processes_with(&marker).is_empty(),
        "sleep survived the timeout"
    );
}

#[test]
fn row47_unbounded_output_is_capped() {
    let f = Fixture::new();
    for cmd in ["yes", "cat /dev/urandom", "seq 1e12"] {
        let mut req = f.req(cmd);
        req.output_cap = 4096;
        req.timeout = Duration::from_secs(20);
        let start = Instant::now();
        let out = guarded_exec(&req).unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "{cmd}: killed late: {:?}",
            out.duration
        );
        assert!(
            !out.timed_out,
            "{cmd}: should stop at the output limit, not the timeout"
        );
        assert!(
            out.limit_hit
                .as_deref()
                .is_some_and(|l| l.starts_with("output limit")),
            "{cmd}"
        );
        assert!(
            out.truncated_bytes > 1_000_000,
            "{cmd}: {}",
            out.truncated_bytes
        );
        assert!(
            out.stdout
                .contains(&format!("[truncated {} bytes]", out.truncated_bytes)),
            "{cmd}"
        );
        // Kept text: two halves of 2048 bytes (escaping may lengthen it).
        assert!(
            out.stdout.len() < 4 * 4096 + 100,
            "{cmd}: {} bytes kept",
            out.stdout.len()
        );
    }
}

#[test]
fn row48_control_sequences_and_long_lines_are_neutralised() {
    let f = Fixture::new();
    let out = f.run(r"printf '\033[31mred\033]0;title\007\rover\n\342\200\256rtl\n'; head -c 50000000 /dev/zero | tr '\0' a");
    let bad: Vec<char> = out
        .stdout
        .chars()
        .filter(|c| (c.is_control() && *c != '\n' && *c != '\t') || *c == '\u{202e}')
        .collect();
    assert!(
        bad.is_empty(),
        "raw control characters reached the output: {bad:?}"
    );
    assert!(
        out.stdout
            .starts_with("\\x1b[31mred\\x1b]0;title\\x07\\rover\n\\u{202e}rtl\n"),
        "{}",
        &out.stdout[..80]
    );
    assert!(out.stdout.len() < 70 * 1024, "{}", out.stdout.len());
    // The 50 MB line is either dropped from the middle or, past the flood
    // limit, the command is stopped; either way little is kept.
    assert!(out.truncated_bytes > 10_000_000, "{}", out.truncated_bytes);
}

#[test]
fn row49_background_processes_die_with_the_call() {
    let f = Fixture::new();
    let m: Vec<String> = (0..6).map(|_| sleep_marker()).collect();
    let cmd = format!(
        "nohup sleep {} >/dev/null 2>&1 & setsid sleep {} & (sleep {} &); sleep {} & disown; \
         sh -c 'sh -c \"sleep {} &\" &'; setsid -f sh -c 'trap \"\" TERM HUP; sleep {}'; echo started",
        m[0], m[1], m[2], m[3], m[4], m[5]
    );
    let out = f.run(&cmd);
    assert!(out.stdout.starts_with("started"), "{out:?}");
    for marker in &m {
        assert!(
            processes_with(marker).is_empty(),
            "{marker} survived the call"
        );
    }
    // The same after a timeout.
    let m2 = sleep_marker();
    let mut req = f.req(&format!("setsid sleep {m2} & nohup sleep {m2} & sleep 100"));
    req.timeout = Duration::from_secs(1);
    let out = guarded_exec(&req).unwrap();
    assert!(out.timed_out);
    assert!(
        processes_with(&m2).is_empty(),
        "background process survived a timeout"
    );
}

#[test]
fn row50_grandchild_holding_the_pipe_does_not_hang_the_reader() {
    let f = Fixture::new();
    let marker = sleep_marker();
    let mut req = f.req(&format!(
        "(setsid sleep {marker} &); sh -c 'sleep {marker}' & echo done"
    ));
    req.timeout = Duration::from_secs(30);
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "reader hung: {out:?}"
    );
    assert_eq!(out.stdout, "done\n");
    assert!(!out.timed_out);
    assert!(processes_with(&marker).is_empty());
}

#[test]
fn row51_stdin_is_dev_null_and_prompts_do_not_block() {
    let f = Fixture::new();
    let mut req = f.req("cat; read x; echo \"read=$?\"; echo \"prompt=$GIT_TERMINAL_PROMPT\"; \
        git -c credential.helper= ls-remote http://127.0.0.1:9/x 2>/dev/null; echo git=$?; tty || true");
    req.timeout = Duration::from_secs(30);
    let start = Instant::now();
    let out = guarded_exec(&req).unwrap();
    assert!(start.elapsed() < Duration::from_secs(10), "{out:?}");
    assert!(out.stdout.starts_with("read=1\nprompt=0\ngit="), "{out:?}");
    assert!(out.stdout.ends_with("not a tty\n"), "{out:?}");
}

#[test]
fn row52_file_size_limit() {
    let f = Fixture::new();
    let limit: u64 = 8 << 20;
    let mut req = f.req("ulimit -f");
    req.policy.limits.file_size_bytes = limit;
    let check = guarded_exec(&req).unwrap();
    assert_eq!(
        check.stdout.trim(),
        (limit / 512).to_string(),
        "RLIMIT_FSIZE not in force"
    );
    req.command = "dd if=/dev/zero of=big bs=1M count=100".into();
    let out = guarded_exec(&req).unwrap();
    // dash reports a child killed by SIGXFSZ as exit 128+25.
    assert!(
        out.signal == Some(libc::SIGXFSZ) || out.exit_code == Some(128 + libc::SIGXFSZ),
        "{out:?}"
    );
    assert!(out
        .limit_hit
        .as_deref()
        .is_some_and(|l| l.starts_with("file size")));
    assert!(std::fs::metadata(f.path().join("big")).unwrap().len() <= limit);
    req.command = "fallocate -l 100G huge; echo rc=$?".into();
    let _ = guarded_exec(&req).unwrap();
    let size = std::fs::metadata(f.path().join("huge"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(size <= limit, "fallocate made a {size}-byte file");
}

#[test]
fn row53_open_file_limit() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    let mut req = f.req(
        "ulimit -n 100000 2>/dev/null; python3 -c '\nfs=[]\ntry:\n  while True: fs.append(open(\"/dev/null\"))\nexcept OSError as e: print(len(fs), e.errno)'",
    );
    req.policy.limits.open_files = 256;
    let check = guarded_exec(&ExecRequest {
        command: "ulimit -n; ulimit -H -n".into(),
        ..req.clone()
    })
    .unwrap();
    assert_eq!(
        check.stdout, "256\n256\n",
        "RLIMIT_NOFILE not in force: {check:?}"
    );
    let out = guarded_exec(&req).unwrap();
    let mut parts = out.stdout.split_whitespace();
    let opened: usize = parts
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(opened < 256, "opened {opened} files with RLIMIT_NOFILE=256");
    assert!(opened > 200, "opened only {opened}");
    assert_eq!(parts.next(), Some("24"), "expected EMFILE");
}

#[test]
fn row54_overlong_command_is_refused_before_spawning() {
    let f = Fixture::new();
    let cmd = format!("touch spawned; : {}", "a".repeat(10_000_000));
    let err = guarded_exec(&f.req(&cmd)).unwrap_err();
    assert!(matches!(err, SandboxError::InvalidCommand(_)), "{err}");
    assert!(!f.path().join("spawned").exists());
    // Just under the cap still runs.
    let ok = format!("touch spawned; : {}", "a".repeat(60_000));
    assert_eq!(f.run(&ok).exit_code, Some(0));
    assert!(f.path().join("spawned").exists());
}

#[test]
fn row55_nul_in_command_and_invalid_utf8_output() {
    let f = Fixture::new();
    let err = guarded_exec(&f.req("touch spawned\0; rm -rf /")).unwrap_err();
    assert!(matches!(err, SandboxError::InvalidCommand(_)), "{err}");
    assert!(!f.path().join("spawned").exists());
    let out = f.run(r"printf 'ok\377\376\n'; printf '\300' >&2");
    assert_eq!(out.stdout, "ok\u{fffd}\u{fffd}\n");
    assert_eq!(out.stderr, "\u{fffd}");
}

#[test]
fn row56_no_state_leaks_between_calls() {
    let f = Fixture::new();
    let first = f.run("cd /; export LEAK=1; umask 000; alias ll=rm; echo $PWD");
    assert_eq!(first.stdout, "/\n");
    let second =
        f.run("pwd; echo \"leak=${LEAK:-unset}\"; umask; alias ll 2>/dev/null || echo noalias");
    let ws = f.path().canonicalize().unwrap();
    assert_eq!(
        second.stdout,
        format!("{}\nleak=unset\n0022\nnoalias\n", ws.display())
    );
}
