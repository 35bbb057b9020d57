//! An OTLP/HTTP trace receiver for tests: a real HTTP server on `127.0.0.1:0` that accepts
//! `POST /v1/traces` (protobuf, as OpenTelemetry exporters send it), decodes each request with
//! the `opentelemetry-proto` types and keeps the spans, flattened into [`ReceivedSpan`]s whose
//! attribute values are JSON values (strings, numbers, booleans, arrays).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use prost::Message as _;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One span as received, with the service name of the resource it came with.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedSpan {
    /// `service.name` of the exporting resource.
    pub service: String,
    /// Trace id, lowercase hex.
    pub trace_id: String,
    /// Span id, lowercase hex.
    pub span_id: String,
    /// Parent span id, lowercase hex (empty for a root span).
    pub parent_span_id: String,
    /// The span's name.
    pub name: String,
    /// `SpanKind` as its protobuf number (1 internal, 2 server, 3 client...).
    pub kind: i32,
    /// Attributes, values as JSON.
    pub attributes: BTreeMap<String, Value>,
    /// Events: name and attributes.
    pub events: Vec<(String, BTreeMap<String, Value>)>,
    /// Status code (0 unset, 1 ok, 2 error).
    pub status_code: i32,
    /// Status message.
    pub status_message: String,
    /// Start and end, nanoseconds since the epoch.
    pub start_end_ns: (u64, u64),
}

impl ReceivedSpan {
    /// The attribute `key`, if present.
    pub fn attr(&self, key: &str) -> Option<&Value> {
        self.attributes.get(key)
    }

    /// Every attribute and event attribute value, as JSON text (to check what text a span
    /// carries anywhere).
    pub fn all_text(&self) -> String {
        let mut text = format!("{} {}", self.name, self.status_message);
        let values = self
            .attributes
            .values()
            .chain(self.events.iter().flat_map(|(_, attrs)| attrs.values()));
        for value in values {
            text.push(' ');
            text.push_str(&value.to_string());
        }
        text
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    requests: usize,
    bad_requests: Vec<String>,
}

/// The receiver. Dropping it stops the server.
pub struct OtlpReceiver {
    addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    task: JoinHandle<()>,
}

impl OtlpReceiver {
    /// Start on `127.0.0.1:0`.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let received = Arc::new(Mutex::new(Received::default()));
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&received)));
        Ok(OtlpReceiver {
            addr,
            received,
            task,
        })
    }

    /// The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it: `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The spans received so far, in arrival order.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        lock(&self.received).spans.clone()
    }

    /// How many export requests arrived.
    pub fn requests(&self) -> usize {
        lock(&self.received).requests
    }

    /// Requests that were not a valid OTLP trace export (path, method, content type or body),
    /// each described.
    pub fn bad_requests(&self) -> Vec<String> {
        lock(&self.received).bad_requests.clone()
    }

    /// Wait until at least `n` spans arrived or `timeout` passed; returns the spans.
    pub async fn wait_for_spans(&self, n: usize, timeout: Duration) -> Vec<ReceivedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if spans.len() >= n || Instant::now() >= deadline {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(m: &Mutex<Received>) -> std::sync::MutexGuard<'_, Received> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn accept_loop(listener: TcpListener, received: Arc<Mutex<Received>>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let received = Arc::clone(&received);
        let svc = hyper::service::service_fn(move |req| handle(Arc::clone(&received), req));
        tokio::spawn(async move {
            // A client going away is nothing to report.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn handle(
    received: Arc<Mutex<Received>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let bytes = body.collect().await.map(|c| c.to_bytes()).ok();
    let content_type = parts
        .headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let problem = if parts.method != hyper::Method::POST || parts.uri.path() != "/v1/traces" {
        Some(format!("{} {}", parts.method, parts.uri.path()))
    } else if content_type != "application/x-protobuf" {
        Some(format!("content type `{content_type}`"))
    } else {
        match bytes.map(|b| ExportTraceServiceRequest::decode(b.as_ref())) {
            Some(Ok(export)) => {
                let mut state = lock(&received);
                state.requests += 1;
                state.spans.extend(flatten(export));
                None
            }
            Some(Err(e)) => Some(format!("undecodable body: {e}")),
            None => Some("unreadable body".to_owned()),
        }
    };
    let status = match problem {
        Some(problem) => {
            lock(&received).bad_requests.push(problem);
            StatusCode::BAD_REQUEST
        }
        None => StatusCode::OK,
    };
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-protobuf"),
    );
    Ok(response)
}

fn flatten(export: ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut out = Vec::new();
    for resource_spans in export.resource_spans {
        let resource = attributes(
            resource_spans
                .resource
                .map(|r| r.attributes)
                .unwrap_or_default(),
        );
        let service = resource
            .get("service.name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
            let status = span.status.unwrap_or_default();
            out.push(ReceivedSpan {
                service: service.clone(),
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                name: span.name,
                kind: span.kind,
                attributes: attributes(span.attributes),
                events: span
                    .events
                    .into_iter()
                    .map(|e| (e.name, attributes(e.attributes)))
                    .collect(),
                status_code: status.code,
                status_message: status.message,
                start_end_ns: (span.start_time_unix_nano, span.end_time_unix_nano),
            });
        }
    }
    out
}

fn attributes(kvs: Vec<KeyValue>) -> BTreeMap<String, Value> {
    kvs.into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, json)))
        .collect()
}

fn json(value: AnyValue) -> Value {
    match value.value {
        Some(any_value::Value::StringValue(s)) => Value::String(s),
        Some(any_value::Value::BoolValue(b)) => Value::Bool(b),
        Some(any_value::Value::IntValue(i)) => Value::from(i),
        Some(any_value::Value::DoubleValue(d)) => Value::from(d),
        Some(any_value::Value::ArrayValue(a)) => {
            Value::Array(a.values.into_iter().map(json).collect())
        }
        Some(any_value::Value::KvlistValue(kv)) => {
            Value::Object(attributes(kv.values).into_iter().collect())
        }
        Some(any_value::Value::BytesValue(b)) => Value::String(hex(&b)),
        Some(any_value::Value::StringValueStrindex(i)) => Value::from(i),
        None => Value::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
