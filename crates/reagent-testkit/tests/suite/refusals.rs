//! Whole runs against servers that misbehave: one that refuses a JSON Schema in `format` the
//! way `ollama-openai-proxy` (and older Ollama) does, one that refuses `think` and `tools` as
//! older Ollama releases do, and one whose stream breaks off.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, EventSink, RunResult, ToolMode};
use reagent_protocol::{CancellationToken, Event, Outcome};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::{ClientOptions, RetryPolicy};
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
use serde_json::{json, Value};

/// Runs "what does a.txt say?" in `mode` against `server`; the events as JSON.
async fn run(server: &ScriptedOllama, mode: ToolMode, stream: bool) -> (RunResult, Vec<Value>) {
    run_tuned(server, mode, stream, |_| {}).await
}

/// [`run`] with the config adjusted by `tune`.
async fn run_tuned(
    server: &ScriptedOllama,
    mode: ToolMode,
    stream: bool,
    tune: impl FnOnce(&mut AgentConfig),
) -> (RunResult, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello from a").unwrap();
    let opts = ClientOptions {
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        ..ClientOptions::default()
    };
    let provider = OllamaProvider::new(&server.base_url(), opts).unwrap();
    let mut config = AgentConfig::new("qwen3:8b");
    config.tool_mode = mode;
    config.stream = stream;
    tune(&mut config);
    let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
    let workspace = Workspace::open(dir.path()).unwrap();
    let agent = Arc::new(Agent::new(Arc::new(provider), Arc::new(tools), config));
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let seen = Arc::clone(&events);
    let sink = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| seen.lock().unwrap().push(e)),
    );
    let result = agent
        .run(
            Arc::new(workspace),
            "what does a.txt say?",
            &sink,
            &CancellationToken::new(),
        )
        .await;
    let events = events
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    (result, events)
}

fn guardrails(events: &[Value], name: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "guardrail" && e["guardrail"] == name)
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_schema_in_format_is_refused_with_the_proxys_exact_body() {
    let server = ScriptedOllama::start(ScriptBuilder::new().only_json_format())
        .await
        .unwrap();
    let schema = json!({"type": "object", "properties": {"tool": {"type": "string"}},
                        "required": ["tool"]});
    let resp = reqwest::Client::new()
        .post(format!("{}/api/chat", server.base_url()))
        .json(&json!({"model": "smol", "stream": false, "format": schema,
                      "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    // Byte for byte what ollama-openai-proxy 0.7.0 answered over llama-server.
    assert_eq!(
        resp.text().await.unwrap(),
        r#"{"detail":"Invalid request body: 1 validation error for OllamaChatRequest\nformat\n  Input should be 'json' [type=literal_error, input_value={'type': 'object', 'prope...}, 'required': ['tool']}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/literal_error"}"#
    );
}

#[tokio::test]
async fn a_refused_schema_falls_back_to_json_mode_and_the_run_completes() {
    for stream in [false, true] {
        let server = ScriptedOllama::start(
            ScriptBuilder::new()
                .only_json_format()
                .turn(Turn::text(
                    r#"{"tool": "read_file", "arguments": {"path": "a.txt"}}"#,
                ))
                .turn(Turn::text(r#"{"final_answer": "a.txt says hello from a"}"#)),
        )
        .await
        .unwrap();
        let (result, events) = run(&server, ToolMode::Constrained, stream).await;
        assert_eq!(result.outcome, Outcome::Completed, "{:?}", result.error);
        assert_eq!(result.answer, "a.txt says hello from a");
        assert_eq!(result.tool_calls, 1);
        // Said once, though every later request would have been refused as well.
        let fallbacks = guardrails(&events, "feature_fallback");
        assert_eq!(fallbacks.len(), 1, "{fallbacks:?}");
        assert_eq!(fallbacks[0]["action"], "fallback");
        let detail = fallbacks[0]["detail"].as_str().unwrap();
        assert!(detail.contains("Input should be 'json'"), "{detail}");
        assert!(
            detail.contains("JSON mode with the schema stated in the prompt"),
            "{detail}"
        );
        // The refused request, then two in JSON mode with the schema in the system prompt.
        let sent = server.requests();
        assert_eq!(sent.len(), 3);
        assert!(sent[0]["format"].is_object());
        for body in &sent[1..] {
            assert_eq!(body["format"], "json");
            let system = body["messages"][0]["content"].as_str().unwrap();
            assert!(system.contains("matches this JSON Schema"), "{system}");
            assert!(system.contains("\"final_answer\""), "{system}");
        }
    }
}

#[tokio::test]
async fn a_stream_that_breaks_off_leaves_its_text_as_the_partial_result() {
    let server = ScriptedOllama::start(
        ScriptBuilder::new().turn(
            Turn::text("The file a.txt says hello from a, and also")
                .with_chunk_chars(4)
                .with_cut_after(6),
        ),
    )
    .await
    .unwrap();
    let (result, events) = run(&server, ToolMode::Prompt, true).await;
    assert_eq!(result.outcome, Outcome::ProviderError);
    assert_eq!(result.answer, "The file a.txt says hell");
    assert_eq!(result.last_assistant_text, result.answer);
    let error = result.error.map(|e| e.message).unwrap_or_default();
    assert!(
        error.contains("24 characters of the reply were received and kept"),
        "{error}"
    );
    let cut = guardrails(&events, "stream_cut");
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(cut[0]["action"], "partial_result");
}

#[tokio::test]
async fn refused_tools_and_think_step_down_and_the_run_completes() {
    // Older Ollama releases, for a model without tools or thinking.
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::error(400, "\"gemma:2b\" does not support thinking"),
        Turn::error(
            400,
            "registry.ollama.ai/library/gemma:2b does not support tools",
        ),
        Turn::text(
            r#"<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>"#,
        ),
        Turn::text("a.txt says hello from a"),
    ]))
    .await
    .unwrap();
    let (result, events) = run_tuned(&server, ToolMode::Native, false, |c| {
        c.options.think = Some(true);
    })
    .await;
    assert_eq!(result.outcome, Outcome::Completed, "{:?}", result.error);
    assert_eq!(result.answer, "a.txt says hello from a");
    assert_eq!(result.tool_calls, 1);
    let fallbacks = guardrails(&events, "feature_fallback");
    let details: Vec<&str> = fallbacks
        .iter()
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(
        details[0].contains("requests without `think`"),
        "{details:?}"
    );
    assert!(
        details[1].contains("the tools described in the prompt"),
        "{details:?}"
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0]["think"], true);
    assert!(sent[0]["tools"].is_array());
    assert!(sent[1].get("think").is_none());
    assert!(sent[1]["tools"].is_array());
    // From then on: no think, no native tools, the tools described in the system prompt.
    for body in &sent[2..] {
        assert!(body.get("think").is_none(), "{body}");
        assert!(body.get("tools").is_none(), "{body}");
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("- read_file: "), "{system}");
        assert!(system.contains("<tool_call>"), "{system}");
    }
}
