//! Streamable HTTP both ways: reagent's workspace tools served at `/mcp` behind a bearer
//! token, reached by reagent's client with the token in its configured headers; a wrong
//! token and a closed port leave the server down with a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use reagent_mcp::{McpClients, ServerSpec, Transport, WorkspaceServer};
use reagent_protocol::CancellationToken;
use reagent_tools::{ToolContext, ToolRegistry, ToolResult, ToolSource, ToolsConfig, Workspace};
use serde_json::json;

fn http(name: &str, url: &str, token: &str) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: Transport::Http {
            url: url.into(),
            headers: vec![("Authorization".into(), format!("Bearer {token}"))],
        },
        call_timeout: Duration::from_secs(5),
        startup_timeout: Duration::from_secs(5),
        approval: Default::default(),
    }
}

#[tokio::test]
async fn workspace_tools_over_streamable_http_behind_a_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let tools = ToolRegistry::workspace_tools(&ToolsConfig {
        disabled: vec!["task_complete".into()],
        ..ToolsConfig::default()
    });
    let ctx = ToolContext::new(Arc::new(Workspace::open(dir.path()).unwrap()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let served = tokio::spawn(WorkspaceServer::new(tools, ctx).serve_http(
        listener,
        "s3cret".into(),
        shutdown.clone(),
    ));

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", l.local_addr().unwrap())
    };
    let clients = McpClients::start(
        vec![
            http("good", &url, "s3cret"),
            http("wrong", &url, "guess"),
            http("closed", &closed, "s3cret"),
        ],
        None,
    );
    clients.started().await;
    let statuses = clients.statuses();
    assert_eq!(statuses[0].status, "up", "{:?}", statuses[0]);
    assert_eq!(statuses[0].transport, "http");
    assert!(statuses[0]
        .tools
        .iter()
        .any(|t| t.name == "good__read_file"));
    for s in &statuses[1..] {
        assert_eq!(s.status, "down", "{s:?}");
        let e = s.error.as_deref().unwrap();
        assert!(
            e.contains("the MCP handshake with http://127.0.0.1:"),
            "{e}"
        );
    }
    assert!(
        statuses[1].error.as_deref().unwrap().contains("401"),
        "{:?}",
        statuses[1]
    );
    let r = clients
        .call(
            "good",
            "read_file",
            json!({"path": "a.txt"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(r, ToolResult::ok("alpha\n"));
    let names: Vec<String> = clients.tools().iter().map(|t| t.spec().name).collect();
    assert!(names.iter().all(|n| n.starts_with("good__")), "{names:?}");

    shutdown.cancel();
    served.await.unwrap().unwrap();
}
