//! OpenAiProvider against ScriptedOpenAi.

use reagent_protocol::{
    CancellationToken, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice,
};
use reagent_providers::openai::OpenAiProvider;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedOpenAi, Turn};
use serde_json::json;

use super::common::{fast_opts, request, timeless, Signals};

async fn start(turns: Vec<Turn>) -> (ScriptedOpenAi, OpenAiProvider) {
    let server = ScriptedOpenAi::start(
        ScriptBuilder::new()
            .model(
                ModelSpec::new("smollm2")
                    .with_context_length(8192)
                    .with_capabilities(["completion"]),
            )
            .turns(turns),
    )
    .await
    .unwrap();
    let p = OpenAiProvider::new(&server.base_url(), Some("sk-test".into()), fast_opts()).unwrap();
    (server, p)
}

fn rich_turn() -> Turn {
    Turn::tool_call("read_file", json!({"path": "a.txt"}))
        .with_call_id("call_xyz", "list_dir", json!({"path": ".", "depth": 2}))
        .with_content("Reading.")
        .with_thinking("I should read it.")
        .with_usage(50, 12)
        .with_cached(40)
}

#[tokio::test]
async fn non_streaming_reply_and_request_shape() {
    let (server, p) = start(vec![rich_turn()]).await;
    let mut req = request("smollm2", false);
    req.tool_choice = ToolChoice::Required;
    req.response_schema = Some(json!({"type": "object"}));
    let call = ToolCall {
        id: "call_9".into(),
        name: "read_file".into(),
        arguments: json!({"path": "x"}),
    };
    let mut asst = Message::assistant("");
    asst.tool_calls = vec![call.clone()];
    req.messages.push(asst.into());
    req.messages
        .push(Message::tool_result(&call, "hello").into());
    let r = p
        .chat(&req, &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.message.content, "Reading.");
    assert_eq!(r.message.reasoning.as_deref(), Some("I should read it."));
    assert_eq!(
        r.message.tool_calls,
        vec![
            ToolCall {
                id: "call_0".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.txt"})
            },
            ToolCall {
                id: "call_xyz".into(),
                name: "list_dir".into(),
                arguments: json!({"path": ".", "depth": 2})
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
        (50, 12, Some(40))
    );
    assert_eq!(r.endpoint, server.base_url());

    let rec = &server.server().recorded()[0];
    assert_eq!(rec.path, "/v1/chat/completions");
    assert_eq!(rec.header("authorization"), Some("Bearer sk-test"));
    let body = &rec.body;
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["seed"], 1);
    assert_eq!(body["stream"], false);
    assert!(body.get("stream_options").is_none());
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "response", "schema": {"type": "object"}, "strict": true}})
    );
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
    assert_eq!(
        body["messages"][2],
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"x\"}"}}]})
    );
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_9", "content": "hello"})
    );
}

#[tokio::test]
async fn streaming_matches_non_streaming_for_every_delta_shape() {
    let shapes = [
        rich_turn(),
        rich_turn().with_args_as_object(),
        rich_turn().with_empty_deltas(),
        rich_turn().with_chunk_chars(1),
        Turn::text("just text, no calls").with_usage(3, 4),
        Turn::text("cut short").with_finish("length"),
    ];
    for turn in shapes {
        let (server, p) = start(vec![turn.clone(), turn.clone()]).await;
        let cancel = CancellationToken::new();
        let plain = p
            .chat(&request("smollm2", false), &|_| {}, &cancel)
            .await
            .unwrap();
        let signals = Signals::default();
        let streamed = p
            .chat(&request("smollm2", true), &signals.sink(), &cancel)
            .await
            .unwrap();
        assert_eq!(timeless(streamed), timeless(plain.clone()), "turn {turn:?}");
        assert_eq!(signals.text().0, plain.message.content);
        assert_eq!(
            server.requests()[1]["stream_options"],
            json!({"include_usage": true})
        );
    }
}

#[tokio::test]
async fn broken_streams_are_protocol_errors() {
    let chunk = |d: &str| {
        format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{d},\"finish_reason\":null}}]}}\n\n")
    };
    let turns = vec![
        // cut in the middle of a call's arguments
        rich_turn().with_chunk_chars(3).with_cut_after(12),
        Turn::raw_stream([
            chunk("{\"content\":\"a\"}"),
            "data: {\"choices\": [oops\n\n".to_owned(),
        ]),
        Turn::raw_stream([chunk("{\"content\":\"a\"}")]),
        Turn::raw_stream([
            "data: {\"error\":{\"message\":\"context overflow\",\"code\":500}}\n\n".to_owned(),
        ]),
    ];
    let (_server, p) = start(turns).await;
    for want in [
        "closed before the reply was complete",
        "malformed SSE data",
        "before `data: [DONE]`",
        "context overflow",
    ] {
        let err = p
            .chat(
                &request("smollm2", true),
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
async fn a_stream_without_done_but_with_finish_reason_is_complete() {
    let (_server, p) = start(vec![Turn::raw_stream([
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\r\n\r\n",
        ": keep-alive comment\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1}}\n\n",
    ])])
    .await;
    let r = p
        .chat(
            &request("smollm2", true),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.message.content, "hi");
    assert_eq!(r.finish, FinishReason::Stop);
    assert_eq!(r.usage.prompt_tokens, 2);
}

#[tokio::test]
async fn model_info_reads_props_at_the_root() {
    let (server, p) = start(vec![]).await;
    let info = p.model_info("smollm2").await.unwrap();
    assert_eq!(info.context_length, Some(8192));
    assert_eq!(info.capabilities.tools, Some(false));
    assert_eq!(server.server().recorded()[0].path, "/props");
    p.health().await.unwrap();
}

#[tokio::test]
async fn unknown_model_is_model_not_found() {
    let (_server, p) = start(vec![Turn::text("x")]).await;
    let err = p
        .chat(&request("gpt-9", false), &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelNotFound { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("gpt-9"), "{err}");
}

#[tokio::test]
async fn unreachable_server_gives_a_hint() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = OpenAiProvider::new(&format!("http://127.0.0.1:{port}/v1"), None, fast_opts()).unwrap();
    let err = p
        .chat(&request("m", true), &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("llama-server"), "{err}");
}
