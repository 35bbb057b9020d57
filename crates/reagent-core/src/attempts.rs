//! Best of N: when a run's verification fails after its retries (`partial_pass`,
//! `verification_failed`; any other ending is final), the workspace is restored
//! from the run's checkpoint and the task is tried again, as a new run with a new seed; the
//! workspace ends with the best attempt's files (by verification: `verified`, then the most
//! checks passed, then the earliest).
//!
//! [`Attempts`] is stepped by its caller, which runs each attempt's [`Session`] with its own
//! event sink (each attempt is a run of its own; the first attempt's run id is the others'
//! `parent_run_id` in their `attempt` event):
//!
//! ```no_run
//! # async fn demo(agent: std::sync::Arc<reagent_core::Agent>, workspace: std::sync::Arc<reagent_tools::Workspace>) {
//! use reagent_core::{Attempts, EventSink};
//! let mut attempts = Attempts::new(agent, workspace, 3);
//! while let Some(mut session) = attempts.next_session() {
//!     let sink = EventSink::new(&reagent_core::new_run_id(), std::sync::Arc::new(|_| {}));
//!     let result = session.run("fix it so that `make test` passes", &sink, &Default::default()).await;
//!     attempts.finished(result).expect("workspace restored");
//! }
//! let summary = attempts.finish();
//! println!("best: attempt {} ({:?})", summary.best + 1, summary.results[summary.best].outcome);
//! # }
//! ```

use std::sync::Arc;

use reagent_protocol::{EventKind, Outcome};
use reagent_tools::Workspace;

use crate::agent::Agent;
use crate::checkpoint::{Checkpoint, CheckpointError, Restored};
use crate::result::RunResult;
use crate::session::Session;

/// Attempts at one task (see the module docs).
pub struct Attempts {
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
    max: u32,
    results: Vec<RunResult>,
    /// The best attempt so far, and its files captured after it ended (when it changed any
    /// and another attempt followed).
    best: Option<(usize, Option<Checkpoint>)>,
    /// No further attempt: one verified, or one could not be undone.
    done: bool,
}

/// How the attempts went.
#[derive(Debug)]
pub struct AttemptSummary {
    /// Every attempt's result, in order.
    pub results: Vec<RunResult>,
    /// The index of the best attempt in `results`, whose files the workspace holds.
    pub best: usize,
    /// What putting the best attempt's files back did, when it was not the last attempt.
    pub restored: Option<Restored>,
    /// Why the best attempt's files could not be put back (the workspace then holds the
    /// last attempt's, or the start's).
    pub error: Option<CheckpointError>,
}

impl Attempts {
    /// Up to `max` (at least 1) attempts of `agent` over `workspace`. Checkpoints must be on
    /// in the agent's configuration for the workspace to be restored between attempts.
    pub fn new(agent: Arc<Agent>, workspace: Arc<Workspace>, max: u32) -> Self {
        Attempts {
            agent,
            workspace,
            max: max.max(1),
            results: Vec::new(),
            best: None,
            done: false,
        }
    }

    /// The session of the next attempt (its first run emits an `attempt` event after
    /// `run_started`), or `None` when no attempt follows.
    pub fn next_session(&mut self) -> Option<Session> {
        let number = u32::try_from(self.results.len()).ok()? + 1;
        if self.done || number > self.max {
            return None;
        }
        let base = self.agent.config.options.seed;
        // Attempt 1 keeps the configured seed; each later one samples with another.
        let seed = match number {
            1 => base,
            n => Some(base.unwrap_or(0) + i64::from(n - 1)),
        };
        let agent = if seed == base {
            self.agent.clone()
        } else {
            Arc::new(self.agent.with_seed(seed))
        };
        let mut session = Session::new(agent, self.workspace.clone());
        session.set_attempt(EventKind::Attempt {
            number,
            of: self.max,
            parent_run_id: self.results.first().map(|r| r.run_id.clone()),
            seed,
        });
        Some(session)
    }

    /// Record how an attempt ended. When another attempt follows, the workspace is restored
    /// from this attempt's checkpoint (after its files were captured, if it is the best so
    /// far). Returns whether another attempt follows; an error when the workspace could not be
    /// restored (no attempt follows then).
    pub fn finished(&mut self, result: RunResult) -> Result<bool, CheckpointError> {
        let index = self.results.len();
        let better = self
            .best
            .as_ref()
            .is_none_or(|(best, _)| score(&result) > score(&self.results[*best]));
        // Only a failed verification is tried again.
        let failed = matches!(
            result.outcome,
            Outcome::PartialPass | Outcome::VerificationFailed
        );
        let last = !failed || index + 1 >= self.max as usize;
        let checkpoint = result.checkpoint.clone();
        self.results.push(result);
        if last {
            self.done = true;
            if better {
                self.replace_best(index, None);
            }
            return Ok(false);
        }
        let Some(checkpoint) = checkpoint else {
            // Nothing was changed: nothing to keep or undo.
            if better {
                self.replace_best(index, None);
            }
            return Ok(true);
        };
        let undo = (|| {
            if better {
                let kept = checkpoint.capture(&format!("{}-result", checkpoint.id))?;
                self.replace_best(index, Some(kept));
            }
            // Its checkpoint stays: `reagent runs undo` of any attempt restores the start.
            checkpoint.restore().map(|_| ())
        })();
        if undo.is_err() {
            self.done = true;
        }
        undo.map(|()| true)
    }

    fn replace_best(&mut self, index: usize, kept: Option<Checkpoint>) {
        if let Some((_, Some(old))) = self.best.replace((index, kept)) {
            let _ = old.discard();
        }
    }

    /// After the last attempt: when an earlier attempt was better, undo the last one and put
    /// the best one's files back (an error doing so is in the summary).
    pub fn finish(mut self) -> AttemptSummary {
        let (best, kept) = self.best.take().unwrap_or((0, None));
        let last = self.results.len().saturating_sub(1);
        let put_back = || -> Result<Option<Restored>, CheckpointError> {
            if best == last {
                return Ok(None);
            }
            if let Some(undo) = self.results.get(last).and_then(|r| r.checkpoint.as_ref()) {
                undo.restore()?;
            }
            kept.as_ref().map(Checkpoint::restore).transpose()
        };
        let (restored, error) = match put_back() {
            Ok(restored) => (restored, None),
            Err(e) => (None, Some(e)),
        };
        if let Some(kept) = kept {
            let _ = kept.discard();
        }
        AttemptSummary {
            results: self.results,
            best,
            restored,
            error,
        }
    }
}

/// How good an attempt is: verified first, then the number of checks that passed.
fn score(result: &RunResult) -> (bool, usize) {
    (
        result.outcome == Outcome::Verified,
        result.checks.iter().filter(|c| c.passed).count(),
    )
}
