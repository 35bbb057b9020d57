//! Shared helpers: a workspace (nested in a parent dir so `WS/../.env`
//! exists), sentinels outside it (under /tmp and in $HOME), planted secrets,
//! running commands, and finding surviving processes by a unique marker.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use reagent_sandbox::{exec, ExecOutput, ExecRequest, SandboxError, SandboxMode, SandboxPolicy};

/// Shell preamble of every red-team command. These tests run real destructive payloads
/// (`rm -rf --no-preserve-root /`, `kill -9 -1`, fork bombs) and rely on the sandbox to contain
/// them; a sandbox broken by a bug or an experiment must not let them loose on the machine (it
/// happened once, during mutation testing, and wiped `/etc`). So before the payload, the same
/// shell checks, in-band, that (1) it cannot create a file in any directory outside the
/// workspace that a payload could damage and (2) it sees only its own PID namespace; otherwise
/// it prints `REAGENT-GUARD:` and exits [`GUARD_EXIT`] without running anything else.
pub(crate) const GUARD: &str = r#"for d in / /usr /usr/lib /etc /dev /var /opt /work /tmp /root "$HOME" /home /srv /lib /bin; do
  c="$d/.reagent-canary-$$"
  if ( : > "$c" ) 2>/dev/null; then rm -f "$c"; echo "REAGENT-GUARD: $d is writable"; exit 97; fi
done
n=0; for p in /proc/[0-9]*; do n=$((n+1)); done
if [ "$n" -gt 64 ]; then echo "REAGENT-GUARD: $n processes visible, no PID namespace"; exit 97; fi
unset c d n p"#;

/// Exit code of a command whose [`GUARD`] found the sandbox open.
pub(crate) const GUARD_EXIT: i32 = 97;

/// A temp workspace plus sentinel files outside it.
pub(crate) struct Fixture {
    pub(crate) outer: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) sentinel: PathBuf,
    pub(crate) home_sentinel: PathBuf,
    pub(crate) sentinel_text: String,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        plant_secrets();
        let outer = tempfile::Builder::new()
            .prefix("reagent-outer-")
            .tempdir()
            .unwrap();
        let ws = outer.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(
            outer.path().join(".env"),
            format!("OUTER_ENV={}\n", secret_value()),
        )
        .unwrap();
        let id = uuid::Uuid::new_v4();
        let sentinel = PathBuf::from(format!("/tmp/sentinel-{id}"));
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| "/root".into());
        let home_sentinel = home.join(format!(".sentinel-{id}"));
        let sentinel_text = format!("sentinel {id}\n");
        std::fs::write(&sentinel, &sentinel_text).unwrap();
        std::fs::write(&home_sentinel, &sentinel_text).unwrap();
        Fixture {
            outer,
            ws,
            sentinel,
            home_sentinel,
            sentinel_text,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.ws
    }

    pub(crate) fn req(&self, command: &str) -> ExecRequest {
        ExecRequest {
            command: command.to_string(),
            cwd: self.ws.clone(),
            timeout: Duration::from_secs(20),
            output_cap: 64 * 1024,
            policy: SandboxPolicy::default(),
            cancel: None,
        }
    }

    /// Run `command` in the sandbox, behind [`GUARD`]: if the sandbox is not in force, the
    /// command aborts before its payload runs and the test fails loudly.
    pub(crate) fn run(&self, command: &str) -> ExecOutput {
        guarded_exec(&self.req(command)).unwrap()
    }

    /// Both sentinels exist with their original content.
    pub(crate) fn assert_sentinels_intact(&self) {
        for s in [&self.sentinel, &self.home_sentinel] {
            let now = std::fs::read_to_string(s)
                .unwrap_or_else(|e| panic!("sentinel {} is gone: {e}", s.display()));
            assert_eq!(
                now,
                self.sentinel_text,
                "sentinel {} was modified",
                s.display()
            );
        }
        assert!(
            self.outer.path().join(".env").exists(),
            "WS/../.env was removed"
        );
    }

    /// `$S` and `$H` in `template` become the sentinel paths.
    pub(crate) fn fill(&self, template: &str) -> String {
        template
            .replace("$S", self.sentinel.to_str().unwrap())
            .replace("$H", self.home_sentinel.to_str().unwrap())
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.sentinel);
        let _ = std::fs::remove_file(&self.home_sentinel);
    }
}

/// [`exec`] behind [`GUARD`] (every red-team command goes through this). Commands in `full`
/// mode (no filesystem confinement by design) are only the harmless controls, and run as they
/// are; so do empty and NUL-carrying commands, which `exec` refuses before running anything.
pub(crate) fn guarded_exec(req: &ExecRequest) -> Result<ExecOutput, SandboxError> {
    let mut req = req.clone();
    let refused_anyway = req.command.trim().is_empty() || req.command.contains('\0');
    if req.policy.mode != SandboxMode::Full && !refused_anyway {
        req.command = format!("{GUARD}\n{}", req.command);
    }
    let out = exec(&req)?;
    assert!(
        !out.stdout.contains("REAGENT-GUARD:") && out.exit_code != Some(GUARD_EXIT),
        "SANDBOX NOT IN FORCE, payload not run: {out:?}"
    );
    Ok(out)
}

/// The value planted in the parent's environment under secret-looking names
/// (and one innocuous name outside the allowlist).
pub(crate) fn secret_value() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| format!("s3cr3t-{}", uuid::Uuid::new_v4().simple()))
}

/// Plants the secret in the test process's environment (once).
pub(crate) fn plant_secrets() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        for name in [
            "REAGENT_TEST_API_KEY",
            "HUB_TOKEN",
            "DB_PASSWORD",
            "MY_SECRET",
            "INNOCENT_LOOKING",
        ] {
            std::env::set_var(name, secret_value());
        }
    });
}

/// Pids (host view) whose command line contains `marker`.
pub(crate) fn processes_with(marker: &str) -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// A unique `sleep` argument ("1000.<digits>") that marks a process.
pub(crate) fn sleep_marker() -> String {
    let n = uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000;
    format!("1000.{n:012}")
}

/// Fails loudly when a tool a test relies on is missing.
pub(crate) fn require_tool(path: &str) {
    assert!(
        Path::new(path).exists(),
        "MISSING TOOL: {path} (run scripts/install-test-deps.sh)"
    );
}

/// The guard itself: in a plain, unconfined root shell it must stop before the payload.
#[test]
fn the_guard_stops_an_unconfined_shell_before_its_payload() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "this check needs root, as CI has (an unconfined root shell can write to /)"
    );
    let out = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{GUARD}\necho PAYLOAD-RAN"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("REAGENT-GUARD:"), "{stdout}");
    assert!(!stdout.contains("PAYLOAD-RAN"), "{stdout}");
    assert_eq!(out.status.code(), Some(GUARD_EXIT));
    assert!(std::fs::read_dir("/").unwrap().flatten().all(|e| !e
        .file_name()
        .to_string_lossy()
        .starts_with(".reagent-canary-")));
}
