//! Test stores on both backends, and workers to claim with.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used
)]

use std::sync::Arc;

use reagent_hub::queue::{Queue, QueueConfig, WorkerInfo};
use reagent_store::{Location, Store};
use reagent_testkit::PostgresCluster;

/// Which database a test body runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A fresh queue in its own store, with what keeps it alive.
pub struct TestQueue {
    pub queue: Queue,
    pub store: Store,
    pub location: Location,
    pub dir: tempfile::TempDir,
    pub pg: Option<Arc<PostgresCluster>>,
}

/// A fresh empty location of `backend`.
pub fn fresh_location(
    backend: Backend,
) -> (Location, tempfile::TempDir, Option<Arc<PostgresCluster>>) {
    let dir = tempfile::tempdir().unwrap();
    match backend {
        Backend::Sqlite => (Location::Sqlite(dir.path().join("hub.db")), dir, None),
        Backend::Postgres => {
            let pg = PostgresCluster::shared()
                .unwrap_or_else(|e| panic!("cannot start PostgreSQL for the hub tests: {e}"));
            let url = pg.new_database().unwrap();
            (Location::Postgres(url), dir, Some(pg))
        }
    }
}

/// A queue with fast backoff (100 ms, doubling) for tests that wait for it.
pub async fn open(backend: Backend) -> TestQueue {
    open_with(
        backend,
        QueueConfig {
            backoff_base: std::time::Duration::from_millis(100),
            backoff_max: std::time::Duration::from_secs(5),
        },
    )
    .await
}

pub async fn open_with(backend: Backend, config: QueueConfig) -> TestQueue {
    let (location, dir, pg) = fresh_location(backend);
    let store = Store::open(&location).await.unwrap();
    TestQueue {
        queue: Queue::with_config(&store, config),
        store,
        location,
        dir,
        pg,
    }
}

/// A worker with these tags and models.
pub fn worker(name: &str, tags: &[&str], models: &[&str]) -> WorkerInfo {
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
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::support::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name($crate::support::Backend::Postgres).await;
                }
            )*
        }
    };
}
