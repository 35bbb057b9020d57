//! Test stores on both backends, and workers to claim with.

use std::sync::Arc;
use std::time::Duration;

use reagent_hub::queue::{Queue, QueueConfig, WorkerInfo};
use reagent_store::{Location, Store};
use reagent_testkit::PostgresCluster;

/// Which database a test body runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh queue in its own store, with what keeps it alive.
pub(crate) struct TestQueue {
    pub(crate) queue: Queue,
    _dir: tempfile::TempDir,
    _pg: Option<Arc<PostgresCluster>>,
}

/// A queue in a fresh store of `backend`, with fast backoff (100 ms, doubling) for tests that
/// wait for it.
pub(crate) async fn open(backend: Backend) -> TestQueue {
    let dir = tempfile::tempdir().unwrap();
    let (location, pg) = match backend {
        Backend::Sqlite => (Location::Sqlite(dir.path().join("hub.db")), None),
        Backend::Postgres => {
            let pg = PostgresCluster::shared()
                .unwrap_or_else(|e| panic!("cannot start PostgreSQL for the hub tests: {e}"));
            let url = pg.new_database().unwrap();
            (Location::Postgres(url), Some(pg))
        }
    };
    let store = Store::open(&location).await.unwrap();
    let config = QueueConfig {
        backoff_base: Duration::from_millis(100),
        backoff_max: Duration::from_secs(5),
    };
    TestQueue {
        queue: Queue::with_config(&store, config),
        _dir: dir,
        _pg: pg,
    }
}

/// A worker with these tags and models.
pub(crate) fn worker(name: &str, tags: &[&str], models: &[&str]) -> WorkerInfo {
    WorkerInfo {
        id: format!("{name}-{}", uuid::Uuid::new_v4()),
        host: "test-host".into(),
        pid: std::process::id(),
        capacity: 1,
        tags: tags.iter().map(|s| s.to_string()).collect(),
        endpoint: None,
        models: models.iter().map(|s| s.to_string()).collect(),
    }
}

/// Run an async test body once per backend, as two tests.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(crate::suite::harness::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(crate::suite::harness::Backend::Postgres).await;
                }
            )*
        }
    };
}
