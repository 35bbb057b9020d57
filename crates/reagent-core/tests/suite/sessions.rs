//! A session as a value: follow-ups, a cancelled run that does not end the session, stepping,
//! and a snapshot that is written as JSON and resumed by a new session.

use std::sync::Arc;
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, Session, SessionSnapshot, Step};
use reagent_protocol::{CancellationToken, ErrorKind, EventKind, Outcome, UserMessageReason};
use reagent_providers::ollama::OllamaProvider;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
use serde_json::{json, Value};

use super::harness::{
    check_event_invariants, check_events_rebuild, client, files, recording_sink, MODEL,
};

pub(super) struct Fixture {
    pub(super) server: ScriptedOllama,
    pub(super) agent: Arc<Agent>,
    pub(super) workspace: Arc<Workspace>,
    _dir: tempfile::TempDir,
}

async fn fixture(script: ScriptBuilder) -> Fixture {
    fixture_with(script, AgentConfig::new(MODEL)).await
}

/// A scripted server and an agent of `config` over a workspace holding `notes.txt`.
pub(super) async fn fixture_with(script: ScriptBuilder, config: AgentConfig) -> Fixture {
    let server = ScriptedOllama::start(script).await.unwrap();
    let provider =
        OllamaProvider::new(&server.base_url(), client(Duration::from_secs(10))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    files(dir.path(), &[("notes.txt", "orchid\nsecond line\n")]);
    let agent = Arc::new(Agent::new(
        Arc::new(provider),
        Arc::new(ToolRegistry::workspace_tools(&ToolsConfig::default())),
        config,
    ));
    let workspace = Arc::new(Workspace::open(dir.path()).unwrap());
    Fixture {
        server,
        agent,
        workspace,
        _dir: dir,
    }
}

/// A new session of `f` run to a completed end on `task`, with the events it emitted.
pub(super) async fn completed_run(
    f: &Fixture,
    task: &str,
) -> (Session, Vec<reagent_protocol::Event>) {
    let mut session = Session::new(f.agent.clone(), f.workspace.clone());
    let (sink, events) = recording_sink();
    let result = session.run(task, &sink, &CancellationToken::new()).await;
    assert_eq!(result.outcome, Outcome::Completed);
    let events = events.lock().unwrap().clone();
    (session, events)
}

/// The chat requests the server saw (`/api/chat` bodies).
fn chats(server: &ScriptedOllama) -> Vec<Value> {
    server.requests()
}

fn contents(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_follow_up_continues_the_conversation_as_a_new_run() {
    let f = fixture(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("The first line is orchid."))
            .turn(Turn::text("The second line is 'second line'.")),
    )
    .await;
    let mut session = Session::new(f.agent.clone(), f.workspace.clone());
    let (sink, first_events) = recording_sink();
    let first = session
        .run(
            "What is the first line of notes.txt?",
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(first.outcome, Outcome::Completed);
    assert_eq!(first.session_id, session.id());
    check_event_invariants(&first_events.lock().unwrap(), &first);

    session.push_user("And the second line?");
    let (sink, second_events) = recording_sink();
    let second = session.run_to_end(&sink, &CancellationToken::new()).await;
    assert_eq!(second.outcome, Outcome::Completed);
    assert_eq!(second.answer, "The second line is 'second line'.");
    assert_ne!(first.run_id, second.run_id, "each run has its own id");
    assert_eq!(second.session_id, first.session_id);
    let second_events = second_events.lock().unwrap().clone();
    check_event_invariants(&second_events, &second);
    assert!(matches!(
        &second_events[0].kind,
        EventKind::RunStarted { follow_up: true, session_id, .. } if session_id == session.id()
    ));
    assert!(second_events.iter().any(|e| matches!(
        &e.kind,
        EventKind::UserMessage { reason: UserMessageReason::FollowUp, content } if content == "And the second line?"
    )));
    // The follow-up request carries the whole first run, then the follow-up.
    let requests = chats(&f.server);
    let last = contents(requests.last().unwrap());
    assert_eq!(last[1], "What is the first line of notes.txt?");
    assert!(last.iter().any(|c| c.contains("orchid")));
    assert_eq!(last.last().unwrap(), "And the second line?");
    // Both runs' events together rebuild the session's conversation.
    let all: Vec<_> = first_events
        .lock()
        .unwrap()
        .iter()
        .chain(&second_events)
        .cloned()
        .collect();
    check_events_rebuild(&all, &session);
}

#[tokio::test]
async fn cancelling_ends_the_run_but_not_the_session() {
    let f = fixture(
        ScriptBuilder::new()
            .turn(Turn::text("too late").with_delay(Duration::from_secs(5)))
            .turn(Turn::text("Here I am.")),
    )
    .await;
    let mut session = Session::new(f.agent.clone(), f.workspace.clone());
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        stopper.cancel();
    });
    let (sink, events) = recording_sink();
    let started = std::time::Instant::now();
    let cancelled = session.run("Say something.", &sink, &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(cancelled.outcome, Outcome::Cancelled);
    assert_eq!(
        cancelled.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::Cancelled)
    );
    check_event_invariants(&events.lock().unwrap(), &cancelled);
    assert!(!session.is_running());

    session.push_user("Are you there?");
    let (sink, _) = recording_sink();
    let next = session.run_to_end(&sink, &CancellationToken::new()).await;
    assert_eq!(next.outcome, Outcome::Completed);
    assert_eq!(next.answer, "Here I am.");
}

#[tokio::test]
async fn a_snapshot_written_as_json_resumes_in_a_new_session_mid_run() {
    let f = fixture(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "notes.txt"})))
            .turn(Turn::text("It starts with orchid.")),
    )
    .await;
    let mut session = Session::new(f.agent.clone(), f.workspace.clone());
    session.push_user("Read notes.txt.");
    let (sink, events) = recording_sink();
    let cancel = CancellationToken::new();
    // One iteration: the model calls read_file and the result is in the history.
    assert!(matches!(session.step(&sink, &cancel).await, Step::Continue));
    assert!(session.is_running());
    let json = serde_json::to_string(&session.snapshot()).unwrap();
    let before: Vec<_> = session.messages().iter().map(|m| (**m).clone()).collect();
    drop(session);

    let snapshot: SessionSnapshot = serde_json::from_str(&json).unwrap();
    assert!(snapshot.running().is_some());
    let mut resumed = Session::resume(f.agent.clone(), f.workspace.clone(), snapshot).unwrap();
    let after: Vec<_> = resumed.messages().iter().map(|m| (**m).clone()).collect();
    assert_eq!(after, before, "the conversation survives the round trip");
    let result = loop {
        match resumed.step(&sink, &cancel).await {
            Step::Continue => {}
            Step::Finished(result) => break *result,
            Step::Idle => panic!("the resumed run went idle"),
        }
    };
    assert_eq!(result.outcome, Outcome::Completed);
    assert_eq!(result.answer, "It starts with orchid.");
    assert_eq!(
        (result.iterations, result.tool_calls),
        (2, 1),
        "counters carried over"
    );
    check_event_invariants(&events.lock().unwrap(), &result);
    // The resumed request is the whole conversation: the tool result made before the snapshot
    // is not lost, and no /api/show was needed again.
    let requests = chats(&f.server);
    assert!(contents(requests.last().unwrap())
        .iter()
        .any(|c| c.contains("orchid")));
    let shows = f
        .server
        .server()
        .recorded()
        .iter()
        .filter(|r| r.path == "/api/show")
        .count();
    assert_eq!(shows, 1);
}

#[tokio::test]
async fn a_session_with_nothing_to_do_is_idle() {
    let f = fixture(ScriptBuilder::new().turn(Turn::text("unused"))).await;
    let mut session = Session::new(f.agent.clone(), f.workspace.clone());
    let (sink, events) = recording_sink();
    assert!(matches!(
        session.step(&sink, &CancellationToken::new()).await,
        Step::Idle
    ));
    let result = session.run_to_end(&sink, &CancellationToken::new()).await;
    assert_eq!(result.error.map(|e| e.kind), Some(ErrorKind::Internal));
    assert!(events.lock().unwrap().is_empty(), "no run, no events");
}

#[tokio::test]
async fn a_recorded_run_replays_identically_and_a_changed_guardrail_is_reported() {
    let script = ScriptBuilder::new()
        .turns((0..3).map(|_| Turn::tool_call("read_file", json!({"path": "notes.txt"}))))
        .turn(Turn::text("It says orchid."));
    let f = fixture(script).await;
    let (_session, events) = completed_run(&f, "Read notes.txt.").await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e.kind, EventKind::Guardrail { .. })),
        "a repetition hint was recorded"
    );
    let specs = ToolRegistry::workspace_tools(&ToolsConfig::default()).specs();

    let same = reagent_core::replay(
        &events,
        AgentConfig::new(MODEL),
        &specs,
        f.workspace.clone(),
    )
    .await
    .unwrap();
    assert_eq!(same.divergence, None, "{same:?}");
    assert!(same.decisions >= 6, "{same:?}");

    // Today's loop with a stricter repetition guardrail hints one call earlier.
    let mut stricter = AgentConfig::new(MODEL);
    stricter.repetition_threshold = 2;
    let changed = reagent_core::replay(&events, stricter, &specs, f.workspace.clone())
        .await
        .unwrap();
    let d = changed.divergence.expect("a divergence");
    assert_eq!(d.iteration, 2);
    assert_eq!(d.replayed.unwrap().to_string(), "guardrail repetition hint");
    assert!(d
        .recorded
        .unwrap()
        .to_string()
        .starts_with("calls read_file"));
}
