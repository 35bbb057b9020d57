//! Approvals, cancel, follow-ups, the WebSocket and the metrics, through a real server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::{assert_complete, TestServer};

async fn wait_for_approval(server: &TestServer) -> Value {
    for _ in 0..200 {
        let list: Value = server.get_json("/v1/approvals").await;
        if let Some(first) = list["approvals"].as_array().and_then(|a| a.first()) {
            return first.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no approval was asked for");
}

#[tokio::test]
async fn an_ask_rule_waits_for_the_answer_given_over_http() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "touch approved"}),
            ))
            .turn(Turn::tool_call(
                "run_command",
                json!({"command": "touch refused"}),
            ))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let server = TestServer::start_with(|c| {
        let rules = std::mem::take(&mut c.defaults.tools.command.rules);
        c.defaults.tools.command.rules = rules.ask("touch");
        c.base_urls.push(model.base_url());
    })
    .await;
    let run = server
        .start_run(&model.base_url(), json!({"approval": "ask"}))
        .await;
    let id = run["id"].as_str().unwrap();

    let asked = wait_for_approval(&server).await;
    assert_eq!(asked["run_id"], id);
    assert_eq!(asked["tool"], "run_command");
    assert_eq!(asked["summary"], "touch approved");
    assert_eq!(asked["arguments"]["command"], "touch approved");
    // The run waits: nothing ran yet.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!server.workspace.join("approved").exists());
    let res = server
        .post(&format!("/v1/approvals/{}", asked["id"].as_str().unwrap()))
        .json(&json!({"decision": "allow"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Value>().await.unwrap()["decision"], "allow");

    let second = wait_for_approval(&server).await;
    assert_eq!(second["summary"], "touch refused");
    assert_ne!(second["id"], asked["id"]);
    let res = server
        .post(&format!("/v1/approvals/{}", second["id"].as_str().unwrap()))
        .json(&json!({"decision": "deny"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    let events = server.events(id, None).await;
    assert_complete(&events);
    let decided: Vec<(Value, Value)> = events
        .iter()
        .filter(|e| e.event == "approval_decided")
        .map(|e| (e.data["approval_id"].clone(), e.data["approved"].clone()))
        .collect();
    assert_eq!(
        decided,
        vec![
            (asked["id"].clone(), json!(true)),
            (second["id"].clone(), json!(false))
        ]
    );
    assert!(server.workspace.join("approved").exists());
    assert!(!server.workspace.join("refused").exists());
    let list: Value = server.get_json("/v1/approvals").await;
    assert_eq!(list["approvals"], json!([]));
}

#[tokio::test]
async fn a_run_is_cancelled_and_a_finished_one_cannot_be() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new().turn(Turn::text("too late").with_delay(Duration::from_secs(30))),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let res = server.cancel(id).await;
    assert_eq!(res.status(), 202);
    assert_eq!(
        res.json::<Value>().await.unwrap(),
        json!({"id": id, "status": "cancelling"})
    );
    let detail = server.wait_finished(id).await;
    assert_eq!(detail["run"]["outcome"], "cancelled");
    let again = server.cancel(id).await;
    assert_eq!(again.status(), 409);
    assert_eq!(
        again.json::<Value>().await.unwrap()["error"]["code"],
        "conflict"
    );
}

#[tokio::test]
async fn a_follow_up_continues_the_session_once_the_run_has_finished() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("first answer").with_delay(Duration::from_millis(500)))
            .turn(Turn::text("second answer")),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let first = server.start_run(&model.base_url(), json!({})).await;
    let id = first["id"].as_str().unwrap();
    let busy = server
        .post(&format!("/v1/runs/{id}/messages"))
        .json(&json!({"content": "and then?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(busy.status(), 409);
    // Straight after its run_finished arrives, the session takes a follow-up.
    assert_complete(&server.events(id, None).await);

    let res = server
        .post(&format!("/v1/runs/{id}/messages"))
        .json(&json!({"content": "and then?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let second: Value = res.json().await.unwrap();
    assert_eq!(second["session_id"], first["session_id"]);
    assert_ne!(second["id"], first["id"]);
    let next = second["id"].as_str().unwrap();
    let events = server.events(next, None).await;
    assert_complete(&events);
    assert_eq!(events[0].data["follow_up"], true);
    assert_eq!(events[0].data["task"], "and then?");
    let detail = server.wait_finished(next).await;
    assert_eq!(detail["result"]["answer"], "second answer");
    // The model was sent the whole conversation.
    let sent = model.requests();
    let messages = sent[1]["messages"].as_array().unwrap();
    let texts: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(texts.contains(&"do the thing"), "{texts:?}");
    assert!(texts.contains(&"first answer"), "{texts:?}");
    assert_eq!(*texts.last().unwrap(), "and then?");
}

#[tokio::test]
async fn the_websocket_carries_the_same_events_as_sse() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(
                Turn::tool_call("list_directory", json!({"path": "."}))
                    .with_delay(Duration::from_millis(200)),
            )
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let frames = server.websocket_frames(&format!("/v1/runs/{id}/ws")).await;
    let sse = server.events(id, None).await;
    assert_complete(&sse);
    assert_eq!(
        frames,
        sse.iter().map(|e| e.data.clone()).collect::<Vec<_>>()
    );

    // Without the token, no upgrade.
    let bare = tokio_tungstenite::connect_async(format!(
        "ws://{}/v1/runs/{id}/ws",
        server.base.trim_start_matches("http://")
    ))
    .await;
    assert!(bare.is_err());
}

#[tokio::test]
async fn metrics_count_runs_tokens_tools_and_latency() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("list_directory", json!({"path": "."})).with_usage(100, 20))
            .turn(Turn::tool_call("read_file", json!({"path": "missing.txt"})).with_usage(150, 10))
            .turn(Turn::text("done").with_usage(200, 5)),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    server.wait_finished(run["id"].as_str().unwrap()).await;
    let res = server.get("/metrics").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = res.text().await.unwrap();
    for line in [
        "reagent_runs_started_total 1",
        "reagent_runs_active 0",
        "reagent_runs_finished_total{outcome=\"completed\"} 1",
        "reagent_iterations_total 3",
        "reagent_tokens_total{kind=\"prompt\"} 450",
        "reagent_tokens_total{kind=\"completion\"} 35",
        "reagent_tool_calls_total{tool=\"list_directory\",result=\"ok\"} 1",
        "reagent_tool_calls_total{tool=\"read_file\",result=\"error\"} 1",
        "reagent_model_latency_seconds_count 3",
        "reagent_store_events_dropped_total 0",
        "reagent_store_write_error 0",
        "reagent_event_streams_open 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in\n{text}"
        );
    }
    assert!(text
        .lines()
        .all(|l| l.is_empty() || l.starts_with('#') || l.starts_with("reagent_")));
}

#[tokio::test]
async fn guardrails_fired_are_counted_by_name_and_action() {
    let same = || Turn::tool_call("list_directory", json!({"path": "."}));
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turns([same(), same(), same(), same(), same(), same()])
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let events = server.events(id, None).await;
    let fired: Vec<String> = events
        .iter()
        .filter(|e| e.event == "guardrail")
        .map(|e| format!("{}/{}", e.data["guardrail"], e.data["action"]))
        .collect();
    assert!(!fired.is_empty(), "no guardrail fired");
    let text = server.get_text("/metrics").await;
    let counted: u64 = text
        .lines()
        .filter(|l| l.starts_with("reagent_guardrails_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, fired.len() as u64, "{fired:?}\n{text}");
    assert!(
        text.contains("reagent_guardrails_total{guardrail=\"repetition\""),
        "{text}"
    );
}
