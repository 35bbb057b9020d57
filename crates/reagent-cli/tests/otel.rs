//! OpenTelemetry traces of a real `reagent run` process against a scripted Ollama, received by
//! an in-test OTLP/HTTP receiver: the span tree (run → model calls, tool calls), the GenAI
//! attributes, content only with the opt-in, and a dead collector that changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::TcpListener;
use std::process::Output;
use std::time::{Duration, Instant};

use reagent_testkit::{OtlpReceiver, ReceivedSpan, ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const TASK: &str = "Tell me what notes.txt says. TASK-MARKER-5d1c";
const FILE_TEXT: &str = "The keeper is Ines. FILE-MARKER-77aa";
const ANSWER: &str = "The keeper is Ines, ANSWER-MARKER-c3f0.";
const MARKERS: [&str; 3] = ["TASK-MARKER-5d1c", "FILE-MARKER-77aa", "ANSWER-MARKER-c3f0"];

/// Three model calls: a good read, a read of a missing file (a tool error), the answer.
fn script() -> ScriptBuilder {
    ScriptBuilder::new()
        .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})).with_usage(100, 10))
        .turn(Turn::tool_call("read_file", json!({"path": "missing.txt"})).with_usage(150, 12))
        .turn(Turn::text(ANSWER).with_usage(200, 8))
}

/// What a run printed (`--json`) and its `run_started` and `run_finished` events.
struct Ran {
    out: Output,
    result: Value,
    started: Value,
    finished: Value,
}

/// `reagent run --json --no-store` of [`TASK`] in a fresh workspace, with `extra` arguments and
/// `env` (OTel variables of the test's own environment are removed first).
async fn run(server: &ScriptedOllama, extra: &[String], env: &[(&str, &str)]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), FILE_TEXT).unwrap();
    let mut args: Vec<String> = [
        "run",
        "--model",
        "qwen3:8b",
        "--host",
        &server.base_url(),
        "--workspace",
        &ws.display().to_string(),
        "--no-store",
        "--json",
        "--events",
        &dir.path().join("events.jsonl").display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().cloned());
    args.push(TASK.to_owned());
    let out = support::reagent_with_env(&args, dir.path(), env).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    let events: Vec<Value> = events
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of_type = |kind: &str| {
        events
            .iter()
            .find(|e| e["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} event"))
            .clone()
    };
    Ran {
        started: of_type("run_started"),
        finished: of_type("run_finished"),
        out,
        result,
    }
}

fn assert_completed(ran: &Ran) {
    assert_eq!(
        ran.out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&ran.out.stderr)
    );
    assert_eq!(ran.result["outcome"], "completed", "{}", ran.result);
    assert_eq!(ran.result["answer"], ANSWER);
}

fn attr<'a>(span: &'a ReceivedSpan, key: &str) -> &'a Value {
    span.attr(key)
        .unwrap_or_else(|| panic!("span `{}` has no `{key}`: {:?}", span.name, span.attributes))
}

/// The run's spans, checked as a tree: one root run span, three model calls and two tool calls
/// under it, in one trace. Returns (run, chats in start order, tools in start order).
fn tree(spans: &[ReceivedSpan]) -> (ReceivedSpan, Vec<ReceivedSpan>, Vec<ReceivedSpan>) {
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(spans.len(), 6, "spans received: {names:?}");
    let runs: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.name == "invoke_agent reagent")
        .collect();
    assert_eq!(runs.len(), 1, "{names:?}");
    let run = runs[0].clone();
    assert_eq!(run.parent_span_id, "", "the run span is a root");
    let children = |name: &str| {
        let mut found: Vec<ReceivedSpan> =
            spans.iter().filter(|s| s.name == name).cloned().collect();
        found.sort_by_key(|s| s.start_end_ns.0);
        for child in &found {
            assert_eq!(child.trace_id, run.trace_id, "{name} is in the run's trace");
            assert_eq!(
                child.parent_span_id, run.span_id,
                "{name} is a child of the run"
            );
            assert!(
                run.start_end_ns.0 <= child.start_end_ns.0
                    && child.start_end_ns.1 <= run.start_end_ns.1,
                "{name} lies within the run"
            );
        }
        found
    };
    let chats = children("chat qwen3:8b");
    let tools = children("execute_tool read_file");
    assert_eq!(chats.len(), 3, "{names:?}");
    assert_eq!(tools.len(), 2, "{names:?}");
    assert!(spans.iter().all(|s| s.service == "reagent"));
    (run, chats, tools)
}

#[tokio::test]
async fn a_run_exports_its_span_tree_with_genai_attributes_and_no_content() {
    let server = ScriptedOllama::start(script()).await.unwrap();
    let receiver = OtlpReceiver::start().await.unwrap();
    let ran = run(
        &server,
        &["--otlp-endpoint".into(), receiver.endpoint()],
        &[],
    )
    .await;
    assert_completed(&ran);
    let spans = receiver.wait_for_spans(6, Duration::from_secs(5)).await;
    assert!(
        receiver.bad_requests().is_empty(),
        "{:?}",
        receiver.bad_requests()
    );
    let (run, chats, tools) = tree(&spans);

    assert_eq!(run.kind, 1, "internal");
    assert_eq!(attr(&run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(&run, "gen_ai.agent.name"), "reagent");
    assert_eq!(attr(&run, "gen_ai.provider.name"), "ollama");
    assert_eq!(attr(&run, "gen_ai.request.model"), "qwen3:8b");
    assert_eq!(attr(&run, "reagent.run.id"), &ran.result["run_id"]);
    assert_eq!(
        attr(&run, "gen_ai.conversation.id"),
        &ran.started["session_id"]
    );
    assert_eq!(attr(&run, "reagent.run.outcome"), "completed");
    assert_eq!(attr(&run, "reagent.run.iterations"), 3);
    assert_eq!(attr(&run, "reagent.run.tool_calls"), 2);
    assert_eq!(attr(&run, "gen_ai.usage.input_tokens"), 450);
    assert_eq!(attr(&run, "gen_ai.usage.output_tokens"), 30);
    assert_eq!(run.status_code, 0, "a completed run is not an error");

    let usage = [
        (100, 10, "tool_calls"),
        (150, 12, "tool_calls"),
        (200, 8, "stop"),
    ];
    for (chat, (input, output, finish)) in chats.iter().zip(usage) {
        assert_eq!(chat.kind, 3, "client");
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(chat, "gen_ai.provider.name"), "ollama");
        assert_eq!(attr(chat, "gen_ai.request.model"), "qwen3:8b");
        assert_eq!(attr(chat, "gen_ai.usage.input_tokens"), input);
        assert_eq!(attr(chat, "gen_ai.usage.output_tokens"), output);
        assert_eq!(attr(chat, "gen_ai.response.finish_reasons"), finish);
        assert_eq!(attr(chat, "gen_ai.request.max_tokens"), 2048);
        assert_eq!(chat.status_code, 0);
    }

    for tool in &tools {
        assert_eq!(attr(tool, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(attr(tool, "gen_ai.tool.name"), "read_file");
        assert_eq!(attr(tool, "gen_ai.tool.type"), "function");
        assert!(attr(tool, "gen_ai.tool.call.id").is_string());
    }
    assert_eq!(tools[0].status_code, 0, "reading notes.txt succeeded");
    assert_eq!(
        tools[1].status_code, 2,
        "reading missing.txt is an error span"
    );
    assert_eq!(attr(&tools[1], "error.type"), "tool_error");
    assert_eq!(tools[1].status_message, "the tool returned an error");

    for span in &spans {
        let text = span.all_text();
        for marker in MARKERS {
            assert!(
                !text.contains(marker),
                "`{}` carries content ({marker}) without the opt-in: {text}",
                span.name
            );
        }
        assert!(
            span.events.is_empty(),
            "no content events: {:?}",
            span.events
        );
    }
}

#[tokio::test]
async fn content_is_exported_only_when_asked_for_through_the_environment() {
    let server = ScriptedOllama::start(script()).await.unwrap();
    let receiver = OtlpReceiver::start().await.unwrap();
    let endpoint = receiver.endpoint();
    let ran = run(
        &server,
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ],
    )
    .await;
    assert_completed(&ran);
    let spans = receiver.wait_for_spans(6, Duration::from_secs(5)).await;
    let (_, chats, tools) = tree(&spans);

    let event = |span: &ReceivedSpan, name: &str, key: &str| -> String {
        let (_, attrs) = span
            .events
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("`{}` has no `{name}` event: {:?}", span.name, span.events));
        attrs[key].as_str().unwrap().to_owned()
    };
    let first_prompt = event(
        &chats[0],
        "gen_ai.client.inference.input",
        "gen_ai.input.messages",
    );
    let messages: Value = serde_json::from_str(&first_prompt).unwrap();
    assert!(
        messages.as_array().is_some_and(|m| m.len() == 2),
        "{messages}"
    );
    assert!(first_prompt.contains("TASK-MARKER-5d1c"), "{first_prompt}");
    let last_reply = event(
        &chats[2],
        "gen_ai.client.inference.output",
        "gen_ai.output.messages",
    );
    assert!(last_reply.contains("ANSWER-MARKER-c3f0"), "{last_reply}");
    let read = event(
        &tools[0],
        "gen_ai.tool.call.content",
        "gen_ai.tool.call.result",
    );
    assert!(read.contains("FILE-MARKER-77aa"), "{read}");
    let failed = event(
        &tools[1],
        "gen_ai.tool.call.content",
        "gen_ai.tool.call.result",
    );
    assert!(
        failed.contains("missing.txt"),
        "the error is content: {failed}"
    );
    let arguments = event(
        &tools[0],
        "gen_ai.tool.call.content",
        "gen_ai.tool.call.arguments",
    );
    assert_eq!(
        serde_json::from_str::<Value>(&arguments).unwrap(),
        json!({"path": "notes.txt"})
    );
    // Content stays out of the attributes even when exported.
    for span in &spans {
        for value in span.attributes.values() {
            for marker in MARKERS {
                assert!(
                    !value.to_string().contains(marker),
                    "{}: {value}",
                    span.name
                );
            }
        }
    }
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A collector that accepts connections and never answers; returns its address.
fn black_hole() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    addr
}

#[tokio::test]
async fn a_dead_collector_neither_breaks_nor_slows_the_run() {
    // Nothing listening, and a collector that never answers.
    let endpoints = [
        format!("http://127.0.0.1:{}", closed_port()),
        format!("http://{}", black_hole()),
    ];
    for endpoint in endpoints {
        let server = ScriptedOllama::start(script()).await.unwrap();
        let started = Instant::now();
        let ran = run(&server, &["--otlp-endpoint".into(), endpoint.clone()], &[]).await;
        let elapsed = started.elapsed();
        assert_completed(&ran);
        // Export runs beside the loop: a collector that never answers would cost several
        // seconds per span if the loop waited for it.
        let wall_ms = ran.finished["wall_ms"].as_u64().unwrap();
        assert!(wall_ms < 2_000, "{endpoint}: the run took {wall_ms} ms");
        // At exit the last spans get a bounded wait (3 s), never the exporter's own timeouts.
        assert!(
            elapsed < Duration::from_secs(10),
            "{endpoint}: the process took {elapsed:?}"
        );
    }
}

#[tokio::test]
async fn an_endpoint_that_is_not_a_url_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = support::reagent(
        &[
            "--otlp-endpoint".into(),
            "collector:4318".into(),
            "runs".into(),
            "list".into(),
        ],
        dir.path(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid OTLP endpoint `collector:4318`"),
        "{stderr}"
    );
}

/// `reagent serve` started with `args`; returns the child and the dashboard link it printed
/// (`http://ADDR/#token=...`).
async fn serve(args: &[String]) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_reagent"))
        .args(args)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let link = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(link) = line.strip_prefix("reagent serve: dashboard ") {
                return link.to_owned();
            }
        }
        panic!("reagent serve ended before printing its dashboard link");
    })
    .await
    .expect("reagent serve starts within 30 s");
    // Keep reading stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, link)
}

#[tokio::test]
async fn serve_exports_the_spans_of_the_runs_it_starts() {
    let model = ScriptedOllama::start(script()).await.unwrap();
    let receiver = OtlpReceiver::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("root/ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), FILE_TEXT).unwrap();
    let path = |p: &str| dir.path().join(p).display().to_string();
    std::fs::write(
        dir.path().join("reagent.toml"),
        format!("[serve]\nbase_urls = [\"{}\"]\n", model.base_url()),
    )
    .unwrap();
    let (mut child, link) = serve(&[
        "--config".into(),
        path("reagent.toml"),
        "--otlp-endpoint".into(),
        receiver.endpoint(),
        "serve".into(),
        "--bind".into(),
        "127.0.0.1:0".into(),
        "--store".into(),
        path("reagent.db"),
        "--workspace-root".into(),
        path("root"),
        "--token-file".into(),
        path("token"),
    ])
    .await;
    let (base, token) = link.split_once("/#token=").unwrap();
    let client = reqwest::Client::new();
    let created: Value = client
        .post(format!("{base}/v1/runs"))
        .bearer_auth(token)
        .json(&json!({
            "task": TASK, "model": "qwen3:8b", "provider": "ollama",
            "base_url": model.base_url(), "workspace": ws.display().to_string(),
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"));
    // The run's events over SSE: the stream closes after run_finished.
    let stream = client
        .get(format!("{base}/v1/runs/{id}/events"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let sse = tokio::time::timeout(Duration::from_secs(30), stream.text())
        .await
        .expect("the run finishes within 30 s")
        .unwrap();
    let finished = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str::<Value>(d.trim()).unwrap())
        .find(|e| e["type"] == "run_finished")
        .unwrap_or_else(|| panic!("no run_finished in {sse}"));
    assert_eq!(finished["outcome"], "completed", "{finished}");
    // SIGTERM: serve stops and the last spans are sent before it exits.
    let pid = i32::try_from(child.id().unwrap()).unwrap();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(Duration::from_secs(15), child.wait())
        .await
        .expect("serve exits within seconds of SIGTERM")
        .unwrap();
    assert!(status.success(), "{status}");
    let spans = receiver.wait_for_spans(6, Duration::from_secs(5)).await;
    let (run, chats, _) = tree(&spans);
    assert_eq!(attr(&run, "reagent.run.id"), id);
    assert_eq!(attr(&run, "gen_ai.conversation.id"), &created["session_id"]);
    assert_eq!(attr(&run, "reagent.run.outcome"), "completed");
    assert_eq!(attr(&chats[2], "gen_ai.usage.input_tokens"), 200);
    assert!(spans.iter().all(|s| s.events.is_empty()), "no content");
}
