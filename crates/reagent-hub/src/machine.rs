//! The hub's state machine: the states, the one transition table, the rule that picks the next
//! state from what the hub observes, and its persistence (`hub_state`, `hub_transitions`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::{AnyPool, Row};

use crate::clock;
use crate::error::{HubError, Result};
use crate::leader::Fence;

/// What the hub is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HubState {
    /// Nothing to do.
    Resting,
    /// Tasks are queued or running: routing them.
    Executing,
    /// Idle, and goals failed their verification: planning corrective tasks.
    Improving,
    /// Idle, and goals wait to be decomposed or verified.
    Contemplating,
    /// A health predicate failed: reclaiming, re-routing, restarting.
    Healing,
}

impl HubState {
    /// Every state.
    pub const ALL: [HubState; 5] = [
        HubState::Resting,
        HubState::Executing,
        HubState::Improving,
        HubState::Contemplating,
        HubState::Healing,
    ];

    /// The state's name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            HubState::Resting => "resting",
            HubState::Executing => "executing",
            HubState::Improving => "improving",
            HubState::Contemplating => "contemplating",
            HubState::Healing => "healing",
        }
    }
}

impl fmt::Display for HubState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HubState {
    type Err = HubError;
    fn from_str(s: &str) -> Result<Self> {
        HubState::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| HubError::Invalid(format!("unknown hub state `{s}`")))
    }
}

/// Every allowed transition (from, to). Anything else is an error. Every state may fall back
/// to `resting`, the safe state the watchdog forces.
pub const TRANSITIONS: &[(HubState, HubState)] = {
    use HubState::*;
    &[
        (Resting, Executing),
        (Resting, Improving),
        (Resting, Contemplating),
        (Resting, Healing),
        (Executing, Resting),
        (Executing, Healing),
        (Improving, Resting),
        (Improving, Executing),
        (Contemplating, Resting),
        (Contemplating, Executing),
        (Healing, Resting),
        (Healing, Executing),
    ]
};

/// Whether the table allows `from -> to`.
pub fn check_transition(from: HubState, to: HubState) -> Result<()> {
    if TRANSITIONS.contains(&(from, to)) {
        Ok(())
    } else {
        Err(HubError::InvalidTransition {
            from: from.to_string(),
            to: to.to_string(),
        })
    }
}

/// What the hub saw at a tick, as far as choosing a state goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observation {
    /// Tasks are waiting, queued or running.
    pub work: bool,
    /// A health predicate failed and something can be done about it now.
    pub health_due: bool,
    /// Goals wait to be decomposed or verified, and the cost ledger allows a model call.
    pub goals_waiting: bool,
    /// Goals failed their verification and may be corrected, and the ledger allows a call.
    pub corrections_waiting: bool,
}

/// The state to move to from `current` given `seen`, with the reason; `None` to stay.
pub fn next_state(current: HubState, seen: &Observation) -> Option<(HubState, &'static str)> {
    use HubState::*;
    let idle_target = if seen.work {
        (Executing, "work is queued or running")
    } else {
        (Resting, "nothing left to do")
    };
    match current {
        Resting | Executing if seen.health_due => Some((Healing, "a health check failed")),
        Resting if seen.work => Some((Executing, "work is queued or running")),
        Resting if seen.goals_waiting => Some((Contemplating, "goals wait for the model")),
        Resting if seen.corrections_waiting => Some((Improving, "goals failed verification")),
        Resting => None,
        Executing if !seen.work => Some((Resting, "no work queued or running")),
        Executing => None,
        Healing if !seen.health_due => Some(idle_target),
        Contemplating if !seen.goals_waiting => Some(idle_target),
        Improving if !seen.corrections_waiting => Some(idle_target),
        Healing | Contemplating | Improving => None,
    }
}

/// The persisted state of a hub group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateRecord {
    /// The current state.
    pub state: HubState,
    /// Since when (epoch ms, the database's clock).
    pub since_ms: i64,
    /// Paused by `reagent hub pause`.
    pub paused: bool,
    /// The epoch of the hub that last changed the state (0 before any hub ran).
    pub epoch: i64,
}

/// One recorded transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransitionRecord {
    /// Its sequence number.
    pub id: i64,
    /// From this state.
    pub from: HubState,
    /// To this state.
    pub to: HubState,
    /// Why.
    pub reason: String,
    /// The epoch of the hub that made it.
    pub epoch: i64,
    /// When (epoch ms).
    pub at_ms: i64,
}

/// The stored state of hub group `name`, if a hub or a pause ever wrote it.
pub async fn load_state(pool: &AnyPool, name: &str) -> Result<Option<StateRecord>> {
    let row = sqlx::query("SELECT state, since_ms, paused, epoch FROM hub_state WHERE name = $1")
        .bind(name)
        .fetch_optional(pool)
        .await
        .map_err(HubError::db("read the hub state"))?;
    let Some(row) = row else { return Ok(None) };
    let state: String = row.try_get(0).map_err(HubError::db("read the hub state"))?;
    let paused: i64 = row.try_get(2).map_err(HubError::db("read the hub state"))?;
    Ok(Some(StateRecord {
        state: state.parse()?,
        since_ms: row.try_get(1).map_err(HubError::db("read the hub state"))?,
        paused: paused != 0,
        epoch: row.try_get(3).map_err(HubError::db("read the hub state"))?,
    }))
}

/// Create the state row (resting) if missing; the stored record.
pub async fn ensure_state(pool: &AnyPool, fence: &Fence) -> Result<StateRecord> {
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    sqlx::query(
        "INSERT INTO hub_state (name, state, since_ms, paused, epoch) VALUES ($1, $2, $3, 0, $4) \
         ON CONFLICT (name) DO NOTHING",
    )
    .bind(&fence.name)
    .bind(HubState::Resting.as_str())
    .bind(now)
    .bind(fence.epoch)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("create the hub state"))?;
    tx.commit()
        .await
        .map_err(HubError::db("create the hub state"))?;
    load_state(pool, &fence.name)
        .await?
        .ok_or_else(|| HubError::NotFound(format!("no state for hub `{}`", fence.name)))
}

/// Move from `from` to `to` (checked against the table and the fence) and record why.
pub async fn transition(
    pool: &AnyPool,
    fence: &Fence,
    from: HubState,
    to: HubState,
    reason: &str,
) -> Result<()> {
    check_transition(from, to)?;
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    let moved = sqlx::query(
        "UPDATE hub_state SET state = $3, since_ms = $4, epoch = $5 WHERE name = $1 AND state = $2",
    )
    .bind(&fence.name)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(now)
    .bind(fence.epoch)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("change the hub state"))?
    .rows_affected();
    if moved != 1 {
        return Err(HubError::Invalid(format!(
            "the hub state is no longer {from}; not moving to {to}"
        )));
    }
    sqlx::query(
        "INSERT INTO hub_transitions (name, from_state, to_state, reason, epoch, at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&fence.name)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(reason)
    .bind(fence.epoch)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(HubError::db("record a hub transition"))?;
    tx.commit()
        .await
        .map_err(HubError::db("change the hub state"))
}

/// Pause or resume hub group `name` (a person's command: no lease needed). The hub keeps its
/// lease while paused but does nothing else.
pub async fn set_paused(pool: &AnyPool, name: &str, paused: bool) -> Result<()> {
    let now = clock::now_ms(pool).await?;
    sqlx::query(
        "INSERT INTO hub_state (name, state, since_ms, paused, epoch) VALUES ($1, $2, $3, $4, 0) \
         ON CONFLICT (name) DO UPDATE SET paused = excluded.paused",
    )
    .bind(name)
    .bind(HubState::Resting.as_str())
    .bind(now)
    .bind(i64::from(paused))
    .execute(pool)
    .await
    .map_err(HubError::db("pause or resume the hub"))?;
    Ok(())
}

/// The last `limit` transitions of hub group `name`, oldest first.
pub async fn history(pool: &AnyPool, name: &str, limit: u32) -> Result<Vec<TransitionRecord>> {
    let rows = sqlx::query(
        "SELECT id, from_state, to_state, reason, epoch, at_ms FROM hub_transitions \
         WHERE name = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(name)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await
    .map_err(HubError::db("read the hub history"))?;
    let mut out = rows
        .iter()
        .map(|r| {
            let from: String = r.try_get(1).map_err(HubError::db("read the hub history"))?;
            let to: String = r.try_get(2).map_err(HubError::db("read the hub history"))?;
            Ok(TransitionRecord {
                id: r.try_get(0).map_err(HubError::db("read the hub history"))?,
                from: from.parse()?,
                to: to.parse()?,
                reason: r.try_get(3).map_err(HubError::db("read the hub history"))?,
                epoch: r.try_get(4).map_err(HubError::db("read the hub history"))?,
                at_ms: r.try_get(5).map_err(HubError::db("read the hub history"))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    out.reverse();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use HubState::*;

    #[test]
    fn the_table_is_exactly_the_allowed_pairs() {
        let allowed = |from, to| {
            matches!(
                (from, to),
                (Resting, Executing | Improving | Contemplating | Healing)
                    | (Executing, Resting | Healing)
                    | (Improving | Contemplating | Healing, Resting | Executing)
            )
        };
        for from in HubState::ALL {
            for to in HubState::ALL {
                let result = check_transition(from, to);
                assert_eq!(result.is_ok(), allowed(from, to), "{from} -> {to}");
                if let Err(e) = result {
                    assert_eq!(
                        e.to_string(),
                        format!("invalid hub transition {from} -> {to}")
                    );
                }
            }
        }
    }

    #[test]
    fn every_chosen_state_is_allowed_by_the_table() {
        for from in HubState::ALL {
            for bits in 0..16u8 {
                let seen = Observation {
                    work: bits & 1 != 0,
                    health_due: bits & 2 != 0,
                    goals_waiting: bits & 4 != 0,
                    corrections_waiting: bits & 8 != 0,
                };
                if let Some((to, _)) = next_state(from, &seen) {
                    assert!(
                        check_transition(from, to).is_ok(),
                        "{from} -> {to} for {seen:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_rules_pick_the_documented_states() {
        let seen = |work, health_due, goals_waiting, corrections_waiting| Observation {
            work,
            health_due,
            goals_waiting,
            corrections_waiting,
        };
        let to = |from, o| next_state(from, &o).map(|(s, _)| s);
        assert_eq!(to(Resting, seen(false, false, false, false)), None);
        assert_eq!(to(Resting, seen(true, false, true, true)), Some(Executing));
        assert_eq!(
            to(Resting, seen(false, false, true, true)),
            Some(Contemplating)
        );
        assert_eq!(
            to(Resting, seen(false, false, false, true)),
            Some(Improving)
        );
        assert_eq!(to(Resting, seen(true, true, false, false)), Some(Healing));
        assert_eq!(to(Executing, seen(true, true, false, false)), Some(Healing));
        assert_eq!(to(Executing, seen(true, false, false, false)), None);
        assert_eq!(
            to(Executing, seen(false, false, true, false)),
            Some(Resting)
        );
        assert_eq!(to(Healing, seen(true, true, false, false)), None);
        assert_eq!(
            to(Healing, seen(true, false, false, false)),
            Some(Executing)
        );
        assert_eq!(to(Healing, seen(false, false, false, false)), Some(Resting));
        // Healing is entered from resting and executing only.
        assert_eq!(to(Contemplating, seen(false, true, true, false)), None);
        assert_eq!(
            to(Contemplating, seen(true, false, false, false)),
            Some(Executing)
        );
        assert_eq!(to(Improving, seen(false, true, false, true)), None);
        assert_eq!(
            to(Improving, seen(false, false, false, false)),
            Some(Resting)
        );
    }

    #[test]
    fn state_names_round_trip() {
        for s in HubState::ALL {
            assert_eq!(s.as_str().parse::<HubState>().unwrap(), s);
        }
        assert!("sleeping".parse::<HubState>().is_err());
    }
}
