//! A session as a value that outlives its process: [`SessionSnapshot`], taken whole
//! ([`Session::snapshot`]) or beside stored events without the messages they already hold
//! ([`Session::snapshot_over_events`]), and the ways back ([`Session::resume`],
//! [`Session::from_events`], [`Session::from_stored`]).

use std::sync::Arc;
use std::time::Instant;

use reagent_protocol::{EventKind, Message, WireCache};
use reagent_tools::Workspace;
use serde::{Deserialize, Serialize};
use tracing::Span;

use super::{RunState, Session, SessionSettings, Settled};
use crate::agent::Agent;
use crate::guardrails::RepetitionDetector;
use crate::history::{History, OPENING_MESSAGES};

/// The version of [`SessionSnapshot`]'s layout (2: the messages may be left to the events).
pub const SNAPSHOT_VERSION: u32 = 2;

/// A session's whole state, serializable: resume it with [`Session::resume`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionSnapshot {
    /// [`SNAPSHOT_VERSION`] of the writer.
    pub version: u32,
    /// The session's id.
    pub session_id: String,
    /// The settings, once the first run has started.
    pub settings: Option<SessionSettings>,
    /// The conversation, with its compaction state and token calibration.
    pub(crate) history: History,
    pub(crate) repetition: RepetitionDetector,
    /// User messages waiting to start a run.
    pub pending: Vec<String>,
    /// The run in progress, if the snapshot was taken mid-run.
    pub(crate) run: Option<RunState>,
    /// Whether the events of the session's runs hold every message whole (no tool result was
    /// cut at the event output cap). Snapshots before version 2 read as `false`.
    #[serde(default)]
    pub(crate) events_whole: bool,
    /// Set when the messages were left out because the events hold them
    /// ([`Session::snapshot_over_events`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) messages_in_events: Option<MessagesInEvents>,
}

/// What a snapshot that left its messages to the events knows of them, to check the rebuild.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MessagesInEvents {
    /// How many messages the conversation held.
    messages: usize,
    /// Their text bytes ([`History::text_bytes`]).
    text_bytes: usize,
}

impl SessionSnapshot {
    /// The conversation's messages.
    pub fn messages(&self) -> Vec<Message> {
        self.history
            .messages()
            .iter()
            .map(|m| (**m).clone())
            .collect()
    }

    /// The id of the run that was in progress when the snapshot was taken.
    pub fn running(&self) -> Option<&str> {
        self.run.as_ref().map(|r| r.run_id.as_str())
    }

    /// From now on the session's events do not hold its whole conversation (a run of it is
    /// about to be deleted): every later snapshot keeps its messages. Call it after
    /// [`SessionSnapshot::restore_messages`] and save the snapshot again.
    pub fn detach_from_events(&mut self) {
        self.events_whole = false;
    }

    /// Whether the messages were left to the events: give them with
    /// [`SessionSnapshot::restore_messages`] before [`Session::resume`].
    pub fn needs_events(&self) -> bool {
        self.messages_in_events.is_some()
    }

    /// Put back the messages a snapshot left to the events, rebuilt from `events` (the events
    /// of the session's runs, in order, up to the snapshot). Errors when they do not rebuild
    /// the conversation the snapshot was taken of (a run deleted meanwhile, events missing);
    /// a snapshot that holds its messages is left as it is.
    pub fn restore_messages<'a>(
        &mut self,
        events: impl IntoIterator<Item = &'a reagent_protocol::Event>,
    ) -> Result<(), crate::RebuildError> {
        let Some(expected) = self.messages_in_events else {
            return Ok(());
        };
        let messages = crate::rebuild_transcript(events)?;
        let rebuilt = History::from_messages(messages, self.history.pinned());
        let found = MessagesInEvents {
            messages: rebuilt.messages().len(),
            text_bytes: rebuilt.text_bytes(),
        };
        if found != expected {
            return Err(crate::RebuildError::Mismatch {
                expected: (expected.messages, expected.text_bytes),
                found: (found.messages, found.text_bytes),
            });
        }
        self.history.replace_messages(rebuilt);
        self.messages_in_events = None;
        Ok(())
    }
}

impl Session {
    /// Continue a session from `snapshot`, with `agent` (normally configured as the one that
    /// took it) over `workspace`. A run that was in progress goes on at its next step. Errors
    /// when the snapshot left its messages to the events and they were not restored
    /// ([`SessionSnapshot::restore_messages`]).
    pub fn resume(
        agent: Arc<Agent>,
        workspace: Arc<Workspace>,
        snapshot: SessionSnapshot,
    ) -> Result<Self, crate::RebuildError> {
        if snapshot.needs_events() {
            return Err(crate::RebuildError::MessagesNotRestored);
        }
        let mut history = snapshot.history;
        history.recount();
        let mut session = Session {
            id: snapshot.session_id,
            settled: snapshot.settings.map(|s| Settled::new(&agent, s)),
            agent,
            workspace,
            history,
            repetition: snapshot.repetition,
            wire: WireCache::default(),
            pending: snapshot.pending.into(),
            run: None,
            events_whole: snapshot.events_whole,
            attempt: None,
        };
        session.run = snapshot.run.map(|mut run| {
            run.resumed_at = Instant::now();
            run.span = session.run_span(&run.run_id);
            run
        });
        Ok(session)
    }

    /// Continue a session whose snapshot was never saved (its process was killed) from the
    /// events of its runs, in order: the conversation is rebuilt from them
    /// ([`rebuild_transcript`](crate::rebuild_transcript)); the tool mode and window are settled
    /// again at the next run.
    pub fn from_events(
        agent: Arc<Agent>,
        workspace: Arc<Workspace>,
        events: &[reagent_protocol::Event],
    ) -> Result<Self, crate::RebuildError> {
        let messages = crate::rebuild_transcript(events)?;
        let mut session = Session::new(agent, workspace);
        if let Some(id) = events.iter().find_map(|e| match &e.kind {
            EventKind::RunStarted { session_id, .. } if !session_id.is_empty() => {
                Some(session_id.clone())
            }
            _ => None,
        }) {
            session.id = id;
        }
        session.history = History::from_messages(messages, OPENING_MESSAGES);
        Ok(session)
    }

    /// Continue a stored session: from its saved snapshot (with its messages restored from
    /// `events` when it left them to the events), else from `events` alone — the events of the
    /// session's runs, in order (load them only when there is no snapshot or
    /// [`SessionSnapshot::needs_events`]). When the events rebuild a longer conversation than
    /// the snapshot left to them (a later run was killed before it saved the session), the
    /// session continues from the events; a shorter one (a run deleted) is an error.
    pub fn from_stored(
        agent: Arc<Agent>,
        workspace: Arc<Workspace>,
        snapshot: Option<SessionSnapshot>,
        events: &[reagent_protocol::Event],
    ) -> Result<Self, crate::RebuildError> {
        let Some(mut snapshot) = snapshot else {
            return Session::from_events(agent, workspace, events);
        };
        match snapshot.restore_messages(events) {
            Ok(()) => Session::resume(agent, workspace, snapshot),
            Err(crate::RebuildError::Mismatch { expected, found }) if found.0 > expected.0 => {
                Session::from_events(agent, workspace, events)
            }
            Err(e) => Err(e),
        }
    }

    /// The whole state, serializable.
    pub fn snapshot(&self) -> SessionSnapshot {
        self.snapshot_with(self.history.clone(), None)
    }

    /// The state for a store that also holds every event of the session's runs: the messages
    /// are left out (the events rebuild them, so the conversation is not stored twice) when
    /// `events_stored` says none was lost and none of the session's tool results was cut at
    /// the event output cap; otherwise the whole [`Session::snapshot`], and from then on every
    /// snapshot of the session is whole (its events have a gap).
    pub fn snapshot_over_events(&mut self, events_stored: bool) -> SessionSnapshot {
        self.events_whole &= events_stored;
        if !self.events_whole {
            return self.snapshot();
        }
        let left_out = MessagesInEvents {
            messages: self.history.messages().len(),
            text_bytes: self.history.text_bytes(),
        };
        self.snapshot_with(self.history.without_messages(), Some(left_out))
    }

    fn snapshot_with(
        &self,
        history: History,
        messages_in_events: Option<MessagesInEvents>,
    ) -> SessionSnapshot {
        SessionSnapshot {
            version: SNAPSHOT_VERSION,
            session_id: self.id.clone(),
            settings: self.settled.as_ref().map(|s| s.settings.clone()),
            history,
            repetition: self.repetition.clone(),
            pending: self.pending.iter().cloned().collect(),
            run: self.run.as_ref().map(|run| RunState {
                elapsed_before: run.elapsed(),
                span: Span::none(),
                ..run.clone()
            }),
            events_whole: self.events_whole,
            messages_in_events,
        }
    }
}
