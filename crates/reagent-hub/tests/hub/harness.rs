//! Waiting for conditions, and hubs running in the test.

use std::future::Future;
use std::time::{Duration, Instant};

use reagent_hub::machine::{self, HubState};
use reagent_hub::{Hub, HubConfig};
use reagent_protocol::CancellationToken;
use reagent_store::Store;
use sqlx::AnyPool;

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

/// A hub ticking every 50 ms with a 2 s lease, checking endpoints every 100 ms.
pub(crate) fn fast_config() -> HubConfig {
    HubConfig {
        tick: Duration::from_millis(50),
        lease: Duration::from_secs(2),
        check_every: Duration::from_millis(100),
        ..HubConfig::default()
    }
}

/// A running hub, stopped (lease released) on drop.
pub(crate) struct Running(CancellationToken);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Run a hub over `store` in the background (its log, as `RUST_LOG` says, in the test's output).
pub(crate) fn start(store: &Store, config: HubConfig) -> Running {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let token = CancellationToken::new();
    tokio::spawn(Hub::new(store, config).run(token.clone()));
    Running(token)
}

/// The recorded transitions of hub group `hub`, as (from, to), oldest first.
pub(crate) async fn transitions(pool: &AnyPool) -> Vec<(HubState, HubState)> {
    machine::history(pool, "hub", 1000)
        .await
        .unwrap()
        .iter()
        .map(|t| (t.from, t.to))
        .collect()
}
