//! # reagent-telemetry
//!
//! Where the reagent binary's diagnostics go: the `--log` filter to stderr, and, when an OTLP
//! endpoint is given, the spans of `reagent_core::spans` (a run, its model calls, its tool calls,
//! with the GenAI semantic-convention attributes) exported as OpenTelemetry traces over
//! OTLP/HTTP protobuf. Content (prompts, completions, tool arguments and results) is exported
//! only with [`OtlpOptions::capture_content`].
//!
//! Export never slows or breaks a run: spans are queued and sent from a background thread in
//! batches; a queue that is full drops spans; an endpoint that is down or slow costs at most
//! [`EXPORT_TIMEOUT`] per batch on that thread, and [`Telemetry::shutdown`] waits at most
//! [`SHUTDOWN_TIMEOUT`] for the last batch.
//!
//! Architecture invariant: the only crate with OpenTelemetry dependencies; used by the binary
//! alone (reagent-core emits plain `tracing` spans).

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{RetryPolicy, SpanExporter, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use reagent_core::spans::{CONTENT_TARGET, SPAN_TARGET};
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

mod http_client;

/// How long one export request may take, retries included.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long [`Telemetry::shutdown`] waits for the spans not yet exported.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// How often queued spans are sent.
const EXPORT_INTERVAL: Duration = Duration::from_millis(500);

/// Where and what to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtlpOptions {
    /// The OTLP/HTTP endpoint: a base URL (`http://host:4318`, to which `/v1/traces` is
    /// appended, as for `OTEL_EXPORTER_OTLP_ENDPOINT`) or the full traces URL (ending in
    /// `/v1/traces`).
    pub endpoint: String,
    /// Export prompts, completions, tool arguments and tool results too.
    pub capture_content: bool,
}

/// A setting that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The OTLP endpoint is not an http(s) URL.
    #[error("invalid OTLP endpoint `{endpoint}`: {reason}")]
    Endpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The exporter could not be built.
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(String),
    /// A global subscriber was already installed.
    #[error("cannot install the log subscriber: {0}")]
    Subscriber(String),
}

/// The installed subscriber; call [`Telemetry::shutdown`] before the process exits so the last
/// spans are sent.
#[must_use = "call shutdown() before exiting, or the last spans are lost"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether traces are exported.
    pub fn exports_traces(&self) -> bool {
        self.provider.is_some()
    }

    /// Send the spans still queued, waiting at most [`SHUTDOWN_TIMEOUT`], and stop exporting.
    pub fn shutdown(self) {
        if let Some(provider) = self.provider {
            if let Err(e) = provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
                tracing::debug!("OTLP exporter shutdown: {e}");
            }
        }
    }
}

/// Install the process's subscriber: `log_filter` (an `EnvFilter` directive such as `warn` or
/// `reagent_core=debug`; an invalid one means `warn`) for stderr, and the OTLP exporter when
/// `otlp` is given. Content events never go to stderr.
pub fn init(log_filter: &str, otlp: Option<&OtlpOptions>) -> Result<Telemetry, TelemetryError> {
    let content_off = format!("{CONTENT_TARGET}=off")
        .parse()
        .map_err(|e| TelemetryError::Subscriber(format!("{e}")))?;
    let stderr_filter = EnvFilter::try_new(log_filter)
        .unwrap_or_else(|_| EnvFilter::new("warn"))
        .add_directive(content_off);
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(stderr_filter);
    let provider = otlp.map(tracer_provider).transpose()?;
    let traces = provider.as_ref().map(|provider| {
        let capture = otlp.is_some_and(|o| o.capture_content);
        let filter = Targets::new()
            .with_target(SPAN_TARGET, LevelFilter::INFO)
            .with_target(
                CONTENT_TARGET,
                if capture {
                    LevelFilter::TRACE
                } else {
                    LevelFilter::OFF
                },
            );
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("reagent"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_level(false)
            .with_filter(filter)
    });
    tracing_subscriber::registry()
        .with(stderr)
        .with(traces)
        .try_init()
        .map_err(|e| TelemetryError::Subscriber(e.to_string()))?;
    Ok(Telemetry { provider })
}

/// The traces URL for `endpoint`: itself when it already names `/v1/traces`, else the base URL
/// with `/v1/traces` appended.
pub fn traces_url(endpoint: &str) -> Result<String, TelemetryError> {
    let invalid = |reason: &str| TelemetryError::Endpoint {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    let trimmed = endpoint.trim();
    let uri: http::Uri = trimmed.parse().map_err(|e| invalid(&format!("{e}")))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(invalid("it must start with http:// or https://")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(invalid("it names no host"));
    }
    if uri.path().trim_end_matches('/').ends_with("/v1/traces") {
        return Ok(trimmed.to_owned());
    }
    Ok(format!("{}/v1/traces", trimmed.trim_end_matches('/')))
}

fn tracer_provider(otlp: &OtlpOptions) -> Result<SdkTracerProvider, TelemetryError> {
    let url = traces_url(&otlp.endpoint)?;
    let exporter = SpanExporter::builder()
        .with_http()
        .with_http_client(http_client::BlockingClient::new(EXPORT_TIMEOUT)?)
        // One quick retry: a collector that is down must not hold up the exit.
        .with_retry_policy(RetryPolicy::recommended().with_max_retries(1))
        .with_endpoint(url)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let batches = BatchSpanProcessor::builder(exporter)
        .with_batch_config(
            BatchConfigBuilder::default()
                .with_scheduled_delay(EXPORT_INTERVAL)
                .build(),
        )
        .build();
    let resource = Resource::builder()
        .with_service_name(
            std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "reagent".to_owned()),
        )
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    Ok(SdkTracerProvider::builder()
        .with_span_processor(batches)
        .with_resource(resource)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_traces_path() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert_eq!(
            traces_url("http://collector:4318/").unwrap(),
            "http://collector:4318/v1/traces"
        );
        assert_eq!(
            traces_url("https://otel.example/prefix").unwrap(),
            "https://otel.example/prefix/v1/traces"
        );
    }

    #[test]
    fn a_traces_url_is_kept() {
        assert_eq!(
            traces_url("http://127.0.0.1:4318/v1/traces").unwrap(),
            "http://127.0.0.1:4318/v1/traces"
        );
    }

    #[test]
    fn other_schemes_and_garbage_are_refused() {
        for bad in ["grpc://x:4317", "127.0.0.1:4318", "not a url", "http://"] {
            let err = traces_url(bad).unwrap_err().to_string();
            assert!(err.contains("invalid OTLP endpoint"), "{bad}: {err}");
        }
    }
}
