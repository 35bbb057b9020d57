//! `reagent eval` results: saved as opaque documents, listed newest first, found by id or prefix.

use reagent_store::{NewEvalResult, Store};

use super::harness::*;
use crate::both_backends;

fn result(suite: &str, passed: u32, document: &str) -> NewEvalResult {
    NewEvalResult {
        suite: suite.into(),
        model: "smollm2:135m".into(),
        provider: "openai".into(),
        passed,
        total: 4,
        document: document.into(),
    }
}

async fn eval_results_are_saved_listed_and_loaded_by_prefix(b: Backend) {
    let t = open(b).await;
    assert!(t.store.list_eval_results(0).await.unwrap().is_empty());
    // A document of some size, with text beyond ASCII, comes back byte for byte.
    let big = format!(
        r#"{{"format":1,"answer":"Die Blume heißt Orchidee 🌸","pad":"{}"}}"#,
        "x".repeat(200_000)
    );
    let first = t
        .store
        .save_eval_result(&result("small-tasks", 1, &big))
        .await
        .unwrap();
    // `created` has milliseconds: a pause makes the order certain.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let second = t
        .store
        .save_eval_result(&result("other-suite", 3, r#"{"format":1}"#))
        .await
        .unwrap();
    assert_ne!(first, second);

    let listed = t.store.list_eval_results(0).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, [second.as_str(), first.as_str()], "newest first");
    assert_eq!(
        (
            listed[1].suite.as_str(),
            listed[1].model.as_str(),
            listed[1].provider.as_str(),
            listed[1].passed,
            listed[1].total
        ),
        ("small-tasks", "smollm2:135m", "openai", 1, 4)
    );
    assert!(listed[0].created > listed[1].created, "{listed:?}");
    let one = t.store.list_eval_results(1).await.unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].id, second);

    let loaded = t.store.load_eval_result(&first).await.unwrap();
    assert_eq!(loaded.document, big);
    assert_eq!(loaded.record, listed[1]);
    let by_prefix = t.store.load_eval_result(&first[..8]).await.unwrap();
    assert_eq!(by_prefix.record.id, first);
    assert_eq!(
        t.store
            .load_eval_result(&format!("  {}\n", &second[..6]))
            .await
            .unwrap()
            .document,
        r#"{"format":1}"#
    );

    // The results outlive the process: a store opened again (not taken for a foreign database)
    // lists them.
    let again = Store::open(&t.location).await.unwrap();
    assert_eq!(again.list_eval_results(0).await.unwrap(), listed);
}
both_backends!(eval_results_are_saved_listed_and_loaded_by_prefix);

async fn an_unknown_or_ambiguous_eval_id_is_a_clear_error(b: Backend) {
    let t = open(b).await;
    let db = raw(&t.location).await;
    for id in ["abc123", "abd456"] {
        sqlx::query(
            "INSERT INTO eval_results (id, created, suite, model, provider, passed, total, document) \
             VALUES ($1, '2026-11-24T08:00:00.000Z', 's', 'm', 'p', 0, 1, '{}')",
        )
        .bind(id)
        .execute(&db)
        .await
        .unwrap();
    }
    assert_eq!(
        t.store.load_eval_result("abc").await.unwrap().record.id,
        "abc123"
    );
    let many = t
        .store
        .load_eval_result("ab")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        many.contains("'ab' matches several eval results (abc123, abd456…)"),
        "{many}"
    );
    let none = t
        .store
        .load_eval_result("zz")
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        none,
        format!("no eval result with id 'zz' in the store {}", t.location)
    );
    let empty = t.store.load_eval_result(" ").await.unwrap_err().to_string();
    assert_eq!(empty, "give an eval result id (or a prefix of one)");
    // LIKE wildcards are plain characters in a prefix; a run's id is not an eval result's.
    assert!(t.store.load_eval_result("a%").await.is_err());
    record_run(
        &t.store,
        "run999",
        "task",
        reagent_protocol::Outcome::Completed,
    )
    .await;
    assert!(t.store.load_eval_result("run9").await.is_err());
    assert!(t.store.resolve_id("abc").await.is_err());
}
both_backends!(an_unknown_or_ambiguous_eval_id_is_a_clear_error);
