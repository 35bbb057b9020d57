//! OllamaProvider against ScriptedOllama.

use std::time::{Duration, Instant};

use reagent_protocol::{
    CancellationToken, ChatSignal, FinishReason, Message, Provider, ProviderError, ToolCall,
    ToolChoice,
};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::ClientOptions;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::json;

use super::common::{fast_opts, request, timeless, Signals};

async fn start(turns: Vec<Turn>) -> (ScriptedOllama, OllamaProvider) {
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .model(
                ModelSpec::new("qwen3:0.6b")
                    .with_arch("qwen3")
                    .with_context_length(40960),
            )
            .turns(turns),
    )
    .await
    .unwrap();
    let p = OllamaProvider::new(&server.base_url(), fast_opts()).unwrap();
    (server, p)
}

fn rich_turn() -> Turn {
    Turn::tool_call("read_file", json!({"path": "a.txt"}))
        .with_content("Let me look. <think>hmm</think>")
        .with_thinking("The user wants a.txt.")
        .with_usage(120, 17)
}

#[tokio::test]
async fn non_streaming_reply_is_parsed_and_request_is_ollama_shaped() {
    let (server, p) = start(vec![rich_turn()]).await;
    let mut req = request("qwen3:0.6b", false);
    req.options.keep_alive = Some("-1".into());
    req.options.think = Some(true);
    req.response_schema = Some(json!({"type": "object"}));
    let call = ToolCall {
        id: "call_0".into(),
        name: "read_file".into(),
        arguments: json!({"path": "x"}),
    };
    let mut asst = Message::assistant("");
    asst.tool_calls = vec![call.clone()];
    req.messages.push(asst.into());
    req.messages
        .push(Message::tool_result(&call, "{\"content\":\"hi\"}").into());
    let signals = Signals::default();
    let r = p
        .chat(&req, &signals.sink(), &CancellationToken::new())
        .await
        .unwrap();

    assert_eq!(r.message.content, "Let me look. <think>hmm</think>");
    assert_eq!(
        r.message.reasoning.as_deref(),
        Some("The user wants a.txt.")
    );
    assert_eq!(
        r.message.tool_calls,
        vec![ToolCall {
            id: "call_0".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.txt"})
        }]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(
        (r.usage.prompt_tokens, r.usage.completion_tokens),
        (120, 17)
    );
    assert_eq!(r.endpoint, server.base_url());
    assert!(
        signals.all().is_empty(),
        "non-streaming sends no text signals"
    );

    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert_eq!(body["model"], "qwen3:0.6b");
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["options"],
        json!({"num_ctx": 4096, "num_predict": 256, "temperature": 0.0, "seed": 1})
    );
    assert_eq!(body["keep_alive"], json!(-1));
    assert_eq!(body["think"], json!(true));
    assert_eq!(body["format"], json!({"type": "object"}));
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "x"}}}]})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "content": "{\"content\":\"hi\"}", "tool_name": "read_file"})
    );
}

#[tokio::test]
async fn streaming_yields_the_same_response_and_streams_text() {
    for final_chunk in [false, true] {
        let turn = if final_chunk {
            rich_turn().with_calls_in_final_chunk()
        } else {
            rich_turn()
        };
        let (_server, p) = start(vec![turn.clone(), turn]).await;
        let cancel = CancellationToken::new();
        let plain = p
            .chat(&request("qwen3:0.6b", false), &|_| {}, &cancel)
            .await
            .unwrap();
        let signals = Signals::default();
        let streamed = p
            .chat(&request("qwen3:0.6b", true), &signals.sink(), &cancel)
            .await
            .unwrap();
        assert_eq!(timeless(streamed), timeless(plain));
        assert_eq!(
            signals.text(),
            (
                "Let me look. <think>hmm</think>".to_owned(),
                "The user wants a.txt.".to_owned()
            )
        );
        assert!(signals.all().len() > 4, "text arrives in several pieces");
    }
}

#[tokio::test]
async fn length_stop_is_truncation_and_tool_choice_none_drops_tools() {
    let (server, p) = start(vec![Turn::text("abc").with_finish("length")]).await;
    let mut req = request("qwen3:0.6b", true);
    req.tool_choice = ToolChoice::None;
    let r = p
        .chat(&req, &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.finish, FinishReason::Length);
    assert_eq!(r.message.content, "abc");
    assert!(server.requests()[0].get("tools").is_none());
}

#[tokio::test]
async fn model_info_reads_show() {
    let (server, p) = start(vec![]).await;
    let info = p.model_info("qwen3:0.6b").await.unwrap();
    assert_eq!(info.context_length, Some(40960));
    assert_eq!(info.capabilities.tools, Some(true));
    assert_eq!(info.capabilities.thinking, Some(false));
    assert_eq!(info.capabilities.json_schema, Some(true));
    let shown = server.server().recorded();
    assert_eq!(shown[0].path, "/api/show");
    assert_eq!(shown[0].body, json!({"model": "qwen3:0.6b"}));
    p.health().await.unwrap();
}

#[tokio::test]
async fn unknown_model_says_how_to_pull_it() {
    let (_server, p) = start(vec![Turn::text("x")]).await;
    let err = p
        .chat(&request("nope", false), &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelNotFound { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("ollama pull nope"), "{err}");
    let err = p.model_info("nope").await.unwrap_err();
    assert!(err.to_string().contains("ollama pull nope"), "{err}");
}

#[tokio::test]
async fn unreachable_server_says_how_to_start_it() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let p = OllamaProvider::new(&format!("127.0.0.1:{port}"), fast_opts()).unwrap();
    let signals = Signals::default();
    let err = p
        .chat(
            &request("m", false),
            &signals.sink(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("ollama serve"), "{err}");
    assert_eq!(signals.retries().len(), 2, "connection errors are retried");
}

#[tokio::test]
async fn server_errors_are_retried_client_errors_are_not() {
    let (server, p) = start(vec![
        Turn::error(500, "boom"),
        Turn::error(503, "busy"),
        Turn::text("ok"),
        Turn::error(400, "bad request: tools malformed"),
        Turn::text("never"),
    ])
    .await;
    let signals = Signals::default();
    let cancel = CancellationToken::new();
    let r = p
        .chat(&request("qwen3:0.6b", false), &signals.sink(), &cancel)
        .await
        .unwrap();
    assert_eq!(r.message.content, "ok");
    assert_eq!(
        signals.retries().iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    let err = p
        .chat(&request("qwen3:0.6b", false), &signals.sink(), &cancel)
        .await
        .unwrap_err();
    match err {
        ProviderError::Http {
            status, message, ..
        } => {
            assert_eq!(status, 400);
            assert_eq!(message, "bad request: tools malformed");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.server().remaining_turns(), 1);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let (_server, p) = start(vec![
        Turn::error(429, "slow down").with_header("Retry-After", "1"),
        Turn::text("ok"),
    ])
    .await;
    let signals = Signals::default();
    let started = Instant::now();
    let r = p
        .chat(
            &request("qwen3:0.6b", true),
            &signals.sink(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.message.content, "ok");
    assert_eq!(signals.retries(), vec![(1, Duration::from_secs(1))]);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn timeout_is_reported() {
    let (server, _) = start(vec![Turn::text("late").with_delay(Duration::from_secs(3))]).await;
    let opts = ClientOptions {
        timeout: Duration::from_millis(200),
        retry: reagent_providers::RetryPolicy {
            max_retries: 0,
            ..Default::default()
        },
        ..ClientOptions::default()
    };
    let p = OllamaProvider::new(&server.base_url(), opts).unwrap();
    let started = Instant::now();
    let err = p
        .chat(
            &request("qwen3:0.6b", false),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Timeout { after, .. } if after == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn stream_idle_timeout_is_reported() {
    let (server, _) = start(vec![
        Turn::text("slow stream").with_chunk_delay(Duration::from_secs(3))
    ])
    .await;
    let opts = ClientOptions {
        timeout: Duration::from_millis(300),
        retry: reagent_providers::RetryPolicy {
            max_retries: 0,
            ..Default::default()
        },
        ..ClientOptions::default()
    };
    let p = OllamaProvider::new(&server.base_url(), opts).unwrap();
    let err = p
        .chat(
            &request("qwen3:0.6b", true),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Timeout { .. }), "{err:?}");
}

#[tokio::test]
async fn cancellation_is_prompt() {
    let (_server, p) = start(vec![Turn::text("late").with_delay(Duration::from_secs(10))]).await;
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        c2.cancel();
    });
    let started = Instant::now();
    let err = p
        .chat(&request("qwen3:0.6b", true), &|_| {}, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cut_stream_and_malformed_lines_are_protocol_errors() {
    let (_server, p) = start(vec![
        rich_turn().with_cut_after(3),
        Turn::raw_stream([
            "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n",
            "{not json\n",
        ]),
        Turn::raw_stream([
            "{\"model\":\"m\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n",
        ]),
        Turn::raw_stream(["{\"error\":\"out of memory\"}\n"]),
    ])
    .await;
    let cancel = CancellationToken::new();
    for want in [
        "closed before the reply was complete",
        "malformed NDJSON line",
        "before the final",
        "out of memory",
    ] {
        let signals = Signals::default();
        let err = p
            .chat(&request("qwen3:0.6b", true), &signals.sink(), &cancel)
            .await
            .unwrap_err();
        // Text received before the break is kept (`Incomplete`); none: a protocol error.
        assert!(
            matches!(
                err,
                ProviderError::Protocol { .. } | ProviderError::Incomplete { .. }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string().contains(want),
            "{err} lacks {want}; {:?}",
            signals.all()
        );
        assert!(signals.retries().is_empty());
    }
}

#[tokio::test]
async fn exhausted_script_is_a_clear_error() {
    let (_server, p) = start(vec![]).await;
    let err = p
        .chat(
            &request("qwen3:0.6b", false),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("script exhausted"), "{err}");
}

#[tokio::test]
async fn cut_before_response_is_retried_as_a_connection_error() {
    let (_server, p) = start(vec![Turn::cut(), Turn::text("ok")]).await;
    let signals = Signals::default();
    let r = p
        .chat(
            &request("qwen3:0.6b", false),
            &signals.sink(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.message.content, "ok");
    assert_eq!(signals.retries().len(), 1);
    assert!(matches!(signals.all()[0], ChatSignal::Retry { .. }));
}
