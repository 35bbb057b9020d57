//! EndpointPool over scripted Ollama servers: failover, health, routing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_protocol::{CancellationToken, ChatSignal, Provider, ProviderError};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::pool::{EndpointPool, PoolConfig, PoolMember};
use reagent_providers::{build_provider, ClientOptions, ProviderConfig, ProviderKind, RetryPolicy};
use reagent_testkit::{ScriptBuilder, ScriptedServer, Turn, Wire};

use super::common::{request, Signals};

fn texts(label: &str, n: usize) -> ScriptBuilder {
    ScriptBuilder::new().turns((0..n).map(|i| Turn::text(format!("{label}{i}"))))
}

async fn server(script: ScriptBuilder) -> ScriptedServer {
    ScriptedServer::start(Wire::Ollama, script).await.unwrap()
}

fn fast_cfg() -> PoolConfig {
    PoolConfig {
        health_interval: Duration::from_secs(3600),
        down_after: 3,
        probe_base: Duration::from_millis(20),
        health_timeout: Duration::from_secs(2),
        retry: RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
        },
    }
}

fn pool(servers: &[&ScriptedServer], cfg: PoolConfig) -> EndpointPool {
    let opts = ClientOptions {
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_retries: 0,
            ..Default::default()
        },
        ..ClientOptions::default()
    };
    let members: Vec<Arc<dyn PoolMember>> = servers
        .iter()
        .map(|s| {
            Arc::new(OllamaProvider::new(&s.base_url(), opts.clone()).unwrap())
                as Arc<dyn PoolMember>
        })
        .collect();
    EndpointPool::new(members, cfg).unwrap()
}

#[tokio::test]
async fn failover_when_an_endpoint_dies_and_down_after_three_failures() {
    let a = server(texts("a", 5)).await;
    let b = server(texts("b", 5)).await;
    let p = pool(&[&a, &b], fast_cfg());
    let cancel = CancellationToken::new();
    // A fresh pool tries the first endpoint first.
    a.stop().await;

    let signals = Signals::default();
    let r = p
        .chat(&request("m", false), &signals.sink(), &cancel)
        .await
        .unwrap();
    assert_eq!(r.endpoint, b.base_url());
    assert_eq!(r.message.content, "b0");
    assert_eq!(
        signals.retries(),
        vec![(1, Duration::ZERO)],
        "the failover is reported"
    );
    match signals.all().first() {
        Some(ChatSignal::Pool(initial)) => {
            assert_eq!(initial.len(), 2);
            assert!(initial.iter().all(|e| e.up && e.failures == 0));
        }
        other => panic!("the first call reports the initial pool state, got {other:?}"),
    }
    let st = p.states();
    assert_eq!((st[0].up, st[0].failures), (true, 1));
    assert_eq!((st[1].up, st[1].failures, st[1].in_flight), (true, 0, 0));

    p.check_now().await;
    p.check_now().await;
    let st = p.states();
    assert_eq!((st[0].up, st[0].failures), (false, 3));
    assert!(st[1].up);

    let signals = Signals::default();
    let r = p
        .chat(&request("m", true), &signals.sink(), &cancel)
        .await
        .unwrap();
    assert_eq!(r.message.content, "b1");
    let pool_states: Vec<_> = signals
        .all()
        .into_iter()
        .filter_map(|s| match s {
            ChatSignal::Pool(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(pool_states.len(), 1, "the down transition is reported once");
    assert!(!pool_states[0][0].up);
    assert!(
        signals.retries().is_empty(),
        "a down endpoint is not tried while another is up"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_call_continues_on_another_endpoint() {
    let a = server(ScriptBuilder::new().turn(Turn::text("partial answer").with_cut_after(2))).await;
    let b = server(texts("b", 1)).await;
    let p = pool(&[&a, &b], fast_cfg());
    let r = p
        .chat(&request("m", true), &|_| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.message.content, "b0");
    assert_eq!(a.requests().len(), 1);
    assert_eq!(p.states()[0].failures, 1);
}

#[tokio::test]
async fn calls_go_to_the_least_loaded_endpoint() {
    let slow = |label: &str| {
        ScriptBuilder::new().turn(Turn::text(label).with_delay(Duration::from_millis(300)))
    };
    let a = server(slow("a")).await;
    let b = server(slow("b")).await;
    let p = Arc::new(pool(&[&a, &b], fast_cfg()));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let p = Arc::clone(&p);
        tasks.push(tokio::spawn(async move {
            p.chat(&request("m", false), &|_| {}, &CancellationToken::new())
                .await
                .map(|r| r.message.content)
        }));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        p.states().iter().map(|s| s.in_flight).collect::<Vec<_>>(),
        vec![1, 1]
    );
    let mut got = Vec::new();
    for t in tasks {
        got.push(t.await.unwrap().unwrap());
    }
    got.sort();
    assert_eq!(got, vec!["a", "b"]);
    assert_eq!(
        p.states().iter().map(|s| s.in_flight).collect::<Vec<_>>(),
        vec![0, 0]
    );
}

#[tokio::test]
async fn health_checks_mark_an_endpoint_down_and_back_up() {
    let a = server(texts("a", 1)).await;
    let b = server(texts("b", 1)).await;
    let addr = a.addr();
    let cfg = PoolConfig {
        health_interval: Duration::from_millis(100),
        ..fast_cfg()
    };
    let p = pool(&[&a, &b], cfg);
    a.stop().await;
    wait_for(|| !p.states()[0].up).await;
    let _a2 = ScriptedServer::start_at(Wire::Ollama, texts("a", 1), addr)
        .await
        .unwrap();
    wait_for(|| p.states()[0].up && p.states()[0].failures == 0).await;
    assert!(p.states()[1].up);
}

async fn wait_for(cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "condition not reached in 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn request_errors_do_not_fail_over() {
    let a = server(ScriptBuilder::new().turn(Turn::error(400, "invalid tools"))).await;
    let b = server(texts("b", 1)).await;
    let p = pool(&[&a, &b], fast_cfg());
    let err = p
        .chat(&request("m", false), &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Http { status: 400, .. }),
        "{err:?}"
    );
    assert!(b.requests().is_empty());
}

#[tokio::test]
async fn when_every_endpoint_fails_rounds_are_retried_then_the_error_returned() {
    let a = server(ScriptBuilder::new()).await;
    let b = server(ScriptBuilder::new()).await;
    let p = pool(&[&a, &b], fast_cfg());
    a.stop().await;
    b.stop().await;
    let signals = Signals::default();
    let err = p
        .chat(
            &request("m", false),
            &signals.sink(),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Unreachable { .. }), "{err:?}");
    let retries = signals.retries();
    // round 1: a fails (failover signal), b fails (round retry with a delay); round 2 likewise,
    // without the final round retry
    assert_eq!(retries.len(), 3, "{retries:?}");
    assert!(retries[1].1 > Duration::ZERO);
}

#[tokio::test]
async fn build_provider_makes_a_pool_from_several_urls() {
    let a = server(texts("a", 2)).await;
    let b = server(texts("b", 2)).await;
    let mut cfg = ProviderConfig::new(ProviderKind::Ollama);
    cfg.base_urls = vec![a.base_url(), b.base_url()];
    let p = build_provider(&cfg).unwrap();
    assert_eq!(p.name(), "ollama");
    b.stop().await;
    for _ in 0..2 {
        let r = p
            .chat(&request("m", false), &|_| {}, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(r.endpoint, a.base_url());
    }
}
