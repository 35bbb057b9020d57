//! Approvals answered over HTTP: a run's `run_command` that matches an `ask` rule waits until
//! `POST /v1/approvals/{id}` answers it (or the run is cancelled, which denies it).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use reagent_protocol::CancellationToken;
use reagent_tools::{Approval as Asked, Approver, Verdict};
use serde_json::json;

use crate::api::{Approval, Decision};

/// How often a waiting approval looks at its run's cancellation.
const CANCEL_POLL: Duration = Duration::from_millis(100);

#[derive(Default)]
struct Pending {
    /// By approval id: what is shown, and where the answer goes.
    open: BTreeMap<String, (Approval, SyncSender<bool>)>,
    /// By run: answers asked for and not yet awaited, in order.
    waiting: HashMap<String, VecDeque<(String, Receiver<bool>)>>,
}

/// The approvals of every run of a server.
#[derive(Default, Clone)]
pub(crate) struct Approvals(Arc<Mutex<Pending>>);

impl Approvals {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record that `run_id` asks approval `id` for `command` (from its `approval_requested`
    /// event, emitted just before the run's approver is called).
    pub(crate) fn requested(&self, run_id: &str, id: &str, command: &str) {
        let (tx, rx) = sync_channel(1);
        let approval = Approval {
            id: id.to_owned(),
            run_id: run_id.to_owned(),
            tool: "run_command".to_owned(),
            summary: command.to_owned(),
            arguments: json!({ "command": command }),
            requested_at: humantime::format_rfc3339_millis(std::time::SystemTime::now())
                .to_string(),
        };
        let mut p = self.lock();
        p.open.insert(id.to_owned(), (approval, tx));
        p.waiting
            .entry(run_id.to_owned())
            .or_default()
            .push_back((id.to_owned(), rx));
    }

    /// Pending approvals, by id.
    pub(crate) fn list(&self) -> Vec<Approval> {
        self.lock().open.values().map(|(a, _)| a.clone()).collect()
    }

    /// Answer approval `id`; false when no such approval waits.
    pub(crate) fn decide(&self, id: &str, decision: Decision) -> bool {
        let Some((_, tx)) = self.lock().open.remove(id) else {
            return false;
        };
        // An error means the run stopped waiting meanwhile (cancelled).
        let _ = tx.try_send(decision == Decision::Allow);
        true
    }

    /// Block until the oldest approval `run_id` asked for is answered, or `cancel` fires (a
    /// denial). Called on the tool's blocking thread.
    fn wait(&self, run_id: &str, cancel: &CancellationToken) -> bool {
        let next = {
            let mut p = self.lock();
            let next = p.waiting.get_mut(run_id).and_then(VecDeque::pop_front);
            if p.waiting.get(run_id).is_some_and(VecDeque::is_empty) {
                p.waiting.remove(run_id);
            }
            next
        };
        let Some((id, rx)) = next else {
            return false;
        };
        let approved = loop {
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(answer) => break answer,
                Err(RecvTimeoutError::Disconnected) => break false,
                Err(RecvTimeoutError::Timeout) if cancel.is_cancelled() => break false,
                Err(RecvTimeoutError::Timeout) => {}
            }
        };
        self.lock().open.remove(&id);
        approved
    }

    /// Forget every approval of `run_id` (the run ended).
    pub(crate) fn forget_run(&self, run_id: &str) {
        let mut p = self.lock();
        p.open.retain(|_, (a, _)| a.run_id != run_id);
        p.waiting.remove(run_id);
    }
}

/// The approver of one run.
pub(crate) enum RunApprover {
    /// Waits for an answer over HTTP.
    Ask {
        approvals: Approvals,
        run_id: String,
        cancel: CancellationToken,
    },
    /// Always the same answer.
    Fixed(bool),
}

impl Approver for RunApprover {
    fn approve(&self, _request: &Asked) -> Verdict {
        let allowed = match self {
            RunApprover::Ask {
                approvals,
                run_id,
                cancel,
            } => approvals.wait(run_id, cancel),
            RunApprover::Fixed(answer) => *answer,
        };
        if allowed {
            Verdict::Allow
        } else {
            Verdict::DENY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(c: &str) -> Asked {
        Asked::Command {
            command: c.to_owned(),
        }
    }

    #[test]
    fn an_answer_reaches_the_waiting_run_and_a_cancel_denies() {
        let approvals = Approvals::default();
        let cancel = CancellationToken::new();
        let approver = RunApprover::Ask {
            approvals: approvals.clone(),
            run_id: "r1".into(),
            cancel: cancel.clone(),
        };
        approvals.requested("r1", "r1-1", "make test");
        assert_eq!(approvals.list().len(), 1);
        assert_eq!(approvals.list()[0].summary, "make test");
        let waiter = std::thread::spawn(move || approver.approve(&command("make test")).allowed());
        assert!(approvals.decide("r1-1", Decision::Allow));
        assert!(waiter.join().unwrap());
        assert!(approvals.list().is_empty());
        assert!(!approvals.decide("r1-1", Decision::Deny), "answered twice");

        let approver = RunApprover::Ask {
            approvals: approvals.clone(),
            run_id: "r1".into(),
            cancel: cancel.clone(),
        };
        approvals.requested("r1", "r1-2", "rm -rf build");
        let waiter =
            std::thread::spawn(move || approver.approve(&command("rm -rf build")).allowed());
        cancel.cancel();
        assert!(!waiter.join().unwrap());
        assert!(approvals.list().is_empty());
    }
}
