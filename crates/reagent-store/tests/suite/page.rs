//! Pages of runs by offset, filtered by outcome and model, with their total.

use reagent_protocol::{EventKind, Outcome};
use reagent_store::RunPage;

use super::harness::*;
use crate::both_backends;

async fn pages_by_offset_with_filters_and_a_total(b: Backend) {
    let t = open(b).await;
    let outcomes = [Outcome::Completed, Outcome::Cancelled, Outcome::Completed];
    for (i, o) in outcomes.into_iter().enumerate() {
        record_run(&t.store, &format!("r{i}"), &format!("task {i}"), o).await;
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    // Two runs of another model.
    for i in 3..5 {
        let mut start = started(&format!("task {i}"), "");
        if let EventKind::RunStarted { model, .. } = &mut start {
            *model = "m2".into();
        }
        let rec = t.store.recorder();
        for e in events(
            &format!("r{i}"),
            vec![start, finished(Outcome::Completed, 1, "ok")],
        ) {
            rec.record(e);
        }
        t.store.flush().await;
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    let page = |outcome: Option<&str>, model: Option<&str>, limit, offset| RunPage {
        outcome: outcome.map(str::to_owned),
        model: model.map(str::to_owned),
        limit,
        offset,
    };
    let ids = |runs: &[reagent_store::RunRecord]| -> Vec<String> {
        runs.iter().map(|r| r.id.clone()).collect()
    };

    let (runs, total) = t.store.page_runs(&page(None, None, 2, 0)).await.unwrap();
    assert_eq!((ids(&runs), total), (vec!["r4".into(), "r3".into()], 5));
    let (runs, total) = t.store.page_runs(&page(None, None, 2, 4)).await.unwrap();
    assert_eq!((ids(&runs), total), (vec!["r0".into()], 5));
    let (runs, total) = t.store.page_runs(&page(None, None, 0, 3)).await.unwrap();
    assert_eq!((ids(&runs), total), (vec!["r1".into(), "r0".into()], 5));
    let (runs, total) = t
        .store
        .page_runs(&page(Some("completed"), Some("m1"), 10, 0))
        .await
        .unwrap();
    assert_eq!((ids(&runs), total), (vec!["r2".into(), "r0".into()], 2));
    let (runs, total) = t
        .store
        .page_runs(&page(None, Some("m2"), 1, 1))
        .await
        .unwrap();
    assert_eq!((ids(&runs), total), (vec!["r3".into()], 2));
    let (runs, total) = t.store.page_runs(&page(None, None, 10, 50)).await.unwrap();
    assert_eq!((runs.len(), total), (0, 5));
    let (runs, total) = t
        .store
        .page_runs(&page(Some("max_iterations"), None, 10, 0))
        .await
        .unwrap();
    assert_eq!((runs.len(), total), (0, 0));
}
both_backends!(pages_by_offset_with_filters_and_a_total);
