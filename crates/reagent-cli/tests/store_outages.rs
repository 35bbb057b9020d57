//! The run store loses no event, through the `reagent` binary: PostgreSQL stopped for 20 s and
//! for 3 minutes mid-run, a run that ends while it is down (written by the next reagent that
//! opens the store), the journal's disk full, and SQLite locked by another process past the
//! busy timeout. Every stored event is compared with the run's `--events` file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod store_support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use reagent_testkit::{PostgresCluster, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

use store_support::*;

/// A workspace of `files` distinct files of `size` bytes, a store directory and a state home.
struct Bench {
    dir: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
    events: PathBuf,
}

fn bench(files: usize, size: usize) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    for i in 0..files {
        let line = format!("file {i}: the quick brown fox jumps over the lazy dog\n");
        std::fs::write(
            ws.join(format!("f{i}.txt")),
            line.repeat(size / line.len() + 1),
        )
        .unwrap();
    }
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let events = dir.path().join("events.jsonl");
    Bench {
        dir,
        ws,
        state,
        events,
    }
}

/// `turns` model turns, each reading another file after `delay`, then the answer.
fn reading(turns: usize, delay: Duration) -> ScriptBuilder {
    let mut script = ScriptBuilder::new();
    for i in 0..turns {
        script = script.turn(
            Turn::tool_call("read_file", json!({"path": format!("f{i}.txt")})).with_delay(delay),
        );
    }
    script.turn(Turn::text("read them all"))
}

/// `reagent run` of `turns` turns against `server`, recording into `store`, its events also in
/// the bench's events file and its journal under the bench's state home.
fn run_cmd(b: &Bench, server: &ScriptedOllama, store: &str, turns: usize) -> Command {
    let mut cmd = reagent();
    cmd.args(run_args(server, &b.ws, store, "read every file"))
        .args(["--max-iterations", &(turns + 5).to_string()])
        .arg("--events")
        .arg(&b.events)
        .env("XDG_STATE_HOME", &b.state);
    cmd
}

/// The events of the run's `--events` file (once it has at least `min` of them).
fn written(b: &Bench) -> Vec<Value> {
    std::fs::read_to_string(&b.events)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

async fn wait_written(b: &Bench, min: usize) {
    wait_for(60, || async { (written(b).len() >= min).then_some(()) }).await;
}

/// The run's events as stored, after a `reagent runs list` on the store (which first writes
/// any journal left behind). Read with SQL: `runs events` prints 1,000 at most.
async fn stored(b: &Bench, store: &str, run_id: &str) -> Vec<Value> {
    let out = reagent()
        .args(["runs", "list", "--json", "--store", store])
        .env("XDG_STATE_HOME", &b.state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    sqlx::any::install_default_drivers();
    let url = if store.starts_with("postgres") {
        store.to_owned()
    } else {
        format!("sqlite://{store}")
    };
    let db = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows: Vec<String> =
        sqlx::query_scalar("SELECT json FROM events WHERE run_id = $1 ORDER BY seq")
            .bind(run_id)
            .fetch_all(&db)
            .await
            .unwrap();
    db.close().await;
    rows.iter()
        .map(|j| serde_json::from_str(j).unwrap())
        .collect()
}

/// The journal files under the bench's state home.
fn journal_files(b: &Bench) -> Vec<PathBuf> {
    let root = b.state.join("reagent/journal");
    let mut files = Vec::new();
    for d in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            if f.path().extension().is_some_and(|x| x == "jsonl") {
                files.push(f.path());
            }
        }
    }
    files
}

/// The run completed, its store reported nothing, and the store holds exactly the events of
/// its events file (every one, in order, none twice).
async fn every_event_is_stored(b: &Bench, out: &Output, store: &str) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    let r = json_out(out);
    assert_eq!(r["outcome"], "completed", "{r}");
    assert_eq!(r["store_error"], Value::Null, "{}", stderr(out));
    assert!(
        !stderr(out).contains("INSERT INTO"),
        "no statement is printed: {}",
        stderr(out)
    );
    let run_id = r["run_id"].as_str().unwrap();
    let written = written(b);
    let stored = stored(b, store, run_id).await;
    assert_eq!(stored.len(), written.len(), "events stored / written");
    assert!(
        stored == written,
        "the stored events differ from the events file"
    );
    let seqs: Vec<u64> = stored.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let list = String::from_utf8(
        reagent()
            .args(["runs", "list", "--json", "--store", store])
            .env("XDG_STATE_HOME", &b.state)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let rows: Value = serde_json::from_str(&list).unwrap();
    assert_eq!(rows[0]["id"], run_id);
    assert_eq!(rows[0]["outcome"], "completed");
}

/// Stop `pg` once the run has written `after` events, keep it down `down`, start it again;
/// returns how many events the run wrote while it was down.
async fn outage(
    pg: &std::sync::Arc<PostgresCluster>,
    b: &Bench,
    after: usize,
    down: Duration,
) -> usize {
    wait_written(b, after).await;
    pg.stop_server().unwrap();
    let at_stop = written(b).len();
    tokio::time::sleep(down).await;
    let at_start = written(b).len();
    pg.start_server().unwrap();
    at_start - at_stop
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_20_s_mid_run_loses_no_event() {
    let b = bench(100, 200);
    let pg = std::sync::Arc::new(PostgresCluster::start().unwrap());
    let url = pg.new_database().unwrap();
    let server = ScriptedOllama::start(reading(100, Duration::from_millis(250)))
        .await
        .unwrap();
    let run = tokio::task::spawn_blocking({
        let mut cmd = run_cmd(&b, &server, &url, 100);
        move || cmd.output().unwrap()
    });
    let during = outage(&pg, &b, 20, Duration::from_secs(20)).await;
    assert!(
        during > 100,
        "the run went on while the database was down ({during} events)"
    );
    let out = run.await.unwrap();
    every_event_is_stored(&b, &out, &url).await;
}

/// The one long test (about 3.5 minutes): past the memory bound (50 events here) the events
/// go to the journal, which the writer replays once PostgreSQL is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_3_minutes_mid_run_journals_and_loses_no_event() {
    let b = bench(200, 200);
    let pg = std::sync::Arc::new(PostgresCluster::start().unwrap());
    let url = pg.new_database().unwrap();
    let server = ScriptedOllama::start(reading(200, Duration::from_millis(1000)))
        .await
        .unwrap();
    let run = tokio::task::spawn_blocking({
        let mut cmd = run_cmd(&b, &server, &url, 200);
        cmd.env("REAGENT_STORE_MEMORY_EVENTS", "50");
        move || cmd.output().unwrap()
    });
    wait_written(&b, 10).await;
    pg.stop_server().unwrap();
    let at_stop = written(&b).len();
    tokio::time::sleep(Duration::from_secs(90)).await;
    let spilled = journal_files(&b);
    assert!(
        !spilled.is_empty(),
        "past 50 waiting events nothing went to the journal"
    );
    tokio::time::sleep(Duration::from_secs(90)).await;
    let during = written(&b).len() - at_stop;
    pg.start_server().unwrap();
    assert!(
        during > 300,
        "the run went on while the database was down ({during} events)"
    );
    let out = run.await.unwrap();
    every_event_is_stored(&b, &out, &url).await;
    assert_eq!(
        journal_files(&b),
        Vec::<PathBuf>::new(),
        "replayed files are removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_during_an_outage_is_written_by_the_next_reagent() {
    let b = bench(4, 200);
    let pg = std::sync::Arc::new(PostgresCluster::start().unwrap());
    let url = pg.new_database().unwrap();
    let server = ScriptedOllama::start(reading(4, Duration::from_millis(400)))
        .await
        .unwrap();
    let run = tokio::task::spawn_blocking({
        let mut cmd = run_cmd(&b, &server, &url, 4);
        move || cmd.output().unwrap()
    });
    wait_written(&b, 3).await;
    pg.stop_server().unwrap();
    let out = run.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json_out(&out);
    assert_eq!(r["outcome"], "completed");
    let e = r["store_error"].as_str().expect("the outage is reported");
    assert!(
        e.contains("does not answer") && e.contains("wait in its journal"),
        "{e}"
    );
    assert!(e.contains("when reagent next opens this store"), "{e}");
    let err = stderr(&out);
    assert_eq!(err.matches(e).count(), 1, "reported once: {err}");
    assert!(!journal_files(&b).is_empty());
    pg.start_server().unwrap();
    // The next reagent on this store writes the journal before it reads.
    let run_id = r["run_id"].as_str().unwrap();
    let stored = stored(&b, &url, run_id).await;
    assert!(
        stored == written(&b),
        "the stored events differ from the events file"
    );
    assert!(journal_files(&b).is_empty());
    let list = json_out(
        &reagent()
            .args(["runs", "list", "--json", "--store", &url])
            .env("XDG_STATE_HOME", &b.state)
            .output()
            .unwrap(),
    );
    assert_eq!(list[0]["outcome"], "completed", "{list}");
}

/// A 64 KB tmpfs mounted for the test's life (root only: the test fails, naming why, when it
/// cannot mount).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(at)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount for the full-disk test: {e}"));
        assert!(
            out.status.success(),
            "the full-disk test needs to mount a 64 KB tmpfs (run it as root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(at.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_journal_is_a_clear_error_and_the_run_goes_on() {
    let b = bench(20, 6_000);
    let _full = Tmpfs::mount(&b.state);
    let pg = std::sync::Arc::new(PostgresCluster::start().unwrap());
    let url = pg.new_database().unwrap();
    let server = ScriptedOllama::start(reading(20, Duration::from_millis(200)))
        .await
        .unwrap();
    let run = tokio::task::spawn_blocking({
        let mut cmd = run_cmd(&b, &server, &url, 20);
        cmd.env("REAGENT_STORE_MEMORY_EVENTS", "5");
        move || cmd.output().unwrap()
    });
    wait_written(&b, 3).await;
    pg.stop_server().unwrap();
    let out = run.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json_out(&out);
    assert_eq!(r["outcome"], "completed", "the run goes on");
    let e = r["store_error"]
        .as_str()
        .expect("the full journal is reported");
    assert!(e.contains("No space left on device"), "{e}");
    assert!(e.contains("cannot be written"), "{e}");
    // "… events wait, J in the journal and M in memory only, lost if this process ends …"
    let memory_only: usize = e
        .split(" in memory only")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of events held in memory: {e}"));
    assert!(memory_only > 0, "{e}");
    pg.start_server().unwrap();
    // What reached the database or the journal is stored, once; what was only in memory is
    // the count reported.
    let written = written(&b);
    let stored = stored(&b, &url, r["run_id"].as_str().unwrap()).await;
    let seqs: Vec<u64> = stored.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    assert!(stored.iter().all(|e| written.contains(e)));
    assert_eq!(stored.len() + memory_only, written.len(), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_locked_by_another_process_past_the_busy_timeout_loses_no_event() {
    let b = bench(20, 200);
    let db = b.dir.path().join("store/reagent.db");
    let store = db.display().to_string();
    let server = ScriptedOllama::start(reading(20, Duration::from_millis(2000)))
        .await
        .unwrap();
    let run = tokio::task::spawn_blocking({
        let mut cmd = run_cmd(&b, &server, &store, 20);
        move || cmd.output().unwrap()
    });
    wait_written(&b, 5).await;
    // Another process takes the write lock and keeps it 35 s (the busy timeout is 30 s).
    let mut locker = Command::new("sqlite3")
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("this test needs the sqlite3 command (apt install sqlite3): {e}")
        });
    let mut input = locker.stdin.take().unwrap();
    writeln!(input, ".timeout 60000\nBEGIN EXCLUSIVE;\nSELECT 'locked';").unwrap();
    let mut line = String::new();
    BufReader::new(locker.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "locked");
    let locked_at = Instant::now();
    let at_lock = written(&b).len();
    tokio::time::sleep(Duration::from_secs(35)).await;
    let during = written(&b).len() - at_lock;
    writeln!(input, "COMMIT;\n.quit").unwrap();
    drop(input);
    assert!(locker.wait().unwrap().success());
    assert!(locked_at.elapsed() > Duration::from_secs(30));
    assert!(
        during > 20,
        "the run went on while the store was locked ({during} events)"
    );
    let out = run.await.unwrap();
    every_event_is_stored(&b, &out, &store).await;
}
