//! AnthropicProvider against ScriptedAnthropic.

use reagent_protocol::{
    CancellationToken, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice,
};
use reagent_providers::anthropic::AnthropicProvider;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedAnthropic, Turn};
use serde_json::json;

use super::common::{fast_opts, request, timeless, Signals};

async fn start(turns: Vec<Turn>) -> (ScriptedAnthropic, AnthropicProvider) {
    let server = ScriptedAnthropic::start(
        ScriptBuilder::new()
            .model(ModelSpec::new("claude-test"))
            .turns(turns),
    )
    .await
    .unwrap();
    let p = AnthropicProvider::new(&server.base_url(), Some("key-1".into()), fast_opts()).unwrap();
    (server, p)
}

fn rich_turn() -> Turn {
    Turn::tool_call("read_file", json!({"path": "a.txt"}))
        .with_call_id("toolu_abc", "list_dir", json!({"path": "src"}))
        .with_content("Looking.")
        .with_thinking("Two calls needed.")
        .with_usage(100, 30)
        .with_cached(60)
}

#[tokio::test]
async fn non_streaming_reply_and_request_shape() {
    let (server, p) = start(vec![rich_turn()]).await;
    let mut req = request("claude-test", false);
    req.tool_choice = ToolChoice::Required;
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "x"}),
    };
    let mut asst = Message::assistant("I'll read it.");
    asst.tool_calls = vec![call.clone()];
    req.messages.push(asst.into());
    req.messages
        .push(Message::tool_result(&call, "file body").into());
    let r = p
        .chat(&req, &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.message.content, "Looking.");
    assert_eq!(r.message.reasoning.as_deref(), Some("Two calls needed."));
    assert_eq!(
        r.message.tool_calls,
        vec![
            ToolCall {
                id: "toolu_00".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.txt"})
            },
            ToolCall {
                id: "toolu_abc".into(),
                name: "list_dir".into(),
                arguments: json!({"path": "src"})
            },
        ]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(
        (
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.cached_prompt_tokens
        ),
        (100, 30, Some(60))
    );

    let rec = &server.server().recorded()[0];
    assert_eq!(rec.path, "/v1/messages");
    assert_eq!(rec.header("x-api-key"), Some("key-1"));
    assert_eq!(rec.header("anthropic-version"), Some("2023-06-01"));
    let body = &rec.body;
    assert_eq!(body["system"], "You are terse.");
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["tool_choice"], json!({"type": "any"}));
    assert_eq!(
        body["tools"][0],
        json!({"name": "read_file", "description": "Read a file.",
        "input_schema": {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}})
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "user", "content": "read a.txt"})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll read it."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "x"}}]})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "file body"}]})
    );
}

#[tokio::test]
async fn streaming_matches_non_streaming() {
    let shapes = [
        rich_turn(),
        rich_turn().with_chunk_chars(1).with_empty_deltas(),
        Turn::text("plain").with_finish("length"),
        Turn::tool_call("noargs", json!({})),
    ];
    for turn in shapes {
        let (_server, p) = start(vec![turn.clone(), turn.clone()]).await;
        let cancel = CancellationToken::new();
        let plain = p
            .chat(&request("claude-test", false), &|_| {}, &cancel)
            .await
            .unwrap();
        let signals = Signals::default();
        let streamed = p
            .chat(&request("claude-test", true), &signals.sink(), &cancel)
            .await
            .unwrap();
        assert_eq!(timeless(streamed), timeless(plain.clone()), "turn {turn:?}");
        assert_eq!(
            signals.text(),
            (
                plain.message.content.clone(),
                plain.message.reasoning.clone().unwrap_or_default()
            )
        );
    }
}

#[tokio::test]
async fn max_tokens_is_truncation() {
    let (_server, p) = start(vec![
        Turn::tool_call("f", json!({"a": 1})).with_finish("length")
    ])
    .await;
    let r = p
        .chat(
            &request("claude-test", true),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.finish, FinishReason::Length);
}

#[tokio::test]
async fn broken_streams_are_protocol_errors() {
    let turns = vec![
        rich_turn().with_chunk_chars(2).with_cut_after(20),
        Turn::raw_stream(["event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n", "event: ping\ndata: {bad\n\n"]),
        Turn::raw_stream(["event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"]),
        Turn::raw_stream(["event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"]),
    ];
    let (_server, p) = start(turns).await;
    for want in [
        "closed before the reply was complete",
        "malformed event data",
        "Overloaded",
        "never started",
    ] {
        let err = p
            .chat(
                &request("claude-test", true),
                &|_| {},
                &CancellationToken::new(),
            )
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
        assert!(err.to_string().contains(want), "{err} lacks {want}");
    }
}

#[tokio::test]
async fn model_lookup_and_not_found() {
    let (_server, p) = start(vec![]).await;
    let info = p.model_info("claude-test").await.unwrap();
    assert_eq!(info.capabilities.tools, Some(true));
    let err = p.model_info("claude-nope").await.unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelNotFound { .. }),
        "{err:?}"
    );
    let err = p
        .chat(
            &request("claude-nope", false),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("claude-nope"), "{err}");
    p.health().await.unwrap();
}
