//! `GET /metrics`: Prometheus text, names prefixed `reagent_`, fed by the runs' events.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use reagent_protocol::{Event, EventKind};
use reagent_store::Store;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabel {
    tool: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GuardrailLabel {
    guardrail: &'static str,
    action: &'static str,
}

/// The server's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    runs_started: Counter,
    runs_active: Gauge,
    runs_finished: Family<OutcomeLabel, Counter>,
    iterations: Counter,
    tokens: Family<TokenLabel, Counter>,
    tool_calls: Family<ToolLabel, Counter>,
    model_latency: Histogram,
    guardrails: Family<GuardrailLabel, Counter>,
    store_dropped: Counter,
    store_error: Gauge,
    streams_open: Gauge,
    stream_catchups: Counter,
}

/// Counts an open event stream while it lives.
pub(crate) struct OpenStream(Gauge);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut m = Metrics {
            registry: Registry::default(),
            runs_started: Counter::default(),
            runs_active: Gauge::default(),
            runs_finished: Family::default(),
            iterations: Counter::default(),
            tokens: Family::default(),
            tool_calls: Family::default(),
            // 10 ms … ~164 s.
            model_latency: Histogram::new(exponential_buckets(0.01, 2.0, 15)),
            guardrails: Family::default(),
            store_dropped: Counter::default(),
            store_error: Gauge::default(),
            streams_open: Gauge::default(),
            stream_catchups: Counter::default(),
        };
        let r = &mut m.registry;
        r.register(
            "reagent_runs_started",
            "Runs started by this server",
            m.runs_started.clone(),
        );
        r.register(
            "reagent_runs_active",
            "Runs in progress",
            m.runs_active.clone(),
        );
        r.register(
            "reagent_runs_finished",
            "Runs finished, by outcome",
            m.runs_finished.clone(),
        );
        r.register(
            "reagent_iterations",
            "Loop iterations of finished runs",
            m.iterations.clone(),
        );
        r.register(
            "reagent_tokens",
            "Tokens, by kind (prompt, completion)",
            m.tokens.clone(),
        );
        r.register(
            "reagent_tool_calls",
            "Tool calls, by tool and result (ok, error)",
            m.tool_calls.clone(),
        );
        r.register(
            "reagent_model_latency_seconds",
            "Wall time of model calls",
            m.model_latency.clone(),
        );
        r.register(
            "reagent_guardrails",
            "Guardrails fired, by guardrail and action",
            m.guardrails.clone(),
        );
        r.register(
            "reagent_store_events_dropped",
            "Events the store's writer could not take (it fell behind or stopped)",
            m.store_dropped.clone(),
        );
        r.register(
            "reagent_store_write_error",
            "1 once the store has failed to write events, else 0",
            m.store_error.clone(),
        );
        r.register(
            "reagent_event_streams_open",
            "Event streams (SSE and WebSocket) being served",
            m.streams_open.clone(),
        );
        r.register(
            "reagent_event_stream_catchups",
            "Times a live event stream fell behind its queue and was caught up from memory or the store",
            m.stream_catchups.clone(),
        );
        m
    }

    /// An event stream opened; it counts as open until the value is dropped.
    pub(crate) fn stream_opened(&self) -> OpenStream {
        self.streams_open.inc();
        OpenStream(self.streams_open.clone())
    }

    /// Count what `event` says.
    pub(crate) fn observe(&self, event: &Event) {
        match &event.kind {
            EventKind::RunStarted { .. } => {
                self.runs_started.inc();
                self.runs_active.inc();
            }
            EventKind::LlmResponse {
                latency_ms,
                prompt_tokens,
                completion_tokens,
                ..
            } => {
                self.model_latency.observe(*latency_ms as f64 / 1000.0);
                self.tokens
                    .get_or_create(&TokenLabel { kind: "prompt" })
                    .inc_by(*prompt_tokens);
                self.tokens
                    .get_or_create(&TokenLabel { kind: "completion" })
                    .inc_by(*completion_tokens);
            }
            EventKind::ToolCall { name, ok, .. } => {
                self.tool_calls
                    .get_or_create(&ToolLabel {
                        tool: name.clone(),
                        result: if *ok { "ok" } else { "error" },
                    })
                    .inc();
            }
            EventKind::Guardrail {
                guardrail, action, ..
            } => {
                self.guardrails
                    .get_or_create(&GuardrailLabel {
                        guardrail: guardrail.as_str(),
                        action: action.as_str(),
                    })
                    .inc();
            }
            EventKind::RunFinished {
                outcome,
                iterations,
                ..
            } => {
                self.runs_finished
                    .get_or_create(&OutcomeLabel {
                        outcome: outcome.as_str().to_owned(),
                    })
                    .inc();
                self.iterations.inc_by(u64::from(*iterations));
            }
            _ => {}
        }
    }

    /// A run ended (whether or not it had started: `run_started` may never have come).
    pub(crate) fn run_ended(&self, started: bool) {
        if started {
            self.runs_active.dec();
        }
    }

    /// A live event stream fell behind and is caught up.
    pub(crate) fn stream_caught_up(&self) {
        self.stream_catchups.inc();
    }

    /// The text exposition, with the store's counters read now.
    pub(crate) fn render(&self, store: &Store) -> String {
        let dropped = store.dropped_events();
        let seen = self.store_dropped.get();
        if dropped > seen {
            self.store_dropped.inc_by(dropped - seen);
        }
        self.store_error.set(i64::from(store.error().is_some()));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
