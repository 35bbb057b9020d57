//! The REST handlers and the router.

use axum::extract::{Path, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use reagent_protocol::{Event, EventKind};
use reagent_store::RunPage;

use crate::api::{
    ApprovalAnswer, ApprovalDecided, ApprovalList, CancelAccepted, CreateRun, CreatedRun, FollowUp,
    Health, ListRuns, RunDetail, RunList, RunOutcome, RunSummary,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{JsonBody, QueryParams};
use crate::{assets, experiment_routes, openapi, stream, AppState};

/// Default and largest page of `GET /v1/runs`.
const DEFAULT_PAGE: u32 = 50;
const MAX_PAGE: u32 = 500;

/// Every route: the dashboard and health open, the rest behind the token.
pub(crate) fn router(state: AppState) -> Router {
    let protected = Router::new()
        .route("/v1/runs", get(list_runs).post(create_run))
        .route("/v1/runs/{id}", get(get_run))
        .route("/v1/runs/{id}/cancel", post(cancel_run))
        .route("/v1/runs/{id}/messages", post(follow_up))
        .route("/v1/runs/{id}/events", get(stream::sse))
        .route("/v1/runs/{id}/ws", get(stream::websocket))
        .route(
            "/v1/experiments",
            get(experiment_routes::list_experiments).post(experiment_routes::start_experiment),
        )
        .route(
            "/v1/experiments/{id}",
            get(experiment_routes::get_experiment),
        )
        .route(
            "/v1/experiments/{id}/events",
            get(experiment_routes::experiment_events),
        )
        .route(
            "/v1/experiments/{id}/stop",
            post(experiment_routes::stop_experiment),
        )
        .route(
            "/v1/experiments/{id}/resume",
            post(experiment_routes::resume_experiment),
        )
        .route(
            "/v1/experiments/{id}/operator",
            get(experiment_routes::list_operator_messages),
        )
        .route(
            "/v1/experiments/{id}/operator/{message}",
            post(experiment_routes::answer_operator),
        )
        .route("/v1/approvals", get(list_approvals))
        .route("/v1/approvals/{id}", post(decide_approval))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/metrics", get(metrics))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ));
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{*path}", get(assets::asset))
        .route("/v1/health", get(health))
        .merge(protected)
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(axum::extract::DefaultBodyLimit::max(state.max_body_bytes()))
        .layer(axum::middleware::map_response(security_headers))
        .with_state(state)
}

/// 401 unless the request carries `Authorization: Bearer TOKEN` (compared in constant time).
async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "));
    match presented {
        Some(token) if state.token().matches(token) => next.run(req).await,
        _ => ApiError::unauthorized().into_response(),
    }
}

/// What any page of this server may load: only the dashboard's own scripts, styles and
/// images (no inline script or style, no other origin), in no frame.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'self'; frame-ancestors 'none'";

/// The headers every response carries (the dashboard's files, the API, errors).
const SECURITY_HEADERS: [(&str, &str); 6] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
];

async fn security_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        h.insert(name, HeaderValue::from_static(value));
    }
    res
}

/// Health: no token needed.
#[utoipa::path(get, path = "/v1/health", security(()), tag = "server",
    responses((status = 200, body = Health)))]
pub(crate) async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    })
}

/// Start a run.
#[utoipa::path(post, path = "/v1/runs", tag = "runs", request_body = CreateRun,
    responses(
        (status = 201, body = CreatedRun),
        (status = 400, body = ErrorBody, description = "bad JSON, unknown field, bad value"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`base_url` not allowed (`[serve] base_urls`), or the workspace is not a directory under a workspace root"),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "the server's cap on runs in progress (`[serve] max_concurrent_runs`) is reached"),
    ))]
pub(crate) async fn create_run(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<CreateRun>,
) -> Result<(StatusCode, Json<CreatedRun>), ApiError> {
    let created = state.runs().start(request).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// List runs, newest first.
#[utoipa::path(get, path = "/v1/runs", tag = "runs", params(ListRuns),
    responses((status = 200, body = RunList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub(crate) async fn list_runs(
    State(state): State<AppState>,
    QueryParams(q): QueryParams<ListRuns>,
) -> Result<Json<RunList>, ApiError> {
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad_request(format!(
            "`limit` must be between 1 and {MAX_PAGE}, got {limit}"
        )));
    }
    let offset = q.offset.unwrap_or(0);
    let store = state.store();
    // A live run's stream may already have shown its `run_finished`: list it as stored.
    if state.runs().any_live() {
        store.flush().await;
    }
    let (runs, total) = store
        .page_runs(&RunPage {
            outcome: q.outcome.filter(|o| !o.is_empty()),
            model: q.model.filter(|m| !m.is_empty()),
            limit,
            offset,
        })
        .await?;
    let end = offset + runs.len() as u64;
    Ok(Json(RunList {
        runs: runs.into_iter().map(RunSummary::from).collect(),
        total: Some(total),
        next_offset: (end < total).then_some(end),
    }))
}

/// One run with its transcript and, once it has finished, its result.
#[utoipa::path(get, path = "/v1/runs/{id}", tag = "runs", params(("id" = String, Path)),
    responses((status = 200, body = RunDetail), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RunDetail>, ApiError> {
    let store = state.store();
    let live = state.runs().live(&id);
    if live.is_some() {
        store.flush().await;
    }
    let record = match (store.run(&id).await?, live) {
        (Some(record), _) => record.into(),
        // Started, but its `run_started` is not written yet.
        (None, Some(live)) => live.placeholder.clone(),
        (None, None) => return Err(ApiError::not_found(format!("no run with id {id}"))),
    };
    let events: Vec<Event> = store
        .events_after(&id, 0, 0)
        .await?
        .iter()
        .filter_map(|e| e.parse().ok())
        .collect();
    let transcript = reagent_core::rebuild_transcript(&events)
        .unwrap_or_default()
        .iter()
        .filter_map(|m| serde_json::to_value(m).ok())
        .collect();
    let result = events.iter().rev().find_map(|e| outcome_of(&e.kind));
    Ok(Json(RunDetail {
        run: record,
        transcript,
        result,
    }))
}

fn outcome_of(kind: &EventKind) -> Option<RunOutcome> {
    let EventKind::RunFinished {
        outcome,
        iterations,
        tool_calls,
        prompt_tokens,
        completion_tokens,
        wall_ms,
        model_ms,
        files_changed,
        error,
        error_kind,
        answer,
    } = kind
    else {
        return None;
    };
    Some(RunOutcome {
        outcome: outcome.as_str().into(),
        answer: answer.clone(),
        iterations: *iterations,
        tool_calls: *tool_calls,
        prompt_tokens: *prompt_tokens,
        completion_tokens: *completion_tokens,
        wall_ms: *wall_ms,
        model_ms: *model_ms,
        files_changed: files_changed.clone(),
        error: error.clone(),
        error_kind: error_kind
            .and_then(|k| serde_json::to_value(k).ok())
            .and_then(|v| v.as_str().map(str::to_owned)),
    })
}

/// Cancel a run in progress.
#[utoipa::path(post, path = "/v1/runs/{id}/cancel", tag = "runs", params(("id" = String, Path)),
    responses((status = 202, body = CancelAccepted), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "already finished")))]
pub(crate) async fn cancel_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<CancelAccepted>), ApiError> {
    if !state.runs().cancel(&id).await? {
        return Err(ApiError::conflict(format!("run {id} has already finished")));
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(CancelAccepted {
            id,
            status: "cancelling".into(),
        }),
    ))
}

/// A follow-up message to a finished run's session: starts a new run of that session.
#[utoipa::path(post, path = "/v1/runs/{id}/messages", tag = "runs", params(("id" = String, Path)),
    request_body = FollowUp,
    responses((status = 201, body = CreatedRun), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "the session has a run in progress"),
        (status = 429, body = ErrorBody, description = "the server's cap on runs in progress is reached")))]
pub(crate) async fn follow_up(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<FollowUp>,
) -> Result<(StatusCode, Json<CreatedRun>), ApiError> {
    let created = state.runs().follow_up(&id, body.content).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Commands waiting for a person's answer.
#[utoipa::path(get, path = "/v1/approvals", tag = "approvals",
    responses((status = 200, body = ApprovalList), (status = 401, body = ErrorBody)))]
pub(crate) async fn list_approvals(State(state): State<AppState>) -> Json<ApprovalList> {
    Json(ApprovalList {
        approvals: state.approvals().list(),
    })
}

/// Answer an approval.
#[utoipa::path(post, path = "/v1/approvals/{id}", tag = "approvals", params(("id" = String, Path)),
    request_body = ApprovalAnswer,
    responses((status = 200, body = ApprovalDecided), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn decide_approval(
    State(state): State<AppState>,
    Path(id): Path<String>,
    JsonBody(answer): JsonBody<ApprovalAnswer>,
) -> Result<Json<ApprovalDecided>, ApiError> {
    if !state.approvals().decide(&id, answer.decision) {
        return Err(ApiError::not_found(format!(
            "no approval {id} is waiting (answered already, or its run ended)"
        )));
    }
    Ok(Json(ApprovalDecided {
        id,
        decision: answer.decision,
    }))
}

/// Prometheus metrics (text format).
#[utoipa::path(get, path = "/metrics", tag = "server",
    responses((status = 200, content_type = "text/plain; version=0.0.4", body = String), (status = 401, body = ErrorBody)))]
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render(state.store()),
    )
        .into_response()
}
