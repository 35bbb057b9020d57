//! An endpoint pool: several base URLs serving one model, itself a [`Provider`].
//!
//! - **Routing**: each call goes to the least-loaded endpoint that is up (fewest calls in
//!   flight; ties are spread round-robin). When none is up, down endpoints are tried anyway.
//! - **Failover**: a call that fails on one endpoint because of it (connection error, timeout,
//!   429/5xx, a reply that broke off, a missing model) continues on the next one; a failure of
//!   the request itself (another 4xx, bad configuration) or a cancellation is returned at once.
//!   When every endpoint has failed, the whole round is retried after a backoff (the pool's
//!   [`RetryPolicy`]). Each failover and retry is reported as [`ChatSignal::Retry`]. Streamed
//!   text from an attempt that failed has already reached the sink; the next attempt streams
//!   its own.
//! - **Health**: an endpoint is marked down after `down_after` (3) consecutive failures, from
//!   calls or health checks. A background task (started when the pool is created inside a tokio
//!   runtime, stopped when the pool is dropped) checks up endpoints every `health_interval`
//!   (30 s) and down endpoints with a backoff from `probe_base` doubling up to `health_interval`;
//!   a successful check or call marks an endpoint up again.
//! - **State**: [`EndpointPool::states`], and [`ChatSignal::Pool`] at the first call and whenever an endpoint goes up
//!   or down (sent during the call that saw it, or at the start of the next call).
//!
//! Members are built without retries of their own (the pool does them), see
//! [`crate::build_provider`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, ChatSignal, ModelInfo, PoolEndpointState,
    Provider, ProviderError, SignalSink,
};

use crate::retry::{cancellable, RetryPolicy};

/// A backend that can be a pool member: a [`Provider`] with a base URL and a health check.
#[async_trait]
pub trait PoolMember: Provider {
    /// The endpoint's base URL (used in pool state).
    fn endpoint_url(&self) -> &str;

    /// A cheap liveness check (Ollama `/api/tags`, OpenAI `/models`...).
    async fn check_health(&self) -> Result<(), ProviderError>;
}

/// Pool settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolConfig {
    /// How often up endpoints are checked.
    pub health_interval: Duration,
    /// Consecutive failures after which an endpoint is down.
    pub down_after: u32,
    /// First re-check delay of a down endpoint (doubles up to `health_interval`).
    pub probe_base: Duration,
    /// Timeout of one health check.
    pub health_timeout: Duration,
    /// Retry rounds over all endpoints.
    pub retry: RetryPolicy,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            health_interval: Duration::from_secs(30),
            down_after: 3,
            probe_base: Duration::from_secs(1),
            health_timeout: Duration::from_secs(5),
            retry: RetryPolicy::default(),
        }
    }
}

#[derive(Debug, Clone)]
struct Slot {
    up: bool,
    in_flight: u32,
    failures: u32,
    next_probe: Instant,
}

struct Shared {
    members: Vec<Arc<dyn PoolMember>>,
    slots: Mutex<Vec<Slot>>,
    cfg: PoolConfig,
    /// Bumped whenever an endpoint goes up or down.
    version: AtomicU64,
}

/// Several endpoints serving one model, used as one [`Provider`].
pub struct EndpointPool {
    shared: Arc<Shared>,
    name: String,
    round_robin: AtomicUsize,
    reported: AtomicU64,
    health_task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for EndpointPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointPool")
            .field("states", &self.states())
            .finish()
    }
}

/// `now + d`, saturating far in the future instead of overflowing.
fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 24 * 3600)))
        .unwrap_or(now)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `e` is the endpoint's fault, so another endpoint may do better.
fn fails_over(e: &ProviderError) -> bool {
    match e {
        ProviderError::Unreachable { .. }
        | ProviderError::Timeout { .. }
        | ProviderError::Protocol { .. }
        | ProviderError::Incomplete { .. }
        | ProviderError::ModelNotFound { .. } => true,
        ProviderError::Http { status, .. } => *status == 429 || *status >= 500,
        ProviderError::Cancelled
        | ProviderError::Config(_)
        | ProviderError::ReplyTooLarge { .. } => false,
        // ProviderError is non_exhaustive: unknown kinds are not retried.
        _ => false,
    }
}

impl Shared {
    fn states(&self) -> Vec<PoolEndpointState> {
        let slots = lock(&self.slots);
        self.members
            .iter()
            .zip(slots.iter())
            .map(|(m, s)| PoolEndpointState {
                url: m.endpoint_url().to_owned(),
                up: s.up,
                in_flight: s.in_flight,
                failures: s.failures,
            })
            .collect()
    }

    fn record(&self, i: usize, ok: bool) {
        let mut slots = lock(&self.slots);
        let Some(s) = slots.get_mut(i) else { return };
        let was_up = s.up;
        let now = Instant::now();
        if ok {
            s.failures = 0;
            s.up = true;
            s.next_probe = later(now, self.cfg.health_interval);
        } else {
            s.failures = s.failures.saturating_add(1);
            if s.failures >= self.cfg.down_after {
                s.up = false;
            }
            let wait = if s.up {
                self.cfg.health_interval
            } else {
                let k = s.failures.saturating_sub(self.cfg.down_after).min(16);
                self.cfg
                    .probe_base
                    .saturating_mul(1 << k)
                    .min(self.cfg.health_interval)
            };
            s.next_probe = later(now, wait);
        }
        if s.up != was_up {
            self.version.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Checks every endpoint whose probe is due; returns the next due time.
    async fn probe_due(&self) -> Instant {
        let now = Instant::now();
        let due: Vec<usize> = lock(&self.slots)
            .iter()
            .enumerate()
            .filter(|(_, s)| s.next_probe <= now)
            .map(|(i, _)| i)
            .collect();
        for i in due {
            let Some(m) = self.members.get(i) else {
                continue;
            };
            let ok = matches!(
                tokio::time::timeout(self.cfg.health_timeout, m.check_health()).await,
                Ok(Ok(()))
            );
            self.record(i, ok);
        }
        lock(&self.slots)
            .iter()
            .map(|s| s.next_probe)
            .min()
            .unwrap_or_else(|| later(now, self.cfg.health_interval))
    }
}

async fn health_loop(shared: Weak<Shared>) {
    loop {
        let Some(s) = shared.upgrade() else { return };
        let next = s.probe_due().await;
        drop(s);
        // Never spin, whatever the configured intervals.
        let next = next.max(later(Instant::now(), Duration::from_millis(10)));
        tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
    }
}

/// Decrements an endpoint's in-flight count when the attempt ends or is dropped.
struct InFlight<'a> {
    shared: &'a Shared,
    index: usize,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.shared.slots).get_mut(self.index) {
            s.in_flight = s.in_flight.saturating_sub(1);
        }
    }
}

impl EndpointPool {
    /// A pool of `members`; errors when there are none. Starts the health-check task when
    /// called inside a tokio runtime (otherwise endpoints are judged by calls alone).
    pub fn new(members: Vec<Arc<dyn PoolMember>>, cfg: PoolConfig) -> Result<Self, ProviderError> {
        let Some(first) = members.first() else {
            return Err(ProviderError::Config(
                "an endpoint pool needs at least one base URL".to_owned(),
            ));
        };
        let name = first.name().to_owned();
        let now = Instant::now();
        let slots = members
            .iter()
            .map(|_| Slot {
                up: true,
                in_flight: 0,
                failures: 0,
                next_probe: later(now, cfg.health_interval),
            })
            .collect();
        let shared = Arc::new(Shared {
            members,
            slots: Mutex::new(slots),
            cfg,
            version: AtomicU64::new(0),
        });
        let health_task = tokio::runtime::Handle::try_current()
            .ok()
            .map(|h| h.spawn(health_loop(Arc::downgrade(&shared))));
        Ok(EndpointPool {
            shared,
            name,
            round_robin: AtomicUsize::new(0),
            // Differs from every version, so the first call reports the initial state.
            reported: AtomicU64::new(u64::MAX),
            health_task,
        })
    }

    /// The state of every endpoint.
    pub fn states(&self) -> Vec<PoolEndpointState> {
        self.shared.states()
    }

    /// Runs a health check of every endpoint now.
    pub async fn check_now(&self) {
        for (i, m) in self.shared.members.iter().enumerate() {
            let ok = matches!(
                tokio::time::timeout(self.shared.cfg.health_timeout, m.check_health()).await,
                Ok(Ok(()))
            );
            self.shared.record(i, ok);
        }
    }

    /// Sends the pool state when it changed since the last report.
    fn report(&self, sink: SignalSink<'_>) {
        let v = self.shared.version.load(Ordering::SeqCst);
        if self.reported.swap(v, Ordering::SeqCst) != v {
            sink(ChatSignal::Pool(self.states()));
        }
    }

    /// The least-loaded endpoint not in `tried`, preferring up ones; marks it in flight.
    fn pick(&self, tried: &[bool]) -> Option<InFlight<'_>> {
        let mut slots = lock(&self.shared.slots);
        let n = slots.len();
        let start = self.round_robin.fetch_add(1, Ordering::Relaxed) % n.max(1);
        let mut best: Option<(usize, (bool, u32, u32))> = None;
        for k in 0..n {
            let i = (start + k) % n;
            if tried.get(i).copied().unwrap_or(true) {
                continue;
            }
            let Some(s) = slots.get(i) else { continue };
            // Lower is better: up first, then fewer in flight, then fewer failures.
            let key = (!s.up, s.in_flight, s.failures);
            if best.is_none_or(|(_, b)| key < b) {
                best = Some((i, key));
            }
        }
        let (index, _) = best?;
        if let Some(s) = slots.get_mut(index) {
            s.in_flight += 1;
        }
        Some(InFlight {
            shared: &self.shared,
            index,
        })
    }
}

impl Drop for EndpointPool {
    fn drop(&mut self) {
        if let Some(t) = self.health_task.take() {
            t.abort();
        }
    }
}

#[async_trait]
impl Provider for EndpointPool {
    fn name(&self) -> &str {
        &self.name
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        let mut tried = vec![false; self.shared.members.len()];
        let mut last = None;
        while let Some(guard) = self.pick(&tried) {
            let i = guard.index;
            tried[i] = true;
            let Some(m) = self.shared.members.get(i) else {
                break;
            };
            match m.model_info(model).await {
                Ok(info) => return Ok(info),
                Err(e) if fails_over(&e) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| ProviderError::Config("the pool has no endpoints".into())))
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        self.report(sink);
        let n = self.shared.members.len();
        let mut attempt = 0u32;
        let mut round = 0u32;
        loop {
            let mut tried = vec![false; n];
            let mut last: Option<ProviderError> = None;
            while let Some(guard) = self.pick(&tried) {
                let i = guard.index;
                tried[i] = true;
                attempt += 1;
                let Some(member) = self.shared.members.get(i) else {
                    break;
                };
                let result = cancellable(cancel, member.chat(request, sink, cancel)).await;
                drop(guard);
                match result {
                    Ok(r) => {
                        self.shared.record(i, true);
                        self.report(sink);
                        return Ok(r);
                    }
                    Err(e) if fails_over(&e) => {
                        if !matches!(e, ProviderError::ModelNotFound { .. }) {
                            self.shared.record(i, false);
                        }
                        self.report(sink);
                        tracing::debug!(endpoint = member.endpoint_url(), error = %e, "pool failover");
                        if tried.iter().any(|t| !t) {
                            sink(ChatSignal::Retry {
                                attempt,
                                delay: Duration::ZERO,
                                error: e.to_string(),
                            });
                        }
                        last = Some(e);
                    }
                    Err(e) => return Err(e),
                }
            }
            let Some(err) = last else {
                return Err(ProviderError::Config("the pool has no endpoints".into()));
            };
            round += 1;
            if !err.is_retryable() || round > self.shared.cfg.retry.max_retries {
                return Err(err);
            }
            let delay = self.shared.cfg.retry.delay(round, &err);
            sink(ChatSignal::Retry {
                attempt,
                delay,
                error: err.to_string(),
            });
            cancellable(cancel, async {
                tokio::time::sleep(delay).await;
                Ok(())
            })
            .await?;
        }
    }
}
