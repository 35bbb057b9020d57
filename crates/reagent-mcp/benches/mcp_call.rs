//! The cost of MCP: one call of a stdio server's tool through the registry against one call of
//! a built-in tool, and the start-up of three stdio servers (spawn, handshake, tool listing)
//! as a run waits for it. `cargo bench -p reagent-mcp --bench mcp_call`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use reagent_mcp::{McpClients, ServerSpec, Transport};
use reagent_tools::{ToolContext, ToolRegistry, ToolSource, ToolsConfig, Workspace};
use serde_json::json;

fn spec(name: &str) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: env!("CARGO_BIN_EXE_reagent-mcp-test-server").into(),
            args: vec!["ok".into()],
            env: Vec::new(),
            sandbox: false,
        },
        call_timeout: Duration::from_secs(10),
        startup_timeout: Duration::from_secs(10),
        approval: Default::default(),
    }
}

fn calls(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let ctx = ToolContext::new(Arc::new(Workspace::open(dir.path()).unwrap()));
    let clients = rt.block_on(async {
        let clients = Arc::new(McpClients::start(vec![spec("t")], None));
        clients.started().await;
        clients
    });
    let mut config = ToolsConfig::default();
    config.sources.push(clients.clone());
    let registry = ToolRegistry::workspace_tools(&config);
    let mut group = c.benchmark_group("tool_call");
    group.bench_function("builtin_read_file", |b| {
        b.to_async(&rt).iter(|| async {
            let r = registry
                .call_async("read_file", json!({"path": "a.txt"}), ctx.clone())
                .await;
            assert!(r.is_ok());
        })
    });
    group.bench_function("mcp_stdio_echo", |b| {
        b.to_async(&rt).iter(|| async {
            let r = registry
                .call_async("t__echo", json!({"text": "alpha"}), ctx.clone())
                .await;
            assert!(r.is_ok());
        })
    });
    group.finish();

    let mut group = c.benchmark_group("startup");
    group.sample_size(10);
    group.bench_function("three_stdio_servers", |b| {
        b.to_async(&rt).iter(|| async {
            let clients = McpClients::start(vec![spec("a"), spec("b"), spec("c")], None);
            clients.started().await;
            assert!(clients.statuses().iter().all(|s| s.status == "up"));
            assert_eq!(clients.tools().len(), 18);
        })
    });
    group.finish();
}

criterion_group!(benches, calls);
criterion_main!(benches);
