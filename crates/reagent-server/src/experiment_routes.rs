//! `/v1/experiments…`: start, list, read, follow, stop and resume experiments (`reagent
//! cycles`), and answer their operator messages. The live stream reads the experiment's events
//! from the store as they are written (one query every [`POLL`]), so it follows an experiment
//! run by this server or by `reagent cycles run` in another process alike.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::Json;
use futures_util::Stream;
use reagent_cycles::operator::PendingMessage;
use reagent_cycles::report::Report;
use reagent_store::{CycleEventRow, ExperimentRecord};
use serde_json::{json, Value};

use crate::error::{ApiError, ErrorBody};
use crate::experiment_api::{
    ExperimentAccepted, ExperimentDetail, ExperimentEventsQuery, ExperimentList, ExperimentStarted,
    ExperimentSummary, OperatorMessage, OperatorMessages, OperatorReplied, OperatorReply,
    StartExperiment,
};
use crate::experiments::api_error;
use crate::extract::{JsonBody, QueryParams};
use crate::AppState;

/// How often a live stream looks for new events.
const POLL: Duration = Duration::from_millis(250);
/// Events read from the store at once.
const PAGE: i64 = 200;

fn summary(state: &AppState, record: ExperimentRecord) -> ExperimentSummary {
    let live = state.experiments().live(&record.id).is_some();
    ExperimentSummary {
        id: record.id,
        status: record.status,
        model: record.model,
        cycles: record.cycles,
        cycles_done: record.cycles_done,
        created: record.created,
        updated: record.updated,
        live,
    }
}

fn message(m: PendingMessage) -> OperatorMessage {
    OperatorMessage {
        id: m.id,
        message: m.message,
        asked: m.asked,
        timeout_secs: m.timeout_secs,
    }
}

fn pending(state: &AppState, id: &str) -> Vec<OperatorMessage> {
    state
        .experiments()
        .live(id)
        .map(|l| l.mailbox.pending().into_iter().map(message).collect())
        .unwrap_or_default()
}

async fn record(state: &AppState, id: &str) -> Result<ExperimentRecord, ApiError> {
    state
        .store()
        .experiment(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no experiment with id {id}")))
}

/// Start an experiment.
#[utoipa::path(post, path = "/v1/experiments", tag = "experiments", request_body = StartExperiment,
    responses(
        (status = 201, body = ExperimentStarted),
        (status = 400, body = ErrorBody, description = "a bad config (the message names the key and line), a file named, operator mode terminal or script, provider local"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`model.base_url` not allowed (`[serve] base_urls`)"),
        (status = 409, body = ErrorBody, description = "an experiment with this run_id exists"),
        (status = 413, body = ErrorBody),
    ))]
pub(crate) async fn start_experiment(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<StartExperiment>,
) -> Result<(StatusCode, Json<ExperimentStarted>), ApiError> {
    let started = state.experiments().start(&body.config).await?;
    Ok((
        StatusCode::CREATED,
        Json(ExperimentStarted {
            id: started.id,
            status: "running".into(),
            unsupported: started.unsupported,
        }),
    ))
}

/// List the experiments in the store, newest first.
#[utoipa::path(get, path = "/v1/experiments", tag = "experiments",
    responses((status = 200, body = ExperimentList), (status = 401, body = ErrorBody)))]
pub(crate) async fn list_experiments(
    State(state): State<AppState>,
) -> Result<Json<ExperimentList>, ApiError> {
    let all = state.store().list_experiments().await?;
    Ok(Json(ExperimentList {
        experiments: all.into_iter().map(|r| summary(&state, r)).collect(),
    }))
}

/// One experiment: its cycles, reflections, metrics, similarity matrix and memory.
#[utoipa::path(get, path = "/v1/experiments/{id}", tag = "experiments", params(("id" = String, Path)),
    responses((status = 200, body = ExperimentDetail), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_experiment(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ExperimentDetail>, ApiError> {
    let report = Report::load(state.store(), &id).await.map_err(api_error)?;
    let pending = pending(&state, &id);
    let summary = summary(&state, report.experiment.clone());
    let report =
        serde_json::to_value(&report).map_err(|e| ApiError::internal(format!("report: {e}")))?;
    Ok(Json(ExperimentDetail {
        summary,
        report,
        pending,
    }))
}

/// The operator messages waiting for an answer.
#[utoipa::path(get, path = "/v1/experiments/{id}/operator", tag = "experiments", params(("id" = String, Path)),
    responses((status = 200, body = OperatorMessages), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_operator_messages(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<OperatorMessages>, ApiError> {
    if state.experiments().live(&id).is_none() {
        record(&state, &id).await?;
    }
    Ok(Json(OperatorMessages {
        pending: pending(&state, &id),
    }))
}

/// Answer an operator message: the reply is the agent's tool result.
#[utoipa::path(post, path = "/v1/experiments/{id}/operator/{message}", tag = "experiments",
    params(("id" = String, Path), ("message" = String, Path)), request_body = OperatorReply,
    responses((status = 200, body = OperatorReplied), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such message waits (answered already, timed out, or the experiment does not run here)")))]
pub(crate) async fn answer_operator(
    State(state): State<AppState>,
    Path((id, message_id)): Path<(String, String)>,
    JsonBody(body): JsonBody<OperatorReply>,
) -> Result<Json<OperatorReplied>, ApiError> {
    let answered = state
        .experiments()
        .live(&id)
        .is_some_and(|l| l.mailbox.answer(&message_id, &body.reply));
    if !answered {
        return Err(ApiError::not_found(format!(
            "no message {message_id} of experiment {id} waits for an answer (answered already, timed out, or the experiment does not run here)"
        )));
    }
    Ok(Json(OperatorReplied { id: message_id }))
}

/// Stop an experiment this server runs (the cycle in progress is cut short).
#[utoipa::path(post, path = "/v1/experiments/{id}/stop", tag = "experiments", params(("id" = String, Path)),
    responses((status = 202, body = ExperimentAccepted), (status = 401, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "it does not run in this server")))]
pub(crate) async fn stop_experiment(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<ExperimentAccepted>), ApiError> {
    if !state.experiments().stop(&id) {
        return Err(ApiError::conflict(format!(
            "experiment {id} does not run in this server"
        )));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(ExperimentAccepted {
            id,
            status: "stopping".into(),
        }),
    ))
}

/// Continue a stopped, failed or interrupted experiment in this server, at its first
/// unfinished cycle.
#[utoipa::path(post, path = "/v1/experiments/{id}/resume", tag = "experiments", params(("id" = String, Path)),
    responses((status = 202, body = ExperimentAccepted), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "complete, or running (here or in another live process)")))]
pub(crate) async fn resume_experiment(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<ExperimentAccepted>), ApiError> {
    state.experiments().resume(&id).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(ExperimentAccepted {
            id,
            status: "running".into(),
        }),
    ))
}

/// The position to follow from: `Last-Event-ID`, else `?after=`, else the start.
fn start_after(headers: &HeaderMap, query: &ExperimentEventsQuery) -> Result<i64, ApiError> {
    let after = match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::bad_request("`Last-Event-ID` must be an event's seq (a number)")
            })?,
        None => query.after.unwrap_or(0),
    };
    Ok(i64::try_from(after).unwrap_or(i64::MAX))
}

/// Where a stream stands.
struct Follow {
    state: AppState,
    id: String,
    after: i64,
    queue: std::collections::VecDeque<SseEvent>,
    /// The pending messages last sent (a change is sent again).
    shown: Option<Vec<String>>,
    ended: bool,
}

impl Follow {
    /// The next event; `None` once `end` was sent.
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            if self.ended {
                return None;
            }
            // Whether it ran before this look: then one more read catches its last events.
            let running = self.running().await;
            let rows = match self
                .state
                .store()
                .cycle_events_after(&self.id, self.after, PAGE)
                .await
            {
                Ok(rows) => rows,
                Err(e) => {
                    self.queue
                        .push_back(end_event(self.after, &format!("error: {e}")));
                    self.ended = true;
                    continue;
                }
            };
            if !rows.is_empty() {
                for row in rows {
                    self.after = row.seq;
                    self.queue.push_back(cycle_event(row));
                }
                continue;
            }
            let now = pending(&self.state, &self.id);
            let ids: Vec<String> = now.iter().map(|m| m.id.clone()).collect();
            if self.shown.as_ref() != Some(&ids) {
                self.shown = Some(ids);
                self.queue.push_back(
                    SseEvent::default()
                        .id(self.after.to_string())
                        .event("operator")
                        .data(json!({ "pending": now }).to_string()),
                );
                continue;
            }
            match running {
                Some(true) => tokio::time::sleep(POLL).await,
                Some(false) => {
                    let status = self.status().await.unwrap_or_default();
                    self.queue.push_back(end_event(self.after, &status));
                    self.ended = true;
                }
                None => return None,
            }
        }
    }

    async fn status(&self) -> Option<String> {
        self.state
            .store()
            .experiment(&self.id)
            .await
            .ok()
            .flatten()
            .map(|r| r.status)
    }

    /// Whether cycles may still come: it runs here, or its row says `running` (another live
    /// process); `None` when it is gone from the store.
    async fn running(&self) -> Option<bool> {
        if self.state.experiments().live(&self.id).is_some() {
            return Some(true);
        }
        self.status().await.map(|s| s == "running")
    }
}

fn cycle_event(row: CycleEventRow) -> SseEvent {
    let payload: Value = serde_json::from_str(&row.payload).unwrap_or(Value::Null);
    SseEvent::default()
        .id(row.seq.to_string())
        .event(row.event_type.clone())
        .data(
            json!({
                "seq": row.seq,
                "cycle_number": row.cycle,
                "timestamp": row.ts,
                "event_type": row.event_type,
                "payload": payload,
            })
            .to_string(),
        )
}

fn end_event(after: i64, status: &str) -> SseEvent {
    SseEvent::default()
        .id(after.to_string())
        .event("end")
        .data(json!({ "event_type": "end", "status": status }).to_string())
}

/// An experiment's events as Server-Sent Events, live while it runs.
#[utoipa::path(get, path = "/v1/experiments/{id}/events", tag = "experiments",
    params(("id" = String, Path), ("Last-Event-ID" = Option<u64>, Header, description = "resume after this seq"), ExperimentEventsQuery),
    responses(
        (status = 200, content_type = "text/event-stream",
         description = "the experiment's log events, in order: `id` = seq, `event` = `CYCLE_START`, `LLM_INVOCATION`, `TOOL_CALL` or `CYCLE_END`, `data` = {seq, cycle_number, timestamp, event_type, payload}; `operator` = {pending: [OperatorMessage]} whenever the messages waiting for the operator change; `end` = {status} once it no longer runs, then the stream closes"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn experiment_events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    QueryParams(query): QueryParams<ExperimentEventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let after = start_after(&headers, &query)?;
    record(&state, &id).await?;
    let follow = Follow {
        state,
        id,
        after,
        queue: Default::default(),
        shown: None,
        ended: false,
    };
    let events = futures_util::stream::unfold(follow, |mut f| async move {
        let e = f.next().await?;
        Some((Ok(e), f))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
