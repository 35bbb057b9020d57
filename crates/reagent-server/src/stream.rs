//! `GET /v1/runs/{id}/events` (Server-Sent Events) and `GET /v1/runs/{id}/ws` (WebSocket): a
//! run's events from a position, live until `run_finished`, replayed from the store for a
//! finished run.

use std::convert::Infallible;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;

use crate::api::EventsQuery;
use crate::error::{ApiError, ErrorBody};
use crate::extract::QueryParams;
use crate::follow::{follow, Frame, Start};
use crate::AppState;

/// The position to follow from: `Last-Event-ID`, else `?after=`, else the start.
fn start_after(headers: &HeaderMap, query: &EventsQuery) -> Result<u64, ApiError> {
    match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::bad_request("`Last-Event-ID` must be an event's seq (a number)")
            }),
        None => Ok(query.after.unwrap_or(0)),
    }
}

/// 404 unless run `id` is live here or stored.
async fn check_exists(state: &AppState, id: &str) -> Result<(), ApiError> {
    if state.runs().live(id).is_some() || state.store().run(id).await?.is_some() {
        Ok(())
    } else {
        Err(ApiError::not_found(format!("no run with id {id}")))
    }
}

/// A run's events as Server-Sent Events.
#[utoipa::path(get, path = "/v1/runs/{id}/events", tag = "events",
    params(("id" = String, Path), ("Last-Event-ID" = Option<u64>, Header, description = "resume after this seq"), EventsQuery),
    responses(
        (status = 200, content_type = "text/event-stream",
         description = "one SSE event per run event: `id` = seq, `event` = its type, `data` = the event JSON (schema/events.schema.json); with `?deltas=true` also the live `text_delta` and `reasoning_delta` events (never stored; `id` = the seq of the event before); closes after run_finished"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn sse(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    QueryParams(query): QueryParams<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let from = Start {
        after: start_after(&headers, &query)?,
        deltas: query.deltas.unwrap_or(false),
    };
    check_exists(&state, &id).await?;
    let frames = follow(state.runs().clone(), state.store().clone(), id, from);
    let events = futures_util::stream::unfold(frames, |mut frames| async move {
        let frame = frames.recv().await?;
        Some((Ok(sse_event(frame)), frames))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

fn sse_event(frame: Frame) -> SseEvent {
    SseEvent::default()
        .id(frame.seq.to_string())
        .event(frame.kind)
        .data(frame.json)
}

/// A run's events over a WebSocket, one JSON text frame each.
#[utoipa::path(get, path = "/v1/runs/{id}/ws", tag = "events",
    params(("id" = String, Path), EventsQuery),
    responses(
        (status = 101, description = "WebSocket: one text frame per run event (the event JSON), with `?deltas=true` also the live deltas; closed after run_finished"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn websocket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    QueryParams(query): QueryParams<EventsQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    check_exists(&state, &id).await?;
    let upgrade = upgrade.map_err(|r| {
        ApiError::bad_request(format!("this route is a WebSocket: {}", r.body_text()))
    })?;
    let from = Start {
        after: query.after.unwrap_or(0),
        deltas: query.deltas.unwrap_or(false),
    };
    Ok(upgrade
        .on_upgrade(move |socket| async move {
            let frames = follow(state.runs().clone(), state.store().clone(), id, from);
            pump_socket(socket, frames).await;
        })
        .into_response())
}

async fn pump_socket(mut socket: WebSocket, mut frames: tokio::sync::mpsc::Receiver<Frame>) {
    loop {
        tokio::select! {
            frame = frames.recv() => match frame {
                Some(frame) => {
                    if socket.send(Message::Text(frame.json.into())).await.is_err() {
                        return;
                    }
                }
                None => break,
            },
            incoming = socket.recv() => match incoming {
                // The client only ever closes; anything else it sends is ignored.
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}
