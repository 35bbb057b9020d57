//! Healing: endpoints probed on a schedule (down after N failures in a row, up at the first
//! success), the managed model server restarted when down — each act within its cooldown and
//! hourly cap, and recorded.

use std::time::{Duration, Instant};

use futures_util::future::join_all;

use super::Hub;
use crate::actions;
use crate::endpoints::{list_endpoints, probe, record_check};
use crate::error::Result;
use crate::leader::Fence;

/// The act of restarting the managed model server.
const RESTART: &str = "restart_server";

/// Longest a restart of the managed server may take.
const RESTART_TIMEOUT: Duration = Duration::from_secs(120);

impl Hub {
    /// Probe every watched endpoint if `check_every` has passed since the last round.
    pub(super) async fn check_endpoints_when_due(&self, fence: &Fence) -> Result<()> {
        {
            let mut last = self
                .inner
                .last_check
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if last.is_some_and(|t| t.elapsed() < self.config().check_every) {
                return Ok(());
            }
            *last = Some(Instant::now());
        }
        self.watch_worker_endpoints(fence).await?;
        let urls: Vec<String> = list_endpoints(self.pool())
            .await?
            .into_iter()
            .map(|e| e.url)
            .collect();
        let results = join_all(urls.iter().map(|u| probe(&self.inner.http, u))).await;
        for (url, result) in urls.iter().zip(results) {
            self.record_probe(fence, url, result).await?;
        }
        Ok(())
    }

    async fn record_probe(
        &self,
        fence: &Fence,
        url: &str,
        result: Result<Vec<String>, String>,
    ) -> Result<()> {
        let threshold = self.config().failure_threshold;
        if let Some(change) = record_check(self.pool(), fence, url, result, threshold).await? {
            let kind = if change.healthy {
                "endpoint_up"
            } else {
                "endpoint_down"
            };
            tracing::warn!("hub {}: {kind} {url}: {}", self.id(), change.detail);
            actions::record(self.pool(), fence, kind, url, "done", Some(&change.detail)).await?;
        }
        Ok(())
    }

    /// Whether a health predicate fails and something can be done about it now.
    pub(super) async fn health_due(&self) -> Result<bool> {
        Ok(self.restart_due().await? || self.tasks_need_healing().await?)
    }

    /// The managed server, when it is marked down and may be restarted now.
    async fn restart_due(&self) -> Result<bool> {
        let Some(managed) = &self.config().managed else {
            return Ok(false);
        };
        let url = managed.url();
        let down = list_endpoints(self.pool())
            .await?
            .iter()
            .any(|e| e.url == url && !e.healthy);
        Ok(down
            && actions::allowed(
                self.pool(),
                &self.config().name,
                RESTART,
                &url,
                self.config().healing,
            )
            .await?)
    }

    /// The healing state's work.
    pub(super) async fn heal(&self, fence: &Fence) -> Result<()> {
        if self.restart_due().await? {
            self.restart_managed(fence).await?;
        }
        self.heal_tasks(fence).await
    }

    async fn restart_managed(&self, fence: &Fence) -> Result<()> {
        let Some(managed) = &self.config().managed else {
            return Ok(());
        };
        let url = managed.url();
        let restarted = tokio::time::timeout(RESTART_TIMEOUT, managed.restart())
            .await
            .unwrap_or_else(|_| Err(format!("no restart within {} s", RESTART_TIMEOUT.as_secs())));
        match restarted {
            Ok(()) => {
                tracing::warn!("hub {}: restarted the model server at {url}", self.id());
                actions::record(self.pool(), fence, RESTART, &url, "done", None).await?;
                let result = probe(&self.inner.http, &url).await;
                self.record_probe(fence, &url, result).await
            }
            Err(why) => {
                tracing::warn!("hub {}: cannot restart {url}: {why}", self.id());
                actions::record(self.pool(), fence, RESTART, &url, "failed", Some(&why)).await
            }
        }
    }
}
