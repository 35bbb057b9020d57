//! Sessions and memory.

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
