//! Load and faults of the event streams: 100 clients on one run, 50 concurrent runs, reconnects
//! with `Last-Event-ID`, clients too slow for the live queue, clients that go away, and the
//! streamed deltas (`?deltas=true`) over SSE and WebSocket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::{assert_complete, read_sse, SseEvent, TestServer};

/// A scripted server whose run takes `steps` tool calls, the first after `first_delay` (each
/// on another path, so no repetition guardrail stops the run).
async fn model(steps: usize, first_delay: Duration, step_delay: Duration) -> ScriptedOllama {
    let mut script = ScriptBuilder::new();
    for i in 0..steps {
        let delay = if i == 0 { first_delay } else { step_delay };
        script = script.turn(
            Turn::tool_call("list_directory", json!({"path": format!("d{i}")})).with_delay(delay),
        );
    }
    ScriptedOllama::start(script.turn(Turn::text("done")))
        .await
        .unwrap()
}

async fn metric(server: &TestServer, name: &str) -> f64 {
    let text = server.get_text("/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

fn seqs(events: &[SseEvent]) -> Vec<u64> {
    events.iter().map(|e| e.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_clients_on_one_run_each_get_every_event_once_in_order() {
    let model = model(20, Duration::from_millis(400), Duration::from_millis(10)).await;
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap().to_owned();
    let clients: Vec<_> = (0..100)
        .map(|_| {
            let req = server.get(&format!("/v1/runs/{id}/events"));
            tokio::spawn(async move { read_sse(req.send().await.unwrap(), usize::MAX).await })
        })
        .collect();
    let mut all = Vec::new();
    for c in clients {
        all.push(c.await.unwrap());
    }
    let expected = seqs(&all[0]);
    // run_started, 20 × (llm_request, llm_response, assistant_message, tool_call_started,
    // tool_call, tool_result), the last request and reply, the answer, run_finished.
    assert!(expected.len() > 120, "{} events", expected.len());
    for events in &all {
        assert_complete(events);
        assert_eq!(seqs(events), expected);
    }
    let stored = server.events(&id, None).await;
    assert_eq!(seqs(&stored), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_runs_each_stream_every_event_once_in_order() {
    let mut script = ScriptBuilder::new();
    for _ in 0..50 {
        script = script.turn(Turn::text("done").with_delay(Duration::from_millis(300)));
    }
    let model = ScriptedOllama::start(script).await.unwrap();
    let base = model.base_url();
    let server = TestServer::start_with(|c| {
        c.base_urls.push(base.clone());
        c.max_concurrent_runs = 50;
    })
    .await;
    let mut ids = Vec::new();
    for _ in 0..50 {
        let run = server.start_run(&base, json!({})).await;
        ids.push(run["id"].as_str().unwrap().to_owned());
    }
    let clients: Vec<_> = ids
        .iter()
        .map(|id| {
            let req = server.get(&format!("/v1/runs/{id}/events"));
            tokio::spawn(async move { read_sse(req.send().await.unwrap(), usize::MAX).await })
        })
        .collect();
    for (id, c) in ids.iter().zip(clients) {
        let events = c.await.unwrap();
        assert_complete(&events);
        assert!(events.iter().all(|e| e.data["run_id"] == id.as_str()));
        assert_eq!(events.last().unwrap().data["outcome"], "completed");
    }
    let list: Value = server.get_json("/v1/runs?limit=100").await;
    assert_eq!(list["total"], 50);
    assert!(list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["outcome"] == "completed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reconnects_with_last_event_id_misses_nothing() {
    let model = model(10, Duration::from_millis(10), Duration::from_millis(60)).await;
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let mut got = Vec::new();
    let mut reconnects = 0;
    loop {
        let mut req = server.get(&format!("/v1/runs/{id}/events"));
        if let Some(last) = got.last().map(|e: &SseEvent| e.id) {
            req = req.header("Last-Event-ID", last.to_string());
        }
        // Take 7 events and hang up, until the run is over.
        let part = read_sse(req.send().await.unwrap(), 7).await;
        let finished = part.last().is_some_and(|e| e.event == "run_finished");
        got.extend(part);
        if finished {
            break;
        }
        reconnects += 1;
    }
    assert!(reconnects >= 5, "{reconnects} reconnects");
    assert_complete(&got);
    assert_eq!(seqs(&got), seqs(&server.events(id, None).await));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_too_slow_for_the_live_queue_is_caught_up_from_the_store() {
    // Big replies, a live queue of 2 and 4 events kept in memory: a client that stops reading
    // falls far behind while the socket buffers fill.
    let mut script = ScriptBuilder::new();
    for i in 0..40 {
        script = script.turn(
            Turn::tool_call("list_directory", json!({"path": format!("d{i}")}))
                .with_content("x".repeat(200_000)),
        );
    }
    let model = ScriptedOllama::start(script.turn(Turn::text("done")))
        .await
        .unwrap();
    let server = TestServer::start_with(|c| {
        c.subscriber_queue = 2;
        c.recent_events = 4;
        c.base_urls.push(model.base_url());
    })
    .await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let slow = server
        .get(&format!("/v1/runs/{id}/events"))
        .send()
        .await
        .unwrap();
    // Not reading `slow` while the run goes on.
    server.wait_finished(id).await;
    assert!(metric(&server, "reagent_event_stream_catchups_total").await >= 1.0);
    let events = read_sse(slow, usize::MAX).await;
    assert_complete(&events);
    assert_eq!(seqs(&events), seqs(&server.events(id, None).await));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_go_away_end_their_streams_and_not_the_run() {
    let model = model(3, Duration::from_millis(1500), Duration::from_millis(10)).await;
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server.start_run(&model.base_url(), json!({})).await;
    let id = run["id"].as_str().unwrap();
    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(
            server
                .get(&format!("/v1/runs/{id}/events"))
                .send()
                .await
                .unwrap(),
        );
    }
    assert_eq!(metric(&server, "reagent_event_streams_open").await, 20.0);
    drop(clients);
    // The streams end while the run still waits for the model.
    let mut open = 20.0;
    for _ in 0..100 {
        open = metric(&server, "reagent_event_streams_open").await;
        if open == 0.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(open, 0.0);
    let detail: Value = server.get_json(&format!("/v1/runs/{id}")).await;
    assert_eq!(detail["run"]["outcome"], "running");
    let detail = server.wait_finished(id).await;
    assert_eq!(detail["run"]["tool_calls"], 3);
    assert!(detail["result"]["answer"] == "done", "{detail}");
}

/// The numbered events of `events` (deltas left out).
fn numbered(events: &[SseEvent]) -> Vec<SseEvent> {
    events
        .iter()
        .filter(|e| !e.event.ends_with("_delta"))
        .cloned()
        .collect()
}

/// Check that each delta carries the seq of the numbered event before it; their texts joined.
fn delta_texts(events: &[SseEvent], kind: &str) -> String {
    let mut last = 0;
    let mut text = String::new();
    for e in events {
        if e.event.ends_with("_delta") {
            assert_eq!(
                e.data["seq"], last,
                "a delta carries the seq before it: {e:?}"
            );
            assert_eq!(e.id, last);
            if e.event == kind {
                text.push_str(e.data["text"].as_str().unwrap());
            }
        } else {
            last = e.id;
        }
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_reach_the_live_clients_that_ask_for_them_and_no_one_else() {
    let answer = "The lamp is lit and the log is written up to date.";
    let thinking = "First the lamp, then the log.";
    let model = ScriptedOllama::start(
        ScriptBuilder::new().turn(
            Turn::text(answer)
                .with_thinking(thinking)
                .with_delay(Duration::from_millis(400))
                .with_chunk_chars(4)
                .with_chunk_delay(Duration::from_millis(5)),
        ),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let run = server
        .start_run(&model.base_url(), json!({"tool_mode": "native"}))
        .await;
    let id = run["id"].as_str().unwrap().to_owned();
    let sse = |query: &'static str| {
        let req = server.get(&format!("/v1/runs/{id}/events{query}"));
        async move { read_sse(req.send().await.unwrap(), usize::MAX).await }
    };
    let ws_path = format!("/v1/runs/{id}/ws?deltas=true");
    let ws = server.websocket_frames(&ws_path);
    let (with, without, explicit_no, frames) =
        tokio::join!(sse("?deltas=true"), sse(""), sse("?deltas=false"), ws);

    assert_eq!(delta_texts(&with, "text_delta"), answer);
    assert_eq!(delta_texts(&with, "reasoning_delta"), thinking);
    assert!(
        with.iter().filter(|e| e.event == "text_delta").count() > 3,
        "the text came in pieces"
    );
    assert_complete(&numbered(&with));
    for plain in [&without, &explicit_no] {
        assert_complete(plain);
        assert!(plain.iter().all(|e| !e.event.ends_with("_delta")));
        assert_eq!(seqs(plain), seqs(&numbered(&with)));
    }
    let ws_text: String = frames
        .iter()
        .filter(|f| f["type"] == "text_delta")
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(ws_text, answer);
    // Deltas are never stored: a replay of the finished run has none, even when asked.
    server.wait_finished(&id).await;
    let replay = sse("?deltas=true").await;
    assert_complete(&replay);
    assert_eq!(seqs(&replay), seqs(&without));
}
