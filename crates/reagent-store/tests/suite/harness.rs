//! Test stores on both backends, and events to feed them.

use std::sync::Arc;

use reagent_protocol::{Event, EventKind, Outcome};
use reagent_store::{Location, Store};
use reagent_testkit::PostgresCluster;

/// Which database a test body runs against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh store, with what keeps it alive.
pub(crate) struct TestStore {
    pub(crate) store: Store,
    pub(crate) location: Location,
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) _pg: Option<Arc<PostgresCluster>>,
}

/// A fresh empty location of `backend` (its own SQLite file, or its own PostgreSQL database).
pub(crate) fn fresh_location(
    backend: Backend,
) -> (Location, tempfile::TempDir, Option<Arc<PostgresCluster>>) {
    let dir = tempfile::tempdir().unwrap();
    match backend {
        Backend::Sqlite => (
            Location::Sqlite(dir.path().join("sub/reagent.db")),
            dir,
            None,
        ),
        Backend::Postgres => {
            let pg = PostgresCluster::shared()
                .unwrap_or_else(|e| panic!("cannot start PostgreSQL for the store tests: {e}"));
            let url = pg.new_database().unwrap();
            (Location::Postgres(url), dir, Some(pg))
        }
    }
}

pub(crate) async fn open(backend: Backend) -> TestStore {
    let (location, dir, pg) = fresh_location(backend);
    let store = Store::open(&location).await.unwrap();
    TestStore {
        store,
        location,
        _dir: dir,
        _pg: pg,
    }
}

/// A raw connection to the test store's database, for arranging states the API cannot reach.
pub(crate) async fn raw(location: &Location) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let url = match location {
        Location::Sqlite(p) => format!("sqlite://{}", p.display()),
        Location::Postgres(u) => u.clone(),
    };
    sqlx::AnyPool::connect(&url).await.unwrap()
}

pub(crate) fn started(task: &str, session: &str) -> EventKind {
    EventKind::RunStarted {
        task: task.into(),
        model: "m1".into(),
        provider: "ollama".into(),
        tool_mode: "native".into(),
        workspace: "/ws".into(),
        num_ctx: 4096,
        tools: vec!["read_file".into()],
        session_id: session.into(),
        system_prompt: "sys".into(),
        follow_up: false,
    }
}

pub(crate) fn response(iteration: u32, prompt: u64, completion: u64) -> EventKind {
    EventKind::LlmResponse {
        iteration,
        latency_ms: 12,
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_prompt_tokens: None,
        parse_layer: None,
        finish_reason: "stop".into(),
        tool_calls: 0,
        endpoint: "http://127.0.0.1:1".into(),
    }
}

pub(crate) fn finished(outcome: Outcome, iterations: u32, answer: &str) -> EventKind {
    EventKind::RunFinished {
        outcome,
        iterations,
        tool_calls: 1,
        prompt_tokens: 100,
        completion_tokens: 20,
        wall_ms: 5,
        model_ms: 3,
        files_changed: vec![],
        error: None,
        error_kind: None,
        answer: answer.into(),
    }
}

/// Number the kinds as one run's events (seq from 1).
pub(crate) fn events(run: &str, kinds: Vec<EventKind>) -> Vec<Event> {
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| Event::new(run, i as u64 + 1, k))
        .collect()
}

/// Record a whole run: started, one response, finished with `outcome`.
pub(crate) async fn record_run(store: &Store, run: &str, task: &str, outcome: Outcome) {
    let rec = store.recorder();
    for e in events(
        run,
        vec![
            started(task, ""),
            response(1, 100, 20),
            finished(outcome, 1, "the answer"),
        ],
    ) {
        rec.record(e);
    }
    store.flush().await;
}

/// `body` against both backends: `name_sqlite` and `name_postgres`.
#[macro_export]
macro_rules! both_backends {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::suite::harness::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::suite::harness::Backend::Postgres).await;
            }
        }
    };
}
