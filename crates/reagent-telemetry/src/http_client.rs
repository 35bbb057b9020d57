//! The HTTP client the OTLP exporter sends with: reqwest's blocking client (the batch span
//! processor exports from its own thread, outside any async runtime), with a timeout, and one
//! warning on stderr the first time an export fails.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

use crate::TelemetryError;

/// Sends export requests; warns once when the collector cannot be reached or refuses them.
#[derive(Debug)]
pub(crate) struct BlockingClient {
    client: reqwest::blocking::Client,
    warned: AtomicBool,
}

impl BlockingClient {
    /// A client whose requests give up after `timeout`. Build it outside an async runtime.
    pub(crate) fn new(timeout: Duration) -> Result<Self, TelemetryError> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        Ok(BlockingClient {
            client,
            warned: AtomicBool::new(false),
        })
    }

    fn warn_once(&self, url: &str, problem: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!("OTLP export to {url} failed ({problem}); traces are being dropped");
        }
    }

    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let url = request.uri().to_string();
        let request: reqwest::blocking::Request = request.try_into()?;
        let response = match self.client.execute(request) {
            Ok(response) => response,
            Err(e) => {
                self.warn_once(&url, &e.to_string());
                return Err(Box::new(e));
            }
        };
        let status = response.status();
        if !status.is_success() {
            self.warn_once(&url, &format!("HTTP {status}"));
        }
        let headers = response.headers().clone();
        let body = response.bytes()?;
        let mut reply = Response::builder().status(status).body(body)?;
        *reply.headers_mut() = headers;
        Ok(reply)
    }
}

#[async_trait::async_trait]
impl HttpClient for BlockingClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        self.send(request)
    }
}
