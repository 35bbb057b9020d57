//! reagent's workspace tools as an MCP server, driven by an rmcp client over an in-memory
//! pipe: listing, checked and coerced arguments, confinement, errors as tool errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use reagent_mcp::WorkspaceServer;
use reagent_tools::{ToolContext, ToolRegistry, ToolsConfig, Workspace};
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::{json, Value};

fn args(v: Value) -> Option<rmcp::model::JsonObject> {
    match v {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let v = serde_json::to_value(&result.content).unwrap();
    v[0]["text"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_workspace_tools_over_mcp() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let tools = ToolRegistry::workspace_tools(&ToolsConfig {
        disabled: vec!["task_complete".into()],
        ..ToolsConfig::default()
    });
    let ctx = ToolContext::new(Arc::new(Workspace::open(dir.path()).unwrap()));
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let server = WorkspaceServer::new(tools, ctx);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.unwrap();
        let _ = running.waiting().await;
    });
    let client = ().serve(client_io).await.unwrap();

    let listed = client.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "edit_file",
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "run_command",
            "write_file"
        ]
    );
    let read = listed.iter().find(|t| t.name == "read_file").unwrap();
    assert_eq!(
        read.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );

    let call = |name: &'static str, v: Value| {
        let mut p = CallToolRequestParams::new(name);
        p.arguments = args(v);
        p
    };
    let r = client
        .peer()
        .call_tool(call("read_file", json!({"path": "a.txt"})))
        .await
        .unwrap();
    assert_eq!((text(&r).as_str(), r.is_error), ("alpha\n", Some(false)));
    // Coerced as in a run: a number given as a string.
    let r = client
        .peer()
        .call_tool(call(
            "read_file",
            json!({"path": "a.txt", "start_line": "1"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    // Confined: an escape is a tool error, not a read.
    let r = client
        .peer()
        .call_tool(call("read_file", json!({"path": "../../etc/passwd"})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(!text(&r).contains("root:"), "{}", text(&r));
    let r = client
        .peer()
        .call_tool(call(
            "write_file",
            json!({"path": "b.txt", "content": "beta"}),
        ))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta"
    );
    let r = client
        .peer()
        .call_tool(call("read_file", json!({})))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("path"), "{}", text(&r));
    let e = client
        .peer()
        .call_tool(call("task_complete", json!({"summary": "x"})))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("unknown tool `task_complete`"),
        "{e}"
    );
    client.cancel().await.unwrap();
}
