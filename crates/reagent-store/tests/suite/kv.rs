//! Sessions and memory.

use reagent_protocol::Outcome;
use reagent_store::Scope;
use serde_json::json;

use super::harness::*;
use crate::both_backends;

async fn sessions_save_and_load_snapshots(b: Backend) {
    let t = open(b).await;
    assert!(t.store.load_session("s1").await.unwrap().is_none());
    t.store
        .save_session("s1", r#"{"messages":[1]}"#)
        .await
        .unwrap();
    let first = t.store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(first.snapshot.as_deref(), Some(r#"{"messages":[1]}"#));
    t.store
        .save_session("s1", r#"{"messages":[1,2]}"#)
        .await
        .unwrap();
    let second = t.store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(second.snapshot.as_deref(), Some(r#"{"messages":[1,2]}"#));
    assert_eq!(second.created, first.created);
}
both_backends!(sessions_save_and_load_snapshots);

async fn memory_is_a_scoped_key_value_store(b: Backend) {
    let t = open(b).await;
    let s = &t.store;
    s.memory_put(Scope::Session, "s1", "b", &json!({"n": 1}))
        .await
        .unwrap();
    s.memory_put(Scope::Session, "s1", "a", &json!("text"))
        .await
        .unwrap();
    s.memory_put(Scope::Run, "s1", "a", &json!(7))
        .await
        .unwrap();
    assert_eq!(
        s.memory_get(Scope::Session, "s1", "a").await.unwrap(),
        Some(json!("text"))
    );
    assert_eq!(
        s.memory_get(Scope::Run, "s1", "a").await.unwrap(),
        Some(json!(7))
    );
    assert_eq!(s.memory_get(Scope::Session, "s2", "a").await.unwrap(), None);
    s.memory_put(Scope::Session, "s1", "b", &json!([1, 2]))
        .await
        .unwrap();
    let keys: Vec<(String, serde_json::Value)> = s
        .memory_list(Scope::Session, "s1")
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect();
    assert_eq!(
        keys,
        vec![("a".into(), json!("text")), ("b".into(), json!([1, 2]))]
    );
    assert!(s.memory_delete(Scope::Session, "s1", "a").await.unwrap());
    assert!(!s.memory_delete(Scope::Session, "s1", "a").await.unwrap());
    assert_eq!(s.memory_list(Scope::Session, "s1").await.unwrap().len(), 1);
}
both_backends!(memory_is_a_scoped_key_value_store);

async fn a_sessions_events_come_run_after_run(b: Backend) {
    let t = open(b).await;
    let rec = t.store.recorder();
    // Two runs of session s1 (the second a follow-up) and one of another session between them.
    for (run, session) in [("run-a", "s1"), ("run-x", "s2"), ("run-b", "s1")] {
        for e in events(
            run,
            vec![
                started(run, session),
                response(1, 10, 2),
                finished(Outcome::Completed, 1, run),
            ],
        ) {
            rec.record(e);
        }
        // Runs of one session start one after another (`started` has millisecond precision).
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    t.store.flush().await;
    let got: Vec<(String, i64)> = t
        .store
        .session_events("s1")
        .await
        .unwrap()
        .iter()
        .map(|e| (e.parse().unwrap().run_id, e.seq))
        .collect();
    let want: Vec<(String, i64)> = ["run-a", "run-b"]
        .iter()
        .flat_map(|r| (1..=3).map(move |s| (r.to_string(), s)))
        .collect();
    assert_eq!(got, want);
    assert!(t.store.session_events("none").await.unwrap().is_empty());
    let last = t.store.last_run_of_session("s1").await.unwrap().unwrap();
    assert_eq!(last.id, "run-b");
    assert_eq!(last.session_id.as_deref(), Some("s1"));
    assert!(t.store.last_run_of_session("none").await.unwrap().is_none());

    // A session saved after the events: the snapshot is told they were all written.
    assert!(t.store.events_complete());
    t.store
        .save_session_after_events("s1", |complete| json!({ "events_complete": complete }))
        .await
        .unwrap();
    let saved = t.store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(
        saved.snapshot.as_deref(),
        Some(r#"{"events_complete":true}"#)
    );
}
both_backends!(a_sessions_events_come_run_after_run);
