//! Healing with real servers: a scripted Ollama endpoint stopped is marked down after three
//! failed checks in a row and up again when it is back; a managed server is restarted within
//! its cooldown and attempt cap; the watchdog forces a state held too long back to resting.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_hub::actions::{self, ActionPolicy};
use reagent_hub::endpoints::{list_endpoints, EndpointRecord};
use reagent_hub::machine::{self, HubState};
use reagent_hub::{HubConfig, ManagedServer, Watchdog};
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedServer, Wire};
use sqlx::AnyPool;

use crate::harness::{fast_config, start, transitions, wait_for};
use crate::support::{open, Backend};

const LIMIT: Duration = Duration::from_secs(20);

fn script() -> ScriptBuilder {
    ScriptBuilder::new().model(ModelSpec::new("qwen3:8b"))
}

async fn endpoint(pool: &AnyPool, url: &str) -> Option<EndpointRecord> {
    list_endpoints(pool)
        .await
        .unwrap()
        .into_iter()
        .find(|e| e.url == url)
}

async fn action_kinds(pool: &AnyPool) -> Vec<(String, String)> {
    actions::recent(pool, "hub", 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.kind, a.outcome))
        .collect()
}

async fn an_endpoint_goes_down_after_three_failures_and_comes_back(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let server = ScriptedServer::start(Wire::Ollama, script()).await.unwrap();
    let url = server.base_url();
    let config = HubConfig {
        endpoints: vec![url.clone()],
        check_every: Duration::from_millis(250),
        ..fast_config()
    };
    let _hub = start(&t.store, config);
    let up = wait_for("the endpoint's first check", LIMIT, || async {
        endpoint(&pool, &url)
            .await
            .filter(|e| e.last_check_ms.is_some())
    })
    .await;
    assert!(up.healthy);
    assert_eq!(up.models, ["qwen3:8b"]);

    server.stop().await;
    let seen = Mutex::new(Vec::new());
    let down = wait_for("the endpoint marked down", LIMIT, || async {
        let e = endpoint(&pool, &url).await.unwrap();
        seen.lock()
            .unwrap()
            .push((e.healthy, e.consecutive_failures));
        (!e.healthy).then_some(e)
    })
    .await;
    let seen = seen.into_inner().unwrap();
    assert!(down.consecutive_failures >= 3, "{down:?}");
    assert!(
        down.last_error.as_deref().unwrap().contains("/api/tags"),
        "{down:?}"
    );
    for (healthy, failures) in &seen {
        assert_eq!(*healthy, *failures < 3, "seen {seen:?}");
    }
    assert!(
        seen.iter().any(|(_, f)| (1..3).contains(f)),
        "the failures before the third should leave it up: {seen:?}"
    );
    assert!(action_kinds(&pool)
        .await
        .contains(&("endpoint_down".into(), "done".into())));

    let _back = ScriptedServer::start_at(Wire::Ollama, script(), server.addr())
        .await
        .unwrap();
    let up = wait_for("the endpoint marked up", LIMIT, || async {
        endpoint(&pool, &url).await.filter(|e| e.healthy)
    })
    .await;
    assert_eq!(up.consecutive_failures, 0);
    wait_for("endpoint_up recorded", LIMIT, || async {
        action_kinds(&pool)
            .await
            .contains(&("endpoint_up".into(), "done".into()))
            .then_some(())
    })
    .await;
}

/// A model server the hub manages: restarting starts a scripted server at the same address
/// (or fails, when told to).
struct Managed {
    addr: SocketAddr,
    server: Mutex<Option<ScriptedServer>>,
    restarts: AtomicU32,
    fails: bool,
    /// How long a restart takes.
    slow: Duration,
}

#[async_trait::async_trait]
impl ManagedServer for Managed {
    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    async fn restart(&self) -> Result<(), String> {
        self.restarts.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.slow).await;
        if self.fails {
            return Err("the model file is missing".into());
        }
        let server = ScriptedServer::start_at(Wire::Ollama, script(), self.addr)
            .await
            .map_err(|e| e.to_string())?;
        *self.server.lock().unwrap() = Some(server);
        Ok(())
    }
}

async fn managed(fails: bool, slow: Duration) -> Arc<Managed> {
    let server = ScriptedServer::start(Wire::Ollama, script()).await.unwrap();
    Arc::new(Managed {
        addr: server.addr(),
        server: Mutex::new(Some(server)),
        restarts: AtomicU32::new(0),
        fails,
        slow,
    })
}

async fn stop(m: &Managed) {
    let server = m.server.lock().unwrap().take();
    server.unwrap().stop().await;
}

async fn a_managed_server_that_is_down_is_restarted(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let m = managed(false, Duration::ZERO).await;
    let url = m.url();
    let _hub = start(
        &t.store,
        HubConfig {
            managed: Some(m.clone()),
            ..fast_config()
        },
    );
    wait_for("the managed server checked", LIMIT, || async {
        endpoint(&pool, &url)
            .await
            .filter(|e| e.last_check_ms.is_some())
    })
    .await;
    stop(&m).await;
    wait_for("the restart", LIMIT, || async {
        (m.restarts.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let up = wait_for("the restarted server marked up", LIMIT, || async {
        endpoint(&pool, &url).await.filter(|e| e.healthy)
    })
    .await;
    assert_eq!(up.models, ["qwen3:8b"]);
    wait_for("healing left for resting", LIMIT, || async {
        let steps = transitions(&pool).await;
        (steps.contains(&(HubState::Resting, HubState::Healing))
            && steps.contains(&(HubState::Healing, HubState::Resting)))
        .then_some(())
    })
    .await;
    let kinds = action_kinds(&pool).await;
    for kind in ["endpoint_down", "restart_server", "endpoint_up"] {
        assert!(kinds.contains(&(kind.into(), "done".into())), "{kinds:?}");
    }
    assert_eq!(
        m.restarts.load(Ordering::SeqCst),
        1,
        "one restart was enough"
    );
}

async fn restarts_keep_their_cooldown_and_cap(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let m = managed(true, Duration::ZERO).await;
    let _hub = start(
        &t.store,
        HubConfig {
            managed: Some(m.clone()),
            healing: ActionPolicy {
                cooldown: Duration::from_millis(300),
                max_per_hour: 3,
            },
            ..fast_config()
        },
    );
    stop(&m).await;
    wait_for("three restart attempts", LIMIT, || async {
        (m.restarts.load(Ordering::SeqCst) >= 3).then_some(())
    })
    .await;
    // Well past the cooldown: the cap holds.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(m.restarts.load(Ordering::SeqCst), 3);
    let attempts = actions::recent(&pool, "hub", 1000).await.unwrap();
    let restarts: Vec<_> = attempts
        .iter()
        .filter(|a| a.kind == "restart_server")
        .collect();
    assert_eq!(restarts.len(), 3);
    assert!(
        restarts
            .iter()
            .all(|a| a.outcome == "failed"
                && a.detail.as_deref() == Some("the model file is missing"))
    );
    for pair in restarts.windows(2) {
        assert!(
            pair[1].at_ms - pair[0].at_ms >= 300,
            "cooldown kept: {pair:?}"
        );
    }
    // With nothing left to try, the hub leaves healing.
    wait_for("resting again", LIMIT, || async {
        let s = machine::load_state(&pool, "hub").await.unwrap().unwrap();
        (s.state == HubState::Resting).then_some(())
    })
    .await;
}

async fn the_watchdog_forces_a_state_held_too_long_back_to_resting(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    // A restart that takes longer than healing may last.
    let m = managed(true, Duration::from_millis(800)).await;
    let _hub = start(
        &t.store,
        HubConfig {
            managed: Some(m.clone()),
            healing: ActionPolicy {
                cooldown: Duration::ZERO,
                max_per_hour: 1000,
            },
            watchdog: Watchdog {
                healing: Duration::from_millis(400),
                ..Watchdog::default()
            },
            ..fast_config()
        },
    );
    stop(&m).await;
    let fired = wait_for("the watchdog", LIMIT, || async {
        actions::recent(&pool, "hub", 1000)
            .await
            .unwrap()
            .into_iter()
            .find(|a| a.kind == "watchdog")
    })
    .await;
    assert_eq!(fired.target, "healing");
    let history = machine::history(&pool, "hub", 100).await.unwrap();
    let forced = history
        .iter()
        .find(|t| t.reason.starts_with("watchdog"))
        .expect("the forced transition is recorded");
    assert_eq!(
        (forced.from, forced.to),
        (HubState::Healing, HubState::Resting)
    );
}

crate::both_backends!(
    an_endpoint_goes_down_after_three_failures_and_comes_back,
    a_managed_server_that_is_down_is_restarted,
    restarts_keep_their_cooldown_and_cap,
    the_watchdog_forces_a_state_held_too_long_back_to_resting,
);
