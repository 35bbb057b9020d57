//! Behaviour every backend shares (retries, timeouts, cancellation, error messages), checked
//! for each wire through `build_provider`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_protocol::{CancellationToken, ChatSignal, Feature, Provider, ProviderError};
use reagent_providers::{build_provider, ProviderConfig, ProviderKind};
use reagent_testkit::{ScriptBuilder, ScriptedServer, Turn, Wire};

use super::common::{request, Signals};

const WIRES: [(Wire, ProviderKind); 4] = [
    (Wire::Ollama, ProviderKind::Ollama),
    (Wire::OpenAi, ProviderKind::OpenAi),
    (Wire::Anthropic, ProviderKind::Anthropic),
    (Wire::Gemini, ProviderKind::Gemini),
];

fn config(kind: ProviderKind, url: String, timeout: Duration) -> ProviderConfig {
    let mut cfg = ProviderConfig::new(kind);
    cfg.base_urls = vec![url];
    cfg.api_key = Some("k".into());
    cfg.timeout = timeout;
    cfg.max_retries = 2;
    cfg.retry_base_delay = Duration::from_millis(10);
    cfg
}

async fn start(
    wire: Wire,
    kind: ProviderKind,
    turns: Vec<Turn>,
    timeout: Duration,
) -> (ScriptedServer, Arc<dyn Provider>) {
    let server = ScriptedServer::start(wire, ScriptBuilder::new().turns(turns))
        .await
        .unwrap();
    let p = build_provider(&config(kind, server.base_url(), timeout)).unwrap();
    (server, p)
}

#[tokio::test]
async fn retry_after_on_429_is_honoured_for_every_wire() {
    for (wire, kind) in WIRES {
        for stream in [false, true] {
            let turns = vec![
                Turn::error(429, "rate limited").with_header("Retry-After", "1"),
                Turn::text("ok"),
            ];
            let (_s, p) = start(wire, kind, turns, Duration::from_secs(10)).await;
            let signals = Signals::default();
            let started = Instant::now();
            let r = p
                .chat(
                    &request("m", stream),
                    &signals.sink(),
                    &CancellationToken::new(),
                )
                .await;
            assert_eq!(
                r.map(|r| r.message.content).ok().as_deref(),
                Some("ok"),
                "{wire:?}"
            );
            assert_eq!(
                signals.retries(),
                vec![(1, Duration::from_secs(1))],
                "{wire:?}"
            );
            assert!(started.elapsed() >= Duration::from_secs(1));
        }
    }
}

#[tokio::test]
async fn other_4xx_are_not_retried_and_carry_the_servers_message() {
    for (wire, kind) in WIRES {
        let turns = vec![
            Turn::error(400, "tools[0] is malformed"),
            Turn::text("never"),
        ];
        let (s, p) = start(wire, kind, turns, Duration::from_secs(10)).await;
        let signals = Signals::default();
        let err = p
            .chat(
                &request("m", true),
                &signals.sink(),
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        match &err {
            ProviderError::Http {
                status: 400,
                message,
                ..
            } => assert_eq!(message, "tools[0] is malformed", "{wire:?}"),
            other => panic!("{wire:?}: {other:?}"),
        }
        assert!(signals.retries().is_empty());
        assert_eq!(s.remaining_turns(), 1);
    }
}

#[tokio::test]
async fn server_errors_and_cut_connections_are_retried() {
    for (wire, kind) in WIRES {
        let turns = vec![
            Turn::error(503, "overloaded"),
            Turn::cut(),
            Turn::text("ok"),
        ];
        let (_s, p) = start(wire, kind, turns, Duration::from_secs(10)).await;
        let signals = Signals::default();
        let r = p
            .chat(
                &request("m", false),
                &signals.sink(),
                &CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.message.content, "ok", "{wire:?}");
        assert_eq!(signals.retries().len(), 2, "{wire:?}");
    }
}

#[tokio::test]
async fn timeouts_and_cancellation() {
    for (wire, kind) in WIRES {
        let turns = vec![
            Turn::text("late").with_delay(Duration::from_secs(5)),
            Turn::text("late").with_delay(Duration::from_secs(5)),
            Turn::text("late").with_delay(Duration::from_secs(5)),
        ];
        let (_s, p) = start(wire, kind, turns, Duration::from_millis(150)).await;
        let started = Instant::now();
        let signals = Signals::default();
        let err = p
            .chat(
                &request("m", false),
                &signals.sink(),
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::Timeout { .. }),
            "{wire:?}: {err:?}"
        );
        assert_eq!(signals.retries().len(), 2, "timeouts are retried");
        assert!(started.elapsed() < Duration::from_secs(3));

        let turns = vec![Turn::text("late").with_delay(Duration::from_secs(10))];
        let (_s, p) = start(wire, kind, turns, Duration::from_secs(30)).await;
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let started = Instant::now();
        let err = p
            .chat(&request("m", true), &|_| {}, &cancel)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::Cancelled), "{wire:?}: {err:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn unreachable_servers_and_exhausted_scripts_say_so() {
    for (wire, kind) in WIRES {
        let (s, p) = start(wire, kind, vec![], Duration::from_secs(10)).await;
        let err = p
            .chat(&request("m", false), &|_| {}, &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("script exhausted"),
            "{wire:?}: {err}"
        );
        s.stop().await;
        let err = p
            .chat(&request("m", false), &|_| {}, &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::Unreachable { .. }),
            "{wire:?}: {err:?}"
        );
        assert!(
            err.to_string().contains("cannot reach the model server"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_wrong_base_url_says_what_it_should_look_like() {
    for (wire, kind) in WIRES {
        let server = ScriptedServer::start(wire, ScriptBuilder::new().turn(Turn::text("x")))
            .await
            .unwrap();
        let p = build_provider(&config(
            kind,
            format!("{}/extra", server.base_url()),
            Duration::from_secs(5),
        ))
        .unwrap();
        let err = p
            .chat(&request("m", false), &|_| {}, &CancellationToken::new())
            .await
            .unwrap_err();
        match &err {
            ProviderError::Http {
                status: 404,
                message,
                ..
            } => assert!(message.contains("base"), "{wire:?}: {message}"),
            other => panic!("{wire:?}: {other:?}"),
        }
        assert_eq!(server.remaining_turns(), 1);
    }
}

#[tokio::test]
async fn a_full_tool_round_trip_keeps_the_request_invariants() {
    use reagent_protocol::Message;
    use serde_json::json;
    for (wire, kind) in WIRES {
        let turns = vec![
            Turn::tool_call("read_file", json!({"path": "a.txt"})),
            Turn::text("done"),
        ];
        let (s, p) = start(wire, kind, turns, Duration::from_secs(5)).await;
        let mut req = request("m", true);
        let first = p
            .chat(&req, &|_| {}, &CancellationToken::new())
            .await
            .unwrap();
        let call = first.message.tool_calls[0].clone();
        req.messages.push(first.message.into());
        req.messages
            .push(Message::tool_result(&call, "{\"content\":\"hello\"}").into());
        let second = p
            .chat(&req, &|_| {}, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(second.message.content, "done");
        assert_eq!(s.invariant_violations(), Vec::<String>::new(), "{wire:?}");
    }
}

#[tokio::test]
async fn a_stream_that_breaks_off_keeps_the_text_received() {
    for (wire, kind) in WIRES {
        let turns = vec![Turn::text("Hello there, world")
            .with_chunk_chars(3)
            .with_cut_after(5)];
        let (_s, p) = start(wire, kind, turns, Duration::from_secs(10)).await;
        let signals = Signals::default();
        let err = p
            .chat(
                &request("m", true),
                &signals.sink(),
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        let streamed = signals.text().0;
        assert!(
            !streamed.is_empty(),
            "{wire:?}: nothing streamed before the cut"
        );
        assert!(
            "Hello there, world".starts_with(&streamed) && streamed.len() < 18,
            "{wire:?}: {streamed:?}"
        );
        assert!(
            matches!(&err, ProviderError::Incomplete { partial, .. } if *partial == streamed),
            "{wire:?}: {err:?}"
        );
        assert!(
            err.to_string().contains(&format!(
                "{} characters of the reply were received and kept",
                streamed.len()
            )),
            "{wire:?}: {err}"
        );
    }
}

#[tokio::test]
async fn a_reply_past_the_cap_ends_the_call_with_an_error_naming_the_cap() {
    const LIMIT: usize = 4096;
    for (wire, kind) in WIRES {
        for stream in [false, true] {
            let big = "x".repeat(3 * LIMIT);
            let turns = vec![
                Turn::text("small").with_chunk_chars(2),
                Turn::text(big).with_chunk_chars(512),
            ];
            let server = ScriptedServer::start(wire, ScriptBuilder::new().turns(turns))
                .await
                .unwrap();
            let mut cfg = config(kind, server.base_url(), Duration::from_secs(10));
            cfg.max_reply_bytes = LIMIT;
            let p = build_provider(&cfg).unwrap();
            let cancel = CancellationToken::new();
            let ok = p.chat(&request("m", stream), &|_| {}, &cancel).await;
            assert_eq!(
                ok.map(|r| r.message.content).ok().as_deref(),
                Some("small"),
                "{wire:?}"
            );
            let signals = Signals::default();
            let err = p
                .chat(&request("m", stream), &signals.sink(), &cancel)
                .await
                .unwrap_err();
            assert!(
                matches!(err, ProviderError::ReplyTooLarge { limit: LIMIT, .. }),
                "{wire:?} stream={stream}: {err:?}"
            );
            assert!(err.to_string().contains("cap of 4096 bytes"), "{err}");
            assert!(signals.text().0.len() <= LIMIT, "{wire:?}");
            assert!(signals.retries().is_empty(), "{wire:?}: not retried");
        }
    }
}

#[tokio::test]
async fn a_refused_schema_is_sent_again_in_each_wires_json_mode() {
    let wires = [
        (Wire::Ollama, ProviderKind::Ollama),
        (Wire::OpenAi, ProviderKind::OpenAi),
        (Wire::Gemini, ProviderKind::Gemini),
    ];
    for (wire, kind) in wires {
        let turns = vec![
            Turn::error(400, "response format json_schema is not supported"),
            Turn::text("{\"final_answer\": \"ok\"}"),
            Turn::text("{\"final_answer\": \"again\"}"),
        ];
        let (server, p) = start(wire, kind, turns, Duration::from_secs(10)).await;
        let mut req = request("m", false);
        req.tools = Default::default();
        req.response_schema = Some(serde_json::json!({
            "type": "object", "required": ["final_answer"],
            "properties": {"final_answer": {"type": "string"}}
        }));
        let signals = Signals::default();
        let cancel = CancellationToken::new();
        for want in [
            "{\"final_answer\": \"ok\"}",
            "{\"final_answer\": \"again\"}",
        ] {
            let r = p.chat(&req, &signals.sink(), &cancel).await.unwrap();
            assert_eq!(r.message.content, want, "{wire:?}");
        }
        let fallbacks: Vec<_> = signals
            .all()
            .into_iter()
            .filter_map(|s| match s {
                ChatSignal::Fallback { feature, .. } => Some(feature),
                _ => None,
            })
            .collect();
        assert_eq!(fallbacks, [Feature::Schema], "{wire:?}: said once");
        let sent = server.requests();
        assert_eq!(sent.len(), 3, "{wire:?}");
        for body in &sent[1..] {
            let text = body.to_string();
            assert!(
                text.contains("matches this JSON Schema"),
                "{wire:?}: {text}"
            );
            match wire {
                Wire::Ollama => assert_eq!(body["format"], "json"),
                Wire::OpenAi => {
                    assert_eq!(
                        body["response_format"],
                        serde_json::json!({"type": "json_object"})
                    )
                }
                _ => {
                    let gen = &body["generationConfig"];
                    assert_eq!(gen["responseMimeType"], "application/json");
                    assert!(gen.get("responseJsonSchema").is_none(), "{gen}");
                }
            }
        }
    }
}
