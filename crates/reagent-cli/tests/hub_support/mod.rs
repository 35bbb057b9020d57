//! Shared helpers of the hub tests (`hub.rs`, `hub_faults.rs`): stores on both backends, real
//! `reagent worker` processes against scripted model servers, and reading the queue back.
#![allow(dead_code, unused_macros)]

pub(crate) mod netns;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_hub::queue::{HistoryEntry, Queue, TaskRecord, TaskState};
use reagent_store::{Location, Store};
use reagent_testkit::{PostgresCluster, ScriptedOllama};

/// Run an async test body `fn(Backend)` once per backend, as two tests.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(crate::hub_support::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(crate::hub_support::Backend::Postgres).await;
                }
            )*
        }
    };
}

/// Which database a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh store and a workspace, with what keeps them alive.
pub(crate) struct Hub {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    /// The `--store` value.
    pub(crate) store_url: String,
    pub(crate) queue: Queue,
    pub(crate) pg: Option<Arc<PostgresCluster>>,
}

pub(crate) async fn hub(backend: Backend) -> Hub {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let (store_url, pg) = match backend {
        Backend::Sqlite => (dir.path().join("hub.db").display().to_string(), None),
        Backend::Postgres => {
            let pg = PostgresCluster::shared().expect("PostgreSQL 15 for the hub tests");
            (pg.new_database().unwrap(), Some(pg))
        }
    };
    hub_at(dir, ws, store_url, pg).await
}

/// A hub on a PostgreSQL cluster of its own (for tests that restart it).
pub(crate) async fn hub_on(pg: Arc<PostgresCluster>) -> Hub {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let url = pg.new_database().unwrap();
    hub_at(dir, ws, url, Some(pg)).await
}

async fn hub_at(
    dir: tempfile::TempDir,
    ws: PathBuf,
    store_url: String,
    pg: Option<Arc<PostgresCluster>>,
) -> Hub {
    let store = Store::open(&Location::parse(&store_url).unwrap())
        .await
        .unwrap();
    Hub {
        dir,
        ws,
        store_url,
        queue: Queue::new(&store),
        pg,
    }
}

pub(crate) fn reagent() -> Command {
    clean_env(Command::new(env!("CARGO_BIN_EXE_reagent")))
}

/// `cmd` without the environment that would point reagent elsewhere.
pub(crate) fn clean_env(mut cmd: Command) -> Command {
    cmd.env_remove("OLLAMA_HOST")
        .env_remove("REAGENT_STORE")
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null());
    cmd
}

/// `reagent ARGS --store STORE`, waited for.
pub(crate) fn cli(hub: &Hub, args: &[&str]) -> Output {
    reagent()
        .args(args)
        .args(["--store", &hub.store_url])
        .output()
        .unwrap()
}

/// [`cli`], which must succeed; its stdout.
pub(crate) fn cli_ok(hub: &Hub, args: &[&str]) -> String {
    let out = cli(hub, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "reagent {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A running `reagent worker` process; killed when dropped.
pub(crate) struct WorkerProcess {
    pub(crate) child: Child,
    pub(crate) log: PathBuf,
}

impl WorkerProcess {
    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    pub(crate) fn signal(&self, sig: i32) {
        // SAFETY: kill has no memory preconditions; the pid is our own child's.
        assert_eq!(unsafe { libc::kill(self.pid(), sig) }, 0, "kill({sig})");
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then wait (at most `limit`) for a clean exit.
    pub(crate) async fn stop(mut self, limit: Duration) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "worker did not stop:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `reagent worker` against `server`, with fast test timing (2 s leases) and `extra`
/// flags.
pub(crate) fn worker(
    hub: &Hub,
    name: &str,
    server: &ScriptedOllama,
    extra: &[&str],
) -> WorkerProcess {
    let cmd = clean_env(Command::new(env!("CARGO_BIN_EXE_reagent")));
    spawn_worker(cmd, hub, name, &hub.store_url, &server.base_url(), extra)
}

/// Start `cmd` (the `reagent` binary, maybe behind a wrapper) as a worker of `store` using the
/// Ollama at `model_host`.
pub(crate) fn spawn_worker(
    mut cmd: Command,
    hub: &Hub,
    name: &str,
    store: &str,
    model_host: &str,
    extra: &[&str],
) -> WorkerProcess {
    let log = hub.dir.path().join(format!("{name}.log"));
    let timing = [
        ("--lease", "2"),
        ("--heartbeat", "0.5"),
        ("--poll", "0.2"),
        ("--drain", "5"),
    ];
    cmd.args(["worker", "--model", "qwen3:8b", "--host", model_host]);
    for (flag, value) in timing {
        if !extra.contains(&flag) {
            cmd.args([flag, value]);
        }
    }
    let child = cmd
        .args(["--workspace", &hub.ws.display().to_string()])
        .args(["--store", store])
        .args(["--log", "reagent_hub=info"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    WorkerProcess { child, log }
}

/// Wait (at most `secs`) until `f` gives a value.
pub(crate) async fn wait_for<T, F, Fut>(secs: u64, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs} s waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The task once it is in `state`.
pub(crate) async fn task_in(hub: &Hub, id: &str, state: TaskState, secs: u64) -> TaskRecord {
    let what = format!("task {id} to be {state}");
    wait_for(secs, &what, || async {
        let task = hub.queue.get(id).await.ok()?;
        (task.state == state).then_some(task)
    })
    .await
}

/// The worker id of the process `pid` (once it registered).
pub(crate) async fn worker_id(hub: &Hub, pid: i32) -> String {
    wait_for(30, "the worker to register", || async {
        let workers = hub.queue.workers().await.ok()?;
        workers
            .into_iter()
            .find(|w| i64::from(w.info.pid) == i64::from(pid))
            .map(|w| w.info.id)
    })
    .await
}

pub(crate) fn count(history: &[HistoryEntry], what: &str) -> usize {
    history.iter().filter(|h| h.what == what).count()
}

/// A run recorded in the store, as `reagent runs list --json` shows it.
pub(crate) fn find_run(hub: &Hub, run_id: &str) -> Option<serde_json::Value> {
    let out = cli_ok(hub, &["runs", "list", "--json", "--limit", "500"]);
    let runs: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    runs.into_iter().find(|r| r["id"] == run_id)
}

/// [`find_run`], which must find it.
pub(crate) fn run_of(hub: &Hub, run_id: &str) -> serde_json::Value {
    find_run(hub, run_id).unwrap_or_else(|| panic!("run {run_id} is not in reagent runs list"))
}

pub(crate) fn path_str(p: &Path) -> String {
    p.display().to_string()
}
