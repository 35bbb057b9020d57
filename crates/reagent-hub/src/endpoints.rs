//! Model servers the hub watches: probing each one's model list, and marking it down after
//! a number of failed checks in a row and up again at the first success.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use sqlx::{AnyPool, Row};

use crate::clock;
use crate::error::{HubError, Result};
use crate::leader::Fence;

/// How long one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A watched endpoint, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndpointRecord {
    /// Its base URL (Ollama host, or an OpenAI-compatible base ending in `/v1`).
    pub url: String,
    /// The models it served at the last successful check.
    pub models: Vec<String>,
    /// Up (or never failed enough to be marked down).
    pub healthy: bool,
    /// Failed checks in a row.
    pub consecutive_failures: i64,
    /// When it was last checked (epoch ms).
    pub last_check_ms: Option<i64>,
    /// The last check's error.
    pub last_error: Option<String>,
    /// When `healthy` last changed (or the endpoint was first seen).
    pub changed_ms: i64,
}

/// An endpoint that went down or came back at this check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthChange {
    /// The endpoint.
    pub url: String,
    /// Its new health.
    pub healthy: bool,
    /// The check's error (going down) or the models it serves (coming up).
    pub detail: String,
}

/// The URL listing a server's models: `/v1/models` for OpenAI-compatible bases (ending in
/// `/v1`), Ollama's `/api/tags` otherwise.
pub fn models_url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/models")
    } else {
        format!("{base}/api/tags")
    }
}

/// The model names in a `/api/tags` or `/v1/models` answer.
pub fn model_names(body: &Value) -> Result<Vec<String>, String> {
    let (list, key) = if let Some(list) = body.get("models").and_then(Value::as_array) {
        (list, "name")
    } else if let Some(list) = body.get("data").and_then(Value::as_array) {
        (list, "id")
    } else {
        return Err("the answer lists no models (neither `models` nor `data`)".to_owned());
    };
    Ok(list
        .iter()
        .filter_map(|m| m.get(key).and_then(Value::as_str).map(str::to_owned))
        .collect())
}

/// GET the endpoint's model list.
pub async fn probe(client: &reqwest::Client, base: &str) -> Result<Vec<String>, String> {
    let url = models_url(base);
    let reply = client
        .get(&url)
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let status = reply.status();
    if !status.is_success() {
        return Err(format!("GET {url}: HTTP {status}"));
    }
    let body: Value = reply
        .json()
        .await
        .map_err(|e| format!("GET {url}: not JSON: {e}"))?;
    model_names(&body).map_err(|e| format!("GET {url}: {e}"))
}

/// Start watching `url` (healthy until checks say otherwise); nothing if already watched.
pub async fn watch(pool: &AnyPool, fence: &Fence, url: &str) -> Result<()> {
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    sqlx::query(
        "INSERT INTO endpoints (url, models, healthy, consecutive_failures, changed_ms) \
         VALUES ($1, '[]', 1, 0, $2) ON CONFLICT (url) DO NOTHING",
    )
    .bind(url)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("watch an endpoint"))?;
    tx.commit().await.map_err(HubError::db("watch an endpoint"))
}

/// Record one check of `url` (`Ok(models)` or `Err(why)`); the endpoint goes down when its
/// failures in a row reach `threshold` and up at the first success. The change, if any.
pub async fn record_check(
    pool: &AnyPool,
    fence: &Fence,
    url: &str,
    result: Result<Vec<String>, String>,
    threshold: u32,
) -> Result<Option<HealthChange>> {
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    let row = sqlx::query("SELECT healthy, consecutive_failures FROM endpoints WHERE url = $1")
        .bind(url)
        .fetch_optional(&mut *tx)
        .await
        .map_err(HubError::db("read an endpoint"))?;
    let (was_healthy, failures) = match row {
        Some(r) => (
            r.try_get::<i64, _>(0)
                .map_err(HubError::db("read an endpoint"))?
                != 0,
            r.try_get::<i64, _>(1)
                .map_err(HubError::db("read an endpoint"))?,
        ),
        None => (true, 0),
    };
    let (healthy, failures, models, error) = match &result {
        Ok(models) => (true, 0, Some(models), None),
        Err(why) => {
            let failures = failures.saturating_add(1);
            let down = failures >= i64::from(threshold.max(1));
            (was_healthy && !down, failures, None, Some(why.as_str()))
        }
    };
    let models_json = models.map(|m| Value::from(m.clone()).to_string());
    sqlx::query(
        "INSERT INTO endpoints (url, models, healthy, consecutive_failures, last_check_ms, \
         last_error, changed_ms) VALUES ($1, COALESCE($2, '[]'), $3, $4, $5, $6, $5) \
         ON CONFLICT (url) DO UPDATE SET models = COALESCE($2, endpoints.models), \
         healthy = $3, consecutive_failures = $4, last_check_ms = $5, last_error = $6, \
         changed_ms = CASE WHEN endpoints.healthy = $3 THEN endpoints.changed_ms ELSE $5 END",
    )
    .bind(url)
    .bind(models_json)
    .bind(i64::from(healthy))
    .bind(failures)
    .bind(now)
    .bind(error)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("record an endpoint check"))?;
    tx.commit()
        .await
        .map_err(HubError::db("record an endpoint check"))?;
    Ok((healthy != was_healthy).then(|| HealthChange {
        url: url.to_owned(),
        healthy,
        detail: match result {
            Ok(models) => format!("serves {}", models.join(", ")),
            Err(why) => format!("{failures} failed checks in a row; last: {why}"),
        },
    }))
}

/// Every watched endpoint, by URL.
pub async fn list_endpoints(pool: &AnyPool) -> Result<Vec<EndpointRecord>> {
    let what = "read the endpoints";
    let rows = sqlx::query(
        "SELECT url, models, healthy, consecutive_failures, last_check_ms, last_error, changed_ms \
         FROM endpoints ORDER BY url",
    )
    .fetch_all(pool)
    .await
    .map_err(HubError::db(what))?;
    rows.iter()
        .map(|r| {
            let models: String = r.try_get(1).map_err(HubError::db(what))?;
            Ok(EndpointRecord {
                url: r.try_get(0).map_err(HubError::db(what))?,
                models: serde_json::from_str(&models).unwrap_or_default(),
                healthy: r.try_get::<i64, _>(2).map_err(HubError::db(what))? != 0,
                consecutive_failures: r.try_get(3).map_err(HubError::db(what))?,
                last_check_ms: r.try_get(4).map_err(HubError::db(what))?,
                last_error: r.try_get(5).map_err(HubError::db(what))?,
                changed_ms: r.try_get(6).map_err(HubError::db(what))?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_list_url_follows_the_wire() {
        assert_eq!(
            models_url("http://h:11434/"),
            "http://h:11434/api/tags".to_owned()
        );
        assert_eq!(models_url("http://h:8080/v1"), "http://h:8080/v1/models");
    }

    #[test]
    fn model_names_read_both_wires() {
        let ollama = json!({"models": [{"name": "qwen3:8b"}, {"name": "llama3:latest"}]});
        assert_eq!(model_names(&ollama).unwrap(), ["qwen3:8b", "llama3:latest"]);
        let openai = json!({"object": "list", "data": [{"id": "smol"}]});
        assert_eq!(model_names(&openai).unwrap(), ["smol"]);
        assert!(model_names(&json!({"error": "x"})).is_err());
    }
}
