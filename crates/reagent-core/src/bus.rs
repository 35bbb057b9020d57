//! Fan-out of a run's events to live subscribers (a dashboard, an SSE client, a console).
//!
//! Every subscriber has a bounded queue. Publishing never waits: a subscriber that stops
//! reading falls behind, loses the oldest events it had not read, and is told how many it
//! missed ([`Received::Lagged`]) — it can then fetch them from the store and go on. The loop is
//! never slowed or blocked by a subscriber. Deltas (streamed text and reasoning) reach only the
//! subscribers that ask for them.
//!
//! ```
//! # async fn demo() {
//! use std::sync::Arc;
//! use reagent_core::{EventBus, EventSink, Received};
//!
//! let bus = Arc::new(EventBus::new(1024));
//! let mut live = bus.subscribe(false);
//! let publisher = bus.clone();
//! let sink = EventSink::new("run-1", Arc::new(move |e| publisher.publish(e)));
//! sink.emit(reagent_protocol::EventKind::Nudge { reason: "empty_reply".into(), count: 1 });
//! assert!(matches!(live.recv().await, Received::Event(e) if e.seq == 1));
//! # }
//! ```

use std::sync::Arc;

use reagent_protocol::Event;
use tokio::sync::broadcast;

/// A fan-out point for events.
pub struct EventBus {
    tx: broadcast::Sender<Arc<Event>>,
}

/// What a subscriber receives next.
#[derive(Debug, Clone)]
pub enum Received {
    /// The next event.
    Event(Arc<Event>),
    /// The subscriber fell behind and this many events were dropped from its queue.
    Lagged(u64),
    /// The bus is gone: no event will come.
    Closed,
}

/// One subscriber's end of an [`EventBus`].
pub struct Subscription {
    rx: broadcast::Receiver<Arc<Event>>,
    deltas: bool,
}

impl EventBus {
    /// A bus whose subscribers each hold at most `capacity` unread events.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        EventBus { tx }
    }

    /// Deliver `event` to every subscriber; never waits. Costs nothing without subscribers.
    pub fn publish(&self, event: Event) {
        if self.tx.receiver_count() > 0 {
            // An error only means the last subscriber left meanwhile.
            let _ = self.tx.send(Arc::new(event));
        }
    }

    /// A new subscriber, receiving the events published from now on; with `deltas`, the
    /// streamed text and reasoning deltas too.
    pub fn subscribe(&self, deltas: bool) -> Subscription {
        Subscription {
            rx: self.tx.subscribe(),
            deltas,
        }
    }

    /// How many subscribers there are.
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }
}

impl Subscription {
    /// The next event, or word that events were missed or that the bus is gone.
    pub async fn recv(&mut self) -> Received {
        loop {
            match self.rx.recv().await {
                Ok(event) if event.kind.is_delta() && !self.deltas => continue,
                Ok(event) => return Received::Event(event),
                Err(broadcast::error::RecvError::Lagged(n)) => return Received::Lagged(n),
                Err(broadcast::error::RecvError::Closed) => return Received::Closed,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EventSink;
    use reagent_protocol::EventKind;

    fn nudge(n: u32) -> EventKind {
        EventKind::Nudge {
            reason: "empty_reply".into(),
            count: n,
        }
    }

    #[tokio::test]
    async fn a_reader_gets_every_event_in_order_while_a_stalled_one_only_lags() {
        let bus = Arc::new(EventBus::new(16));
        let mut reader = bus.subscribe(false);
        let mut stalled = bus.subscribe(false);
        let publisher = bus.clone();
        let sink = EventSink::new("r", Arc::new(move |e| publisher.publish(e)));
        let mut seen = Vec::new();
        for n in 1..=100 {
            // The publisher never waits, although `stalled` reads nothing.
            sink.emit(nudge(n));
            if n % 8 == 0 {
                while seen.len() < n as usize {
                    match reader.recv().await {
                        Received::Event(e) => seen.push(e.seq),
                        other => panic!("reader: {other:?}"),
                    }
                }
            }
        }
        while seen.len() < 100 {
            match reader.recv().await {
                Received::Event(e) => seen.push(e.seq),
                other => panic!("reader: {other:?}"),
            }
        }
        assert_eq!(seen, (1..=100).collect::<Vec<u64>>());
        match stalled.recv().await {
            Received::Lagged(missed) => assert_eq!(missed, 100 - 16),
            other => panic!("stalled: {other:?}"),
        }
        // After the lag it reads on from the oldest event still queued.
        assert!(matches!(stalled.recv().await, Received::Event(e) if e.seq == 85));
    }

    #[tokio::test]
    async fn deltas_reach_only_those_who_ask() {
        let bus = Arc::new(EventBus::new(16));
        let mut plain = bus.subscribe(false);
        let mut with_deltas = bus.subscribe(true);
        let publisher = bus.clone();
        let sink = EventSink::new("r", Arc::new(move |e| publisher.publish(e)));
        sink.emit(EventKind::TextDelta { text: "hi".into() });
        sink.emit(nudge(1));
        drop(sink);
        assert!(matches!(with_deltas.recv().await, Received::Event(e) if e.kind.is_delta()));
        assert!(matches!(with_deltas.recv().await, Received::Event(e) if e.seq == 1));
        assert!(matches!(plain.recv().await, Received::Event(e) if e.seq == 1));
        drop(bus);
        assert!(matches!(plain.recv().await, Received::Closed));
    }
}
