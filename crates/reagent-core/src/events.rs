//! Delivering [`Event`]s to whoever listens: a callback, a channel, or nothing.

use std::sync::Arc;

use reagent_protocol::{Event, EventKind};

/// Where a run's events go. Cheap to clone.
#[derive(Clone)]
pub struct EventSink {
    run_id: Arc<str>,
    handler: Arc<dyn Fn(Event) + Send + Sync>,
}

impl EventSink {
    /// Events go to `handler`.
    pub fn new(run_id: &str, handler: Arc<dyn Fn(Event) + Send + Sync>) -> Self {
        EventSink {
            run_id: run_id.into(),
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

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Stamp and deliver one event.
    pub fn emit(&self, kind: EventKind) {
        (self.handler)(Event::now(&self.run_id, kind));
    }

    /// Emit a `guardrail` event.
    pub fn guardrail(&self, guardrail: &str, action: &str, detail: impl Into<String>) {
        self.emit(EventKind::Guardrail {
            guardrail: guardrail.to_owned(),
            action: action.to_owned(),
            detail: detail.into(),
        });
    }
}
