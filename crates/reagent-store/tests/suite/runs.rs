//! Recording runs and reading them back.

use reagent_protocol::{Event, EventKind, Outcome};
use reagent_store::{RunFilter, Store};

use super::harness::*;
use crate::both_backends;

async fn records_a_run_from_its_events(b: Backend) {
    let t = open(b).await;
    let rec = t.store.recorder();
    let handler = rec.handler();
    let run = "run-one";
    for e in events(
        run,
        vec![
            started("fix the test", "sess-1"),
            EventKind::TextDelta {
                text: "never stored".into(),
            },
            response(1, 300, 40),
            EventKind::ToolCall {
                iteration: 1,
                call_id: "c1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "a.txt"}),
                ok: true,
                duration_ms: 2,
                summary: "3 lines".into(),
            },
            response(2, 350, 10),
        ],
    ) {
        handler(e);
    }
    t.store.flush().await;
    let row = t.store.run(run).await.unwrap().expect("run row");
    assert_eq!(row.outcome, "running");
    assert!(row.is_running());
    assert_eq!((row.iterations, row.tool_calls), (2, 1));
    assert_eq!((row.prompt_tokens, row.completion_tokens), (650, 50));
    assert_eq!(row.task, "fix the test");
    assert_eq!(row.session_id.as_deref(), Some("sess-1"));
    assert_eq!(row.pid, i64::from(std::process::id()));

    handler(Event::new(
        run,
        6,
        finished(Outcome::Completed, 2, "done it"),
    ));
    t.store.flush().await;
    let row = t.store.run(run).await.unwrap().unwrap();
    assert_eq!(row.outcome, "completed");
    assert_eq!(row.answer.as_deref(), Some("done it"));
    assert_eq!(row.total_tokens(), 120);
    assert!(row.finished.is_some());

    let stored = t.store.events_after(run, 0, 0).await.unwrap();
    let seqs: Vec<i64> = stored.iter().map(|e| e.seq).collect();
    // seq 2 was the delta: not stored, so the stored seqs skip it.
    assert_eq!(seqs, vec![1, 3, 4, 5, 6]);
    let kinds: Vec<&str> = stored.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "llm_response",
            "tool_call",
            "llm_response",
            "run_finished"
        ]
    );
    let parsed = stored[2].parse().unwrap();
    assert!(matches!(parsed.kind, EventKind::ToolCall { ref name, .. } if name == "read_file"));
    let after = t.store.events_after(run, 4, 1).await.unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].seq, 5);
    assert!(t.store.error().is_none());
    let session = t
        .store
        .load_session("sess-1")
        .await
        .unwrap()
        .expect("session row");
    assert_eq!(session.snapshot, None);
}
both_backends!(records_a_run_from_its_events);

async fn lists_newest_first_filtered_and_paged(b: Backend) {
    let t = open(b).await;
    let outcomes = [
        Outcome::Completed,
        Outcome::MaxIterations,
        Outcome::Completed,
        Outcome::ProviderError,
        Outcome::Completed,
    ];
    for (i, o) in outcomes.into_iter().enumerate() {
        record_run(&t.store, &format!("r{i}"), &format!("task {i}"), o).await;
        // Distinct start times (millisecond stamps).
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let all = t.store.list_runs(&RunFilter::default()).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["r4", "r3", "r2", "r1", "r0"]);

    let completed = t
        .store
        .list_runs(&RunFilter {
            outcome: Some("completed".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let ids: Vec<&str> = completed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["r4", "r2", "r0"]);

    let page1 = t
        .store
        .list_runs(&RunFilter {
            limit: 2,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page1.len(), 2);
    let last = page1.last().unwrap();
    let page2 = t
        .store
        .list_runs(&RunFilter {
            limit: 2,
            before: Some((last.started.clone(), last.id.clone())),
            ..Default::default()
        })
        .await
        .unwrap();
    let ids: Vec<&str> = page2.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["r2", "r1"]);
}
both_backends!(lists_newest_first_filtered_and_paged);

async fn resolves_prefixes_and_deletes(b: Backend) {
    let t = open(b).await;
    record_run(&t.store, "abc123", "one", Outcome::Completed).await;
    record_run(&t.store, "abd456", "two", Outcome::Completed).await;
    assert_eq!(t.store.resolve_id("abc").await.unwrap(), "abc123");
    let many = t.store.resolve_id("ab").await.unwrap_err().to_string();
    assert!(many.contains("several runs"), "{many}");
    let none = t.store.resolve_id("zz").await.unwrap_err().to_string();
    assert!(none.contains("no run with id 'zz'"), "{none}");
    // LIKE wildcards are plain characters in a prefix.
    assert!(t.store.resolve_id("a%").await.is_err());

    assert!(t.store.delete_run("abc123").await.unwrap());
    assert!(t.store.run("abc123").await.unwrap().is_none());
    assert!(t
        .store
        .events_after("abc123", 0, 0)
        .await
        .unwrap()
        .is_empty());
    assert!(!t.store.delete_run("abc123").await.unwrap());
    assert_eq!(t.store.events_after("abd456", 0, 0).await.unwrap().len(), 3);
}
both_backends!(resolves_prefixes_and_deletes);

async fn reopening_keeps_everything(b: Backend) {
    let t = open(b).await;
    record_run(&t.store, "kept", "stay", Outcome::Completed).await;
    let again = Store::open(&t.location).await.unwrap();
    let row = again.run("kept").await.unwrap().unwrap();
    assert_eq!(row.outcome, "completed");
    assert_eq!(again.events_after("kept", 0, 0).await.unwrap().len(), 3);
}
both_backends!(reopening_keeps_everything);

async fn a_thousand_concurrent_runs_write_into_one_store(b: Backend) {
    let t = open(b).await;
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let handler = t.store.recorder().handler();
        tasks.push(tokio::spawn(async move {
            let run = format!("run-{i:04}");
            let mut kinds = vec![started(&format!("task {i}"), "")];
            for it in 1..=8 {
                kinds.push(response(it, 10, 1));
                tokio::task::yield_now().await;
            }
            kinds.push(finished(Outcome::Completed, 8, "ok"));
            for e in events(&run, kinds) {
                handler(e);
                tokio::task::yield_now().await;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    t.store.flush().await;
    assert_eq!(t.store.error(), None);
    assert_eq!(t.store.dropped_events(), 0);
    let runs = t.store.list_runs(&RunFilter::default()).await.unwrap();
    assert_eq!(runs.len(), 1000);
    assert!(runs
        .iter()
        .all(|r| r.outcome == "completed" && r.iterations == 8));
    for id in ["run-0000", "run-0500", "run-0999"] {
        let seqs: Vec<i64> = t
            .store
            .events_after(id, 0, 0)
            .await
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=10).collect::<Vec<i64>>(), "{id}");
    }
}
both_backends!(a_thousand_concurrent_runs_write_into_one_store);
