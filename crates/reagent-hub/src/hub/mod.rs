//! The hub's loop: a lease keeper that wins, renews and releases the lease, and a tick that,
//! while this hub leads, checks health, observes the queue and goals, moves the state machine
//! (with a watchdog per state) and does the current state's work.

mod goal_flow;
mod healing;
mod route;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_protocol::CancellationToken;
use reagent_store::Store;
use sqlx::AnyPool;
use tokio::sync::watch;
use tokio::time::MissedTickBehavior;

use crate::actions::{self, ActionPolicy};
use crate::error::{HubError, Result};
use crate::leader::{Election, Fence};
use crate::machine::{self, next_state, HubState, Observation};
use crate::planner::Planner;
use crate::queue::Queue;
use crate::{clock, endpoints};

/// An embedded model server the hub manages (e.g. reagent-local's llama-server): watched like
/// any endpoint, and restarted when it is down.
#[async_trait::async_trait]
pub trait ManagedServer: Send + Sync {
    /// The base URL it serves.
    fn url(&self) -> String;
    /// Start it again (after stopping what is left of it).
    async fn restart(&self) -> Result<(), String>;
}

/// How long each state may be held before the watchdog forces the hub back to `resting`
/// (measured on the database's clock, like leases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    /// Longest `executing` (one pass through the queue; re-entered at the next tick if work
    /// remains).
    pub executing: Duration,
    /// Longest `improving`.
    pub improving: Duration,
    /// Longest `contemplating`.
    pub contemplating: Duration,
    /// Longest `healing`.
    pub healing: Duration,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog {
            executing: Duration::from_secs(3600),
            improving: Duration::from_secs(900),
            contemplating: Duration::from_secs(900),
            healing: Duration::from_secs(300),
        }
    }
}

impl Watchdog {
    /// The limit of `state` (`resting` has none).
    pub fn limit(&self, state: HubState) -> Option<Duration> {
        match state {
            HubState::Resting => None,
            HubState::Executing => Some(self.executing),
            HubState::Improving => Some(self.improving),
            HubState::Contemplating => Some(self.contemplating),
            HubState::Healing => Some(self.healing),
        }
    }
}

/// How a hub runs.
#[derive(Clone)]
pub struct HubConfig {
    /// The hub group: hubs with the same name elect one leader among them.
    pub name: String,
    /// How often the hub ticks.
    pub tick: Duration,
    /// How long a lease lasts unless renewed (a standby takes over after it).
    pub lease: Duration,
    /// Model servers to watch besides the workers' own.
    pub endpoints: Vec<String>,
    /// How often endpoints are probed.
    pub check_every: Duration,
    /// Failed probes in a row before an endpoint is marked down.
    pub failure_threshold: u32,
    /// The model that decomposes and verifies goals (`None`: goals wait).
    pub planner: Option<Planner>,
    /// The hub's own model calls allowed per state and per hour.
    pub calls_per_hour: u32,
    /// Corrective rounds a goal gets after failing its verification.
    pub max_rounds: u32,
    /// Per-state time limits.
    pub watchdog: Watchdog,
    /// A worker silent this long is taken for dead (its tasks are routed elsewhere).
    pub worker_timeout: Duration,
    /// Cooldown and attempt cap of healing acts, per target.
    pub healing: ActionPolicy,
    /// A model server the hub restarts when it is down.
    pub managed: Option<Arc<dyn ManagedServer>>,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            name: "hub".to_owned(),
            tick: Duration::from_secs(1),
            lease: Duration::from_secs(15),
            endpoints: Vec::new(),
            check_every: Duration::from_secs(5),
            failure_threshold: 3,
            planner: None,
            calls_per_hour: 60,
            max_rounds: 1,
            watchdog: Watchdog::default(),
            worker_timeout: Duration::from_secs(30),
            healing: ActionPolicy::default(),
            managed: None,
        }
    }
}

/// A hub: run it with [`Hub::run`]; any number may run against one store, one leads.
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    queue: Queue,
    pool: AnyPool,
    config: HubConfig,
    election: Election,
    http: reqwest::Client,
    last_check: Mutex<Option<Instant>>,
}

impl Hub {
    /// A hub over `store` with a fresh id.
    pub fn new(store: &Store, config: HubConfig) -> Hub {
        let id = format!(
            "{}-{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let election = Election::new(store, &config.name, &id, config.lease);
        Hub {
            inner: Arc::new(Inner {
                store: store.clone(),
                queue: Queue::new(store),
                pool: store.pool().clone(),
                config,
                election,
                http: reqwest::Client::new(),
                last_check: Mutex::new(None),
            }),
        }
    }

    /// This hub's id (the lease holder it writes).
    pub fn id(&self) -> &str {
        self.inner.election.holder()
    }

    fn pool(&self) -> &AnyPool {
        &self.inner.pool
    }

    fn config(&self) -> &HubConfig {
        &self.inner.config
    }

    fn queue(&self) -> &Queue {
        &self.inner.queue
    }

    /// Run until `shutdown` fires: stand by until elected, then tick; give the lease up on the
    /// way out. Errors of single ticks are logged, not returned. Ticks run one after another
    /// (a tick waiting on the hub's model delays the next); the lease is kept by a task of its
    /// own meanwhile.
    pub async fn run(self, shutdown: CancellationToken) -> Result<()> {
        let (lease_tx, lease_rx) = watch::channel::<Option<Fence>>(None);
        let keeper = tokio::spawn(keep_lease(
            self.inner.election.clone(),
            self.config().lease,
            lease_tx,
            shutdown.clone(),
        ));
        let mut ticker = tokio::time::interval(self.config().tick);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut led_epoch = None;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = ticker.tick() => {}
            }
            let fence = lease_rx.borrow().clone();
            let Some(fence) = fence else {
                led_epoch = None;
                continue;
            };
            let work = async {
                match led_epoch {
                    Some(epoch) if epoch == fence.epoch => self.tick(&fence).await,
                    _ => self.take_office(&fence).await,
                }
            };
            // A tick waiting on the model is abandoned at shutdown: its open transaction rolls
            // back, and a dispatch cut short (all of it one transaction) is redone by the next
            // leader.
            let result = tokio::select! {
                _ = shutdown.cancelled() => break,
                result = work => result,
            };
            match result {
                Ok(()) => led_epoch = Some(fence.epoch),
                Err(e @ HubError::Deposed { .. }) => tracing::info!("hub {}: {e}", self.id()),
                Err(e) => tracing::warn!("hub {}: tick failed: {e}", self.id()),
            }
        }
        keeper
            .await
            .map_err(|e| HubError::Invalid(format!("the lease keeper failed: {e}")))
    }

    /// First writes of a new leader: the state row, the configured endpoints, a record.
    async fn take_office(&self, fence: &Fence) -> Result<()> {
        tracing::info!("hub {} leads at epoch {}", self.id(), fence.epoch);
        let state = machine::ensure_state(self.pool(), fence).await?;
        let mut urls = self.config().endpoints.clone();
        urls.extend(self.config().managed.as_ref().map(|m| m.url()));
        for url in &urls {
            endpoints::watch(self.pool(), fence, url).await?;
        }
        let detail = format!("epoch {}; state {}", fence.epoch, state.state);
        actions::record(
            self.pool(),
            fence,
            "elected",
            self.id(),
            "done",
            Some(&detail),
        )
        .await
    }

    /// One tick as leader.
    async fn tick(&self, fence: &Fence) -> Result<()> {
        let Some(record) = machine::load_state(self.pool(), &fence.name).await? else {
            return self.take_office(fence).await;
        };
        if record.paused {
            return Ok(());
        }
        self.check_endpoints_when_due(fence).await?;
        let current = record.state;
        if let Some(limit) = self.config().watchdog.limit(current) {
            let now = clock::now_ms(self.pool()).await?;
            let held = Duration::from_millis(u64::try_from(now - record.since_ms).unwrap_or(0));
            if held > limit {
                let why = format!(
                    "watchdog: {current} held for {} s (limit {} s)",
                    held.as_secs(),
                    limit.as_secs()
                );
                tracing::warn!("hub {}: {why}", self.id());
                machine::transition(self.pool(), fence, current, HubState::Resting, &why).await?;
                let target = current.as_str();
                return actions::record(self.pool(), fence, "watchdog", target, "done", Some(&why))
                    .await;
            }
        }
        let seen = self.observe(fence).await?;
        let state = match next_state(current, &seen) {
            Some((to, why)) => {
                machine::transition(self.pool(), fence, current, to, why).await?;
                to
            }
            None => current,
        };
        match state {
            HubState::Resting => Ok(()),
            HubState::Executing => self.route_pending(fence).await,
            HubState::Healing => self.heal(fence).await,
            HubState::Contemplating => self.contemplate(fence).await,
            HubState::Improving => self.improve(fence).await,
        }
    }

    /// What the state machine needs to know (goals whose tasks all ended move to checking on
    /// the way).
    async fn observe(&self, fence: &Fence) -> Result<Observation> {
        self.notice_finished_goals(fence).await?;
        Ok(Observation {
            work: self.has_work().await?,
            health_due: self.health_due().await?,
            goals_waiting: self.goals_waiting(HubState::Contemplating).await?,
            corrections_waiting: self.goals_waiting(HubState::Improving).await?,
        })
    }
}

/// Win and keep the lease, publishing the fence held (or `None`); release it on shutdown.
/// A standby tries often (a tenth of the lease) so it takes over soon after the lease ends;
/// a leader renews every third of the lease.
async fn keep_lease(
    election: Election,
    lease: Duration,
    held_tx: watch::Sender<Option<Fence>>,
    shutdown: CancellationToken,
) {
    let renew_every = (lease / 3).max(Duration::from_millis(50));
    let try_every = (lease / 10).max(Duration::from_millis(50));
    let mut held: Option<Fence> = None;
    loop {
        held = match held.take() {
            Some(fence) => match election.renew(&fence).await {
                Ok(true) => Some(fence),
                Ok(false) => {
                    tracing::warn!(
                        "hub {}: lost the lease of epoch {}",
                        election.holder(),
                        fence.epoch
                    );
                    None
                }
                Err(e) => {
                    // Writes are fenced: once the lease has expired they are refused anyway.
                    tracing::warn!("hub {}: {e}", election.holder());
                    Some(fence)
                }
            },
            None => election.try_acquire().await.unwrap_or_else(|e| {
                tracing::warn!("hub {}: {e}", election.holder());
                None
            }),
        };
        held_tx.send_replace(held.clone());
        let wait = if held.is_some() {
            renew_every
        } else {
            try_every
        };
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
    }
    held_tx.send_replace(None);
    if let Some(fence) = held {
        if let Err(e) = election.release(&fence).await {
            tracing::warn!("hub {}: {e}", election.holder());
        }
    }
}
