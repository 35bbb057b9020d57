//! Extractors whose rejections are the API's JSON errors (never axum's plain-text ones).

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::AppState;

/// A JSON body: malformed JSON, unknown fields and wrong types are 400, a body over the cap
/// 413, a body that is not JSON 415.
pub(crate) struct JsonBody<T>(pub(crate) T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(rejection) => Err(match rejection {
                JsonRejection::MissingJsonContentType(_) => ApiError::unsupported_media_type(),
                r if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::payload_too_large(state.max_body_bytes())
                }
                r => ApiError::bad_request(r.body_text()),
            }),
        }
    }
}

/// A query string: unknown parameters and bad values are 400.
pub(crate) struct QueryParams<T>(pub(crate) T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| QueryParams(q.0))
            .map_err(|r: QueryRejection| ApiError::bad_request(r.body_text()))
    }
}
