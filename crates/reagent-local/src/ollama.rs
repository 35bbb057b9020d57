//! Asking a running Ollama which models it has, so callers can prefer it over the local server.

use std::time::Duration;

/// How long [`probe_ollama`] waits in total.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The models an Ollama server at `host` has installed (`GET /api/tags`), in the server's order,
/// or `None` when nothing answers within two seconds or the reply is not Ollama's. `host` is a
/// base URL such as `http://127.0.0.1:11434`; a bare `host:port` gets `http://`.
pub async fn probe_ollama(host: &str) -> Option<Vec<String>> {
    let host = host.trim().trim_end_matches('/');
    let base = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .connect_timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    let resp = client.get(format!("{base}/api/tags")).send().await.ok()?;
    if !resp.status().is_success() {
        tracing::debug!(status = %resp.status(), %base, "not an Ollama server");
        return None;
    }
    let body: serde_json::Value = resp.json().await.ok()?;
    let models = body.get("models")?.as_array()?;
    Some(
        models
            .iter()
            .filter_map(|m| m.get("name").or_else(|| m.get("model")))
            .filter_map(|n| n.as_str())
            .map(str::to_owned)
            .collect(),
    )
}
