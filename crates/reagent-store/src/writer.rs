//! The one writer task: takes the recorded events, writes them in batches, and keeps what the
//! database does not take (in memory up to a bound, then in the journal) until it does.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_protocol::{Event, EventKind};
use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

use crate::batch::{Sink, Written};
use crate::journal::Segment;
use crate::queue::Queue;
use crate::{now_ms, BATCH_MAX, BATCH_WINDOW, HEARTBEAT};

/// The first pause before a failed write is tried again; it doubles up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(100);
/// The longest pause between two attempts while the database does not answer.
pub const RETRY_MAX: Duration = Duration::from_secs(5);

/// Events recorded and not yet taken by the writer. The recorders append here under a lock;
/// the writer is woken only when a batch starts, fills up or must be written at once, so a
/// run's events do not cost a thread wake-up each.
#[derive(Default)]
struct Pending {
    events: Vec<Event>,
    /// A `run_finished` is among them: write without waiting for the window to close.
    urgent: bool,
}

/// What the store reports: events lost for good, and events still waiting while the database
/// does not answer. Updated by the writer after each of its turns.
#[derive(Default)]
struct Status {
    lost: u64,
    /// Why the first lost events were lost.
    first_loss: Option<String>,
    /// Events not yet in the database (in memory or the journal).
    waiting: usize,
    /// Of those, in the journal.
    journalled: usize,
    /// The database's error, while writes fail.
    outage: Option<String>,
    /// Why the journal cannot be written, when it cannot.
    journal_error: Option<String>,
}

/// What the writer and the recorders share.
struct Shared {
    pending: Mutex<Pending>,
    wake: Notify,
    status: Mutex<Status>,
    /// The store, as shown to people.
    location: String,
    /// The journal's directory.
    journal: String,
}

impl Shared {
    fn lose(&self, events: usize, why: impl FnOnce() -> String) {
        if events == 0 {
            return;
        }
        if let Ok(mut s) = self.status.lock() {
            s.lost += events as u64;
            if s.first_loss.is_none() {
                let why = why();
                tracing::debug!("{why}");
                s.first_loss = Some(why);
            }
        }
    }

    /// Whether the pending events must be written without waiting for the window.
    fn ready(&self) -> bool {
        self.pending
            .lock()
            .map_or(true, |p| p.urgent || p.events.len() >= BATCH_MAX)
    }

    fn has_pending(&self) -> bool {
        self.pending.lock().is_ok_and(|p| !p.events.is_empty())
    }

    /// Take every pending event.
    fn take(&self) -> Vec<Event> {
        match self.pending.lock() {
            Ok(mut p) => {
                p.urgent = false;
                std::mem::take(&mut p.events)
            }
            Err(_) => Vec::new(),
        }
    }

    fn error(&self) -> Option<String> {
        let s = self.status.lock().ok()?;
        let mut parts = Vec::new();
        if let Some(why) = &s.first_loss {
            parts.push(format!("{} events were not stored: {why}", s.lost));
        }
        if s.waiting > 0 {
            let cause = match &s.outage {
                Some(o) => format!("the store {} does not answer ({o})", self.location),
                None => format!("the store {} is catching up", self.location),
            };
            let memory = s.waiting - s.journalled.min(s.waiting);
            parts.push(match &s.journal_error {
                None if memory == 0 => format!(
                    "{cause}: {} events wait in its journal {}; they are written when it \
                     answers, or when reagent next opens this store",
                    s.waiting, self.journal
                ),
                None => format!(
                    "{cause}: {} events wait, {} in its journal {} and {memory} in memory; they \
                     are written when it answers (those in memory only while this process runs)",
                    s.waiting, s.journalled, self.journal
                ),
                Some(j) => format!(
                    "{cause} and {j}: {} events wait, {} in the journal and {memory} in memory \
                     only, lost if this process ends before the store answers",
                    s.waiting, s.journalled
                ),
            });
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// A flush waiting for the events queued before it.
struct Waiter {
    /// Queue position every earlier event has.
    upto: u64,
    done: oneshot::Sender<()>,
}

/// The sending side of the writer task. The channel carries only flush requests; it also
/// tells the writer when the last handle is gone.
#[derive(Clone)]
pub(crate) struct WriterHandle {
    tx: mpsc::Sender<oneshot::Sender<()>>,
    shared: Arc<Shared>,
}

/// What a writer is started with.
pub(crate) struct WriterSetup {
    /// The pool, for the heartbeat.
    pub(crate) pool: AnyPool,
    /// Where batches are written.
    pub(crate) sink: Sink,
    pub(crate) location: String,
    /// The queue, holding the segments taken over from writers that are gone.
    pub(crate) queue: Queue,
}

impl WriterHandle {
    /// Start the writer task on the current runtime.
    pub(crate) fn spawn(setup: WriterSetup) -> Self {
        let (tx, rx) = mpsc::channel(FLUSH_CAPACITY);
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            wake: Notify::new(),
            status: Mutex::default(),
            location: setup.location,
            journal: setup.queue.dir().display().to_string(),
        });
        let writer = Writer {
            pool: setup.pool,
            sink: setup.sink,
            shared: shared.clone(),
            queue: setup.queue,
            active: HashSet::new(),
            retry_at: None,
            failures: 0,
            outage: None,
        };
        tokio::spawn(writer.run(rx));
        WriterHandle { tx, shared }
    }

    pub(crate) fn recorder(&self) -> Recorder {
        Recorder {
            tx: self.tx.clone(),
            shared: self.shared.clone(),
        }
    }

    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(done).await.is_ok() {
            // An error only means the writer ended, which also means nothing is pending.
            let _ = wait.await;
        }
    }

    pub(crate) fn error(&self) -> Option<String> {
        self.shared.error()
    }

    pub(crate) fn lost(&self) -> u64 {
        self.shared.status.lock().map_or(0, |s| s.lost)
    }

    pub(crate) fn waiting(&self) -> usize {
        self.shared.status.lock().map_or(0, |s| s.waiting)
    }
}

/// Flush requests that may wait at once before `flush` itself waits.
const FLUSH_CAPACITY: usize = 64;

/// Records runs' events into the store without ever blocking the caller.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::Sender<oneshot::Sender<()>>,
    shared: Arc<Shared>,
}

impl Recorder {
    /// Queue one event for writing. Deltas are never stored. Nothing is dropped: events the
    /// database does not take in time wait in memory, then in the journal (see the crate docs).
    pub fn record(&self, event: Event) {
        if event.kind.is_delta() {
            return;
        }
        if self.tx.is_closed() {
            self.shared.lose(1, || {
                format!(
                    "the writer of the store {} has stopped",
                    self.shared.location
                )
            });
            return;
        }
        let finished = matches!(event.kind, EventKind::RunFinished { .. });
        let wake = match self.shared.pending.lock() {
            Ok(mut p) => {
                p.events.push(event);
                p.urgent |= finished;
                // The first event starts the batch's window; a full batch or a finished run
                // is written at once. Events in between wake nobody.
                p.events.len() == 1 || p.events.len() % BATCH_MAX == 0 || finished
            }
            Err(_) => {
                self.shared
                    .lose(1, || "the store's queue lock is poisoned".to_owned());
                return;
            }
        };
        if wake {
            self.shared.wake.notify_one();
        }
    }

    /// A handler for `reagent_core::EventSink::new` that records every event.
    pub fn handler(&self) -> Arc<dyn Fn(Event) + Send + Sync> {
        let me = self.clone();
        Arc::new(move |event| me.record(event))
    }
}

struct Writer {
    pool: AnyPool,
    sink: Sink,
    shared: Arc<Shared>,
    queue: Queue,
    /// Runs started and not yet finished by this writer (their heartbeat is kept).
    active: HashSet<String>,
    /// While writes fail: when to try again.
    retry_at: Option<Instant>,
    /// Failed attempts in a row.
    failures: u32,
    /// The database's last error, while writes fail.
    outage: Option<String>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<oneshot::Sender<()>>) {
        let mut heartbeat = tokio::time::interval_at(Instant::now() + HEARTBEAT, HEARTBEAT);
        let mut waiting: Vec<Waiter> = Vec::new();
        let mut closed = false;
        loop {
            let healthy_work = self.retry_at.is_none() && !self.queue.is_empty();
            if waiting.is_empty() && !closed && !healthy_work {
                // Wait for the first event of a batch, a flush, a retry, or the end.
                let retry = self.retry_at;
                tokio::select! {
                    m = rx.recv() => self.request(m, &mut waiting, &mut closed),
                    () = self.shared.wake.notified() => {}
                    _ = heartbeat.tick() => {
                        self.heartbeat().await;
                        continue;
                    }
                    () = sleep_until(retry) => self.retry_at = None,
                }
                if self.retry_at.is_none() && self.queue.is_empty() {
                    self.window(&mut rx, &mut waiting, &mut closed).await;
                }
            }
            self.take_pending();
            if !waiting.is_empty() || closed {
                // Someone waits: try now rather than at the next retry.
                self.retry_at = None;
            }
            if self.retry_at.is_none() {
                self.drain(&mut rx, &mut waiting, &mut closed).await;
            }
            if self.retry_at.is_some() && (!waiting.is_empty() || closed) {
                // The database does not answer and someone waits: make the events durable.
                if let Err(why) = self.queue.spill() {
                    if closed {
                        let n = self.queue.drop_memory();
                        let outage = self.outage.clone().unwrap_or_default();
                        self.shared.lose(n, || {
                            format!(
                                "the store {} does not answer ({outage}) and {why}",
                                self.shared.location
                            )
                        });
                    }
                }
                self.report();
                for w in waiting.drain(..) {
                    let _ = w.done.send(());
                }
            }
            self.report();
            if closed {
                break;
            }
        }
    }

    /// A flush request (it waits for the events recorded before it), or the end.
    fn request(
        &mut self,
        m: Option<oneshot::Sender<()>>,
        waiting: &mut Vec<Waiter>,
        closed: &mut bool,
    ) {
        match m {
            Some(done) => {
                self.take_pending();
                waiting.push(Waiter {
                    upto: self.queue.pushed(),
                    done,
                });
            }
            None => *closed = true,
        }
    }

    /// The batch window: more events join until the batch is full, a run finishes, a flush
    /// asks, or the window closes.
    async fn window(
        &mut self,
        rx: &mut mpsc::Receiver<oneshot::Sender<()>>,
        waiting: &mut Vec<Waiter>,
        closed: &mut bool,
    ) {
        if !self.shared.has_pending() {
            return;
        }
        let deadline = Instant::now() + BATCH_WINDOW;
        while !*closed && waiting.is_empty() && !self.shared.ready() {
            tokio::select! {
                m = rx.recv() => self.request(m, waiting, closed),
                () = self.shared.wake.notified() => {}
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
    }

    fn take_pending(&mut self) {
        self.queue.push(self.shared.take());
        self.note_losses();
    }

    fn note_losses(&mut self) {
        for loss in self.queue.take_losses() {
            self.shared.lose(loss.events, || {
                format!("the store {}: {}", self.shared.location, loss.why)
            });
        }
    }

    /// Write the queue, oldest first, until it is empty or a write fails for an outage. New
    /// events and flush requests are taken while a write is under way; a flush is answered as
    /// soon as the events before it are written.
    async fn drain(
        &mut self,
        rx: &mut mpsc::Receiver<oneshot::Sender<()>>,
        waiting: &mut Vec<Waiter>,
        closed: &mut bool,
    ) {
        loop {
            self.answer(waiting);
            let Some(mut batch) = self.queue.next_batch(BATCH_MAX) else {
                self.note_losses();
                self.answer(waiting);
                return;
            };
            self.note_losses();
            // Shared with the write, which may run on another thread; back in the batch after.
            let events = Arc::new(std::mem::take(&mut batch.events));
            let written = {
                let write = self.sink.write(events.clone(), batch.pid);
                tokio::pin!(write);
                loop {
                    tokio::select! {
                        w = &mut write => break w,
                        () = self.shared.wake.notified() => {
                            self.queue.push(self.shared.take());
                        }
                        m = rx.recv(), if !*closed => match m {
                            Some(done) => {
                                self.queue.push(self.shared.take());
                                waiting.push(Waiter { upto: self.queue.pushed(), done });
                            }
                            None => *closed = true,
                        },
                    }
                }
            };
            batch.events = Arc::try_unwrap(events).unwrap_or_else(|shared| (*shared).clone());
            match written {
                Written::Stored { refused } => {
                    for r in refused {
                        self.shared.lose(r.events, || {
                            format!(
                                "the store {} refused the events of run {}: {}",
                                self.shared.location, r.run_id, r.error
                            )
                        });
                    }
                    self.note_written(&batch.events);
                    self.queue.done(batch);
                    self.failures = 0;
                    self.outage = None;
                }
                Written::Outage(e) => {
                    tracing::debug!(
                        "store {}: write failed, trying again: {e}",
                        self.shared.location
                    );
                    self.queue.undo(batch);
                    self.failures = self.failures.saturating_add(1);
                    self.retry_at = Some(Instant::now() + backoff(self.failures));
                    self.outage = Some(e);
                    return;
                }
            }
        }
    }

    fn note_written(&mut self, batch: &[Event]) {
        for e in batch {
            match &e.kind {
                EventKind::RunStarted { .. } => {
                    self.active.insert(e.run_id.clone());
                }
                EventKind::RunFinished { .. } => {
                    self.active.remove(&e.run_id);
                }
                _ => {}
            }
        }
    }

    /// Answer the flushes whose events are all written.
    fn answer(&self, waiting: &mut Vec<Waiter>) {
        let written_before = self.queue.written_before();
        if waiting.iter().any(|w| w.upto <= written_before) {
            self.report();
        }
        let mut i = 0;
        while i < waiting.len() {
            if waiting[i].upto <= written_before {
                let _ = waiting.swap_remove(i).done.send(());
            } else {
                i += 1;
            }
        }
    }

    /// Publish the counts [`Store::error`](crate::Store::error) reads. Events in memory while
    /// the database answers are merely on their way; they count as waiting only during an
    /// outage or while the journal holds some.
    fn report(&self) {
        if let Ok(mut s) = self.shared.status.lock() {
            let stalled = self.retry_at.is_some() || self.queue.journalled() > 0;
            s.waiting = if stalled { self.queue.len() } else { 0 };
            s.journalled = self.queue.journalled();
            s.outage = self.retry_at.and(self.outage.clone());
            s.journal_error = self.queue.journal_error().map(str::to_owned);
        }
    }

    async fn heartbeat(&self) {
        if self.retry_at.is_some() {
            return;
        }
        let now = now_ms();
        for run_id in &self.active {
            let r = sqlx::query("UPDATE runs SET last_event_at = $1 WHERE id = $2")
                .bind(now)
                .bind(run_id.as_str())
                .execute(&self.pool)
                .await;
            if let Err(e) = r {
                // The next batch's write finds out whether the database is gone.
                tracing::debug!("store {}: heartbeat of {run_id}: {e}", self.shared.location);
            }
        }
    }
}

/// The pause after `failures` failed attempts in a row.
fn backoff(failures: u32) -> Duration {
    let doubled = RETRY_FIRST.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    doubled.min(RETRY_MAX)
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The segments of `dir` whose writers are gone, for a new writer's queue.
pub(crate) fn take_over_orphans(dir: &std::path::Path) -> Vec<Segment> {
    match crate::journal::orphans(dir) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!("cannot read the store's journal {}: {e}", dir.display());
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), RETRY_FIRST);
        assert_eq!(backoff(2), RETRY_FIRST * 2);
        assert_eq!(backoff(60), RETRY_MAX);
    }
}
