//! Script queue, recording, overrides, cuts and shutdown.

use std::time::Duration;

use reagent_testkit::{ScriptBuilder, ScriptedOllama, ScriptedServer, Turn, Wire};
use serde_json::{json, Value};

async fn post(url: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn turns_are_served_in_order_then_exhaustion_is_a_410() {
    let s = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("one"))
            .turn(Turn::text("two")),
    )
    .await
    .unwrap();
    let url = format!("{}/api/chat", s.base_url());
    for want in ["one", "two"] {
        let v: Value = post(&url, json!({"model": "m", "stream": false, "messages": []}))
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(v["message"]["content"], want);
    }
    let resp = post(&url, json!({"model": "m", "stream": false})).await;
    assert_eq!(resp.status().as_u16(), 410);
    let v: Value = resp.json().await.unwrap();
    assert!(v["error"]
        .as_str()
        .unwrap()
        .contains("script exhausted (2 turns scripted, this is chat request #3)"));
    assert_eq!(s.requests().len(), 3);
    assert_eq!(
        s.requests()[0],
        json!({"model": "m", "stream": false, "messages": []})
    );
    assert_eq!(s.server().remaining_turns(), 0);
}

#[tokio::test]
async fn overrides_raw_bodies_headers_and_pushed_turns() {
    let s = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::error(429, "busy").with_header("Retry-After", "7"))
            .turn(Turn::raw(502, "text/html", "<h1>bad gateway</h1>")),
    )
    .await
    .unwrap();
    s.server().push_turn(Turn::text("pushed"));
    let url = format!("{}/api/chat", s.base_url());
    let r = post(&url, json!({"model": "m"})).await;
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    assert_eq!(r.text().await.unwrap(), r#"{"error":"busy"}"#);
    let r = post(&url, json!({"model": "m"})).await;
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers()["content-type"].to_str().unwrap().to_owned()
        ),
        (502, "text/html".to_owned())
    );
    assert_eq!(r.text().await.unwrap(), "<h1>bad gateway</h1>");
    let v: Value = post(&url, json!({"model": "m", "stream": false}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["message"]["content"], "pushed");
}

#[tokio::test]
async fn cuts_break_the_connection() {
    let s = ScriptedOllama::start(
        ScriptBuilder::new().turn(Turn::cut()).turn(
            Turn::text("abcdefghijkl")
                .with_chunk_chars(2)
                .with_cut_after(2),
        ),
    )
    .await
    .unwrap();
    let url = format!("{}/api/chat", s.base_url());
    let err = reqwest::Client::new()
        .post(&url)
        .json(&json!({"model": "m"}))
        .send()
        .await
        .unwrap_err();
    assert!(!err.is_status());
    let resp = post(&url, json!({"model": "m", "stream": true})).await;
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.text().await.is_err(), "the body breaks off");
}

#[tokio::test]
async fn delays_and_stop() {
    let s = ScriptedServer::start(
        Wire::Ollama,
        ScriptBuilder::new().turn(Turn::text("x").with_delay(Duration::from_millis(300))),
    )
    .await
    .unwrap();
    let url = format!("{}/api/chat", s.base_url());
    let started = std::time::Instant::now();
    post(&url, json!({"model": "m", "stream": false})).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    s.stop().await;
    let err = reqwest::Client::new()
        .get(format!("{}/api/tags", s.base_url()))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err:?}");
}
