//! Writing one batch of events: their rows, the rows of the runs they start and finish, and
//! the runs' running totals, in one transaction. Every part is idempotent, so a batch written
//! twice (a retry after a commit whose answer was lost, a journal replayed again) changes
//! nothing the second time: events already stored are skipped by `(run_id, seq)` and only the
//! events actually inserted count towards a run's totals (a batch whose insert reports fewer
//! rows than events is rolled back and written again without the stored ones).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Duration;

use reagent_protocol::{Event, EventKind};
use sqlx::AnyPool;

use crate::classify::is_transient;
use crate::liveness::host_name;
use crate::{now_ms, RUNNING};

/// Rows per multi-row `INSERT`: a whole batch, one statement (5 parameters each: 1,280, far
/// under both databases' limits, SQLite 32,766 and PostgreSQL 65,535).
const INSERT_CHUNK: usize = crate::BATCH_MAX;

/// Longest one write may take before it counts as an outage (a server that stopped answering
/// without closing the connection).
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(90);

/// What became of a batch.
pub(crate) enum Written {
    /// Every event is stored, except those of `refused` runs (the database refused them).
    Stored { refused: Vec<Refused> },
    /// The database did not answer (or was busy): nothing is known to be stored; try again.
    Outage(String),
}

/// A run whose events in a batch the database refused.
pub(crate) struct Refused {
    pub(crate) run_id: String,
    pub(crate) events: usize,
    pub(crate) error: String,
}

/// Write `batch` (rows of runs it starts get `pid`). When the database refuses a batch of
/// several runs, each run is written on its own, so one bad run does not take the others'
/// events with it.
pub(crate) async fn write(pool: &AnyPool, sqlite: bool, batch: &[Event], pid: i64) -> Written {
    match attempt(pool, sqlite, batch, pid).await {
        Ok(()) => Written::Stored {
            refused: Vec::new(),
        },
        Err(e) if is_transient(&e, sqlite) => Written::Outage(e.to_string()),
        Err(e) => {
            let mut runs: Vec<&str> = Vec::new();
            for ev in batch {
                if !runs.contains(&ev.run_id.as_str()) {
                    runs.push(&ev.run_id);
                }
            }
            if runs.len() < 2 {
                return Written::Stored {
                    refused: vec![Refused {
                        run_id: runs.first().copied().unwrap_or_default().to_owned(),
                        events: batch.len(),
                        error: e.to_string(),
                    }],
                };
            }
            let mut refused = Vec::new();
            for run in runs {
                let own: Vec<Event> = batch.iter().filter(|e| e.run_id == run).cloned().collect();
                match attempt(pool, sqlite, &own, pid).await {
                    Ok(()) => {}
                    Err(e) if is_transient(&e, sqlite) => return Written::Outage(e.to_string()),
                    Err(e) => refused.push(Refused {
                        run_id: run.to_owned(),
                        events: own.len(),
                        error: e.to_string(),
                    }),
                }
            }
            Written::Stored { refused }
        }
    }
}

async fn attempt(
    pool: &AnyPool,
    sqlite: bool,
    batch: &[Event],
    pid: i64,
) -> Result<(), sqlx::Error> {
    match tokio::time::timeout(ATTEMPT_TIMEOUT, write_batch(pool, sqlite, batch, pid)).await {
        Ok(r) => r,
        Err(_) => Err(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs()),
        ))),
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

async fn write_batch(
    pool: &AnyPool,
    sqlite: bool,
    batch: &[Event],
    pid: i64,
) -> Result<(), sqlx::Error> {
    // Almost always every event is new: insert them all and count them all. When some were
    // stored already (a retry after a lost answer, a journal replayed again), start over and
    // leave those out, so they count once.
    match write_events(pool, sqlite, batch, pid, false).await? {
        Fresh::All => Ok(()),
        Fresh::Some => write_events(pool, sqlite, batch, pid, true).await.map(drop),
    }
}

/// Whether every event of a batch was new.
enum Fresh {
    All,
    /// Some were stored already: nothing was committed.
    Some,
}

async fn write_events(
    pool: &AnyPool,
    sqlite: bool,
    batch: &[Event],
    pid: i64,
    skip_stored: bool,
) -> Result<Fresh, sqlx::Error> {
    let now = now_ms();
    let mut tx = pool.begin().await?;
    for e in batch {
        if let EventKind::RunStarted { .. } = e.kind {
            insert_run(&mut tx, e, now, pid).await?;
        }
    }
    let stored = if skip_stored {
        stored_seqs(&mut tx, batch).await?
    } else {
        HashSet::new()
    };
    let new: Vec<&Event> = batch
        .iter()
        .filter(|e| !stored.contains(&(e.run_id.as_str(), to_i64(e.seq))))
        .collect();
    for chunk in new.chunks(INSERT_CHUNK) {
        let inserted = insert_events(&mut tx, chunk, sqlite).await?;
        if inserted < chunk.len() as u64 {
            tx.rollback().await?;
            return Ok(Fresh::Some);
        }
    }
    // A run finished in this batch gets its final totals from `finish_run` (absolute values):
    // its running totals need no update of their own.
    let finished: HashSet<&str> = batch
        .iter()
        .filter(|e| matches!(e.kind, EventKind::RunFinished { .. }))
        .map(|e| e.run_id.as_str())
        .collect();
    let mut progress: HashMap<&str, Progress> = HashMap::new();
    for e in new.iter().filter(|e| !finished.contains(e.run_id.as_str())) {
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
    tx.commit().await?;
    Ok(Fresh::All)
}

/// The `(run_id, seq)` of the batch's events already stored.
async fn stored_seqs<'e>(
    tx: &mut Tx<'_>,
    batch: &'e [Event],
) -> Result<HashSet<(&'e str, i64)>, sqlx::Error> {
    let mut runs: HashMap<&str, (i64, i64)> = HashMap::new();
    for e in batch {
        let seq = to_i64(e.seq);
        let r = runs.entry(e.run_id.as_str()).or_insert((seq, seq));
        r.0 = r.0.min(seq);
        r.1 = r.1.max(seq);
    }
    let mut stored = HashSet::new();
    for (run, (low, high)) in runs {
        let seqs: Vec<i64> = sqlx::query_scalar(
            "SELECT seq FROM events WHERE run_id = $1 AND seq >= $2 AND seq <= $3",
        )
        .bind(run)
        .bind(low)
        .bind(high)
        .fetch_all(&mut **tx)
        .await?;
        stored.extend(seqs.into_iter().map(|s| (run, s)));
    }
    Ok(stored)
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Text for a run's column: PostgreSQL's `TEXT` cannot hold NUL, which a task or an answer
/// may contain (the events keep it, escaped in their JSON).
fn text(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(s)
    }
}

type Tx<'a> = sqlx::Transaction<'a, sqlx::Any>;

async fn insert_run(tx: &mut Tx<'_>, e: &Event, now: i64, pid: i64) -> Result<(), sqlx::Error> {
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
    let session = (!session_id.is_empty()).then(|| text(session_id));
    sqlx::query(
        "INSERT INTO runs (id, session_id, started, model, provider, tool_mode, workspace, task, \
         outcome, pid, host, last_event_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING",
    )
    .bind(e.run_id.as_str())
    .bind(session.as_deref().map(str::to_owned))
    .bind(e.ts.as_str())
    .bind(text(model).into_owned())
    .bind(text(provider).into_owned())
    .bind(text(tool_mode).into_owned())
    .bind(text(workspace).into_owned())
    .bind(text(task).into_owned())
    .bind(RUNNING)
    .bind(pid)
    .bind(host_name())
    .bind(now)
    .execute(&mut **tx)
    .await?;
    if let Some(session) = session {
        sqlx::query(
            "INSERT INTO sessions (id, created, updated) VALUES ($1, $2, $2) \
             ON CONFLICT (id) DO UPDATE SET updated = excluded.updated",
        )
        .bind(session.into_owned())
        .bind(e.ts.as_str())
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Insert `events` (one multi-row statement), skipping those already stored: how many were
/// inserted.
async fn insert_events(
    tx: &mut Tx<'_>,
    events: &[&Event],
    sqlite: bool,
) -> Result<u64, sqlx::Error> {
    if events.is_empty() {
        return Ok(0);
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
    sql.push_str(" ON CONFLICT (run_id, seq) DO NOTHING");
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
    Ok(q.execute(&mut **tx).await?.rows_affected())
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
    .bind(error.as_deref().map(|s| text(s).into_owned()))
    .bind(error_kind)
    .bind(text(answer).into_owned())
    .bind(now)
    .bind(e.run_id.as_str())
    .execute(&mut **tx)
    .await?;
    Ok(())
}
