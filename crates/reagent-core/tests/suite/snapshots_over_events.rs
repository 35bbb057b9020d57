//! A snapshot saved beside the session's events leaves its messages to them
//! (`Session::snapshot_over_events`) and is continued with `Session::from_stored`: the
//! conversation comes back whole, and every case where the events cannot rebuild it keeps the
//! messages in the snapshot or fails with a clear error.

use reagent_core::{AgentConfig, RebuildError, Session, SessionSnapshot, Step};
use reagent_protocol::{CancellationToken, Event, Outcome};
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::json;

use super::harness::{recording_sink, MODEL};
use super::sessions::{completed_run, fixture_with, Fixture};

fn read_then_answer() -> ScriptBuilder {
    ScriptBuilder::new()
        .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
        .turn(Turn::text("It starts with orchid."))
        .turn(Turn::text("Second line."))
}

/// A finished first run: the session and the events it emitted.
async fn first_run(config: AgentConfig) -> (Fixture, Session, Vec<Event>) {
    let f = fixture_with(read_then_answer(), config).await;
    let (session, events) = completed_run(&f, "Read notes.txt.").await;
    (f, session, events)
}

fn messages(session: &Session) -> Vec<reagent_protocol::Message> {
    session.messages().iter().map(|m| (**m).clone()).collect()
}

fn round_trip(snapshot: &SessionSnapshot) -> SessionSnapshot {
    serde_json::from_str(&serde_json::to_string(snapshot).unwrap()).unwrap()
}

#[tokio::test]
async fn the_messages_come_back_from_the_events_and_the_session_goes_on() {
    let (f, mut session, events) = first_run(AgentConfig::new(MODEL)).await;
    let whole = serde_json::to_string(&session.snapshot()).unwrap();
    let lean = session.snapshot_over_events(true);
    let lean_json = serde_json::to_string(&lean).unwrap();
    // The task is only in the messages (the repetition detector keeps the last few results).
    assert!(
        whole.contains("Read notes.txt."),
        "the whole snapshot holds the messages"
    );
    assert!(
        !lean_json.contains("Read notes.txt."),
        "the messages are left to the events: {lean_json}"
    );
    assert!(lean_json.len() < whole.len());

    let stored = round_trip(&lean);
    assert!(stored.needs_events());
    assert_eq!(
        Session::resume(f.agent.clone(), f.workspace.clone(), stored.clone()).err(),
        Some(RebuildError::MessagesNotRestored),
        "resuming without the events is refused, not an empty conversation"
    );
    let mut resumed =
        Session::from_stored(f.agent.clone(), f.workspace.clone(), Some(stored), &events).unwrap();
    assert_eq!(messages(&resumed), messages(&session));
    resumed.push_user("And the second line?");
    let (sink, _) = recording_sink();
    let next = resumed.run_to_end(&sink, &CancellationToken::new()).await;
    assert_eq!(next.outcome, Outcome::Completed);
    assert_eq!(next.answer, "Second line.");
    let sent = f.server.requests();
    let last = serde_json::to_string(sent.last().unwrap()).unwrap();
    assert!(
        last.contains("second line") && last.contains("And the second line?"),
        "the follow-up's request carries the rebuilt conversation: {last}"
    );
}

#[tokio::test]
async fn events_that_were_not_all_stored_keep_the_messages_in_every_later_snapshot() {
    let (_f, mut session, _events) = first_run(AgentConfig::new(MODEL)).await;
    let after_a_gap = session.snapshot_over_events(false);
    assert!(!after_a_gap.needs_events());
    assert_eq!(after_a_gap.messages(), messages(&session));
    let later = round_trip(&session.snapshot_over_events(true));
    assert!(
        !later.needs_events(),
        "the events have a gap: later snapshots stay whole"
    );
}

#[tokio::test]
async fn a_tool_result_cut_at_the_event_cap_keeps_the_messages_in_the_snapshot() {
    let mut config = AgentConfig::new(MODEL);
    config.event_output_cap = 8;
    let (_f, mut session, _events) = first_run(config).await;
    let snapshot = round_trip(&session.snapshot_over_events(true));
    assert!(!snapshot.needs_events());
    assert_eq!(snapshot.messages(), messages(&session));
}

#[tokio::test]
async fn events_that_rebuild_less_than_the_snapshot_had_are_an_error() {
    let (f, mut session, events) = first_run(AgentConfig::new(MODEL)).await;
    let stored = round_trip(&session.snapshot_over_events(true));
    // The last tool result's events lost (as when a run of the session was deleted).
    let fewer: Vec<Event> = events
        .iter()
        .filter(|e| e.type_name() != "tool_result")
        .cloned()
        .collect();
    let err = Session::from_stored(f.agent.clone(), f.workspace.clone(), Some(stored), &fewer)
        .err()
        .expect("a shorter conversation is refused");
    assert!(matches!(err, RebuildError::Mismatch { .. }), "{err}");
    assert!(err.to_string().contains("deleted"), "{err}");
}

#[tokio::test]
async fn a_later_run_killed_before_it_saved_continues_from_the_events() {
    let (f, mut session, mut events) = first_run(AgentConfig::new(MODEL)).await;
    let stored = round_trip(&session.snapshot_over_events(true));
    // A follow-up run that was killed after its first model call: its events are stored, the
    // session was not saved again.
    session.push_user("And the second line?");
    let (sink, more) = recording_sink();
    assert!(matches!(
        session.step(&sink, &CancellationToken::new()).await,
        Step::Continue | Step::Finished(_)
    ));
    events.extend(more.lock().unwrap().iter().cloned());
    let resumed =
        Session::from_stored(f.agent.clone(), f.workspace.clone(), Some(stored), &events).unwrap();
    assert!(
        messages(&resumed)
            .iter()
            .any(|m| m.content == "And the second line?"),
        "the killed run's follow-up is kept"
    );
}
