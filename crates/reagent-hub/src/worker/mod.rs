//! The worker: registers, claims up to its capacity, runs each task, renews each lease while
//! the task runs, and completes or fails with the lease. A task whose lease is lost (it
//! expired while the worker was frozen or cut off, or it was cancelled) is stopped, and
//! whatever it still reports is refused by the queue. On shutdown it stops claiming, lets its
//! tasks finish for a grace period, then stops them and gives them back.

mod cycles;
mod session;

use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::CancellationToken;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::queue::{Lease, Queue, QueueError, WorkerInfo, DEFAULT_HEARTBEAT, DEFAULT_LEASE};

pub use session::SessionRunner;

/// How one attempt of a task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Attempt {
    /// It succeeded with this result.
    Completed(serde_json::Value),
    /// It failed; `retryable` failures are attempted again (until `max_attempts`).
    Failed {
        /// What went wrong.
        error: String,
        /// Whether another attempt may succeed.
        retryable: bool,
    },
    /// It was stopped before it ended (the worker is shutting down, or its lease was lost).
    Stopped,
    /// The lease was found lost before the task started.
    LeaseLost,
}

impl Attempt {
    /// A failure.
    pub fn failed(error: impl Into<String>, retryable: bool) -> Attempt {
        Attempt::Failed {
            error: error.into(),
            retryable,
        }
    }
}

/// What a worker does with a claimed task.
#[async_trait::async_trait]
pub trait TaskRunner: Send + Sync + 'static {
    /// Run one attempt of `lease`'s task, stopping soon after `cancel` fires.
    async fn run(&self, lease: &Lease, queue: &Queue, cancel: CancellationToken) -> Attempt;
}

/// A worker's settings.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Tasks run at once.
    pub capacity: u32,
    /// Capabilities (a task's tags must all be among them).
    pub tags: Vec<String>,
    /// Models its endpoint serves (a task with a model must name one of them).
    pub models: Vec<String>,
    /// The model server it talks to.
    pub endpoint: Option<String>,
    /// Lease length (default 30 s).
    pub lease: Duration,
    /// How often leases are renewed (default 10 s).
    pub heartbeat: Duration,
    /// How often an idle worker looks for work without a notification.
    pub poll: Duration,
    /// Whether to listen for PostgreSQL notifications (ignored on SQLite).
    pub listen: bool,
    /// How often the worker reclaims expired leases and reports itself.
    pub maintenance: Duration,
    /// How long running tasks may still finish after shutdown is asked before they are stopped
    /// and given back.
    pub drain: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings {
            capacity: 1,
            tags: Vec::new(),
            models: Vec::new(),
            endpoint: None,
            lease: DEFAULT_LEASE,
            heartbeat: DEFAULT_HEARTBEAT,
            poll: Duration::from_secs(1),
            listen: true,
            maintenance: Duration::from_secs(2),
            drain: Duration::from_secs(30),
        }
    }
}

/// What a worker did, once it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerReport {
    /// Tasks it completed.
    pub completed: u64,
    /// Attempts that failed.
    pub failed: u64,
    /// Tasks it gave back when it stopped.
    pub released: u64,
    /// Results refused because the lease was lost meanwhile.
    pub refused: u64,
}

/// Pause between retries of a queue write that failed (the database restarting).
const RETRY_PAUSE: Duration = Duration::from_millis(500);
/// How long a finished attempt keeps trying to reach the queue at least.
const REPORT_PATIENCE: Duration = Duration::from_secs(60);

/// A worker identity for this process: a fresh id, this host and pid.
pub fn worker_info(settings: &WorkerSettings) -> WorkerInfo {
    WorkerInfo {
        id: uuid::Uuid::new_v4().to_string(),
        host: host_name(),
        pid: std::process::id(),
        capacity: settings.capacity.max(1),
        tags: settings.tags.clone(),
        endpoint: settings.endpoint.clone(),
        models: settings.models.clone(),
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Run a worker until `shutdown` fires, then drain. Errors only when it cannot register;
/// later database errors are logged and retried (the database may be restarting).
pub async fn run_worker(
    queue: &Queue,
    info: &WorkerInfo,
    settings: &WorkerSettings,
    runner: Arc<dyn TaskRunner>,
    shutdown: CancellationToken,
) -> Result<WorkerReport, QueueError> {
    queue.register_worker(info).await?;
    let capacity = usize::try_from(info.capacity.max(1)).unwrap_or(1);
    let stop_tasks = CancellationToken::new();
    let mut running: JoinSet<Outcome> = JoinSet::new();
    let mut report = WorkerReport::default();
    let mut wakeup = queue.wakeup(settings.poll, settings.listen);
    let mut next_maintenance = Instant::now();
    while !shutdown.is_cancelled() {
        if Instant::now() >= next_maintenance {
            maintain(queue, info, running.len()).await;
            next_maintenance = Instant::now() + settings.maintenance;
        }
        let mut claim_failed = false;
        while running.len() < capacity && !shutdown.is_cancelled() {
            match queue.claim(info, settings.lease).await {
                Ok(Some(lease)) => {
                    let job = Job {
                        queue: queue.clone(),
                        runner: runner.clone(),
                        settings: settings.clone(),
                        stop: stop_tasks.child_token(),
                    };
                    running.spawn(job.run(lease));
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("worker {}: claim failed: {e}", info.id);
                    claim_failed = true;
                    break;
                }
            }
        }
        let idle = running.len() < capacity;
        tokio::select! {
            () = shutdown.cancelled() => {}
            Some(done) = running.join_next() => tally(&mut report, done),
            () = wakeup.wait(), if idle && !claim_failed => {}
            () = tokio::time::sleep(RETRY_PAUSE), if claim_failed => {}
            () = tokio::time::sleep_until(next_maintenance) => {}
        }
    }
    drop(wakeup);
    // Drain: let the running tasks finish for a while, then stop them (they give their
    // leases back).
    let deadline = Instant::now() + settings.drain;
    while !running.is_empty() {
        tokio::select! {
            Some(done) = running.join_next() => tally(&mut report, done),
            () = tokio::time::sleep_until(deadline), if !stop_tasks.is_cancelled() => {
                tracing::info!("worker {}: stopping {} task(s)", info.id, running.len());
                stop_tasks.cancel();
            }
        }
    }
    if let Err(e) = queue.stop_worker(&info.id).await {
        tracing::warn!("worker {}: cannot record that it stopped: {e}", info.id);
    }
    Ok(report)
}

/// Reclaim expired leases (of any worker) and report this one.
async fn maintain(queue: &Queue, info: &WorkerInfo, in_flight: usize) {
    if let Err(e) = queue.reclaim_expired().await {
        tracing::warn!("worker {}: reclaiming expired leases failed: {e}", info.id);
    }
    let in_flight = u32::try_from(in_flight).unwrap_or(u32::MAX);
    if let Err(e) = queue.worker_heartbeat(&info.id, in_flight).await {
        tracing::warn!("worker {}: heartbeat failed: {e}", info.id);
    }
}

/// How a claimed task ended, as far as the queue is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completed,
    Failed,
    Released,
    Refused,
    /// The queue could not be told (the database stayed away); the lease will expire.
    Unreported,
}

fn tally(report: &mut WorkerReport, done: Result<Outcome, tokio::task::JoinError>) {
    match done {
        Ok(Outcome::Completed) => report.completed += 1,
        Ok(Outcome::Failed) => report.failed += 1,
        Ok(Outcome::Released) => report.released += 1,
        Ok(Outcome::Refused) => report.refused += 1,
        Ok(Outcome::Unreported) => {}
        Err(e) => tracing::error!("a task of the worker panicked: {e}"),
    }
}

/// One claimed task: run it while renewing its lease, then report to the queue.
struct Job {
    queue: Queue,
    runner: Arc<dyn TaskRunner>,
    settings: WorkerSettings,
    stop: CancellationToken,
}

impl Job {
    async fn run(self, lease: Lease) -> Outcome {
        let cancel = self.stop.child_token();
        let (period, length) = (self.settings.heartbeat, self.settings.lease);
        // When the lease was last known renewed (by this process's clock: the claim, then each
        // heartbeat's sending time). Past `renewed + length` it may belong to another worker.
        let mut renewed = Instant::now();
        let mut lost = false;
        let attempt = {
            let run = self.runner.run(&lease, &self.queue, cancel.clone());
            tokio::pin!(run);
            let mut ticker = tokio::time::interval(period);
            ticker.tick().await;
            loop {
                // The run first: after a freeze, a result that arrived meanwhile is reported
                // (and refused) rather than cut short by the heartbeat.
                tokio::select! {
                    biased;
                    attempt = &mut run => break attempt,
                    _ = ticker.tick(), if !lost => {
                        let sent = Instant::now();
                        let beat = tokio::time::timeout(period, self.queue.heartbeat(&lease, length));
                        match beat.await {
                            Ok(Ok(true)) => renewed = sent,
                            Ok(Ok(false)) => lost = true,
                            Ok(Err(e)) => tracing::warn!("task {}: heartbeat failed: {e}", lease.task_id()),
                            Err(_) => tracing::warn!("task {}: heartbeat failed: no answer within {period:?}", lease.task_id()),
                        }
                        if !lost && Instant::now() >= renewed + length {
                            tracing::warn!("task {}: lease not renewed in time", lease.task_id());
                            lost = true;
                        }
                        if lost {
                            tracing::warn!("task {}: lease lost; stopping it", lease.task_id());
                            cancel.cancel();
                        }
                    }
                }
            }
        };
        self.report(&lease, attempt).await
    }

    /// Tell the queue how the attempt ended, retrying while the database is away (a restart,
    /// a network cut) for [`REPORT_PATIENCE`] or twice the lease, whichever is longer: a result
    /// is kept through an outage, and a late one still gets its refusal recorded.
    async fn report(&self, lease: &Lease, attempt: Attempt) -> Outcome {
        let give_up = Instant::now() + (self.settings.lease * 2).max(REPORT_PATIENCE);
        loop {
            let told = match &attempt {
                Attempt::Completed(result) => self
                    .queue
                    .complete(lease, result)
                    .await
                    .map(|ok| ok.then_some(Outcome::Completed)),
                Attempt::Failed { error, retryable } => self
                    .queue
                    .fail(lease, error, *retryable)
                    .await
                    .map(|ok| ok.then_some(Outcome::Failed)),
                Attempt::LeaseLost => return Outcome::Refused,
                // Given back; when the lease was lost meanwhile, the queue refuses and records it.
                Attempt::Stopped => self
                    .queue
                    .release(lease)
                    .await
                    .map(|ok| ok.then_some(Outcome::Released)),
            };
            match told {
                Ok(Some(outcome)) => return outcome,
                Ok(None) => {
                    tracing::warn!(
                        "task {}: result refused, the lease was lost",
                        lease.task_id()
                    );
                    return Outcome::Refused;
                }
                Err(e) if Instant::now() < give_up => {
                    tracing::warn!("task {}: cannot report yet: {e}", lease.task_id());
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
                Err(e) => {
                    tracing::error!("task {}: result not reported: {e}", lease.task_id());
                    return Outcome::Unreported;
                }
            }
        }
    }
}
