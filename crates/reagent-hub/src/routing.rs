//! Routing: which worker a queued task goes to. A worker is available when it is up, its
//! heartbeat is recent and its endpoint is not marked down; a task goes to an available worker
//! whose endpoint serves the task's model and whose capabilities cover its tags, the least
//! loaded one (tasks running there, as its heartbeat said, plus tasks already routed to it,
//! per unit of capacity).

use std::collections::HashMap;

use sqlx::AnyPool;

use crate::endpoints::EndpointRecord;
use crate::error::{HubError, Result};
use crate::leader::Fence;
use crate::queue::{TaskRecord, WorkerRecord, NOTIFY_CHANNEL};

/// Whether `worker` can take work now: up, heard from within `timeout_ms` of `now_ms`, and
/// its endpoint (when the hub watches it) healthy.
pub fn is_available(
    worker: &WorkerRecord,
    endpoints: &[EndpointRecord],
    now_ms: i64,
    timeout_ms: i64,
) -> bool {
    let endpoint_up = match &worker.info.endpoint {
        Some(url) => endpoints
            .iter()
            .find(|e| same_url(&e.url, url))
            .is_none_or(|e| e.healthy),
        None => true,
    };
    worker.state == "up" && now_ms.saturating_sub(worker.heartbeat_ms) <= timeout_ms && endpoint_up
}

/// Two spellings of one base URL (a trailing slash aside).
pub fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether `worker` could run `task` (model served, tags covered).
pub fn fits(task: &TaskRecord, worker: &WorkerRecord) -> bool {
    let model_ok = task
        .model
        .as_ref()
        .is_none_or(|m| worker.info.models.contains(m));
    model_ok && task.tags.iter().all(|t| worker.info.tags.contains(t))
}

/// The least loaded of `workers` that fits `task`; `routed` counts the queued tasks already
/// routed to each worker. Ties go to the smaller id, so the choice is stable.
pub fn choose<'w>(
    task: &TaskRecord,
    workers: &[&'w WorkerRecord],
    routed: &HashMap<String, i64>,
) -> Option<&'w WorkerRecord> {
    let load = |w: &WorkerRecord| {
        let busy = w.in_flight + routed.get(&w.info.id).copied().unwrap_or(0);
        // Compared as fractions busy / capacity without floats: a/b < c/d ⇔ a·d < c·b.
        (busy, i64::from(w.info.capacity.max(1)))
    };
    workers
        .iter()
        .copied()
        .filter(|w| fits(task, w))
        .min_by(|a, b| {
            let ((ba, ca), (bb, cb)) = (load(a), load(b));
            (ba * cb)
                .cmp(&(bb * ca))
                .then_with(|| a.info.id.cmp(&b.info.id))
        })
}

/// Route task `task_id` to `worker` (`None`: to any worker again), if it is still waiting or
/// queued and routed to `was`; fenced, and on PostgreSQL the workers are woken. Whether it
/// changed.
pub async fn assign(
    pool: &AnyPool,
    fence: &Fence,
    postgres: bool,
    task_id: &str,
    was: Option<&str>,
    worker: Option<&str>,
    now_ms: i64,
) -> Result<bool> {
    let mut tx = fence.begin(pool).await?;
    let changed = sqlx::query(
        "UPDATE tasks SET routed_to = $2, updated_ms = $3 WHERE id = $1 \
         AND state IN ('waiting', 'queued') AND COALESCE(routed_to, '') = COALESCE($4, '')",
    )
    .bind(task_id)
    .bind(worker)
    .bind(now_ms)
    .bind(was)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("route a task"))?
    .rows_affected();
    if postgres && changed == 1 {
        sqlx::query("SELECT pg_notify($1, '')")
            .bind(NOTIFY_CHANNEL)
            .execute(&mut *tx)
            .await
            .map_err(HubError::db("wake the workers"))?;
    }
    tx.commit().await.map_err(HubError::db("route a task"))?;
    Ok(changed == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{TaskSpec, TaskState, WorkerInfo};

    fn worker(id: &str, models: &[&str], capacity: u32, in_flight: i64) -> WorkerRecord {
        WorkerRecord {
            info: WorkerInfo {
                id: id.into(),
                host: "h".into(),
                pid: 1,
                capacity,
                tags: vec!["gpu".into()],
                endpoint: Some(format!("http://{id}:11434")),
                models: models.iter().map(|m| (*m).to_owned()).collect(),
            },
            in_flight,
            heartbeat_ms: 1_000,
            started_ms: 0,
            state: "up".into(),
        }
    }

    fn task(model: Option<&str>, tags: &[&str]) -> TaskRecord {
        TaskRecord {
            id: "t".into(),
            task: "do".into(),
            spec: TaskSpec::default(),
            model: model.map(str::to_owned),
            priority: 0,
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            state: TaskState::Queued,
            attempt: 0,
            max_attempts: 3,
            run_after_ms: 0,
            lease_owner: None,
            lease_expires_ms: None,
            routed_to: None,
            goal_id: None,
            goal_node: None,
            run_id: None,
            result: None,
            error: None,
            created_ms: 0,
            updated_ms: 0,
        }
    }

    fn endpoint(url: &str, healthy: bool) -> EndpointRecord {
        EndpointRecord {
            url: url.into(),
            models: vec![],
            healthy,
            consecutive_failures: 0,
            last_check_ms: None,
            last_error: None,
            changed_ms: 0,
        }
    }

    #[test]
    fn the_least_loaded_worker_serving_the_model_wins() {
        let a = worker("a", &["qwen3:8b"], 2, 2);
        let b = worker("b", &["qwen3:8b", "llama3"], 4, 1);
        let c = worker("c", &["llama3"], 8, 0);
        let all = [&a, &b, &c];
        let none = HashMap::new();
        let pick = |t: &TaskRecord, routed: &HashMap<String, i64>| {
            choose(t, &all, routed).map(|w| w.info.id.clone())
        };
        assert_eq!(
            pick(&task(Some("qwen3:8b"), &[]), &none).as_deref(),
            Some("b")
        );
        assert_eq!(
            pick(&task(Some("llama3"), &[]), &none).as_deref(),
            Some("c")
        );
        assert_eq!(pick(&task(None, &[]), &none).as_deref(), Some("c"));
        assert_eq!(pick(&task(Some("mistral"), &[]), &none), None);
        assert_eq!(pick(&task(None, &["tpu"]), &none), None);
        // Tasks routed count as load: b (1 running + 3 routed of 4) ties a (2 of 2): by id.
        let routed = HashMap::from([("b".to_owned(), 3)]);
        assert_eq!(
            pick(&task(Some("qwen3:8b"), &["gpu"]), &routed).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn stale_stopped_or_down_workers_are_not_available() {
        let w = worker("a", &[], 1, 0);
        let up = [endpoint("http://a:11434/", true)];
        let down = [endpoint("http://a:11434", false)];
        assert!(is_available(&w, &up, 1_500, 1_000));
        assert!(
            is_available(&w, &[], 1_500, 1_000),
            "unwatched endpoints count as up"
        );
        assert!(!is_available(&w, &down, 1_500, 1_000));
        assert!(!is_available(&w, &up, 2_500, 1_000), "heartbeat too old");
        let stopped = WorkerRecord {
            state: "stopped".into(),
            ..w
        };
        assert!(!is_available(&stopped, &up, 1_500, 1_000));
    }
}
