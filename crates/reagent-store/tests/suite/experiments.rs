//! `reagent cycles` experiments (migration 0006): rows, cycles, events, memory and ratings.

use reagent_store::{CycleRecord, NewExperiment, RatingRecord};

use super::harness::*;
use crate::both_backends;

async fn experiments_cycles_events_memory_and_ratings(b: Backend) {
    let t = open(b).await;
    let s = &t.store;
    let new = NewExperiment {
        id: "ember-1".into(),
        model: "qwen3:8b".into(),
        cycles: 3,
        config: "{\"k\":1}".into(),
    };
    assert!(s.create_experiment(&new).await.unwrap());
    assert!(
        !s.create_experiment(&new).await.unwrap(),
        "an id exists once"
    );
    let e = s.experiment("ember-1").await.unwrap().unwrap();
    assert_eq!(
        (e.status.as_str(), e.cycles, e.cycles_done),
        ("stopped", 3, 0)
    );
    s.claim_experiment("ember-1").await.unwrap().unwrap();
    // This process may claim it again (a resume in the same process).
    s.claim_experiment("ember-1").await.unwrap().unwrap();
    assert_eq!(
        s.experiment("ember-1").await.unwrap().unwrap().status,
        "running"
    );
    assert!(s.claim_experiment("nope").await.unwrap().is_err());
    assert_eq!(e.config, "{\"k\":1}");
    assert!(s.experiment("nope").await.unwrap().is_none());

    let record = |cycle: i64| CycleRecord {
        cycle,
        started: "2026-01-01T00:00:00.000Z".into(),
        finished: "2026-01-01T00:00:01.000Z".into(),
        outcome: "completed".into(),
        cut_short: cycle == 2,
        reflection: format!("reflection {cycle}"),
        thinking: String::new(),
        metrics: "{}".into(),
    };
    s.save_cycle("ember-1", &record(1)).await.unwrap();
    s.save_cycle("ember-1", &record(2)).await.unwrap();
    // Saving a cycle again replaces it and never lowers the count.
    s.save_cycle("ember-1", &record(1)).await.unwrap();
    let cycles = s.cycles("ember-1").await.unwrap();
    assert_eq!(cycles, vec![record(1), record(2)]);
    assert_eq!(
        s.experiment("ember-1").await.unwrap().unwrap().cycles_done,
        2
    );
    s.set_experiment_status("ember-1", "stopped").await.unwrap();
    assert_eq!(s.list_experiments().await.unwrap()[0].status, "stopped");

    for (cycle, kind) in [(1, "CYCLE_START"), (1, "TOOL_CALL"), (2, "CYCLE_START")] {
        s.append_cycle_event("ember-1", cycle, "2026-01-01T00:00:00.000Z", kind, "{}")
            .await
            .unwrap();
    }
    s.append_cycle_event("other", 1, "t", "CYCLE_START", "{}")
        .await
        .unwrap();
    let events = s.cycle_events("ember-1").await.unwrap();
    let seqs: Vec<(i64, i64, &str)> = events
        .iter()
        .map(|e| (e.seq, e.cycle, e.event_type.as_str()))
        .collect();
    assert_eq!(
        seqs,
        [
            (1, 1, "CYCLE_START"),
            (2, 1, "TOOL_CALL"),
            (3, 2, "CYCLE_START")
        ]
    );
    assert_eq!(s.cycle_events("other").await.unwrap()[0].seq, 1);
    let page: Vec<i64> = s
        .cycle_events_after("ember-1", 1, 1)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(page, [2]);
    assert!(s
        .cycle_events_after("ember-1", 3, 10)
        .await
        .unwrap()
        .is_empty());

    s.experiment_memory_put("ember-1", "b", "two")
        .await
        .unwrap();
    s.experiment_memory_put("ember-1", "a", "one")
        .await
        .unwrap();
    s.experiment_memory_put("ember-1", "a", "uno")
        .await
        .unwrap();
    s.experiment_memory_put("other", "a", "elsewhere")
        .await
        .unwrap();
    assert_eq!(
        s.experiment_memory_get("ember-1", "a")
            .await
            .unwrap()
            .as_deref(),
        Some("uno")
    );
    assert_eq!(s.experiment_memory_get("ember-1", "z").await.unwrap(), None);
    let keys: Vec<String> = s
        .experiment_memory("ember-1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.key)
        .collect();
    assert_eq!(keys, ["a", "b"]);
    assert!(s.experiment_memory_delete("ember-1", "b").await.unwrap());
    assert!(!s.experiment_memory_delete("ember-1", "b").await.unwrap());
    assert_eq!(s.experiment_memory("other").await.unwrap().len(), 1);

    let rating = |n: Option<i64>| RatingRecord {
        experiment_id: "ember-1".into(),
        evaluator: "judge".into(),
        created: "2026-01-01T00:00:00.000Z".into(),
        rating: n,
        justification: "because".into(),
        reply: "Rating: 7".into(),
        error: n.is_none().then(|| "no rating".to_owned()),
    };
    s.save_rating(&rating(Some(7))).await.unwrap();
    s.save_rating(&rating(None)).await.unwrap();
    let ratings = s.ratings("ember-1").await.unwrap();
    assert_eq!(ratings.len(), 2);
    assert!(ratings.contains(&rating(Some(7))) && ratings.contains(&rating(None)));
}
both_backends!(experiments_cycles_events_memory_and_ratings);

async fn a_live_owner_keeps_its_experiment_and_a_silent_one_loses_it(b: Backend) {
    let t = open(b).await;
    let s = &t.store;
    let new = NewExperiment {
        id: "e".into(),
        model: "m".into(),
        cycles: 1,
        config: "{}".into(),
    };
    s.create_experiment(&new).await.unwrap();
    s.claim_experiment("e").await.unwrap().unwrap();
    let pool = raw(&t.location).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // Another host's process, heard of just now: it keeps the experiment.
    sqlx::query(
        "UPDATE cycle_experiments SET owner_pid = 1, owner_host = 'elsewhere', heartbeat = $1",
    )
    .bind(now)
    .execute(&pool)
    .await
    .unwrap();
    let why = s.claim_experiment("e").await.unwrap().unwrap_err();
    assert!(why.contains("process 1 on elsewhere"), "{why}");
    assert_eq!(s.experiment("e").await.unwrap().unwrap().status, "running");
    // Silent past STALE_AFTER: it reads interrupted, and a resume may take it over.
    sqlx::query("UPDATE cycle_experiments SET heartbeat = 0")
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(
        s.experiment("e").await.unwrap().unwrap().status,
        "interrupted"
    );
    s.claim_experiment("e").await.unwrap().unwrap();
    assert_eq!(s.experiment("e").await.unwrap().unwrap().status, "running");
}
both_backends!(a_live_owner_keeps_its_experiment_and_a_silent_one_loses_it);
