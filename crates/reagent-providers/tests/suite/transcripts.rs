//! Replies written out as the providers' own documentation shows them (fed verbatim, not
//! rendered by the testkit), so the parsers are checked against the documented bytes too.

use reagent_protocol::{CancellationToken, FinishReason, ToolCall};
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_testkit::{ScriptBuilder, ScriptedServer, Turn, Wire};
use serde_json::json;

use super::common::{request, Signals};

async fn replay(
    wire: Wire,
    kind: ProviderKind,
    chunks: &[&str],
) -> (reagent_protocol::ChatResponse, String) {
    let server = ScriptedServer::start(
        wire,
        ScriptBuilder::new().turn(Turn::raw_stream(chunks.iter().copied())),
    )
    .await
    .unwrap();
    let mut cfg = ProviderConfig::new(kind);
    cfg.base_urls = vec![server.base_url()];
    cfg.api_key = Some("k".into());
    let p = build_provider(&cfg).unwrap();
    let signals = Signals::default();
    let r = p
        .chat(
            &request("m", true),
            &signals.sink(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    (r, signals.text().0)
}

#[tokio::test]
async fn ollama_documented_tool_call_stream() {
    let (r, _) = replay(Wire::Ollama, ProviderKind::Ollama, &[
        "{\"model\":\"llama3.2\",\"created_at\":\"2024-07-22T20:33:28.123648Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_current_weather\",\"arguments\":{\"format\":\"celsius\",\"location\":\"Paris, FR\"}}}]},\"done\":false}\n",
        "{\"model\":\"llama3.2\",\"created_at\":\"2024-07-22T20:33:28.123648Z\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,\"total_duration\":885095291,\"load_duration\":3753500,\"prompt_eval_count\":122,\"prompt_eval_duration\":328493000,\"eval_count\":33,\"eval_duration\":552222000}\n",
    ])
    .await;
    assert_eq!(
        r.message.tool_calls,
        vec![ToolCall {
            id: "call_0".into(),
            name: "get_current_weather".into(),
            arguments: json!({"format": "celsius", "location": "Paris, FR"})
        }]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(
        (r.usage.prompt_tokens, r.usage.completion_tokens),
        (122, 33)
    );
}

#[tokio::test]
async fn openai_documented_tool_call_stream() {
    let head = r#"data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":"#;
    let chunks = [
        format!("{head}[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"index\":0,\"id\":\"call_DdmO9pD3xa9XTPNJ32zg2hcA\",\"type\":\"function\",\"function\":{{\"name\":\"get_weather\",\"arguments\":\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{{\\\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"location\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"\\\":\\\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"Paris, France\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"\\\"}}\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"),
        format!("{head}[{{\"index\":0,\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}}]}}\n\n"),
        "data: [DONE]\n\n".to_owned(),
    ];
    let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let (r, _) = replay(Wire::OpenAi, ProviderKind::OpenAi, &chunks).await;
    assert_eq!(
        r.message.tool_calls,
        vec![ToolCall {
            id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "Paris, France"})
        }]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
}

#[tokio::test]
async fn anthropic_documented_tool_use_stream() {
    let (r, streamed) = replay(Wire::Anthropic, ProviderKind::Anthropic, &[
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_014p7gG3wDgGV9EUtLvnow3U\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-4-1\",\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2},\"content\":[],\"stop_reason\":null}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\ndata: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Okay\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\", let me check.\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":\"get_weather\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"location\\\":\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"San Francisco, CA\\\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\", \\\"unit\\\": \\\"fah\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"renheit\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ])
    .await;
    assert_eq!(r.message.content, "Okay, let me check.");
    assert_eq!(streamed, "Okay, let me check.");
    assert_eq!(
        r.message.tool_calls,
        vec![ToolCall {
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "San Francisco, CA", "unit": "fahrenheit"})
        }]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!(
        (r.usage.prompt_tokens, r.usage.completion_tokens),
        (472, 89)
    );
}

#[tokio::test]
async fn gemini_documented_function_call_stream() {
    let (r, streamed) = replay(Wire::Gemini, ProviderKind::Gemini, &[
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Checking the weather.\"}],\"role\": \"model\"},\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8},\"modelVersion\": \"gemini-2.0-flash\"}\r\n\r\n",
        "data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\": \"get_weather\",\"args\": {\"location\": \"Paris\"}}}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 8,\"candidatesTokenCount\": 10,\"totalTokenCount\": 18},\"modelVersion\": \"gemini-2.0-flash\"}\r\n\r\n",
    ])
    .await;
    assert_eq!(streamed, "Checking the weather.");
    assert_eq!(
        r.message.tool_calls,
        vec![ToolCall {
            id: "call_0".into(),
            name: "get_weather".into(),
            arguments: json!({"location": "Paris"})
        }]
    );
    assert_eq!(r.finish, FinishReason::ToolCalls);
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (8, 10));
}
