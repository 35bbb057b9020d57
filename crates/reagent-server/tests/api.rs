//! The REST API, SSE and static files against a real server and a scripted model server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::{assert_complete, TestServer};

#[tokio::test]
async fn a_run_is_started_streamed_listed_and_shown() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "write_file",
                json!({"path": "a.txt", "content": "hi"}),
            ))
            .turn(Turn::text("wrote a.txt")),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let created = server.start_run(&model.base_url(), json!({})).await;
    assert_eq!(created["status"], "running");
    let id = created["id"].as_str().unwrap();

    let events = server.events(id, None).await;
    assert_complete(&events);
    assert_eq!(events[0].event, "run_started");
    assert_eq!(events[0].data["session_id"], created["session_id"]);
    let kinds: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert!(kinds.contains(&"tool_call"), "{kinds:?}");
    // The run wrote a.txt and nothing checked it: an honest ending is `unchecked`.
    assert_eq!(events.last().unwrap().data["outcome"], "unchecked");
    assert_eq!(
        std::fs::read_to_string(server.workspace.join("a.txt")).unwrap(),
        "hi"
    );

    let detail = server.wait_finished(id).await;
    assert_eq!(detail["run"]["outcome"], "unchecked");
    assert_eq!(detail["run"]["id"], id);
    assert_eq!(detail["result"]["answer"], "wrote a.txt");
    assert_eq!(detail["result"]["files_changed"], json!(["a.txt"]));
    let transcript = detail["transcript"].as_array().unwrap();
    assert_eq!(transcript[1]["role"], "user");
    assert_eq!(transcript[1]["content"], "do the thing");
    assert_eq!(transcript.last().unwrap()["role"], "assistant");

    let list: Value = server.get_json("/v1/runs").await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["runs"][0]["id"], id);
    assert_eq!(list["runs"][0]["task"], "do the thing");
    assert_eq!(list["runs"][0]["tool_calls"], 1);

    // A finished run is replayed from the store, whole or after a position, then closed.
    let replay = server.events(id, None).await;
    assert_eq!(
        replay
            .iter()
            .map(|e| (e.id, e.event.clone()))
            .collect::<Vec<_>>(),
        events
            .iter()
            .map(|e| (e.id, e.event.clone()))
            .collect::<Vec<_>>()
    );
    let tail = server.events(id, Some(3)).await;
    assert_eq!(tail.first().unwrap().id, 4);
    assert_eq!(tail.len(), events.len() - 3);
    let res = server
        .get(&format!("/v1/runs/{id}/events?after=2"))
        .send()
        .await
        .unwrap();
    let tail = support::read_sse(res, usize::MAX).await;
    assert_eq!(tail.first().unwrap().id, 3);
}

#[tokio::test]
async fn health_and_the_dashboard_need_no_token_and_everything_else_does() {
    let server = TestServer::start().await;
    let c = &server.client;
    let health: Value = c
        .get(server.url("/v1/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["version"], env!("CARGO_PKG_VERSION"));
    let index = c.get(server.url("/")).send().await.unwrap();
    assert_eq!(index.status(), 200);
    assert!(index.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(index.text().await.unwrap().contains("<html"));
    let missing = c.get(server.url("/assets/nope.js")).send().await.unwrap();
    assert_eq!(missing.status(), 404);

    for path in [
        "/v1/runs",
        "/v1/approvals",
        "/v1/openapi.json",
        "/metrics",
        "/v1/runs/x/events",
    ] {
        for auth in [
            None,
            Some("Bearer wrong-token"),
            Some("Basic abc"),
            Some(server.token.as_str()),
        ] {
            let mut req = c.get(server.url(path));
            if let Some(a) = auth {
                req = req.header("Authorization", a);
            }
            let res = req.send().await.unwrap();
            assert_eq!(res.status(), 401, "{path} with {auth:?}");
            let body: Value = res.json().await.unwrap();
            assert_eq!(body["error"]["code"], "unauthorized");
            assert!(!body.to_string().contains(&server.token));
        }
    }
    let ok = server.get("/v1/approvals").send().await.unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(ok.json::<Value>().await.unwrap(), json!({"approvals": []}));
}

#[tokio::test]
async fn a_run_that_fails_before_it_starts_is_still_listed_with_its_error() {
    let server = TestServer::start_allowing("http://127.0.0.1:1").await;
    // Nothing listens on port 1.
    let created = server
        .start_run("http://127.0.0.1:1", json!({"task": "unreachable"}))
        .await;
    let id = created["id"].as_str().unwrap();
    let events = server.events(id, None).await;
    assert_complete(&events);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].data["outcome"], "provider_error");
    let detail = server.wait_finished(id).await;
    assert_eq!(detail["run"]["outcome"], "provider_error");
    assert_eq!(detail["run"]["task"], "unreachable");
    assert_eq!(detail["run"]["session_id"], created["session_id"]);
    assert_eq!(detail["result"]["error_kind"], "server_unreachable");
    let list: Value = server.get_json("/v1/runs?outcome=provider_error").await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["runs"][0]["id"], id);
}

/// A run is shown from the moment `POST /v1/runs` answers, before its `run_started` is stored:
/// here the model server accepts the connection and never answers, so the agent is still asking
/// about the model when the run is fetched.
#[tokio::test]
async fn a_run_is_shown_as_running_before_anything_of_it_is_stored() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            open.push(conn);
        }
    });
    let server = TestServer::start_allowing(&silent_url).await;
    let created = server
        .start_run(&silent_url, json!({"task": "wait for the model"}))
        .await;
    let id = created["id"].as_str().unwrap();
    let res = server.get(&format!("/v1/runs/{id}")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let detail: Value = res.json().await.unwrap();
    assert_eq!(detail["run"]["id"], id);
    assert_eq!(detail["run"]["outcome"], "running");
    assert_eq!(detail["run"]["task"], "wait for the model");
    assert_eq!(detail["run"]["session_id"], created["session_id"]);
    assert_eq!(detail["transcript"], json!([]));
    let cancelled = server.cancel(id).await;
    assert_eq!(cancelled.status(), 202);
    let detail = server.wait_finished(id).await;
    assert_eq!(detail["run"]["outcome"], "cancelled");
    held.abort();
}
