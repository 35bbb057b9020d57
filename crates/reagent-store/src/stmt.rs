//! The statements the writer runs, described once for both ways of running them: sqlx (the
//! pool, PostgreSQL) and the SQLite writer's own connection ([`crate::direct`]). Each is its SQL
//! (`$1…` placeholders, which SQLite reads as parameters numbered by first appearance) and a
//! function giving its parameters from an event.

use std::borrow::Cow;

use reagent_protocol::{Event, EventKind};

use crate::liveness::host_name;
use crate::RUNNING;

/// One statement parameter, borrowed from the event where it can be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param<'a> {
    Text(Cow<'a, str>),
    Int(i64),
    Null,
}

impl<'a> Param<'a> {
    /// Text bound as it is.
    fn raw(s: &'a str) -> Param<'a> {
        Param::Text(Cow::Borrowed(s))
    }

    /// Text for a run's column (see [`column_text`]).
    fn text(s: &'a str) -> Param<'a> {
        Param::Text(column_text(s))
    }

    fn opt_text(s: Option<&'a str>) -> Param<'a> {
        s.map_or(Param::Null, Param::text)
    }
}

/// The start of the statement inserting events: [`EVENT_ROW`] follows, once per event.
pub(crate) const INSERT_EVENTS_HEAD: &str =
    "INSERT INTO events (run_id, seq, ts, type, json) VALUES ";
/// The end of the statement inserting events: events already stored are skipped.
pub(crate) const INSERT_EVENTS_TAIL: &str = " ON CONFLICT (run_id, seq) DO NOTHING";
/// Parameters per event row.
pub(crate) const EVENT_ROW: usize = 5;
/// The statement inserting one event (its row numbered `$1…$5`).
pub(crate) const INSERT_EVENT: &str = "INSERT INTO events (run_id, seq, ts, type, json) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, seq) DO NOTHING";

/// The stored `seq`s of one run between two, inclusive: run id, low, high.
pub(crate) const STORED_SEQS: &str =
    "SELECT seq FROM events WHERE run_id = $1 AND seq >= $2 AND seq <= $3";

/// A run's row, written by the batch holding its `run_started`.
pub(crate) const INSERT_RUN: &str =
    "INSERT INTO runs (id, session_id, started, model, provider, tool_mode, workspace, task, \
     outcome, pid, host, last_event_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING";

/// The session a run starts in: created, or its `updated` moved on.
pub(crate) const TOUCH_SESSION: &str = "INSERT INTO sessions (id, created, updated) \
     VALUES ($1, $2, $2) ON CONFLICT (id) DO UPDATE SET updated = excluded.updated";

/// A session's snapshot, saved or replaced: id, now, snapshot.
pub(crate) const SAVE_SESSION: &str = "INSERT INTO sessions (id, created, updated, snapshot) \
     VALUES ($1, $2, $2, $3) \
     ON CONFLICT (id) DO UPDATE SET updated = excluded.updated, snapshot = excluded.snapshot";

/// A running run's totals, moved on by a batch of its events.
pub(crate) const UPDATE_PROGRESS: &str = "UPDATE runs SET last_event_at = $1, \
     iterations = CASE WHEN iterations < $2 THEN $2 ELSE iterations END, \
     tool_calls = tool_calls + $3, prompt_tokens = prompt_tokens + $4, \
     completion_tokens = completion_tokens + $5 \
     WHERE id = $6 AND outcome = $7";

/// A finished run's final values (absolute, so writing them twice changes nothing).
pub(crate) const FINISH_RUN: &str =
    "UPDATE runs SET finished = $1, outcome = $2, iterations = $3, tool_calls = $4, \
     prompt_tokens = $5, completion_tokens = $6, error = $7, error_kind = $8, answer = $9, \
     last_event_at = $10 WHERE id = $11";

/// Totals a batch adds to a run's row while it runs.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) iteration: i64,
    pub(crate) tool_calls: i64,
    pub(crate) prompt_tokens: i64,
    pub(crate) completion_tokens: i64,
}

impl Progress {
    /// Count one event in.
    pub(crate) fn add(&mut self, e: &Event) {
        match &e.kind {
            EventKind::LlmResponse {
                iteration,
                prompt_tokens,
                completion_tokens,
                ..
            } => {
                self.iteration = self.iteration.max(i64::from(*iteration));
                self.prompt_tokens += to_i64(*prompt_tokens);
                self.completion_tokens += to_i64(*completion_tokens);
            }
            EventKind::ToolCall { .. } => self.tool_calls += 1,
            _ => {}
        }
    }

    /// The parameters of [`UPDATE_PROGRESS`] for `run_id`.
    pub(crate) fn params<'a>(&self, run_id: &'a str, now: i64) -> [Param<'a>; 7] {
        [
            Param::Int(now),
            Param::Int(self.iteration),
            Param::Int(self.tool_calls),
            Param::Int(self.prompt_tokens),
            Param::Int(self.completion_tokens),
            Param::raw(run_id),
            Param::raw(RUNNING),
        ]
    }
}

/// An event's row for [`INSERT_EVENT`]: the JSON is serialized here.
pub(crate) fn event_row(e: &Event) -> Result<[Param<'_>; EVENT_ROW], serde_json::Error> {
    Ok([
        Param::raw(&e.run_id),
        Param::Int(to_i64(e.seq)),
        Param::raw(&e.ts),
        Param::raw(e.type_name()),
        Param::Text(Cow::Owned(serde_json::to_string(e)?)),
    ])
}

/// The run a `run_started` begins, for [`INSERT_RUN`], and the parameters of
/// [`TOUCH_SESSION`] when it belongs to a session. `None` for other events.
pub(crate) fn run_row(e: &Event, now: i64, pid: i64) -> Option<RunRow<'_>> {
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
        return None;
    };
    let session = (!session_id.is_empty()).then_some(session_id.as_str());
    Some(RunRow {
        run: [
            Param::raw(&e.run_id),
            Param::opt_text(session),
            Param::raw(&e.ts),
            Param::text(model),
            Param::text(provider),
            Param::text(tool_mode),
            Param::text(workspace),
            Param::text(task),
            Param::raw(RUNNING),
            Param::Int(pid),
            Param::raw(host_name()),
            Param::Int(now),
        ],
        session: session.map(|s| [Param::text(s), Param::raw(&e.ts)]),
    })
}

/// What a `run_started` writes: see [`run_row`].
pub(crate) struct RunRow<'a> {
    pub(crate) run: [Param<'a>; 12],
    pub(crate) session: Option<[Param<'a>; 2]>,
}

/// The parameters of [`FINISH_RUN`] for a `run_finished`; `None` for other events.
pub(crate) fn finish_row(e: &Event, now: i64) -> Option<[Param<'_>; 11]> {
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
        return None;
    };
    let error_kind = error_kind
        .and_then(|k| serde_json::to_value(k).ok())
        .and_then(|v| v.as_str().map(|s| Param::Text(Cow::Owned(s.to_owned()))))
        .unwrap_or(Param::Null);
    Some([
        Param::raw(&e.ts),
        Param::raw(outcome.as_str()),
        Param::Int(i64::from(*iterations)),
        Param::Int(i64::from(*tool_calls)),
        Param::Int(to_i64(*prompt_tokens)),
        Param::Int(to_i64(*completion_tokens)),
        Param::opt_text(error.as_deref()),
        error_kind,
        Param::text(answer),
        Param::Int(now),
        Param::raw(&e.run_id),
    ])
}

/// The parameters of [`SAVE_SESSION`].
pub(crate) fn session_row<'a>(id: &'a str, now: &'a str, snapshot: &'a str) -> [Param<'a>; 3] {
    [Param::raw(id), Param::raw(now), Param::raw(snapshot)]
}

pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Text for a run's column: PostgreSQL's `TEXT` cannot hold NUL, which a task or an answer
/// may contain (the events keep it, escaped in their JSON).
fn column_text(s: &str) -> Cow<'_, str> {
    if s.contains('\0') {
        Cow::Owned(s.replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_row_insert_is_the_multi_row_one_with_one_row() {
        assert_eq!(
            INSERT_EVENT,
            format!("{INSERT_EVENTS_HEAD}($1, $2, $3, $4, $5){INSERT_EVENTS_TAIL}")
        );
    }

    #[test]
    fn a_nul_in_a_run_column_is_replaced() {
        assert_eq!(
            Param::text("a\0b"),
            Param::Text(Cow::Owned("a\u{fffd}b".into()))
        );
        assert_eq!(Param::opt_text(None), Param::Null);
    }
}
