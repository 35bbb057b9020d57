//! Losing no event: PostgreSQL stopped and restarted under the writer, the journal past the
//! memory bound and at the next open, runs the database refuses, and writes repeated.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::{Event, EventKind, Outcome};
use reagent_store::{Location, Store, StoreOptions};
use reagent_testkit::PostgresCluster;

use super::harness::*;
use crate::both_backends;

/// A PostgreSQL store of its own (these tests stop the server), its journal in `dir`.
async fn own_postgres(
    dir: &Path,
    memory_events: usize,
) -> (Arc<PostgresCluster>, Location, StoreOptions, Store) {
    let pg = Arc::new(PostgresCluster::start().unwrap());
    let location = Location::Postgres(pg.new_database().unwrap());
    let options = StoreOptions {
        memory_events,
        journal_dir: Some(dir.join("journal")),
    };
    let store = Store::open_with(&location, options.clone()).await.unwrap();
    (pg, location, options, store)
}

fn tool_call(iteration: u32) -> EventKind {
    EventKind::ToolCall {
        iteration,
        call_id: format!("c{iteration}"),
        name: "read_file".into(),
        arguments: serde_json::json!({"path": "a.txt"}),
        ok: true,
        duration_ms: 1,
        summary: "1 line".into(),
    }
}

/// The journal files in `dir`.
fn segments(dir: &Path) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The seqs stored for `run`, which must be 1..=n in order.
async fn assert_gapless(store: &Store, run: &str, n: i64) {
    let seqs: Vec<i64> = store
        .events_after(run, 0, 0)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "run {run}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_runs_ride_out_a_postgres_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (pg, _location, _options, store) = own_postgres(dir.path(), 16_384).await;
    const STEPS: u32 = 40;
    let runs: Vec<_> = (0..100)
        .map(|i| {
            let rec = store.recorder();
            tokio::spawn(async move {
                let run = format!("run-{i:03}");
                let mut seq = 0;
                let mut emit = |k| {
                    seq += 1;
                    rec.record(Event::new(&run, seq, k));
                };
                emit(started("t", ""));
                for step in 1..=STEPS {
                    emit(response(step, 10, 1));
                    emit(tool_call(step));
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                emit(finished(Outcome::Completed, STEPS, "done"));
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let restarting = pg.clone();
    let restart =
        tokio::task::spawn_blocking(move || restarting.restart(Duration::from_secs(3)).unwrap());
    restart.await.unwrap();
    // The runs recorded all along the restart: it cut the writer's connections mid-run.
    assert!(
        runs.iter().all(|r| !r.is_finished()),
        "the runs ended before the server was back"
    );
    for r in runs {
        r.await.unwrap();
    }
    store.flush().await;
    assert_eq!(store.error(), None);
    assert_eq!(store.dropped_events(), 0);
    assert!(store.events_complete());
    for i in 0..100 {
        let run = format!("run-{i:03}");
        let row = store
            .run(&run)
            .await
            .unwrap()
            .expect("every run has its row");
        assert_eq!(row.outcome, "completed", "{run}");
        assert_gapless(&store, &run, i64::from(STEPS) * 2 + 2).await;
    }
    assert!(segments(&dir.path().join("journal")).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_memory_bound_events_go_to_the_journal_and_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let (pg, _location, _options, store) = own_postgres(dir.path(), 8).await;
    pg.stop_server().unwrap();
    let rec = store.recorder();
    let mut kinds = vec![started("t", "")];
    for i in 1..=98 {
        kinds.push(response(i, 10, 1));
    }
    for e in events("spilled", kinds) {
        rec.record(e);
    }
    // Past 8 events in memory the rest goes to the journal, without a flush asking.
    for _ in 0..100 {
        if !segments(&journal).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!segments(&journal).is_empty(), "nothing was journalled");
    store.flush().await;
    let err = store.error().expect("the outage is reported");
    assert!(err.contains("does not answer"), "{err}");
    assert!(
        err.contains(&format!(
            "99 events wait in its journal {}",
            journal.display()
        )),
        "{err}"
    );
    assert!(!store.events_complete());
    assert_eq!(store.dropped_events(), 0);
    pg.start_server().unwrap();
    store.flush().await;
    assert_eq!(store.error(), None);
    assert!(store.events_complete());
    assert_gapless(&store, "spilled", 99).await;
    // Counted once each, though written from memory and the journal after failed attempts.
    let row = store.run("spilled").await.unwrap().unwrap();
    assert_eq!(row.iterations, 98);
    assert_eq!((row.prompt_tokens, row.completion_tokens), (980, 98));
    assert!(segments(&journal).is_empty(), "replayed files are removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ends_during_an_outage_waits_in_the_journal_for_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let (pg, location, options, store) = own_postgres(dir.path(), 16_384).await;
    record_run(&store, "before", "t", Outcome::Completed).await;
    pg.stop_server().unwrap();
    record_run(&store, "during", "t", Outcome::Completed).await;
    let err = store.error().expect("the outage is reported");
    assert!(err.contains(&location.to_string()), "{err}");
    assert!(err.contains("3 events wait in its journal"), "{err}");
    assert!(err.contains("when reagent next opens this store"), "{err}");
    assert!(!store.events_complete());
    let files = segments(&journal);
    assert_eq!(files.len(), 1, "{files:?}");
    drop(store);
    // The writer ends once its store is dropped; its file is then free for another to take.
    wait_unlocked(&files[0]).await;
    pg.start_server().unwrap();
    let store = Store::open_with(&location, options).await.unwrap();
    assert_eq!(store.error(), None);
    let row = store
        .run("during")
        .await
        .unwrap()
        .expect("the journal wrote its row");
    assert_eq!(row.outcome, "completed");
    assert_gapless(&store, "during", 3).await;
    assert_gapless(&store, "before", 3).await;
    assert!(segments(&journal).is_empty());
}

/// Wait until no one holds the lock of journal file `path`.
async fn wait_unlocked(path: &Path) {
    use std::os::unix::io::AsRawFd;
    for _ in 0..400 {
        let f = std::fs::File::open(path).unwrap();
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} is still locked after 20 s", path.display());
}

async fn a_refused_run_does_not_take_other_runs_events_with_it(b: Backend) {
    let t = open(b).await;
    let db = raw(&t.location).await;
    let statements: &[&str] = match b {
        Backend::Sqlite => &["CREATE TRIGGER refuse_bad BEFORE INSERT ON events \
             WHEN NEW.run_id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END"],
        Backend::Postgres => &[
            "CREATE FUNCTION refuse_bad() RETURNS trigger AS $$ BEGIN \
             IF NEW.run_id = 'bad' THEN RAISE EXCEPTION 'refused by a test trigger'; END IF; \
             RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse_bad BEFORE INSERT ON events FOR EACH ROW \
             EXECUTE FUNCTION refuse_bad()",
        ],
    };
    for sql in statements {
        sqlx::query(sql).execute(&db).await.unwrap();
    }
    let rec = t.store.recorder();
    let runs = ["good-1", "bad", "good-2"];
    let all: Vec<Vec<Event>> = runs
        .iter()
        .map(|r| {
            events(
                r,
                vec![
                    started("t", ""),
                    response(1, 10, 1),
                    finished(Outcome::Completed, 1, "a"),
                ],
            )
        })
        .collect();
    // Interleaved, so they share one batch.
    for i in 0..3 {
        for run in &all {
            rec.record(run[i].clone());
        }
    }
    t.store.flush().await;
    for good in ["good-1", "good-2"] {
        assert_gapless(&t.store, good, 3).await;
        assert_eq!(
            t.store.run(good).await.unwrap().unwrap().outcome,
            "completed"
        );
    }
    assert!(t.store.events_after("bad", 0, 0).await.unwrap().is_empty());
    assert_eq!(t.store.dropped_events(), 3);
    assert!(!t.store.events_complete());
    let err = t.store.error().expect("the refusal is reported");
    assert!(err.starts_with("3 events were not stored"), "{err}");
    assert!(
        err.contains("run bad") && err.contains("refused by a test trigger"),
        "{err}"
    );
    if let Backend::Sqlite = b {
        // The refused write left no transaction open: another writer gets the lock at once.
        let mut conn = db.acquire().await.unwrap();
        sqlx::query("PRAGMA busy_timeout = 0")
            .execute(&mut *conn)
            .await
            .unwrap();
        sqlx::query("BEGIN IMMEDIATE")
            .execute(&mut *conn)
            .await
            .expect("the store's writer holds no lock after a refused batch");
        sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
    }
}
both_backends!(a_refused_run_does_not_take_other_runs_events_with_it);

async fn events_recorded_twice_are_stored_once_and_counted_once(b: Backend) {
    let t = open(b).await;
    let rec = t.store.recorder();
    let run = events(
        "twice",
        vec![
            started("t", ""),
            response(1, 100, 20),
            tool_call(1),
            response(2, 50, 5),
        ],
    );
    for _ in 0..2 {
        for e in &run {
            rec.record(e.clone());
        }
        t.store.flush().await;
    }
    assert_gapless(&t.store, "twice", 4).await;
    let row = t.store.run("twice").await.unwrap().unwrap();
    assert_eq!((row.iterations, row.tool_calls), (2, 1));
    assert_eq!((row.prompt_tokens, row.completion_tokens), (150, 25));
    assert_eq!(t.store.error(), None);
}
both_backends!(events_recorded_twice_are_stored_once_and_counted_once);

async fn a_task_holding_a_nul_byte_is_stored(b: Backend) {
    let t = open(b).await;
    record_run(&t.store, "nul", "before\0after", Outcome::Completed).await;
    assert_eq!(t.store.error(), None);
    let row = t.store.run("nul").await.unwrap().unwrap();
    assert_eq!(row.task, "before\u{fffd}after");
    assert_gapless(&t.store, "nul", 3).await;
}
both_backends!(a_task_holding_a_nul_byte_is_stored);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_that_never_comes_back_keeps_the_events_safe_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal");
    let (pg, location, _options, store) = own_postgres(dir.path(), 16_384).await;
    drop(pg);
    record_run(&store, "lost-db", "t", Outcome::Completed).await;
    let err = store.error().expect("reported");
    assert!(err.contains(&location.to_string()), "{err}");
    assert!(
        err.contains(&journal.display().to_string()),
        "names the journal: {err}"
    );
    assert_eq!(store.dropped_events(), 0);
    assert_eq!(store.waiting_events(), 3);
    let lines: usize = segments(&journal)
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap().lines().count())
        .sum();
    assert_eq!(lines, 3);
}
