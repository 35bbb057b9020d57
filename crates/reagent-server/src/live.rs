//! A run in progress: its event fan-out ([`EventBus`]), the recent events kept for clients
//! that (re)connect, and its cancellation.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use reagent_core::{EventBus, Subscription};
use reagent_protocol::{CancellationToken, Event, EventKind};
use tokio::sync::watch;

use crate::api::RunSummary;

/// What a new subscriber gets: the recent events after its position, the first `seq` still
/// kept in memory (older ones come from the store), and the live subscription that goes on
/// from there without a gap.
pub(crate) struct Joined {
    pub(crate) backlog: Vec<Arc<Event>>,
    pub(crate) oldest_kept: Option<u64>,
    pub(crate) live: Subscription,
}

struct Recent {
    events: VecDeque<Arc<Event>>,
    /// Set once `run_finished` is published: later events (an approval decided on a thread the
    /// run no longer waits for) are dropped.
    closed: bool,
}

/// One live run.
pub(crate) struct LiveRun {
    pub(crate) id: String,
    pub(crate) session_id: String,
    pub(crate) cancel: CancellationToken,
    /// When the server started it.
    pub(crate) created: Instant,
    /// What `GET /v1/runs/{id}` says of it before its `run_started` reaches the store (while
    /// the agent asks the server about the model).
    pub(crate) placeholder: RunSummary,
    bus: EventBus,
    recent: Mutex<Recent>,
    keep: usize,
    /// The last `seq` published (0 before the first).
    published: watch::Sender<u64>,
    totals: Mutex<Totals>,
}

/// Running totals, for a `run_finished` written on the run's behalf when the server stops.
#[derive(Default, Clone, Copy)]
pub(crate) struct Totals {
    /// Whether `run_started` was published.
    pub(crate) started: bool,
    pub(crate) iterations: u32,
    pub(crate) tool_calls: u32,
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
}

impl LiveRun {
    pub(crate) fn new(
        id: String,
        session_id: String,
        cancel: CancellationToken,
        queue: usize,
        keep: usize,
        placeholder: RunSummary,
    ) -> Self {
        LiveRun {
            id,
            session_id,
            cancel,
            created: Instant::now(),
            placeholder,
            bus: EventBus::new(queue),
            recent: Mutex::new(Recent {
                events: VecDeque::new(),
                closed: false,
            }),
            keep: keep.max(1),
            published: watch::channel(0).0,
            totals: Mutex::new(Totals::default()),
        }
    }

    fn recent(&self) -> MutexGuard<'_, Recent> {
        // A panic elsewhere while holding the lock leaves the deque consistent (push/pop only).
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Publish one event to the subscribers and the recent events. Returns false when the run
    /// was already closed (the event is dropped).
    pub(crate) fn publish(&self, event: &Event) -> bool {
        let mut recent = self.recent();
        if recent.closed {
            return false;
        }
        if event.kind.is_delta() {
            self.bus.publish(event.clone());
            return true;
        }
        self.count(&event.kind);
        recent.events.push_back(Arc::new(event.clone()));
        if recent.events.len() > self.keep {
            recent.events.pop_front();
        }
        if matches!(event.kind, EventKind::RunFinished { .. }) {
            recent.closed = true;
        }
        // Under the lock, so a subscriber joining now sees it either in its backlog or live.
        self.bus.publish(event.clone());
        self.published.send_replace(event.seq);
        true
    }

    fn count(&self, kind: &EventKind) {
        let mut t = self.totals.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            EventKind::RunStarted { .. } => t.started = true,
            EventKind::LlmResponse {
                iteration,
                prompt_tokens,
                completion_tokens,
                ..
            } => {
                t.iterations = t.iterations.max(*iteration);
                t.prompt_tokens += prompt_tokens;
                t.completion_tokens += completion_tokens;
            }
            EventKind::ToolCall { .. } => t.tool_calls += 1,
            _ => {}
        }
    }

    /// The totals so far.
    pub(crate) fn totals(&self) -> Totals {
        *self.totals.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `run_finished` was published.
    pub(crate) fn is_closed(&self) -> bool {
        self.recent().closed
    }

    /// Join the run after `after`, with the streamed deltas when `deltas`: see [`Joined`].
    pub(crate) fn join(&self, after: u64, deltas: bool) -> Joined {
        let recent = self.recent();
        let live = self.bus.subscribe(deltas);
        Joined {
            backlog: recent
                .events
                .iter()
                .filter(|e| e.seq > after)
                .cloned()
                .collect(),
            oldest_kept: recent.events.front().map(|e| e.seq),
            live,
        }
    }

    /// Wait until an event with `seq >= 1` was published (the run started) or the run ended.
    pub(crate) async fn started(&self) {
        let mut rx = self.published.subscribe();
        // An error means the run is gone, which is as good as started for a waiter.
        let _ = rx.wait_for(|seq| *seq >= 1).await;
    }
}
