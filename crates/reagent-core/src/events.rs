//! Delivering [`Event`]s to whoever listens: a callback, a channel, or nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use reagent_protocol::{Event, EventKind, Guardrail, GuardrailAction};

/// Where a run's events go: numbers them (`seq`, gapless from 1), stamps them and hands them to
/// a handler. Cheap to clone; clones share the numbering.
#[derive(Clone)]
pub struct EventSink {
    run_id: Arc<str>,
    seq: Arc<AtomicU64>,
    handler: Arc<dyn Fn(Event) + Send + Sync>,
}

impl EventSink {
    /// Events go to `handler`.
    pub fn new(run_id: &str, handler: Arc<dyn Fn(Event) + Send + Sync>) -> Self {
        EventSink {
            run_id: run_id.into(),
            seq: Arc::new(AtomicU64::new(0)),
            handler,
        }
    }

    /// Events go to an unbounded channel (the receiver may be dropped at any time).
    pub fn channel(run_id: &str, tx: tokio::sync::mpsc::UnboundedSender<Event>) -> Self {
        Self::new(
            run_id,
            Arc::new(move |e| {
                // A dropped receiver only means nobody listens any more.
                let _ = tx.send(e);
            }),
        )
    }

    /// The `seq` of the last numbered event emitted (0 before the first).
    pub fn last_seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Number, stamp and deliver one event. A delta (streamed text or reasoning) takes no number
    /// of its own: it carries the `seq` of the event before it, so the numbered events, which
    /// are what is stored and resumed from, stay gapless.
    pub fn emit(&self, kind: EventKind) {
        let seq = if kind.is_delta() {
            self.seq.load(Ordering::Relaxed)
        } else {
            self.seq.fetch_add(1, Ordering::Relaxed) + 1
        };
        (self.handler)(Event::new(&self.run_id, seq, kind));
    }

    /// Emit a `guardrail` event.
    pub fn guardrail(
        &self,
        guardrail: Guardrail,
        action: GuardrailAction,
        detail: impl Into<String>,
    ) {
        self.emit(EventKind::Guardrail {
            guardrail,
            action,
            detail: detail.into(),
        });
    }
}
