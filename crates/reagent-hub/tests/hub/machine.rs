//! The persisted state machine: transitions recorded in order, invalid ones refused with
//! nothing written, pause and resume.

use std::time::Duration;

use reagent_hub::leader::Election;
use reagent_hub::machine::{self, HubState};
use reagent_hub::HubError;

use crate::support::{open, Backend};

async fn transitions_are_checked_and_recorded(backend: Backend) {
    let t = open(backend).await;
    let pool = t.store.pool().clone();
    let e = Election::new(&t.store, "hub", "a", Duration::from_secs(30));
    let f = e.try_acquire().await.unwrap().unwrap();
    assert!(machine::load_state(&pool, "hub").await.unwrap().is_none());
    let s = machine::ensure_state(&pool, &f).await.unwrap();
    assert_eq!((s.state, s.paused), (HubState::Resting, false));

    machine::transition(
        &pool,
        &f,
        HubState::Resting,
        HubState::Contemplating,
        "goals",
    )
    .await
    .unwrap();
    let bad = machine::transition(&pool, &f, HubState::Contemplating, HubState::Healing, "x").await;
    assert!(
        matches!(&bad, Err(HubError::InvalidTransition { .. })),
        "{bad:?}"
    );
    assert_eq!(
        bad.unwrap_err().to_string(),
        "invalid hub transition contemplating -> healing"
    );
    // A transition from a state the hub is not in is refused too.
    assert!(
        machine::transition(&pool, &f, HubState::Resting, HubState::Executing, "x")
            .await
            .is_err()
    );
    machine::transition(
        &pool,
        &f,
        HubState::Contemplating,
        HubState::Executing,
        "tasks",
    )
    .await
    .unwrap();

    let history = machine::history(&pool, "hub", 10).await.unwrap();
    let steps: Vec<(HubState, HubState, &str)> = history
        .iter()
        .map(|t| (t.from, t.to, t.reason.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            (HubState::Resting, HubState::Contemplating, "goals"),
            (HubState::Contemplating, HubState::Executing, "tasks"),
        ]
    );
    assert_eq!(machine::history(&pool, "hub", 1).await.unwrap().len(), 1);

    machine::set_paused(&pool, "hub", true).await.unwrap();
    let s = machine::load_state(&pool, "hub").await.unwrap().unwrap();
    assert_eq!((s.state, s.paused), (HubState::Executing, true));
    machine::set_paused(&pool, "hub", false).await.unwrap();
    assert!(
        !machine::load_state(&pool, "hub")
            .await
            .unwrap()
            .unwrap()
            .paused
    );
}

crate::both_backends!(transitions_are_checked_and_recorded,);
