//! Leader election and fencing: one leader at a time, epochs that only grow, and the writes
//! of a deposed hub refused.

use std::time::Duration;

use reagent_hub::leader::{current_leader, Election};
use reagent_hub::machine::{self, HubState};
use reagent_hub::{actions, cost, HubError};

use crate::support::{open, Backend};

async fn one_leader_and_a_deposed_hubs_writes_are_refused(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let lease = Duration::from_millis(400);
    let a = Election::new(&t.store, "hub", "a", lease);
    let b = Election::new(&t.store, "hub", "b", lease);

    let fa = a
        .try_acquire()
        .await
        .unwrap()
        .expect("a leads an empty group");
    assert_eq!(fa.epoch, 1);
    assert!(b.try_acquire().await.unwrap().is_none(), "b must wait");
    assert!(a.renew(&fa).await.unwrap());
    machine::ensure_state(&pool, &fa).await.unwrap();
    machine::transition(&pool, &fa, HubState::Resting, HubState::Executing, "work")
        .await
        .unwrap();

    // a stops renewing (frozen, cut off): its lease runs out and b takes over with a new epoch.
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    let fb = b
        .try_acquire()
        .await
        .unwrap()
        .expect("b takes over an expired lease");
    assert_eq!(fb.epoch, 2);
    let leader = current_leader(&pool, "hub").await.unwrap().unwrap();
    assert_eq!((leader.holder.as_str(), leader.epoch), ("b", 2));

    // Every write of the deposed hub is refused, and nothing of it lands.
    assert!(!a.renew(&fa).await.unwrap(), "a's lease is gone");
    let refused =
        machine::transition(&pool, &fa, HubState::Executing, HubState::Resting, "late").await;
    assert!(
        matches!(refused, Err(HubError::Deposed { epoch: 1 })),
        "{refused:?}"
    );
    let refused = actions::record(&pool, &fa, "reclaim", "t1", "done", None).await;
    assert!(
        matches!(refused, Err(HubError::Deposed { .. })),
        "{refused:?}"
    );
    let refused = cost::charge(&pool, &fa, HubState::Contemplating, 10).await;
    assert!(
        matches!(refused, Err(HubError::Deposed { .. })),
        "{refused:?}"
    );
    assert!(
        a.try_acquire().await.unwrap().is_none(),
        "b holds a live lease"
    );

    let state = machine::load_state(&pool, "hub").await.unwrap().unwrap();
    assert_eq!(state.state, HubState::Executing);
    assert!(actions::recent(&pool, "hub", 10).await.unwrap().is_empty());
    assert_eq!(
        cost::calls_this_hour(&pool, HubState::Contemplating)
            .await
            .unwrap(),
        0
    );

    // The new leader writes.
    machine::transition(&pool, &fb, HubState::Executing, HubState::Resting, "idle")
        .await
        .unwrap();
    let history = machine::history(&pool, "hub", 10).await.unwrap();
    let epochs: Vec<i64> = history.iter().map(|t| t.epoch).collect();
    assert_eq!(epochs, [1, 2]);

    // Releasing hands over at once, with the next epoch.
    b.release(&fb).await.unwrap();
    let fa2 = a
        .try_acquire()
        .await
        .unwrap()
        .expect("a leads after b released");
    assert_eq!(fa2.epoch, 3);
}

async fn many_candidates_at_once_elect_exactly_one(backend: Backend) {
    let t = open(backend).await;
    let tries = (0..8).map(|i| {
        let e = Election::new(&t.store, "hub", &format!("c{i}"), Duration::from_secs(30));
        tokio::spawn(async move { e.try_acquire().await })
    });
    let mut winners = Vec::new();
    for t in tries {
        if let Some(f) = t.await.unwrap().unwrap() {
            winners.push(f);
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(winners[0].epoch, 1);
}

async fn the_cost_ledger_caps_calls_per_state_and_hour(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let e = Election::new(&t.store, "hub", "a", Duration::from_secs(30));
    let f = e.try_acquire().await.unwrap().unwrap();
    assert!(cost::charge(&pool, &f, HubState::Contemplating, 2)
        .await
        .unwrap());
    assert!(cost::charge(&pool, &f, HubState::Contemplating, 2)
        .await
        .unwrap());
    assert!(!cost::charge(&pool, &f, HubState::Contemplating, 2)
        .await
        .unwrap());
    assert!(!cost::has_budget(&pool, HubState::Contemplating, 2)
        .await
        .unwrap());
    // Another state has its own count.
    assert!(cost::charge(&pool, &f, HubState::Improving, 2)
        .await
        .unwrap());
    assert!(!cost::charge(&pool, &f, HubState::Improving, 0)
        .await
        .unwrap());
    assert_eq!(
        cost::calls_this_hour(&pool, HubState::Contemplating)
            .await
            .unwrap(),
        2
    );
    let rows = cost::ledger(&pool, 1).await.unwrap();
    let calls: Vec<(String, i64)> = rows.into_iter().map(|r| (r.state, r.calls)).collect();
    assert_eq!(
        calls,
        [("contemplating".into(), 2), ("improving".into(), 1)]
    );
}

crate::both_backends!(
    one_leader_and_a_deposed_hubs_writes_are_refused,
    many_candidates_at_once_elect_exactly_one,
    the_cost_ledger_caps_calls_per_state_and_hour,
);
