//! The one writer task: takes events from a bounded channel and writes them in batches.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use reagent_protocol::{Event, EventKind};
use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;

use crate::liveness::{host_name, own_pid};
use crate::{now_ms, BATCH_MAX, BATCH_WINDOW, CHANNEL_CAPACITY, HEARTBEAT, RUNNING};

/// Rows per multi-row `INSERT` (5 parameters each, far under both databases' limits).
const INSERT_CHUNK: usize = 128;

/// Events recorded and not yet taken by the writer. The recorders append here under a lock;
/// the writer is woken only when a batch starts, fills up or must be written at once, so a
/// run's events do not cost a thread wake-up each.
#[derive(Default)]
struct Pending {
    events: Vec<Event>,
    /// A `run_finished` is among them: write without waiting for the window to close.
    urgent: bool,
}

/// What the writer and the recorders share: the pending events, the first error and the drop
/// count.
#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    wake: Notify,
    error: Mutex<Option<String>>,
    dropped: AtomicU64,
}

impl Shared {
    fn fail(&self, message: impl FnOnce() -> String) {
        if let Ok(mut first) = self.error.lock() {
            if first.is_none() {
                let message = message();
                tracing::debug!("{message}");
                *first = Some(message);
            }
        }
    }

    /// Whether the pending events must be written without waiting for the window.
    fn ready(&self) -> bool {
        self.pending
            .lock()
            .map_or(true, |p| p.urgent || p.events.len() >= BATCH_MAX)
    }

    fn is_empty(&self) -> bool {
        self.pending.lock().map_or(true, |p| p.events.is_empty())
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
}

/// The sending side of the writer task. The channel carries only flush requests; it also
/// tells the writer when the last handle is gone.
#[derive(Clone)]
pub(crate) struct WriterHandle {
    tx: mpsc::Sender<oneshot::Sender<()>>,
    shared: Arc<Shared>,
}

impl WriterHandle {
    /// Start the writer task on the current runtime. `sqlite` picks the placeholder style of
    /// the batch insert.
    pub(crate) fn spawn(pool: AnyPool, location: String, sqlite: bool) -> Self {
        let (tx, rx) = mpsc::channel(FLUSH_CAPACITY);
        let shared = Arc::new(Shared::default());
        let writer = Writer {
            pool,
            location,
            sqlite,
            shared: shared.clone(),
            active: HashSet::new(),
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
        self.shared.error.lock().ok().and_then(|e| e.clone())
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
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
    /// Queue one event for writing. Deltas are never stored. When [`CHANNEL_CAPACITY`] events
    /// already wait for the writer, the event is dropped and counted (see the crate docs).
    pub fn record(&self, event: Event) {
        if event.kind.is_delta() {
            return;
        }
        if self.tx.is_closed() {
            self.drop_event(|| "events were not stored: the store's writer has stopped".to_owned());
            return;
        }
        let finished = matches!(event.kind, EventKind::RunFinished { .. });
        let wake = match self.shared.pending.lock() {
            Ok(mut p) if p.events.len() < CHANNEL_CAPACITY => {
                p.events.push(event);
                p.urgent |= finished;
                // The first event starts the batch's window; a full batch or a finished run
                // is written at once. Events in between wake nobody.
                p.events.len() == 1 || p.events.len() == BATCH_MAX || finished
            }
            _ => {
                self.drop_event(|| {
                    format!(
                        "events were not stored: the store's writer fell behind \
                         ({CHANNEL_CAPACITY} events waiting)"
                    )
                });
                return;
            }
        };
        if wake {
            self.shared.wake.notify_one();
        }
    }

    fn drop_event(&self, message: impl FnOnce() -> String) {
        self.shared.dropped.fetch_add(1, Ordering::Relaxed);
        self.shared.fail(message);
    }

    /// A handler for `reagent_core::EventSink::new` that records every event.
    pub fn handler(&self) -> Arc<dyn Fn(Event) + Send + Sync> {
        let me = self.clone();
        Arc::new(move |event| me.record(event))
    }
}

/// Totals a batch adds to a run's row while it runs.
#[derive(Default)]
struct Progress {
    iteration: i64,
    tool_calls: i64,
    prompt_tokens: i64,
    completion_tokens: i64,
}

struct Writer {
    pool: AnyPool,
    location: String,
    /// SQLite takes anonymous `?` placeholders, which it binds without looking up a name each.
    sqlite: bool,
    shared: Arc<Shared>,
    /// Runs started and not yet finished by this writer (their heartbeat is kept).
    active: HashSet<String>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::Receiver<oneshot::Sender<()>>) {
        let mut heartbeat = tokio::time::interval_at(Instant::now() + HEARTBEAT, HEARTBEAT);
        let mut waiting: Vec<oneshot::Sender<()>> = Vec::new();
        let mut closed = false;
        while !closed {
            // Wait for the first event of a batch, a flush, or the end.
            tokio::select! {
                m = rx.recv() => match m {
                    Some(done) => waiting.push(done),
                    None => closed = true,
                },
                () = self.shared.wake.notified() => {
                    // A wake-up left over from a batch already written.
                    if self.shared.is_empty() {
                        continue;
                    }
                }
                _ = heartbeat.tick() => {
                    self.heartbeat().await;
                    continue;
                }
            }
            // The window: more events join the batch until it is full, a run finishes, a
            // flush asks, or the window closes.
            let deadline = Instant::now() + BATCH_WINDOW;
            while !closed && waiting.is_empty() && !self.shared.ready() {
                tokio::select! {
                    m = rx.recv() => match m {
                        Some(done) => waiting.push(done),
                        None => closed = true,
                    },
                    () = self.shared.wake.notified() => {}
                    () = tokio::time::sleep_until(deadline) => break,
                }
            }
            let events = self.shared.take();
            for batch in events.chunks(BATCH_MAX) {
                self.write(batch).await;
            }
            for w in waiting.drain(..) {
                let _ = w.send(());
            }
        }
    }

    async fn write(&mut self, batch: &[Event]) {
        let n = batch.len();
        if let Err(e) = self.write_batch(batch).await {
            self.shared.fail(|| {
                format!(
                    "cannot write {n} events to the store {}: {e}",
                    self.location
                )
            });
            return;
        }
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

    async fn write_batch(&self, batch: &[Event]) -> Result<(), sqlx::Error> {
        let now = now_ms();
        let mut tx = self.pool.begin().await?;
        for e in batch {
            if let EventKind::RunStarted { .. } = e.kind {
                insert_run(&mut tx, e, now).await?;
            }
        }
        for chunk in batch.chunks(INSERT_CHUNK) {
            insert_events(&mut tx, chunk, self.sqlite).await?;
        }
        let mut progress: HashMap<&str, Progress> = HashMap::new();
        for e in batch {
            let p = progress.entry(e.run_id.as_str()).or_default();
            match &e.kind {
                EventKind::LlmResponse {
                    iteration,
                    prompt_tokens,
                    completion_tokens,
                    ..
                } => {
                    p.iteration = p.iteration.max(i64::from(*iteration));
                    p.prompt_tokens += to_i64(*prompt_tokens);
                    p.completion_tokens += to_i64(*completion_tokens);
                }
                EventKind::ToolCall { .. } => p.tool_calls += 1,
                _ => {}
            }
        }
        for (run_id, p) in &progress {
            sqlx::query(
                "UPDATE runs SET last_event_at = $1, \
                 iterations = CASE WHEN iterations < $2 THEN $2 ELSE iterations END, \
                 tool_calls = tool_calls + $3, prompt_tokens = prompt_tokens + $4, \
                 completion_tokens = completion_tokens + $5 \
                 WHERE id = $6 AND outcome = $7",
            )
            .bind(now)
            .bind(p.iteration)
            .bind(p.tool_calls)
            .bind(p.prompt_tokens)
            .bind(p.completion_tokens)
            .bind(*run_id)
            .bind(RUNNING)
            .execute(&mut *tx)
            .await?;
        }
        for e in batch {
            if let EventKind::RunFinished { .. } = e.kind {
                finish_run(&mut tx, e, now).await?;
            }
        }
        tx.commit().await
    }

    async fn heartbeat(&self) {
        let now = now_ms();
        for run_id in &self.active {
            let r = sqlx::query("UPDATE runs SET last_event_at = $1 WHERE id = $2")
                .bind(now)
                .bind(run_id.as_str())
                .execute(&self.pool)
                .await;
            if let Err(e) = r {
                self.shared.fail(|| {
                    format!(
                        "cannot update run {run_id} in the store {}: {e}",
                        self.location
                    )
                });
            }
        }
    }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

async fn insert_run(tx: &mut Tx<'_>, e: &Event, now: i64) -> Result<(), sqlx::Error> {
    let EventKind::RunStarted {
        task,
        model,
        provider,
        tool_mode,
        workspace,
        session_id,
        ..
    } = &e.kind
    else {
        return Ok(());
    };
    let session = (!session_id.is_empty()).then_some(session_id.as_str());
    sqlx::query(
        "INSERT INTO runs (id, session_id, started, model, provider, tool_mode, workspace, task, \
         outcome, pid, host, last_event_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING",
    )
    .bind(e.run_id.as_str())
    .bind(session)
    .bind(e.ts.as_str())
    .bind(model.as_str())
    .bind(provider.as_str())
    .bind(tool_mode.as_str())
    .bind(workspace.as_str())
    .bind(task.as_str())
    .bind(RUNNING)
    .bind(own_pid())
    .bind(host_name())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if let Some(session) = session {
        sqlx::query(
            "INSERT INTO sessions (id, created, updated) VALUES ($1, $2, $2) \
             ON CONFLICT (id) DO UPDATE SET updated = excluded.updated",
        )
        .bind(session)
        .bind(e.ts.as_str())
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

async fn insert_events(tx: &mut Tx<'_>, events: &[Event], sqlite: bool) -> Result<(), sqlx::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let mut sql = String::from("INSERT INTO events (run_id, seq, ts, type, json) VALUES ");
    for i in 0..events.len() {
        if i > 0 {
            sql.push_str(", ");
        }
        if sqlite {
            sql.push_str("(?, ?, ?, ?, ?)");
        } else {
            let b = i * 5;
            // Writing into a String cannot fail.
            let _ = write!(
                sql,
                "(${}, ${}, ${}, ${}, ${})",
                b + 1,
                b + 2,
                b + 3,
                b + 4,
                b + 5
            );
        }
    }
    let mut q = sqlx::query(&sql);
    for e in events {
        let json = serde_json::to_string(e).map_err(|err| sqlx::Error::Encode(Box::new(err)))?;
        q = q
            .bind(e.run_id.as_str())
            .bind(to_i64(e.seq))
            .bind(e.ts.as_str())
            .bind(e.type_name())
            .bind(json);
    }
    q.execute(&mut **tx).await?;
    Ok(())
}

async fn finish_run(tx: &mut Tx<'_>, e: &Event, now: i64) -> Result<(), sqlx::Error> {
    let EventKind::RunFinished {
        outcome,
        iterations,
        tool_calls,
        prompt_tokens,
        completion_tokens,
        error,
        error_kind,
        answer,
        ..
    } = &e.kind
    else {
        return Ok(());
    };
    let error_kind = error_kind
        .and_then(|k| serde_json::to_value(k).ok())
        .and_then(|v| v.as_str().map(str::to_owned));
    sqlx::query(
        "UPDATE runs SET finished = $1, outcome = $2, iterations = $3, tool_calls = $4, \
         prompt_tokens = $5, completion_tokens = $6, error = $7, error_kind = $8, answer = $9, \
         last_event_at = $10 WHERE id = $11",
    )
    .bind(e.ts.as_str())
    .bind(outcome.as_str())
    .bind(i64::from(*iterations))
    .bind(i64::from(*tool_calls))
    .bind(to_i64(*prompt_tokens))
    .bind(to_i64(*completion_tokens))
    .bind(error.as_deref())
    .bind(error_kind)
    .bind(answer.as_str())
    .bind(now)
    .bind(e.run_id.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(())
}
