//! Bad input of every kind gets a clear 4xx with a JSON error body, never a 500.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use reqwest::StatusCode;
use serde_json::{json, Value};
use support::TestServer;

/// Send `req` and check that it is refused with `status` and a JSON error `code`; the message.
async fn expect_error(req: reqwest::RequestBuilder, status: u16, code: &str) -> String {
    let res = req.send().await.unwrap();
    assert_eq!(
        res.status(),
        StatusCode::from_u16(status).unwrap(),
        "{code}"
    );
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{body}");
    let message = body["error"]["message"].as_str().unwrap().to_owned();
    assert!(!message.is_empty());
    message
}

#[tokio::test]
async fn bad_bodies_queries_ids_and_methods_are_4xx_json() {
    let server = TestServer::start_with(|c| c.max_body_bytes = 4096).await;
    let ws = server.workspace.display().to_string();
    let json_post = |path: &str, body: String| {
        server
            .post(path)
            .header("content-type", "application/json")
            .body(body)
    };

    let m = expect_error(
        json_post("/v1/runs", "{\"task\": ".into()),
        400,
        "bad_request",
    )
    .await;
    assert!(m.contains("EOF") || m.contains("parse"), "{m}");
    let m = expect_error(
        json_post(
            "/v1/runs",
            json!({"task": "t", "model": "m", "workspace": ws, "colour": "red"}).to_string(),
        ),
        400,
        "bad_request",
    )
    .await;
    assert!(m.contains("unknown field `colour`"), "{m}");
    let m = expect_error(
        json_post(
            "/v1/runs",
            json!({"task": "t", "model": "m", "workspace": ws, "budgets": {"max_money": 1}})
                .to_string(),
        ),
        400,
        "bad_request",
    )
    .await;
    assert!(m.contains("max_money"), "{m}");
    expect_error(
        json_post("/v1/runs", json!({"task": 3}).to_string()),
        400,
        "bad_request",
    )
    .await;
    expect_error(
        json_post(
            "/v1/runs",
            json!({"model": "m", "workspace": ws}).to_string(),
        ),
        400,
        "bad_request",
    )
    .await;
    for (field, value) in [
        ("task", json!("  ")),
        ("model", json!("")),
        ("tool_mode", json!("telepathy")),
        ("provider", json!("pigeon")),
        ("base_url", json!("ftp://x")),
        ("approval", json!("maybe")),
    ] {
        let mut body = json!({"task": "t", "model": "m", "workspace": ws});
        body[field] = value;
        let m = expect_error(json_post("/v1/runs", body.to_string()), 400, "bad_request").await;
        assert!(!m.contains(&server.token));
    }
    let big = json!({"task": "x".repeat(5000), "model": "m", "workspace": ws}).to_string();
    expect_error(json_post("/v1/runs", big), 413, "payload_too_large").await;
    expect_error(
        server
            .post("/v1/runs")
            .header("content-type", "text/plain")
            .body("{}"),
        415,
        "unsupported_media_type",
    )
    .await;
    expect_error(
        json_post(
            "/v1/runs",
            json!({"task": "t", "model": "m", "workspace": "/"}).to_string(),
        ),
        403,
        "forbidden",
    )
    .await;
    let escape = server.workspace.join("../../..").display().to_string();
    expect_error(
        json_post(
            "/v1/runs",
            json!({"task": "t", "model": "m", "workspace": escape}).to_string(),
        ),
        403,
        "forbidden",
    )
    .await;

    for (method, path) in [
        ("GET", "/v1/runs/nope"),
        ("POST", "/v1/runs/nope/cancel"),
        ("GET", "/v1/runs/nope/events"),
        ("GET", "/v1/runs/nope/ws"),
        ("GET", "/v1/nothing"),
    ] {
        let req = match method {
            "GET" => server.get(path),
            _ => server.post(path),
        };
        expect_error(req, 404, "not_found").await;
    }
    for (path, body, status, code) in [
        (
            "/v1/runs/nope/messages",
            json!({"content": "more"}),
            404,
            "not_found",
        ),
        (
            "/v1/approvals/nope",
            json!({"decision": "allow"}),
            404,
            "not_found",
        ),
        (
            "/v1/approvals/nope",
            json!({"decision": "perhaps"}),
            400,
            "bad_request",
        ),
    ] {
        expect_error(json_post(path, body.to_string()), status, code).await;
    }
    for query in ["limit=0", "limit=lots", "colour=red"] {
        let req = server.get(&format!("/v1/runs?{query}"));
        expect_error(req, 400, "bad_request").await;
    }
    expect_error(
        server
            .client
            .delete(server.url("/v1/runs"))
            .bearer_auth(&server.token),
        405,
        "method_not_allowed",
    )
    .await;
}

#[tokio::test]
async fn no_cross_origin_access_is_granted() {
    let server = TestServer::start().await;
    let preflight = server
        .client
        .request(reqwest::Method::OPTIONS, server.url("/v1/runs"))
        .header("Origin", "http://evil.example")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization, content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(
        preflight.status().is_client_error(),
        "{}",
        preflight.status()
    );
    assert!(preflight
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    let get = server
        .get("/v1/runs")
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), 200);
    assert!(get.headers().get("access-control-allow-origin").is_none());
}
