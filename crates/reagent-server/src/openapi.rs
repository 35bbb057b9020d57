//! The OpenAPI document, generated from the handlers' types (utoipa). `schema/openapi.json`
//! holds a copy checked by a test (`REAGENT_BLESS=1` rewrites it).

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{api, error, experiment_api, experiment_routes, routes, stream};

#[derive(OpenApi)]
#[openapi(
    info(title = "reagent serve", description = "Runs, their live events, approvals and metrics; \
        experiments (reagent cycles) and their operator's messages. \
        Every route but /v1/health and the dashboard's files needs `Authorization: Bearer TOKEN`. \
        Errors are `{\"error\":{\"code\",\"message\"}}` with a 4xx status."),
    paths(
        routes::health,
        routes::create_run,
        routes::list_runs,
        routes::get_run,
        routes::cancel_run,
        routes::follow_up,
        stream::sse,
        stream::websocket,
        experiment_routes::start_experiment,
        experiment_routes::list_experiments,
        experiment_routes::get_experiment,
        experiment_routes::experiment_events,
        experiment_routes::stop_experiment,
        experiment_routes::resume_experiment,
        experiment_routes::list_operator_messages,
        experiment_routes::answer_operator,
        routes::list_approvals,
        routes::decide_approval,
        routes::metrics,
        document,
    ),
    components(schemas(
        api::CreateRun, api::RunBudgets, api::ApprovalPolicy, api::CreatedRun, api::RunSummary,
        api::RunList, api::RunDetail, api::RunOutcome, api::CancelAccepted, api::FollowUp,
        api::Approval, api::ApprovalList, api::ApprovalAnswer, api::Decision,
        api::ApprovalDecided, api::Health, error::ErrorBody, error::ErrorDetail,
        experiment_api::StartExperiment, experiment_api::ExperimentStarted,
        experiment_api::ExperimentSummary, experiment_api::ExperimentList,
        experiment_api::ExperimentDetail, experiment_api::OperatorMessage,
        experiment_api::OperatorMessages, experiment_api::OperatorReply,
        experiment_api::OperatorReplied, experiment_api::ExperimentAccepted,
    )),
    modifiers(&BearerToken),
    security(("bearer" = [])),
)]
struct ApiDoc;

struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The OpenAPI document of this server's API.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    // The package version, not a build-dependent value: the committed copy stays stable.
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

/// The OpenAPI document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "server",
    responses((status = 200, description = "this document", content_type = "application/json", body = Object),
        (status = 401, body = error::ErrorBody)))]
pub(crate) async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}
