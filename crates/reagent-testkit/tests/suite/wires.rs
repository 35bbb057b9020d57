//! Exact framing of each wire.

use reagent_testkit::{
    ModelSpec, ScriptBuilder, ScriptedAnthropic, ScriptedGemini, ScriptedOllama, ScriptedOpenAi,
    Turn,
};
use serde_json::{json, Value};

fn client() -> reqwest::Client {
    reqwest::Client::new()
}

fn turn() -> Turn {
    Turn::tool_call("read_file", json!({"path": "a.txt"}))
        .with_content("Hi there")
        .with_thinking("hmm")
        .with_usage(11, 7)
}

#[tokio::test]
async fn ollama_chat_show_tags_and_not_found() {
    let s = ScriptedOllama::start(
        ScriptBuilder::new()
            .model(
                ModelSpec::new("qwen3:0.6b")
                    .with_arch("qwen3")
                    .with_context_length(40960),
            )
            .turn(turn())
            .turn(turn()),
    )
    .await
    .unwrap();
    let base = s.base_url();
    let v: Value = client()
        .post(format!("{base}/api/chat"))
        .json(&json!({"model": "qwen3:0.6b", "stream": false}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        v["message"]["tool_calls"],
        json!([{"function": {"index": 0, "name": "read_file", "arguments": {"path": "a.txt"}}}])
    );
    assert_eq!(
        (
            v["done"].clone(),
            v["done_reason"].clone(),
            v["prompt_eval_count"].clone(),
            v["eval_count"].clone()
        ),
        (json!(true), json!("stop"), json!(11), json!(7))
    );
    assert_eq!(v["message"]["thinking"], "hmm");

    // `stream` absent means streaming, as in Ollama
    let r = client()
        .post(format!("{base}/api/chat"))
        .json(&json!({"model": "qwen3:0.6b"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines[..lines.len() - 1].iter().all(|l| l["done"] == false));
    assert_eq!(lines.last().unwrap()["done"], true);
    let content: String = lines
        .iter()
        .filter_map(|l| l["message"]["content"].as_str())
        .collect();
    assert_eq!(content, "Hi there");

    let show: Value = client()
        .post(format!("{base}/api/show"))
        .json(&json!({"model": "qwen3:0.6b"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(show["model_info"]["qwen3.context_length"], 40960);
    assert_eq!(show["capabilities"], json!(["completion", "tools"]));
    let tags: Value = client()
        .get(format!("{base}/api/tags"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tags["models"][0]["name"], "qwen3:0.6b");
    let r = client()
        .post(format!("{base}/api/chat"))
        .json(&json!({"model": "llama9"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert_eq!(
        r.text().await.unwrap(),
        r#"{"error":"model 'llama9' not found"}"#
    );
}

#[tokio::test]
async fn openai_sse_framing() {
    let s = ScriptedOpenAi::start(ScriptBuilder::new().turn(turn()))
        .await
        .unwrap();
    let r = client()
        .post(format!("{}/chat/completions", s.base_url()))
        .json(&json!({"model": "m", "stream": true, "stream_options": {"include_usage": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().await.unwrap();
    assert!(text.ends_with("data: [DONE]\n\n"));
    let events: Vec<&str> = text.split_terminator("\n\n").collect();
    assert!(events
        .iter()
        .all(|e| e.starts_with("data: ") && !e.contains('\n')));
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(&e[6..]).unwrap())
        .collect();
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk"));
    let args: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(args, r#"{"path":"a.txt"}"#);
    assert_eq!(
        chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    assert_eq!(chunks.last().unwrap()["usage"]["completion_tokens"], 7);
    assert_eq!(chunks.last().unwrap()["choices"], json!([]));
}

#[tokio::test]
async fn anthropic_event_sequence_and_version_header() {
    let s = ScriptedAnthropic::start(ScriptBuilder::new().turn(turn()))
        .await
        .unwrap();
    let url = format!("{}/v1/messages", s.base_url());
    let r = client()
        .post(&url)
        .json(&json!({"model": "m", "max_tokens": 10}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let text = client()
        .post(&url)
        .header("anthropic-version", "2023-06-01")
        .json(&json!({"model": "m", "max_tokens": 10, "stream": true}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let names: Vec<&str> = text
        .split_terminator("\n\n")
        .map(|e| e.lines().next().unwrap().trim_start_matches("event: "))
        .collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(
        &names[names.len() - 2..],
        &["message_delta", "message_stop"]
    );
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "content_block_start")
            .count(),
        3,
        "thinking, text, tool_use"
    );
    assert!(text.contains(r#""type":"input_json_delta""#));
    assert!(text.contains(r#""stop_reason":"tool_use""#));
}

#[tokio::test]
async fn gemini_sse_uses_crlf_and_needs_alt_sse() {
    let s = ScriptedGemini::start(ScriptBuilder::new().turn(turn()).turn(turn()))
        .await
        .unwrap();
    let base = s.base_url();
    let text = client()
        .post(format!(
            "{base}/v1beta/models/gem:streamGenerateContent?alt=sse"
        ))
        .json(&json!({"contents": []}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let events: Vec<&str> = text.split_terminator("\r\n\r\n").collect();
    assert!(events.iter().all(|e| e.starts_with("data: ")));
    let last: Value = serde_json::from_str(&events.last().unwrap()[6..]).unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    let arr: Value = client()
        .post(format!("{base}/v1beta/models/gem:streamGenerateContent"))
        .json(&json!({"contents": []}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        arr.as_array().unwrap().len() > 2,
        "without alt=sse: a JSON array"
    );
}
