//! Provider failures end the run cleanly with a clear error and the partial result.

use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::{CancellationToken, ErrorKind, Outcome};
use reagent_providers::ollama::OllamaProvider;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, Turn};

use reagent_protocol::ToolSpec;
use reagent_tools::{Tool, ToolContext, ToolRegistry, ToolResult};
use serde_json::{json, Value};

use super::harness::{client, run, run_with, run_with_tools, TASK};

#[tokio::test]
async fn server_down_says_how_to_start_it() {
    // A port nothing listens on: bind, note the port, drop the listener.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let provider = OllamaProvider::new(
        &format!("http://127.0.0.1:{port}"),
        client(Duration::from_secs(2)),
    )
    .unwrap();
    let o = run_with(
        Arc::new(provider),
        |_| {},
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::ProviderError);
    let err = o.result.error.unwrap();
    assert_eq!(err.kind, ErrorKind::ServerUnreachable);
    assert!(err.message.contains("ollama serve"), "{err}");
}

#[tokio::test]
async fn model_not_found_says_ollama_pull() {
    let o = run(
        ScriptBuilder::new()
            .model(ModelSpec::new("llama3.2:1b"))
            .turn(Turn::text("unused")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::ProviderError);
    let err = o.result.error.unwrap();
    assert_eq!(err.kind, ErrorKind::ModelNotFound);
    assert!(err.message.contains("ollama pull qwen3:8b"), "{err}");
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_is_a_provider_error() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new().turn(Turn::text("late").with_delay(Duration::from_secs(3))),
    )
    .await
    .unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_millis(400))).unwrap();
    let started = std::time::Instant::now();
    let o = run_with(
        Arc::new(provider),
        |_| {},
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the timeout did not cut the call short"
    );
    assert_eq!(o.result.outcome, Outcome::ProviderError);
    let err = o.result.error.unwrap();
    assert_eq!(err.kind, ErrorKind::ServerUnreachable);
    assert!(err.message.contains("did not answer within"));
}

#[tokio::test]
async fn cancellation_stops_the_run_and_still_reports() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new().turn(Turn::text("late").with_delay(Duration::from_secs(5))),
    )
    .await
    .unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(30))).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let o = run_with(Arc::new(provider), |_| {}, |_| {}, &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(o.result.outcome, Outcome::Cancelled);
}

/// A tool that panics, run inline (`quick`) or on a blocking thread.
struct Panicky {
    quick: bool,
}

impl Tool for Panicky {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "boom".into(),
            description: "Always panics.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn mutates(&self) -> bool {
        false
    }
    fn call(&self, _args: &Value, _ctx: &ToolContext) -> ToolResult {
        panic!("the tool broke")
    }
    fn is_quick(&self, _args: &Value) -> bool {
        self.quick
    }
}

#[tokio::test]
async fn a_panicking_tool_is_a_tool_error_not_a_crash() {
    for quick in [true, false] {
        let server = ScriptedOllama::start(
            ScriptBuilder::new()
                .turn(Turn::tool_call("boom", json!({})))
                .turn(Turn::text("The tool is broken.")),
        )
        .await
        .unwrap();
        let provider =
            OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
        let mut tools = ToolRegistry::new();
        tools.register(Arc::new(Panicky { quick })).unwrap();
        let o = run_with_tools(
            Arc::new(provider),
            tools,
            TASK,
            |_| {},
            |_| {},
            &CancellationToken::new(),
        )
        .await;
        // The only call failed: the answer rests on nothing and is not reported as completed.
        assert_eq!(o.result.outcome, Outcome::NoProgress, "quick={quick}");
        let fed_back = server.requests()[1]["messages"].to_string();
        assert!(
            fed_back.contains("failed internally"),
            "quick={quick}: {fed_back}"
        );
    }
}

/// An asynchronous tool that is not called `task_complete` but ends the run by its result's
/// value; it sees the run's id and reports an event through the context's sink.
struct Finisher;

#[async_trait::async_trait]
impl reagent_tools::AsyncTool for Finisher {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "wrap_up".into(),
            description: "Ends the run.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn mutates(&self) -> bool {
        false
    }
    async fn call(&self, _args: Value, ctx: ToolContext) -> ToolResult {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Some(events) = &ctx.events {
            events.emit(reagent_protocol::EventKind::Nudge {
                reason: format!("from the tool of run {}", ctx.run_id),
                count: 0,
            });
        }
        ToolResult::ends_run(format!("wrapped up in {}", ctx.run_id))
    }
}

#[tokio::test]
async fn a_tool_result_ends_the_run_by_value_not_by_name() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("wrap_up", json!({})))
            .turn(Turn::text("never asked")),
    )
    .await
    .unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
    let mut tools = ToolRegistry::new();
    tools.register_async(Arc::new(Finisher)).unwrap();
    let o = run_with_tools(
        Arc::new(provider),
        tools,
        TASK,
        |_| {},
        |_| {},
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(server.requests().len(), 1);
    let run_id = o.result.run_id.clone();
    assert_eq!(o.result.answer, format!("wrapped up in {run_id}"));
    let reported = o.events.iter().any(|e| {
        matches!(&e.kind, reagent_protocol::EventKind::Nudge { reason, .. }
            if *reason == format!("from the tool of run {run_id}"))
    });
    assert!(reported, "the tool's event is in the run's events");
}
