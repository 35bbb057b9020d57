//! The dashboard's static files, embedded in the binary from `crates/reagent-server/assets/`:
//! `GET /` is `index.html`, `GET /assets/PATH` is `assets/PATH`. They carry no data, so no
//! token is needed. Their Content-Security-Policy (only these files may run) is on every
//! response of the server (`routes.rs`).

use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use include_dir::{include_dir, Dir};

use crate::error::ApiError;

static ASSETS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// `GET /`.
pub(crate) async fn index() -> Response {
    file("index.html")
}

/// `GET /assets/{*path}`.
pub(crate) async fn asset(Path(path): Path<String>) -> Response {
    file(&path)
}

fn file(path: &str) -> Response {
    // include_dir paths are relative and never contain `..`; refuse any that asks for it.
    if path.split('/').any(|part| part == ".." || part.is_empty()) {
        return ApiError::not_found(format!("no dashboard file {path}")).into_response();
    }
    match ASSETS.get_file(path) {
        Some(f) => (
            [
                (CONTENT_TYPE, content_type(path)),
                (CACHE_CONTROL, "no-cache"),
            ],
            f.contents(),
        )
            .into_response(),
        None => ApiError::not_found(format!("no dashboard file {path}")).into_response(),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}
