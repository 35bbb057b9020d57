//! Errors: the JSON error body every 4xx carries, and the errors of starting a server.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

/// An API error: an HTTP status, a stable code and a message for a person. Rendered as
/// `{"error":{"code":"...","message":"..."}}`. Messages never carry the token.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// `not_found`, `bad_request`, `unauthorized`, `forbidden`, `conflict`,
    /// `payload_too_large`, `unsupported_media_type`, `method_not_allowed`,
    /// `too_many_requests`, `internal` or `unavailable`.
    pub code: String,
    /// What went wrong, in words.
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400: the request cannot be understood.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 401: no token, or the wrong one.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "send the server's token as `Authorization: Bearer TOKEN` (see the token file `reagent serve` printed)",
        )
    }

    /// 403: not allowed (a workspace outside every root, a `base_url` not allowed).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 405: the route exists, the method does not.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this route does not take that method",
        )
    }

    /// 409: the state forbids it (cancel a finished run, follow up a running session).
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// 413: the body is over the cap.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is over the server's cap of {limit} bytes"),
        )
    }

    /// 415: the body is not JSON.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as JSON with `Content-Type: application/json`",
        )
    }

    /// 429: the server runs as many runs as it may at once.
    pub fn too_many_runs(cap: usize) -> Self {
        Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            format!(
                "this server already has {cap} runs in progress, its cap (`[serve] max_concurrent_runs`): \
                 try again once one has finished"
            ),
        )
    }

    /// 500: the server's own failure (a store that cannot be read).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// 503: the store cannot be reached right now.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        self.code
    }
}

impl From<reagent_store::StoreError> for ApiError {
    fn from(e: reagent_store::StoreError) -> Self {
        match e {
            reagent_store::StoreError::NotFound(m) => ApiError::not_found(m),
            other => ApiError::unavailable(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The token file is missing (non-loopback bind), unreadable or unsafe.
    #[error("{0}")]
    Token(String),
    /// A setting cannot be used (it is named in the message).
    #[error("{0}")]
    Config(String),
    /// A workspace root is not a directory.
    #[error("workspace root {path}: {message}")]
    WorkspaceRoot {
        /// The root as given.
        path: std::path::PathBuf,
        /// Why.
        message: String,
    },
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] reagent_store::StoreError),
    /// Serving failed.
    #[error("the server stopped: {0}")]
    Serve(std::io::Error),
}
