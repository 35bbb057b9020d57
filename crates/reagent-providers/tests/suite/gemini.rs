//! GeminiProvider against ScriptedGemini.

use reagent_protocol::{
    CancellationToken, FinishReason, Message, Provider, ProviderError, ToolCall, ToolChoice,
};
use reagent_providers::gemini::GeminiProvider;
use reagent_testkit::{ModelSpec, ScriptBuilder, ScriptedGemini, Turn};
use serde_json::json;

use super::common::{fast_opts, request, timeless, Signals};

async fn start(turns: Vec<Turn>) -> (ScriptedGemini, GeminiProvider) {
    let server = ScriptedGemini::start(
        ScriptBuilder::new()
            .model(ModelSpec::new("gemini-test").with_context_length(1_048_576))
            .turns(turns),
    )
    .await
    .unwrap();
    let p = GeminiProvider::new(&server.base_url(), Some("g-key".into()), fast_opts()).unwrap();
    (server, p)
}

fn rich_turn() -> Turn {
    Turn::tool_call("read_file", json!({"path": "a.txt"}))
        .with_call("list_dir", json!({"path": "."}))
        .with_content("Checking.")
        .with_thinking("Need both.")
        .with_usage(70, 9)
        .with_cached(32)
}

#[tokio::test]
async fn non_streaming_reply_and_request_shape() {
    let (server, p) = start(vec![rich_turn()]).await;
    let mut req = request("gemini-test", false);
    req.tool_choice = ToolChoice::None;
    req.response_schema = Some(json!({"type": "object"}));
    req.options.think = Some(true);
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
    let r = p
        .chat(&req, &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.message.content, "Checking.");
    assert_eq!(r.message.reasoning.as_deref(), Some("Need both."));
    assert_eq!(
        r.message.tool_calls,
        vec![
            ToolCall {
                id: "call_0".into(),
                name: "read_file".into(),
                arguments: json!({"path": "a.txt"})
            },
            ToolCall {
                id: "call_1".into(),
                name: "list_dir".into(),
                arguments: json!({"path": "."})
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
        (70, 9, Some(32))
    );

    let rec = &server.server().recorded()[0];
    assert_eq!(rec.path, "/v1beta/models/gemini-test:generateContent");
    assert_eq!(rec.header("x-goog-api-key"), Some("g-key"));
    let body = &rec.body;
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "You are terse."}]})
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "NONE"}})
    );
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["name"],
        "read_file"
    );
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.0, "maxOutputTokens": 256, "seed": 1, "responseMimeType": "application/json",
               "responseJsonSchema": {"type": "object"}, "thinkingConfig": {"includeThoughts": true}})
    );
    assert_eq!(
        body["contents"][0],
        json!({"role": "user", "parts": [{"text": "read a.txt"}]})
    );
    assert_eq!(
        body["contents"][1],
        json!({"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "x"}}}]})
    );
    assert_eq!(
        body["contents"][2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"content": "hi"}}}]})
    );
}

#[tokio::test]
async fn streaming_matches_non_streaming() {
    for turn in [
        rich_turn(),
        rich_turn().with_chunk_chars(1),
        Turn::text("long").with_finish("length"),
    ] {
        let (server, p) = start(vec![turn.clone(), turn.clone()]).await;
        let cancel = CancellationToken::new();
        let plain = p
            .chat(&request("gemini-test", false), &|_| {}, &cancel)
            .await
            .unwrap();
        let signals = Signals::default();
        let streamed = p
            .chat(&request("gemini-test", true), &signals.sink(), &cancel)
            .await
            .unwrap();
        assert_eq!(timeless(streamed), timeless(plain.clone()), "turn {turn:?}");
        assert_eq!(signals.text().0, plain.message.content);
        let rec = &server.server().recorded()[1];
        assert_eq!(rec.path, "/v1beta/models/gemini-test:streamGenerateContent");
        assert_eq!(rec.query.as_deref(), Some("alt=sse"));
    }
}

#[tokio::test]
async fn broken_streams_are_protocol_errors() {
    let (_server, p) = start(vec![
        rich_turn().with_cut_after(3),
        Turn::raw_stream([
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\n",
            "data: nope\r\n\r\n",
        ]),
        Turn::raw_stream([
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}\r\n\r\n",
        ]),
    ])
    .await;
    for want in [
        "closed before the reply was complete",
        "malformed SSE data",
        "without a `finishReason`",
    ] {
        let err = p
            .chat(
                &request("gemini-test", true),
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
async fn model_info_and_not_found() {
    let (_server, p) = start(vec![]).await;
    let info = p.model_info("gemini-test").await.unwrap();
    assert_eq!(info.context_length, Some(1_048_576));
    assert_eq!(info.capabilities.thinking, Some(true));
    let err = p
        .chat(
            &request("gemini-nope", false),
            &|_| {},
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::ModelNotFound { .. }),
        "{err:?}"
    );
    p.health().await.unwrap();
}
