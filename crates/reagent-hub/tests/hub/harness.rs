//! Test stores on both backends, and waiting for conditions.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) _pg: Option<Arc<PostgresCluster>>,
}

pub(crate) async fn open(backend: Backend) -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let (location, pg) = match backend {
        Backend::Sqlite => (Location::Sqlite(dir.path().join("hub.db")), None),
        Backend::Postgres => {
            let pg = PostgresCluster::shared()
                .unwrap_or_else(|e| panic!("cannot start PostgreSQL for the hub tests: {e}"));
            (Location::Postgres(pg.new_database().unwrap()), Some(pg))
        }
    };
    let store = Store::open(&location).await.unwrap();
    TestStore {
        store,
        _dir: dir,
        _pg: pg,
    }
}

/// Poll `check` until it returns `Some`, or fail after `limit` saying what was awaited.
pub(crate) async fn wait_for<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

macro_rules! both_backends {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::harness::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::harness::Backend::Postgres).await;
            }
        }
    };
}
pub(crate) use both_backends;
