//! Stopping and starting: live runs end `interrupted` and are listed by the next server;
//! a non-loopback address needs an existing token file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use reagent_server::{Server, ServerConfig, ServerError};
use reagent_store::Location;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};
use support::{assert_complete, read_sse, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_interrupts_live_runs_and_a_restarted_server_lists_them() {
    let model = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::text("never sent").with_delay(Duration::from_secs(60)))
            .turn(Turn::text("never sent").with_delay(Duration::from_secs(60))),
    )
    .await
    .unwrap();
    let server = TestServer::start_allowing(&model.base_url()).await;
    let a = server.start_run(&model.base_url(), json!({})).await;
    let b = server.start_run(&model.base_url(), json!({})).await;
    let a_id = a["id"].as_str().unwrap().to_owned();
    let watcher = server
        .get(&format!("/v1/runs/{a_id}/events"))
        .send()
        .await
        .unwrap();
    let reading = tokio::spawn(read_sse(watcher, usize::MAX));

    let started = Instant::now();
    let dir = server.stop().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let events = reading.await.unwrap();
    assert_complete(&events);
    let last = &events.last().unwrap().data;
    assert_eq!(last["outcome"], "interrupted");
    assert!(last["error"].as_str().unwrap().contains("stopped"));

    let again = TestServer::start_in(dir, |_| {}).await;
    let list: Value = again.get_json("/v1/runs").await;
    let outcomes: Vec<(&str, &str)> = list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(outcomes.len(), 2);
    for id in [a_id.as_str(), b["id"].as_str().unwrap()] {
        assert!(outcomes.contains(&(id, "interrupted")), "{outcomes:?}");
    }
    // The interrupted run replays, ending with its run_finished.
    assert_complete(&again.events(&a_id, None).await);
}

#[tokio::test]
async fn a_non_loopback_address_needs_an_existing_token_file() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    let config = || {
        let mut c = ServerConfig::new(
            "0.0.0.0:0".parse().unwrap(),
            Location::Sqlite(dir.path().join("reagent.db")),
        );
        c.token_file = Some(token_file.clone());
        c.workspace_roots = vec![dir.path().to_path_buf()];
        c
    };
    let refused = Server::bind(config()).await.err().expect("refused");
    assert!(matches!(refused, ServerError::Token(_)), "{refused}");
    assert!(refused.to_string().contains("non-loopback"), "{refused}");
    assert!(!token_file.exists());

    // A loopback start creates it; then the non-loopback start is accepted.
    let mut first = config();
    first.bind = "127.0.0.1:0".parse().unwrap();
    let server = Server::bind(first).await.unwrap();
    assert!(server.token_created());
    let token = server.token().reveal().to_owned();
    drop(server);
    let server = Server::bind(config()).await.unwrap();
    assert!(!server.token_created());
    assert_eq!(server.token().reveal(), token);
    assert!(server
        .dashboard_url()
        .ends_with(&format!("/#token={token}")));
}
