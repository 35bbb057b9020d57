//! The MCP client against real server processes (the repository's rmcp test server): tools
//! offered namespaced, calls, and faults — a crash mid-call, a call that never returns, a
//! server that sends garbage or nothing, one that exits at start — each failing its calls with
//! a clear error, never stalling, and restarted with backoff.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_mcp::{McpClients, ServerSpec, Transport};
use reagent_protocol::CancellationToken;
use reagent_tools::{ToolContext, ToolRegistry, ToolResult, ToolSource, ToolsConfig, Workspace};
use serde_json::json;

const SERVER: &str = env!("CARGO_BIN_EXE_reagent-mcp-test-server");

fn spec(name: &str, mode: &str, starts: &Path) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: SERVER.into(),
            args: vec![mode.into()],
            env: vec![(
                "REAGENT_MCP_TEST_STARTS".into(),
                starts.display().to_string(),
            )],
            sandbox: false,
        },
        call_timeout: Duration::from_secs(2),
        startup_timeout: Duration::from_secs(2),
        approval: Default::default(),
    }
}

fn starts(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

/// Wait (up to 20 s) until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn text(result: &ToolResult) -> String {
    match result {
        ToolResult::Ok { output, .. } => output.as_str().unwrap_or_default().to_owned(),
        ToolResult::Err { error } => panic!("expected success, got error: {error}"),
    }
}

fn error(result: &ToolResult) -> String {
    match result {
        ToolResult::Err { error } => error.clone(),
        ToolResult::Ok { output, .. } => panic!("expected an error, got: {output}"),
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    starts: PathBuf,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    Fixture {
        starts: dir.path().join("starts"),
        ws,
        _dir: dir,
    }
}

#[tokio::test]
async fn tools_are_offered_namespaced_and_called_through_the_registry() {
    let fx = fixture();
    let clients = Arc::new(McpClients::start(vec![spec("t", "ok", &fx.starts)], None));
    clients.started().await;
    let status = &clients.statuses()[0];
    assert_eq!((status.name.as_str(), status.status), ("t", "up"));
    let names: Vec<&str> = status.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["t__echo", "t__add", "t__slow", "t__crash", "t__hang", "t__image"]
    );
    let add = &status.tools[1];
    assert_eq!(add.parameters["required"], json!(["a", "b"]));

    let mut config = ToolsConfig::default();
    config.sources.push(clients.clone());
    let registry = ToolRegistry::workspace_tools(&config);
    assert!(registry.names().contains(&"read_file".to_owned()));
    assert!(registry.names().contains(&"t__echo".to_owned()));
    let ctx = ToolContext::new(Arc::new(Workspace::open(&fx.ws).unwrap()));
    let r = registry
        .call_async("t__add", json!({"a": 2, "b": 40}), ctx.clone())
        .await;
    assert_eq!(text(&r), "42");
    let r = registry
        .call_async("t__image", json!({}), ctx.clone())
        .await;
    assert_eq!(text(&r), "[image image/png, 9 bytes, not shown]\nan image");
    // A blocking caller is told the tool is asynchronous, not left hanging.
    let r = registry.call("t__echo", &json!({"text": "x"}), &ctx);
    assert!(error(&r).contains("asynchronous"));

    // Read-only mode keeps only the tools the server marks read-only.
    let mut read_only = ToolsConfig {
        read_only: true,
        ..ToolsConfig::default()
    };
    read_only.sources.push(clients.clone());
    let names = ToolRegistry::workspace_tools(&read_only).names();
    assert!(names.contains(&"t__add".to_owned()), "{names:?}");
    assert!(!names.contains(&"t__echo".to_owned()), "{names:?}");
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_fails_the_call_and_is_restarted() {
    let fx = fixture();
    let clients = McpClients::start(vec![spec("c", "ok", &fx.starts)], None);
    clients.started().await;
    let cancel = CancellationToken::new();
    let r = clients.call("c", "crash", json!({}), &cancel).await;
    let e = error(&r);
    assert!(
        e.contains("the MCP server `c` closed the connection during the call"),
        "{e}"
    );
    // Down (its tools left out of runs), then back after the backoff.
    eventually("the crashed server restarted", || starts(&fx.starts) >= 2).await;
    eventually("the restarted server up", || {
        clients.statuses()[0].status == "up"
    })
    .await;
    let r = clients
        .call("c", "echo", json!({"text": "again"}), &cancel)
        .await;
    assert_eq!(text(&r), "again");
}

#[tokio::test]
async fn a_call_that_never_returns_times_out_and_the_server_is_restarted() {
    let fx = fixture();
    let clients = McpClients::start(vec![spec("h", "ok", &fx.starts)], None);
    clients.started().await;
    let started = Instant::now();
    let r = clients
        .call("h", "hang", json!({}), &CancellationToken::new())
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        error(&r),
        "the MCP server `h` did not answer within 2.0 s; it is restarted"
    );
    eventually("the hung server restarted", || starts(&fx.starts) >= 2).await;
    eventually("the restarted server up", || {
        clients.statuses()[0].status == "up"
    })
    .await;
    let r = clients
        .call(
            "h",
            "echo",
            json!({"text": "back"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(text(&r), "back");
}

#[tokio::test]
async fn a_cancelled_run_does_not_wait_for_a_slow_call() {
    let fx = fixture();
    let clients = McpClients::start(vec![spec("s", "ok", &fx.starts)], None);
    clients.started().await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let r = clients
        .call("s", "slow", json!({"ms": 60_000}), &cancel)
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(error(&r), "the run was cancelled during the call");
}

#[tokio::test]
async fn garbage_silent_and_exiting_servers_are_down_and_retried_others_work() {
    let fx = fixture();
    let specs = vec![
        spec("good", "ok", &fx.starts),
        spec("garbage", "garbage", &fx.ws.join("../garbage-starts")),
        spec("silent", "silent", &fx.ws.join("../silent-starts")),
        spec("gone", "exit", &fx.ws.join("../gone-starts")),
    ];
    let started = Instant::now();
    let clients = McpClients::start(specs, None);
    clients.started().await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let statuses = clients.statuses();
    let by = |name: &str| statuses.iter().find(|s| s.name == name).unwrap().clone();
    assert_eq!(by("good").status, "up");
    for name in ["garbage", "silent"] {
        let s = by(name);
        assert_eq!(s.status, "down", "{name}");
        let e = s.error.unwrap();
        assert!(
            e.starts_with("it did not complete the MCP handshake and list its tools within 2.0 s"),
            "{name}: {e}"
        );
    }
    let gone = by("gone");
    assert_eq!(gone.status, "down");
    assert!(gone.error.unwrap().contains("handshake"));

    // Their tools are left out; the good server's are offered.
    let names: Vec<String> = clients.tools().iter().map(|t| t.spec().name).collect();
    assert!(names.iter().all(|n| n.starts_with("good__")), "{names:?}");
    assert_eq!(names.len(), 6);
    let e = error(
        &clients
            .call("garbage", "echo", json!({}), &CancellationToken::new())
            .await,
    );
    assert!(e.starts_with("the MCP server `garbage` is down ("), "{e}");
    assert!(e.contains("it is restarted in"), "{e}");
    let e = error(
        &clients
            .call("nope", "echo", json!({}), &CancellationToken::new())
            .await,
    );
    assert_eq!(
        e,
        "no MCP server `nope` is configured; configured: good, garbage, silent, gone"
    );
    // Each is tried again, with backoff.
    let gone_starts = fx.ws.join("../gone-starts");
    eventually("the exiting server retried", || starts(&gone_starts) >= 3).await;
    let r = clients
        .call(
            "good",
            "echo",
            json!({"text": "fine"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(text(&r), "fine");
}

/// Answers every approval with `verdict` and keeps the requests.
struct Recording {
    verdict: reagent_tools::Verdict,
    seen: std::sync::Mutex<Vec<reagent_tools::Approval>>,
}

impl reagent_tools::Approver for Recording {
    fn approve(&self, request: &reagent_tools::Approval) -> reagent_tools::Verdict {
        self.seen.lock().unwrap().push(request.clone());
        self.verdict.clone()
    }
}

#[tokio::test]
async fn calls_that_need_approval_ask_the_runs_approver() {
    use reagent_mcp::{ApprovalMode, ApprovalRule};
    use reagent_tools::{Approval, Verdict};
    let fx = fixture();
    let mut s = spec("t", "ok", &fx.starts);
    // `echo` is not marked read-only, `add` is; `image` is exempted by name.
    s.approval = ApprovalRule {
        mode: ApprovalMode::Writes,
        ask: Vec::new(),
        auto: vec!["image".into()],
    };
    let clients = Arc::new(McpClients::start(vec![s], None));
    clients.started().await;
    let mut config = ToolsConfig::default();
    config.sources.push(clients.clone());
    let registry = ToolRegistry::workspace_tools(&config);
    let mut ctx = ToolContext::new(Arc::new(Workspace::open(&fx.ws).unwrap()));

    // No approver: refused, naming the server's settings; the others need none.
    let r = registry
        .call_async("t__echo", json!({"text": "hi"}), ctx.clone())
        .await;
    let e = error(&r);
    assert!(e.contains("no one can approve it"), "{e}");
    assert!(e.contains("[mcp.servers.t]"), "{e}");
    let r = registry
        .call_async("t__add", json!({"a": 1, "b": 2}), ctx.clone())
        .await;
    assert_eq!(text(&r), "3");
    let r = registry
        .call_async("t__image", json!({}), ctx.clone())
        .await;
    assert!(text(&r).contains("an image"));

    // A denial with a note reaches the model; the request names the tool and its arguments.
    let deny = Arc::new(Recording {
        verdict: Verdict::Deny {
            note: Some("use add instead".into()),
        },
        seen: Default::default(),
    });
    ctx.approver = Some(deny.clone());
    let r = registry
        .call_async("t__echo", json!({"text": "hi"}), ctx.clone())
        .await;
    assert_eq!(
        error(&r),
        "tool not called: the user denied it and says: use add instead"
    );
    assert_eq!(
        *deny.seen.lock().unwrap(),
        [Approval::ToolCall {
            tool: "t__echo".into(),
            arguments: r#"{"text":"hi"}"#.into()
        }]
    );
    // Read-only and exempted tools do not ask.
    registry
        .call_async("t__add", json!({"a": 1, "b": 2}), ctx.clone())
        .await;
    assert_eq!(deny.seen.lock().unwrap().len(), 1);

    // Allowed: the call goes through.
    let allow = Arc::new(Recording {
        verdict: Verdict::Allow,
        seen: Default::default(),
    });
    ctx.approver = Some(allow.clone());
    let r = registry
        .call_async("t__echo", json!({"text": "hi"}), ctx.clone())
        .await;
    assert!(text(&r).contains("hi"), "{r:?}");
    assert_eq!(allow.seen.lock().unwrap().len(), 1);
}
