//! Experiments (`reagent cycles`) run by a real server on 127.0.0.1 against a scripted Ollama:
//! started over HTTP, followed live over SSE, their operator's messages answered through the
//! API (the reply reaches the model) or left to time out (the model is told so), stopped and
//! resumed; bad configs refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::TestServer;

fn config(id: &str, cycles: u32, model_url: &str, timeout_secs: u32) -> String {
    format!(
        "run_id = \"{id}\"\ncycles = {cycles}\n[model]\nprovider = \"ollama\"\n\
         base_url = \"{model_url}\"\nname = \"m\"\n[operator]\nmode = \"dashboard\"\n\
         timeout_secs = {timeout_secs}\n"
    )
}

async fn start(server: &TestServer, config: &str) -> reqwest::Response {
    server
        .post("/v1/experiments")
        .json(&json!({ "config": config }))
        .send()
        .await
        .unwrap()
}

/// One SSE event: its name and data.
#[derive(Debug)]
struct Sse {
    id: Option<i64>,
    event: String,
    data: Value,
}

/// Reads an SSE response one event at a time.
struct SseReader {
    res: reqwest::Response,
    buf: String,
}

impl SseReader {
    fn new(res: reqwest::Response) -> Self {
        assert_eq!(res.status(), 200);
        SseReader {
            res,
            buf: String::new(),
        }
    }

    /// The next event (comments skipped); `None` when the stream ends.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, None, String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if let Some(event) = event {
                    return Some(Sse {
                        id,
                        event,
                        data: serde_json::from_str(&data).unwrap(),
                    });
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.res.chunk())
                .await
                .expect("an event within 30 s")
                .unwrap()?;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

async fn follow(server: &TestServer, id: &str, after: Option<i64>) -> SseReader {
    let mut req = server.get(&format!("/v1/experiments/{id}/events"));
    if let Some(a) = after {
        req = req.header("Last-Event-ID", a.to_string());
    }
    SseReader::new(req.send().await.unwrap())
}

/// The text of every message of a model request.
fn texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_is_answered_through_the_api_or_times_out() {
    let model = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::tool_call(
            "send_message_to_operator",
            json!({"message": "Is anyone there?"}),
        ),
        Turn::text("Cycle one: the operator answered me."),
        Turn::tool_call(
            "send_message_to_operator",
            json!({"message": "Still there?"}),
        ),
        Turn::text("Cycle two: nobody answered this time."),
    ]))
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let res = start(&server, &config("dash-1", 2, &model.base_url(), 3)).await;
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
    let started: Value = res.json().await.unwrap();
    assert_eq!(started["id"], "dash-1");
    assert_eq!(started["status"], "running");

    let mut events = follow(&server, "dash-1", None).await;
    let mut seen = Vec::new();
    let mut asked = Vec::new();
    let end = loop {
        let e = events.next().await.expect("the stream ends with `end`");
        match e.event.as_str() {
            "operator" => {
                let pending = e.data["pending"].as_array().unwrap().clone();
                let Some(m) = pending.first() else { continue };
                let message = m["message"].as_str().unwrap().to_owned();
                if asked.contains(&message) {
                    continue;
                }
                asked.push(message.clone());
                assert_eq!(m["timeout_secs"], json!(3.0));
                let listed: Value = server.get_json("/v1/experiments/dash-1/operator").await;
                assert_eq!(listed["pending"][0]["message"], message.as_str());
                let detail: Value = server.get_json("/v1/experiments/dash-1").await;
                assert_eq!(detail["pending"][0]["id"], m["id"]);
                assert_eq!(detail["summary"]["live"], true);
                if message == "Is anyone there?" {
                    let wrong = server
                        .post("/v1/experiments/dash-1/operator/999")
                        .json(&json!({"reply": "nobody asked"}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(wrong.status(), 404);
                    let id = m["id"].as_str().unwrap();
                    let res = server
                        .post(&format!("/v1/experiments/dash-1/operator/{id}"))
                        .json(&json!({"reply": "Yes, I am here."}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
                    let again = server
                        .post(&format!("/v1/experiments/dash-1/operator/{id}"))
                        .json(&json!({"reply": "twice"}))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(again.status(), 404, "an answered message is gone");
                }
                // The second message is left to time out.
            }
            "end" => break e,
            _ => seen.push(e),
        }
    };
    assert_eq!(end.data["status"], "completed", "{end:?}");
    assert_eq!(asked, ["Is anyone there?", "Still there?"]);

    // The log events, in order, live.
    let kinds: Vec<(i64, &str)> = seen
        .iter()
        .map(|e| {
            (
                e.data["cycle_number"].as_i64().unwrap(),
                e.data["event_type"].as_str().unwrap(),
            )
        })
        .filter(|(_, k)| *k != "LLM_INVOCATION")
        .collect();
    assert_eq!(
        kinds,
        [
            (1, "CYCLE_START"),
            (1, "TOOL_CALL"),
            (1, "CYCLE_END"),
            (2, "CYCLE_START"),
            (2, "TOOL_CALL"),
            (2, "CYCLE_END")
        ]
    );
    for (i, e) in seen.iter().enumerate() {
        assert_eq!(e.id, Some(i as i64 + 1), "gapless seq");
        assert_eq!(e.data["seq"], i as i64 + 1);
        assert_eq!(e.event, e.data["event_type"].as_str().unwrap());
    }
    let outputs: Vec<String> = seen
        .iter()
        .filter(|e| e.event == "TOOL_CALL")
        .map(|e| e.data["payload"]["output"].to_string())
        .collect();
    assert!(outputs[0].contains("Yes, I am here."), "{outputs:?}");
    assert!(
        outputs[1].contains("did not reply within 3 seconds"),
        "{outputs:?}"
    );

    // What the model was given.
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert!(texts(&requests[1]).contains("Yes, I am here."));
    assert!(texts(&requests[3]).contains("did not reply within 3 seconds"));
    assert!(texts(&requests[2]).contains("Cycle one: the operator answered me."));

    // The list and the report.
    let list: Value = server.get_json("/v1/experiments").await;
    let e = &list["experiments"][0];
    assert_eq!(e["id"], "dash-1");
    assert_eq!(e["status"], "completed");
    assert_eq!(e["cycles_done"], 2);
    assert_eq!(e["live"], false);
    let detail: Value = server.get_json("/v1/experiments/dash-1").await;
    let cycles = detail["report"]["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 2);
    assert_eq!(
        cycles[1]["reflection"],
        "Cycle two: nobody answered this time."
    );
    assert_eq!(cycles[0]["operator_messages"], 1);
    assert_eq!(detail["report"]["matrix"].as_array().unwrap().len(), 2);
    assert_eq!(detail["pending"], json!([]));

    // Followed again from a position: the rest, then the end.
    let mut rest = follow(&server, "dash-1", Some(seen.len() as i64 - 2)).await;
    let mut replayed = Vec::new();
    while let Some(e) = rest.next().await {
        replayed.push(e.event);
    }
    assert_eq!(replayed, ["LLM_INVOCATION", "CYCLE_END", "operator", "end"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_experiment_stops_and_resumes_in_the_server() {
    let slow = Duration::from_millis(400);
    let model = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::tool_call("write", json!({"key": "k", "value": "v"})).with_delay(slow),
        Turn::text("One.").with_delay(slow),
        Turn::tool_call("read", json!({"key": "k"})).with_delay(Duration::from_secs(3)),
        Turn::text("Two (cut short or not).").with_delay(slow),
        Turn::text("Two again.").with_delay(slow),
        Turn::text("Three.").with_delay(slow),
    ]))
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let res = start(&server, &config("stop-1", 3, &model.base_url(), 5)).await;
    assert_eq!(res.status(), 201);
    let mut events = follow(&server, "stop-1", None).await;
    // Stop once cycle 2 has begun.
    loop {
        let e = events.next().await.unwrap();
        if e.event == "CYCLE_START" && e.data["cycle_number"] == 2 {
            break;
        }
    }
    let res = server
        .post("/v1/experiments/stop-1/stop")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let status = loop {
        let e = events.next().await.unwrap();
        if e.event == "end" {
            break e.data["status"].clone();
        }
    };
    assert_eq!(status, "stopped");
    let again = server
        .post("/v1/experiments/stop-1/stop")
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409, "it no longer runs");

    let res = server
        .post("/v1/experiments/stop-1/resume")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202, "{}", res.text().await.unwrap());
    let mut events = follow(&server, "stop-1", None).await;
    let status = loop {
        let e = events.next().await.unwrap();
        if e.event == "end" {
            break e.data["status"].clone();
        }
    };
    assert_eq!(status, "completed");
    let detail: Value = server.get_json("/v1/experiments/stop-1").await;
    assert_eq!(detail["report"]["cycles"].as_array().unwrap().len(), 3);
    assert_eq!(detail["report"]["memory"][0]["key"], "k");
    let res = server
        .post("/v1/experiments/stop-1/resume")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409, "a complete experiment does not resume");
}

#[tokio::test]
async fn bad_experiments_are_refused_with_what_is_wrong() {
    let model = ScriptedOllama::start(ScriptBuilder::new()).await.unwrap();
    let url = model.base_url();
    let server = TestServer::start_allowing(&url).await;
    let refused = |body: String, status: u16, needle: &'static str| {
        let server = &server;
        async move {
            let res = start(server, &body).await;
            assert_eq!(res.status().as_u16(), status, "{body}");
            let text = res.text().await.unwrap();
            assert!(text.contains(needle), "{text} should contain {needle}");
        }
    };
    let good = config("bad-1", 1, &url, 3);
    refused(good.replace("dashboard", "terminal"), 400, "operator.mode").await;
    refused(
        good.replace(
            "name = \"m\"",
            "name = \"m\"\nsystem_prompt_file = \"/etc/passwd\"",
        ),
        400,
        "system_prompt_file (line 7)",
    )
    .await;
    refused(good.replace("cycles = 1", "cycles = 0"), 400, "cycles").await;
    refused(good.replace("cycles = 1", "cycels = 1"), 400, "cycels").await;
    refused(good.replace(&url, "http://127.0.0.1:9/"), 403, "base_urls").await;
    refused(good.replace("ollama", "local"), 400, "local").await;
    assert_eq!(
        server
            .get("/v1/experiments/none")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        server
            .get("/v1/experiments/none/events")
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    assert_eq!(
        server
            .post("/v1/experiments/none/operator/1")
            .json(&json!({"reply": "x"}))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let list: Value = server.get_json("/v1/experiments").await;
    assert_eq!(list["experiments"], json!([]), "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn experiments_past_the_cap_get_429_until_one_has_stopped() {
    let model = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::text("Slow.").with_delay(Duration::from_secs(30)),
        Turn::text("Second, at last."),
    ]))
    .await
    .unwrap();
    let url = model.base_url();
    let server = TestServer::start_with(|c| {
        c.base_urls.push(url.clone());
        c.max_concurrent_runs = 1;
    })
    .await;
    assert_eq!(
        start(&server, &config("cap-1", 1, &url, 3)).await.status(),
        201
    );
    let res = start(&server, &config("cap-2", 1, &url, 3)).await;
    assert_eq!(res.status(), 429);
    assert!(res.text().await.unwrap().contains("max_concurrent_runs"));
    let list: Value = server.get_json("/v1/experiments").await;
    assert_eq!(
        list["experiments"].as_array().unwrap().len(),
        1,
        "cap-2 was not created"
    );
    let res = server
        .post("/v1/experiments/cap-1/stop")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    let mut events = follow(&server, "cap-1", None).await;
    while let Some(e) = events.next().await {
        if e.event == "end" {
            assert_eq!(e.data["status"], "stopped");
        }
    }
    let res = start(&server, &config("cap-2", 1, &url, 3)).await;
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap());
}
