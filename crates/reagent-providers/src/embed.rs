//! Embeddings: one call turning texts into vectors. Ollama's `POST /api/embed`
//! (`{"model", "input": [...]}` → `{"embeddings": [[...]]}`) and the OpenAI-compatible
//! `POST /v1/embeddings` (`{"model", "input": [...]}` → `{"data": [{"index", "embedding"}]}`;
//! llama-server serves it when started with `--embeddings`). Anthropic and Gemini are not
//! offered here.

use std::time::Duration;

use reagent_protocol::ProviderError;
use serde_json::{json, Value};

use crate::config::{ProviderConfig, ProviderKind};
use crate::http;

/// A client for one server's embeddings endpoint.
#[derive(Debug, Clone)]
pub struct Embedder {
    kind: ProviderKind,
    url: String,
    api_key: Option<String>,
    model: String,
    timeout: Duration,
    client: reqwest::Client,
}

impl Embedder {
    /// An embedder for `model` on the (first) server of `cfg`; Anthropic and Gemini are refused
    /// with [`ProviderError::Config`].
    pub fn new(cfg: &ProviderConfig, model: &str) -> Result<Self, ProviderError> {
        let base = match cfg.base_urls.first() {
            Some(url) => url.clone(),
            None => cfg.kind.default_base_url(),
        };
        let base = http::clean_base_url(&base)?;
        let url = match cfg.kind {
            ProviderKind::Ollama => format!("{base}/api/embed"),
            ProviderKind::OpenAi => format!("{base}/embeddings"),
            other => {
                return Err(ProviderError::Config(format!(
                    "embeddings are not offered for provider {other} (use ollama or openai)"
                )))
            }
        };
        Ok(Embedder {
            kind: cfg.kind,
            url,
            api_key: cfg.api_key.clone(),
            model: model.to_owned(),
            timeout: cfg.timeout,
            client: http::client()?,
        })
    }

    /// The endpoint called.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The vectors of `texts`, in order. A server without the endpoint (404, or llama-server
    /// started without `--embeddings`: 501) is an [`ProviderError::Http`] like any refusal.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let mut req = self
            .client
            .post(&self.url)
            .json(&json!({"model": self.model, "input": texts}));
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp =
            http::send_ok(req, &self.url, self.timeout, "is the model server running?").await?;
        let body = resp
            .bytes()
            .await
            .map_err(|e| http::cut_error(&self.url, &e))?;
        let value = http::parse_json(&body, &self.url)?;
        let vectors = match self.kind {
            ProviderKind::Ollama => value
                .get("embeddings")
                .and_then(Value::as_array)
                .map(|rows| rows.iter().map(vector).collect::<Option<Vec<_>>>()),
            _ => value.get("data").and_then(Value::as_array).map(|rows| {
                let mut indexed: Vec<(u64, &Value)> = rows
                    .iter()
                    .enumerate()
                    .map(|(i, row)| {
                        let index = row.get("index").and_then(Value::as_u64);
                        (index.unwrap_or(i as u64), row)
                    })
                    .collect();
                indexed.sort_by_key(|(i, _)| *i);
                indexed
                    .into_iter()
                    .map(|(_, row)| row.get("embedding").and_then(vector))
                    .collect::<Option<Vec<_>>>()
            }),
        };
        match vectors.flatten() {
            Some(v) if v.len() == texts.len() => Ok(v),
            Some(v) => Err(ProviderError::Protocol {
                url: self.url.clone(),
                detail: format!("{} embeddings for {} texts", v.len(), texts.len()),
            }),
            None => Err(ProviderError::Protocol {
                url: self.url.clone(),
                detail: "no embeddings in the reply".to_owned(),
            }),
        }
    }
}

/// A JSON array of numbers as a vector.
fn vector(value: &Value) -> Option<Vec<f32>> {
    value
        .as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}
