//! [`WorkspaceServer`] over streamable HTTP at `/mcp`, every request needing
//! `Authorization: Bearer TOKEN` (as `reagent serve`'s API does).

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use reagent_protocol::CancellationToken;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use crate::WorkspaceServer;

impl WorkspaceServer {
    /// Serve on `listener` at `/mcp` until `shutdown` fires. Requests without the bearer
    /// `token` are answered 401. On a loopback address only `localhost`-style `Host` headers
    /// are accepted (DNS-rebinding protection); elsewhere the token alone guards.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        token: String,
        shutdown: CancellationToken,
    ) -> anyhow::Result<()> {
        let loopback = listener.local_addr()?.ip().is_loopback();
        let mut config = StreamableHttpServerConfig::default();
        config.cancellation_token = shutdown.child_token();
        if !loopback {
            config = config.disable_allowed_hosts();
        }
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let expected: Arc<[u8]> = format!("Bearer {token}").into_bytes().into();
        let app =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |req: Request, next: Next| {
                        let expected = expected.clone();
                        async move { authorized(&expected, req, next).await }
                    },
                ));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await?;
        Ok(())
    }
}

async fn authorized(expected: &[u8], req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if bool::from(presented.ct_eq(expected)) {
        next.run(req).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "send the token as `Authorization: Bearer TOKEN` (see the token file)",
        )
            .into_response()
    }
}
