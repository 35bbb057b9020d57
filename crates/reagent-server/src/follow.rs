//! Following a run's events from a position: the store for what is no longer (or never was)
//! in memory, then the live fan-out, each event exactly once and in `seq` order.
//!
//! A client that falls behind the live queue (its connection is slow, or it stopped reading)
//! is told it lagged by the [`EventBus`](reagent_core::EventBus); it is then caught up from the
//! run's recent events in memory, or from the store for older ones, and goes on live. Its own
//! queue towards the connection is bounded ([`CLIENT_QUEUE`] frames), so a slow client holds
//! little memory; a client that is gone ends its follower at the next event.
//!
//! A follower that asked for deltas also gets the live run's `text_delta` and `reasoning_delta`
//! events, each right after the numbered event whose `seq` it carries; they are never stored,
//! so a replay has none, and deltas published while a follower was behind are not sent again.

use std::sync::Arc;

use reagent_core::Received;
use reagent_protocol::{Event, EventKind};
use reagent_store::Store;
use tokio::sync::mpsc;

use crate::runs::Runs;

/// Frames buffered between a follower and its connection.
pub(crate) const CLIENT_QUEUE: usize = 64;
/// Events read from the store per query while replaying.
const STORE_PAGE: u32 = 512;

/// One event, serialized once.
pub(crate) struct Frame {
    pub(crate) seq: u64,
    pub(crate) kind: String,
    pub(crate) json: String,
}

/// `event`, serialized.
fn frame_of(event: &Event) -> Frame {
    Frame {
        seq: event.seq,
        kind: event.kind.type_name().to_owned(),
        json: serde_json::to_string(event).unwrap_or_default(),
    }
}

/// Why following stopped early.
enum Stop {
    /// The client is gone.
    Gone,
    /// The store does not hold an event the client needs (it could not be written).
    Missing,
}

/// Where to follow from and what to send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    /// Send the events after this `seq`.
    pub(crate) after: u64,
    /// Send the live deltas too.
    pub(crate) deltas: bool,
}

/// Follow run `run_id` from `from`: frames arrive on the returned receiver until the run's
/// `run_finished` (or, for a run that is not live, its last stored event); dropping the
/// receiver stops the follower.
pub(crate) fn follow(
    runs: Runs,
    store: Store,
    run_id: String,
    from: Start,
) -> mpsc::Receiver<Frame> {
    let (tx, rx) = mpsc::channel(CLIENT_QUEUE);
    let open = runs.metrics().stream_opened();
    tokio::spawn(async move {
        let _open = open;
        let mut follower = Follower {
            tx,
            last: from.after,
            deltas: from.deltas,
            done: false,
        };
        match follower.run(&runs, &store, &run_id).await {
            Ok(()) | Err(Stop::Gone) => {}
            Err(Stop::Missing) => tracing::warn!(
                "run {run_id}: event {} is missing from the store; the stream ends early",
                follower.last + 1
            ),
        }
    });
    rx
}

struct Follower {
    tx: mpsc::Sender<Frame>,
    /// The last `seq` sent.
    last: u64,
    /// Whether live deltas are sent.
    deltas: bool,
    /// `run_finished` was sent.
    done: bool,
}

impl Follower {
    async fn run(&mut self, runs: &Runs, store: &Store, run_id: &str) -> Result<(), Stop> {
        while !self.done {
            let Some(live) = runs.live(run_id) else {
                // Finished (its events are all written before it stops being live) or not from
                // this server: the store has everything.
                return self.replay(store, run_id, None).await;
            };
            let joined = live.join(self.last, self.deltas);
            if let Some(oldest) = joined.oldest_kept.filter(|o| *o > self.last + 1) {
                store.flush().await;
                self.replay(store, run_id, Some(oldest)).await?;
                if self.last + 1 < oldest {
                    return Err(Stop::Missing);
                }
            }
            for event in joined.backlog {
                self.send_event(&event).await?;
            }
            let mut sub = joined.live;
            while !self.done {
                let received = tokio::select! {
                    r = sub.recv() => r,
                    () = self.tx.closed() => return Err(Stop::Gone),
                };
                match received {
                    // A delta continues the event it follows; one from before a catch-up is
                    // stale, and none comes after `run_finished`.
                    Received::Event(event) if event.kind.is_delta() => {
                        if event.seq == self.last {
                            self.send(frame_of(&event)).await?;
                        }
                    }
                    Received::Event(event) if event.seq <= self.last => {}
                    Received::Event(event) if event.seq == self.last + 1 => {
                        self.send_event(&event).await?;
                    }
                    // A gap (after a lag) or a lag: join again from where this client is.
                    Received::Event(_) | Received::Lagged(_) => {
                        runs.metrics().stream_caught_up();
                        break;
                    }
                    Received::Closed => break,
                }
            }
        }
        Ok(())
    }

    async fn send_event(&mut self, event: &Arc<Event>) -> Result<(), Stop> {
        if event.seq <= self.last {
            return Ok(());
        }
        self.send(frame_of(event)).await?;
        self.done = matches!(event.kind, EventKind::RunFinished { .. });
        Ok(())
    }

    async fn send(&mut self, frame: Frame) -> Result<(), Stop> {
        self.last = frame.seq;
        self.tx.send(frame).await.map_err(|_| Stop::Gone)
    }

    /// Send the stored events after `self.last` (and before `until`, when given).
    async fn replay(
        &mut self,
        store: &Store,
        run_id: &str,
        until: Option<u64>,
    ) -> Result<(), Stop> {
        loop {
            let page = store
                .events_after(
                    run_id,
                    i64::try_from(self.last).unwrap_or(i64::MAX),
                    STORE_PAGE,
                )
                .await
                .map_err(|e| {
                    tracing::warn!("run {run_id}: cannot read events: {e}");
                    Stop::Missing
                })?;
            if page.is_empty() {
                return Ok(());
            }
            for stored in page {
                let seq = u64::try_from(stored.seq).unwrap_or(0);
                if until.is_some_and(|u| seq >= u) || seq <= self.last {
                    return Ok(());
                }
                let finished = stored.kind == "run_finished";
                self.send(Frame {
                    seq,
                    kind: stored.kind,
                    json: stored.json,
                })
                .await?;
                if finished {
                    self.done = true;
                    return Ok(());
                }
            }
        }
    }
}
