//! Executing and healing: routing queued tasks to available workers, re-routing those whose
//! worker died or whose endpoint went down, and reclaiming expired leases.

use std::collections::HashMap;

use super::Hub;
use crate::actions;
use crate::endpoints::{list_endpoints, watch};
use crate::error::Result;
use crate::leader::Fence;
use crate::queue::{TaskFilter, TaskRecord, TaskState, WorkerRecord};
use crate::routing::{assign, choose, is_available, same_url};

/// What the router sees at one moment.
struct Scene {
    now_ms: i64,
    workers: Vec<WorkerRecord>,
    available: Vec<usize>,
    pending: Vec<TaskRecord>,
}

impl Scene {
    fn is_available(&self, worker_id: &str) -> bool {
        self.available
            .iter()
            .any(|&i| self.workers[i].info.id == worker_id)
    }

    /// Pending tasks routed to a worker that cannot take them any more.
    fn misrouted(&self) -> impl Iterator<Item = &TaskRecord> {
        self.pending.iter().filter(|t| {
            t.routed_to
                .as_deref()
                .is_some_and(|w| !self.is_available(w))
        })
    }
}

impl Hub {
    async fn scene(&self) -> Result<Scene> {
        let queue = &self.inner.queue;
        let now_ms = queue.now_ms().await?;
        let workers = queue.workers().await?;
        let endpoints = list_endpoints(self.pool()).await?;
        let timeout = i64::try_from(self.config().worker_timeout.as_millis()).unwrap_or(i64::MAX);
        let available = (0..workers.len())
            .filter(|&i| is_available(&workers[i], &endpoints, now_ms, timeout))
            .collect();
        let filter = TaskFilter {
            states: vec![TaskState::Waiting, TaskState::Queued],
            ..TaskFilter::default()
        };
        let pending = queue.list(&filter).await?;
        Ok(Scene {
            now_ms,
            workers,
            available,
            pending,
        })
    }

    /// Watch the endpoints of the workers that are up (new ones join the health checks).
    pub(super) async fn watch_worker_endpoints(&self, fence: &Fence) -> Result<()> {
        let watched = list_endpoints(self.pool()).await?;
        let workers = self.inner.queue.workers().await?;
        for url in workers
            .iter()
            .filter(|w| w.state == "up")
            .filter_map(|w| w.info.endpoint.as_deref())
        {
            if !watched.iter().any(|e| same_url(&e.url, url)) {
                watch(self.pool(), fence, url).await?;
            }
        }
        Ok(())
    }

    /// Whether tasks wait, are queued or run.
    pub(super) async fn has_work(&self) -> Result<bool> {
        let c = self.inner.queue.counts().await?;
        Ok(c.waiting + c.queued + c.running > 0)
    }

    /// Tasks whose lease expired, or that are routed to a worker that cannot take them.
    pub(super) async fn tasks_need_healing(&self) -> Result<bool> {
        let scene = self.scene().await?;
        if scene.misrouted().next().is_some() {
            return Ok(true);
        }
        let running = TaskFilter {
            states: vec![TaskState::Running],
            ..TaskFilter::default()
        };
        Ok(self
            .inner
            .queue
            .list(&running)
            .await?
            .iter()
            .any(|t| t.lease_expires_ms.is_some_and(|e| e < scene.now_ms)))
    }

    /// Executing: give each pending task without a (live) route the best available worker.
    pub(super) async fn route_pending(&self, fence: &Fence) -> Result<()> {
        let scene = self.scene().await?;
        let available: Vec<&WorkerRecord> =
            scene.available.iter().map(|&i| &scene.workers[i]).collect();
        let mut routed: HashMap<String, i64> = HashMap::new();
        for t in &scene.pending {
            if let Some(w) = t.routed_to.as_deref().filter(|w| scene.is_available(w)) {
                *routed.entry(w.to_owned()).or_default() += 1;
            }
        }
        for t in &scene.pending {
            if t.routed_to
                .as_deref()
                .is_some_and(|w| scene.is_available(w))
            {
                continue;
            }
            let Some(worker) = choose(t, &available, &routed) else {
                continue;
            };
            let id = worker.info.id.clone();
            let postgres = self.inner.store.is_postgres();
            let was = t.routed_to.as_deref();
            if assign(
                self.pool(),
                fence,
                postgres,
                &t.id,
                was,
                Some(&id),
                scene.now_ms,
            )
            .await?
            {
                *routed.entry(id).or_default() += 1;
            }
        }
        Ok(())
    }

    /// Healing: reclaim expired leases (dead-lettering poison tasks) and take tasks away from
    /// workers that died or whose endpoint is down.
    pub(super) async fn heal_tasks(&self, fence: &Fence) -> Result<()> {
        let reclaimed = self.inner.queue.reclaim_expired().await?;
        for id in &reclaimed {
            let task = self.inner.queue.get(id).await?;
            let (kind, detail) = if task.state == TaskState::Dead {
                (
                    "dead_letter",
                    format!(
                        "attempt {} of {}: lease expired",
                        task.attempt, task.max_attempts
                    ),
                )
            } else {
                (
                    "reclaim",
                    format!(
                        "lease of {} expired at attempt {}",
                        task.lease_owner.as_deref().unwrap_or("?"),
                        task.attempt
                    ),
                )
            };
            actions::record(self.pool(), fence, kind, id, "done", Some(&detail)).await?;
        }
        let scene = self.scene().await?;
        let postgres = self.inner.store.is_postgres();
        for t in scene.misrouted() {
            let was = t.routed_to.as_deref();
            if assign(self.pool(), fence, postgres, &t.id, was, None, scene.now_ms).await? {
                let detail = format!("{} cannot take it any more", was.unwrap_or("?"));
                actions::record(self.pool(), fence, "reroute", &t.id, "done", Some(&detail))
                    .await?;
            }
        }
        Ok(())
    }
}
