//! Dead writers, foreign and corrupt databases, a database that goes away.

use reagent_protocol::Outcome;
use reagent_store::{Location, Store};

use super::harness::*;
use crate::both_backends;

async fn a_run_whose_writer_died_reads_and_is_marked_interrupted(b: Backend) {
    let t = open(b).await;
    let rec = t.store.recorder();
    for e in events("dead", vec![started("t", ""), response(1, 1, 1)]) {
        rec.record(e);
    }
    for e in events("silent", vec![started("t", "")]) {
        rec.record(e);
    }
    for e in events("alive", vec![started("t", "")]) {
        rec.record(e);
    }
    t.store.flush().await;
    // A reaped child's pid is a process that is gone.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = i64::from(child.id());
    child.wait().unwrap();
    let db = raw(&t.location).await;
    sqlx::query("UPDATE runs SET pid = $1 WHERE id = 'dead'")
        .bind(dead_pid)
        .execute(&db)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE runs SET host = 'elsewhere.invalid', last_event_at = 0 WHERE id = 'silent'",
    )
    .execute(&db)
    .await
    .unwrap();
    // Read before any writer reopens: the row still says running but reads interrupted.
    assert_eq!(
        t.store.run("dead").await.unwrap().unwrap().outcome,
        "interrupted"
    );
    assert_eq!(
        t.store.run("silent").await.unwrap().unwrap().outcome,
        "interrupted"
    );
    assert_eq!(
        t.store.run("alive").await.unwrap().unwrap().outcome,
        "running"
    );
    // Opening marks them for good.
    let _again = Store::open(&t.location).await.unwrap();
    let stored: Vec<(String, String)> = sqlx::query_as("SELECT id, outcome FROM runs ORDER BY id")
        .fetch_all(&db)
        .await
        .unwrap();
    assert_eq!(
        stored,
        vec![
            ("alive".into(), "running".into()),
            ("dead".into(), "interrupted".into()),
            ("silent".into(), "interrupted".into())
        ]
    );
    assert_eq!(t.store.events_after("dead", 0, 0).await.unwrap().len(), 2);
}
both_backends!(a_run_whose_writer_died_reads_and_is_marked_interrupted);

async fn a_foreign_database_is_refused_by_name(b: Backend) {
    let (location, _dir, _pg) = fresh_location(b);
    if let Location::Sqlite(p) = &location {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    let url = match &location {
        Location::Sqlite(p) => format!("sqlite://{}?mode=rwc", p.display()),
        Location::Postgres(u) => u.clone(),
    };
    sqlx::any::install_default_drivers();
    let db = sqlx::AnyPool::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT)")
        .execute(&db)
        .await
        .unwrap();
    let err = Store::open(&location)
        .await
        .err()
        .expect("a foreign database must be refused")
        .to_string();
    assert!(err.contains(&location.to_string()), "{err}");
    assert!(
        err.contains("not a reagent store") && err.contains("customers"),
        "{err}"
    );
    // And nothing was added to it.
    let n: i64 = sqlx::query_scalar(match b {
        Backend::Sqlite => "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        Backend::Postgres => {
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        }
    })
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!(n, 1);
}
both_backends!(a_foreign_database_is_refused_by_name);

#[tokio::test]
async fn a_file_of_random_bytes_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junk.db");
    let bytes: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &bytes).unwrap();
    let err = Store::open(&Location::Sqlite(path.clone()))
        .await
        .err()
        .expect("junk must be refused")
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("not a SQLite database") || err.contains("not a database"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file must be left as it was"
    );
}

#[tokio::test]
async fn an_unreachable_postgres_is_an_open_error_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let location = Location::Postgres(format!("postgres://u:secret@127.0.0.1:{port}/none"));
    let err = Store::open(&location)
        .await
        .err()
        .expect("nothing listens there")
        .to_string();
    assert!(
        err.contains(&format!("postgres://u:***@127.0.0.1:{port}/none")),
        "{err}"
    );
    assert!(!err.contains("secret"), "{err}");
}

#[test]
fn the_default_store_is_under_xdg_data_home() {
    // The only test that reads these variables.
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("XDG_DATA_HOME", dir.path());
    std::env::remove_var(reagent_store::STORE_ENV);
    assert_eq!(
        Location::resolve(None, None).unwrap(),
        Location::Sqlite(dir.path().join("reagent/reagent.db"))
    );
    assert_eq!(
        Location::resolve(None, Some("postgres://h/db")).unwrap(),
        Location::Postgres("postgres://h/db".into())
    );
    assert_eq!(
        Location::resolve(Some("/x.db"), Some("postgres://h/db")).unwrap(),
        Location::Sqlite("/x.db".into())
    );
}

async fn a_new_store_opened_by_several_writers_at_once(b: Backend) {
    let (location, _dir, _pg) = fresh_location(b);
    let opens: Vec<_> = (0..4)
        .map(|_| {
            let location = location.clone();
            tokio::spawn(async move { Store::open(&location).await.map(|_| ()) })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    let store = Store::open(&location).await.unwrap();
    record_run(&store, "after", "t", Outcome::Completed).await;
    assert_eq!(store.error(), None);
}
both_backends!(a_new_store_opened_by_several_writers_at_once);

/// Processes that start together (a hub, its workers, `reagent hub status`) open a new SQLite
/// store at the same moment: each waits for the others' locks instead of failing with
/// "database is locked". Separate pools stand for separate processes here.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_opens_of_a_new_sqlite_store_at_once_all_succeed() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(dir.path().join(format!("new-{round}.db")));
        let opens: Vec<_> = (0..12)
            .map(|_| {
                let location = location.clone();
                tokio::spawn(async move { Store::open(&location).await.map(drop) })
            })
            .collect();
        for open in opens {
            if let Err(e) = open.await.unwrap() {
                panic!("round {round}: {e}");
            }
        }
    }
}
