//! A llama-server kept warm between runs: `reagent run --provider local` starts one on demand,
//! later runs reuse it, and it stops by itself after a few idle minutes.
//!
//! The server is started by a small keeper (a POSIX shell loop, in its own session so a Ctrl-C
//! to reagent does not reach it) that stops the server with SIGTERM once the run directory's
//! `llama-server.used` stamp is older than the idle timeout, or when the keeper itself gets
//! SIGTERM ([`stop_warm`]), and then removes its state file. A run holding a [`WarmServer`]
//! touches the stamp every few seconds, so a long run is never idle. `llama-server.json`
//! records the keeper's pid, the port and the exact command line; a later run reuses the server
//! when the keeper is alive, the command line (model, context size...) is the same and
//! `/health` says ok, and otherwise replaces it. `llama-server.lock` (flock) keeps two runs from
//! starting two servers; `llama-server.log` holds the server's output.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::error::LocalError;
use crate::server::{free_port, health_client, is_healthy, ServerConfig};

/// How long a kept server waits for the next run by default.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(300);

/// The keeper: starts the server (`$6...`), stops it when the stamp `$1` is older than `$2`
/// seconds (checked every `$3` seconds) or on SIGTERM, then removes the state file `$4` if it
/// still names this keeper. The server's output goes to `$5`, and after it how the server
/// ended (so a crash shows in the error's log lines).
const KEEPER: &str = r#"stamp=$1 idle=$2 poll=$3 state=$4 log=$5
shift 5
"$@" >"$log" 2>&1 </dev/null &
server=$!
trap 'kill -TERM "$server" 2>/dev/null' TERM INT HUP
while kill -0 "$server" 2>/dev/null; do
  sleep "$poll" & wait $!
  used=$(stat -c %Y "$stamp" 2>/dev/null || echo 0)
  if [ $(( $(date +%s) - used )) -ge "$idle" ]; then kill -TERM "$server" 2>/dev/null; break; fi
done
wait "$server"
status=$?
if [ "$status" -gt 128 ]; then
  echo "reagent: llama-server killed by signal $((status - 128))" >>"$log"
else
  echo "reagent: llama-server exit status $status" >>"$log"
fi
if grep -q "\"keeper\":$$[,}]" "$state" 2>/dev/null; then rm -f "$state"; fi
"#;

/// How the keeper's line on the server's end begins in the log.
const ENDED: &str = "reagent: llama-server ";

/// Starts the keeper in the background and prints its pid, so the keeper is nobody's child
/// here (no zombie to mistake for a live keeper) and outlives this process.
const LAUNCH: &str =
    r#"keeper=$0; sh -c "$keeper" keeper "$@" </dev/null >/dev/null 2>&1 & echo $!"#;

/// How to keep a server warm.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmConfig {
    /// The server to run.
    pub server: ServerConfig,
    /// Where the state, stamp, lock and log files live (e.g. the cache's `run/`).
    pub run_dir: PathBuf,
    /// How long the server waits for the next run before it stops ([`DEFAULT_IDLE`]).
    pub idle: Duration,
}

/// A kept llama-server in use by this run. Dropping it marks the server used now, so its idle
/// time starts when the run ends.
#[derive(Debug)]
pub struct WarmServer {
    port: u16,
    alias: String,
    keeper: u32,
    reused: bool,
    stamp: PathBuf,
    toucher: tokio::task::JoinHandle<()>,
}

impl WarmServer {
    /// The server for `config`: the kept one when it matches and answers, else a new one
    /// (replacing a kept server started differently). Waits until `/health` says ok.
    pub async fn acquire(config: &WarmConfig) -> Result<Self, LocalError> {
        let dir = &config.run_dir;
        std::fs::create_dir_all(dir).map_err(|e| io("cannot create the run directory", &e))?;
        let _lock = lock(&dir.join("llama-server.lock")).await?;
        let paths = Paths::new(dir);
        let mut command = vec![config.server.files.server.display().to_string()];
        command.extend(config.server.args(0));
        let client = health_client()?;
        if let Some(state) = read_state(&paths.state) {
            let live = alive(state.keeper);
            if live
                && state.command == command
                && is_healthy(&client, &health_url(state.port)).await
            {
                touch(&paths.stamp)?;
                return Ok(Self::new(config, state.port, state.keeper, true, paths));
            }
            if live {
                tracing::debug!(keeper = state.keeper, "replacing a kept llama-server");
                stop_keeper(state.keeper).await;
            }
        }
        let port = free_port()?;
        touch(&paths.stamp)?;
        let keeper = launch(config, port, &paths)?;
        let state = State {
            keeper,
            port,
            command,
        };
        write_state(&paths.state, &state)?;
        wait_ready(&client, &state, &paths, config.server.startup_timeout).await?;
        Ok(Self::new(config, port, keeper, false, paths))
    }

    fn new(config: &WarmConfig, port: u16, keeper: u32, reused: bool, paths: Paths) -> Self {
        let stamp = paths.stamp;
        let every = (config.idle / 3).clamp(Duration::from_millis(200), Duration::from_secs(30));
        let touched = stamp.clone();
        let toucher = tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if let Err(e) = touch(&touched) {
                    tracing::warn!("cannot mark the kept llama-server as used: {e}");
                }
            }
        });
        WarmServer {
            port,
            alias: config.server.alias.clone(),
            keeper,
            reused,
            stamp,
            toucher,
        }
    }

    /// `http://127.0.0.1:PORT`: the server root.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL an OpenAI SDK takes.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// The model name to send in requests (the `--alias`).
    pub fn model(&self) -> &str {
        &self.alias
    }

    /// The keeper's process id (the same for every run that reuses the server).
    pub fn keeper_pid(&self) -> u32 {
        self.keeper
    }

    /// Whether an earlier run's server was reused.
    pub fn reused(&self) -> bool {
        self.reused
    }
}

impl Drop for WarmServer {
    fn drop(&mut self) {
        self.toucher.abort();
        if let Err(e) = touch(&self.stamp) {
            tracing::warn!("cannot mark the kept llama-server as used: {e}");
        }
    }
}

/// Stops the server kept in `run_dir` now (SIGTERM, then waits for it to go); false when none
/// was running.
pub async fn stop_warm(run_dir: &Path) -> Result<bool, LocalError> {
    let _lock = lock(&run_dir.join("llama-server.lock")).await?;
    let paths = Paths::new(run_dir);
    match read_state(&paths.state) {
        Some(state) if alive(state.keeper) => {
            stop_keeper(state.keeper).await;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The files of a run directory.
#[derive(Debug)]
struct Paths {
    state: PathBuf,
    stamp: PathBuf,
    log: PathBuf,
}

impl Paths {
    fn new(dir: &Path) -> Self {
        Paths {
            state: dir.join("llama-server.json"),
            stamp: dir.join("llama-server.used"),
            log: dir.join("llama-server.log"),
        }
    }
}

/// What `llama-server.json` records.
#[derive(Debug, PartialEq)]
struct State {
    keeper: u32,
    port: u16,
    /// The binary and its arguments, with port 0 (any port serves).
    command: Vec<String>,
}

fn read_state(path: &Path) -> Option<State> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    Some(State {
        keeper: u32::try_from(v.get("keeper")?.as_u64()?).ok()?,
        port: u16::try_from(v.get("port")?.as_u64()?).ok()?,
        command: v
            .get("command")?
            .as_array()?
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<_>>()?,
    })
}

/// Written to a temporary file and renamed, so a reader never sees half of it. Compact, so
/// the keeper finds `"keeper":PID` in it.
fn write_state(path: &Path, state: &State) -> Result<(), LocalError> {
    let body = json!({"keeper": state.keeper, "port": state.port, "command": state.command});
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, body.to_string())
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| io("cannot write the kept server's state", &e))
}

fn io(context: &'static str, e: &std::io::Error) -> LocalError {
    LocalError::Io {
        context,
        detail: e.to_string(),
    }
}

fn health_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/health")
}

/// Marks the server used now.
fn touch(stamp: &Path) -> Result<(), LocalError> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(stamp)
        .and_then(|f| f.set_modified(SystemTime::now()))
        .map_err(|e| io("cannot mark the kept llama-server as used", &e))
}

/// An exclusive flock on `path`, held until the file is dropped.
async fn lock(path: &Path) -> Result<File, LocalError> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| io("cannot open the kept server's lock file", &e))?;
    tokio::task::spawn_blocking(move || {
        // SAFETY: flock on a descriptor this closure owns (through `file`).
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            Ok(file)
        } else {
            Err(io(
                "cannot lock the kept server's lock file",
                &std::io::Error::last_os_error(),
            ))
        }
    })
    .await
    .map_err(|e| LocalError::Io {
        context: "cannot lock the kept server's lock file",
        detail: e.to_string(),
    })?
}

/// Whether process `pid` runs (exists and is not a zombie: where pid 1 does not reap
/// orphans, an ended keeper stays one).
fn alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    if raw <= 0 || unsafe { libc::kill(raw, 0) } != 0 {
        return false;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command name, which is in parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    state != Some("Z")
}

/// SIGTERM to the keeper (which stops its server first), then waits up to 15 s for it to go,
/// then SIGKILL.
async fn stop_keeper(keeper: u32) {
    let Ok(pid) = libc::pid_t::try_from(keeper) else {
        return;
    };
    // SAFETY: plain kill(2) of a process this module started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(15);
    while alive(keeper) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if alive(keeper) {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Starts the keeper (detached, in its own session); its pid.
fn launch(config: &WarmConfig, port: u16, paths: &Paths) -> Result<u32, LocalError> {
    let server = &config.server.files.server;
    let idle = config.idle.as_secs().max(1);
    let poll = idle.clamp(1, 5);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(LAUNCH)
        .arg(KEEPER)
        .arg(&paths.stamp)
        .arg(idle.to_string())
        .arg(poll.to_string())
        .arg(&paths.state)
        .arg(&paths.log)
        .arg(server)
        .args(config.server.args(port))
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid(2) is async-signal-safe and only detaches the child from the terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let out = cmd.output().map_err(|source| LocalError::Spawn {
        server: server.clone(),
        source,
    })?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| LocalError::Io {
            context: "cannot start the llama-server keeper",
            detail: format!("sh printed no pid ({})", out.status),
        })
}

/// Waits until the new server is healthy, marking it used meanwhile; an error with its log's
/// last lines when the keeper (and so the server) ended or the time ran out.
async fn wait_ready(
    client: &reqwest::Client,
    state: &State,
    paths: &Paths,
    timeout: Duration,
) -> Result<(), LocalError> {
    let url = health_url(state.port);
    let deadline = Instant::now() + timeout;
    loop {
        if is_healthy(client, &url).await {
            return Ok(());
        }
        // Starting is use: a slow start must not look idle to the keeper.
        touch(&paths.stamp)?;
        if !alive(state.keeper) {
            let tail = log_tail(&paths.log);
            let status = tail
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(ENDED))
                .unwrap_or("the kept server ended")
                .to_owned();
            return Err(LocalError::Exited { status, tail });
        }
        if Instant::now() >= deadline {
            stop_keeper(state.keeper).await;
            return Err(LocalError::StartTimeout {
                after: timeout,
                tail: log_tail(&paths.log),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The log's last 40 lines.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
