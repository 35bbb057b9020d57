use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use reagent_protocol::{Event, EventKind};

use super::*;
use crate::approval::ApprovalKind;

/// Drives an app with keys a human types: each key 100 ms after the one before.
struct Typist {
    app: App,
    clock: Instant,
}

impl Typist {
    fn new() -> Self {
        Typist {
            app: App::new(
                Status::new("qwen3:8b", "ollama", ApprovalMode::Ask),
                InputHistory::default(),
            ),
            clock: Instant::now(),
        }
    }

    fn tick(&mut self) -> Instant {
        self.clock += Duration::from_millis(100);
        self.clock
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Vec<Effect> {
        let at = self.tick();
        self.app
            .update(AppEvent::Key(KeyEvent::new(code, modifiers), at))
    }

    fn press(&mut self, code: KeyCode) -> Vec<Effect> {
        self.key(code, KeyModifiers::NONE)
    }

    fn ctrl(&mut self, c: char) -> Vec<Effect> {
        self.key(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            assert!(self.press(KeyCode::Char(c)).is_empty());
        }
    }

    fn run(&mut self, kind: EventKind) {
        assert!(self
            .app
            .update(AppEvent::Run(Box::new(Event::new("r", 1, kind))))
            .is_empty());
    }

    fn end(&mut self, outcome: &str, error: Option<&str>) -> Vec<Effect> {
        self.app.update(AppEvent::TurnEnded {
            outcome: outcome.into(),
            error: error.map(str::to_owned),
        })
    }

    fn approval(&mut self, id: u64, command: &str) -> Vec<Effect> {
        self.app.update(AppEvent::Approval(ApprovalRequest {
            id,
            kind: ApprovalKind::Command {
                command: command.into(),
            },
        }))
    }

    /// The renderer showed the prompt now; the person reads it before answering.
    fn shown(&mut self) {
        let at = self.tick();
        self.app.prompt_shown(at);
        self.clock += crate::approval::ANSWER_GRACE;
    }
}

fn send(text: &str) -> Vec<Effect> {
    vec![Effect::Send(text.into())]
}

#[test]
fn a_turn_streams_then_lands_in_the_scrollback() {
    let mut t = Typist::new();
    t.type_text("hi");
    assert_eq!(t.press(KeyCode::Enter), send("hi"));
    assert_eq!(t.app.phase, Phase::Working);
    assert!(t.app.editor.is_empty());
    t.run(EventKind::RunStarted {
        task: "hi".into(),
        model: "qwen3:8b".into(),
        provider: "ollama".into(),
        tool_mode: "native".into(),
        workspace: "/w".into(),
        num_ctx: 8192,
        tools: vec![],
        session_id: "s".into(),
        system_prompt: String::new(),
        follow_up: false,
    });
    t.run(EventKind::ReasoningDelta { text: "hmm".into() });
    t.run(EventKind::TextDelta { text: "Hel".into() });
    t.run(EventKind::TextDelta { text: "lo".into() });
    assert_eq!(t.app.live_text, "Hello");
    t.run(EventKind::AssistantMessage {
        iteration: 1,
        content: "Hello".into(),
        reasoning: None,
        calls: vec![],
        tool_calls: vec![],
        parse_layer: None,
        raw: None,
    });
    assert!(t.app.live_text.is_empty());
    assert!(t.end("completed", None).is_empty());
    assert_eq!(t.app.phase, Phase::Idle);
    assert_eq!(t.app.status.tool_mode, "native");
    assert_eq!(t.app.status.context_window, 8192);
    assert_eq!(t.app.last_answer, "Hello");
    assert_eq!(
        t.app.take_finished(),
        [
            Entry::User("hi".into()),
            Entry::Thinking("hmm".into()),
            Entry::Assistant {
                text: "Hello".into(),
                partial: false
            }
        ]
    );
    assert!(t.app.take_finished().is_empty(), "written once");
}

#[test]
fn a_tool_call_is_one_entry_with_its_arguments_and_result() {
    let mut t = Typist::new();
    t.run(EventKind::ToolCallStarted {
        iteration: 1,
        call_id: "c1".into(),
        name: "read_file".into(),
        arguments: serde_json::json!({"path": "a.txt"}),
    });
    assert_eq!(t.app.status.activity, "running read_file");
    t.run(EventKind::ToolResult {
        iteration: 1,
        call_id: "c1".into(),
        name: "read_file".into(),
        ok: true,
        output: r#"{"ok":"contents"}"#.into(),
        truncated: false,
    });
    assert_eq!(
        t.app.take_finished(),
        [Entry::Tool {
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
            ok: true,
            output: "contents".into()
        }]
    );
}

#[test]
fn typed_during_a_turn_is_queued_or_steers() {
    let mut t = Typist::new();
    t.type_text("first");
    t.press(KeyCode::Enter);
    t.type_text("later");
    assert!(t.press(KeyCode::Enter).is_empty(), "queued, not sent");
    assert_eq!(t.app.queued, ["later"]);
    t.type_text("now");
    assert_eq!(
        t.key(KeyCode::Enter, KeyModifiers::ALT),
        [Effect::Cancel],
        "steering cancels the turn"
    );
    assert_eq!(
        t.app.queued,
        ["now", "later"],
        "the steering message goes first"
    );
    assert_eq!(t.end("cancelled", None), send("now"));
    assert_eq!(t.app.phase, Phase::Working);
    assert_eq!(t.end("completed", None), send("later"));
    assert!(t.end("completed", None).is_empty());
    assert_eq!(t.app.phase, Phase::Idle);
}

#[test]
fn ctrl_c_cancels_a_turn_clears_the_input_and_quits_only_when_pressed_twice() {
    let mut t = Typist::new();
    t.type_text("go");
    t.press(KeyCode::Enter);
    assert_eq!(t.ctrl('c'), [Effect::Cancel]);
    t.run(EventKind::TextDelta {
        text: "part".into(),
    });
    assert!(t.end("cancelled", None).is_empty());
    assert_eq!(t.app.phase, Phase::Idle, "the session stays usable");
    let entries = t.app.take_finished();
    assert!(entries.contains(&Entry::Assistant {
        text: "part".into(),
        partial: true
    }));
    t.type_text("draft");
    assert!(t.ctrl('c').is_empty());
    assert!(t.app.editor.is_empty(), "first Ctrl-C clears the input");
    assert!(
        t.ctrl('c').is_empty(),
        "an empty prompt asks to press again"
    );
    assert_eq!(t.ctrl('c'), [Effect::Quit]);
}

#[test]
fn keys_typed_before_an_approval_appeared_are_not_an_answer() {
    let mut t = Typist::new();
    t.type_text("run it");
    t.press(KeyCode::Enter);
    assert!(t.approval(7, "make test").is_empty());
    // Typed ahead: arrives after the request but before the prompt reached the screen.
    assert!(t.press(KeyCode::Char('y')).is_empty());
    t.shown();
    // Stamped right after the prompt appeared: too soon to be an answer.
    let typed_ahead = t.clock - crate::approval::ANSWER_GRACE + Duration::from_millis(20);
    let early = t.app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE),
        typed_ahead,
    ));
    assert!(
        early.is_empty(),
        "stamped within the grace after the prompt was shown"
    );
    assert_eq!(t.app.prompt.as_ref().map(|p| p.ignored_keys), Some(2));
    assert_eq!(
        t.press(KeyCode::Char('a')),
        [Effect::Answer {
            id: 7,
            decision: Decision::AllowSession
        }]
    );
    assert!(t.app.prompt.is_none());
    // The same command prefix is not asked again in this session; another one is.
    assert_eq!(
        t.approval(8, "make test VERBOSE=1"),
        [Effect::Answer {
            id: 8,
            decision: Decision::AllowOnce
        }]
    );
    assert!(t.approval(9, "make install").is_empty());
    assert!(t.app.prompt.is_some());
    let recorded: Vec<Entry> = t
        .app
        .take_finished()
        .into_iter()
        .filter(|e| matches!(e, Entry::Approval { .. }))
        .collect();
    assert_eq!(
        recorded,
        [
            Entry::Approval {
                subject: "make test".into(),
                decision: "allow_session".into()
            },
            Entry::Approval {
                subject: "make test VERBOSE=1".into(),
                decision: "auto".into()
            }
        ]
    );
}

#[test]
fn a_denial_carries_a_note_and_questions_wait_their_turn() {
    let mut t = Typist::new();
    t.approval(1, "rm -rf build");
    t.approval(2, "ls");
    t.shown();
    t.press(KeyCode::Char('d'));
    t.type_text("use cargo clean");
    assert_eq!(
        t.press(KeyCode::Enter),
        [Effect::Answer {
            id: 1,
            decision: Decision::Deny {
                note: "use cargo clean".into()
            }
        }]
    );
    let next = t.app.prompt.as_ref().map(|p| p.request.id);
    assert_eq!(next, Some(2), "the waiting question comes next");
    assert!(t.press(KeyCode::Char('y')).is_empty(), "not shown yet");
    t.shown();
    assert_eq!(
        t.press(KeyCode::Char('n')),
        [Effect::Answer {
            id: 2,
            decision: Decision::Deny {
                note: String::new()
            }
        }]
    );
}

#[test]
fn auto_approvals_answer_without_a_prompt() {
    let mut t = Typist::new();
    t.type_text("/approvals auto");
    assert_eq!(
        t.press(KeyCode::Enter),
        [Effect::Command(Command::Approvals {
            mode: Some(ApprovalMode::Auto)
        })]
    );
    assert_eq!(t.app.status.approvals, ApprovalMode::Auto);
    assert_eq!(
        t.approval(3, "anything"),
        [Effect::Answer {
            id: 3,
            decision: Decision::AllowOnce
        }]
    );
}

#[test]
fn a_server_failure_keeps_the_partial_reply_and_offers_retry() {
    let mut t = Typist::new();
    t.type_text("explain");
    t.press(KeyCode::Enter);
    t.run(EventKind::TextDelta {
        text: "The parser".into(),
    });
    assert!(t.end("provider_error", Some("connection reset")).is_empty());
    assert_eq!(t.app.phase, Phase::ServerFailed("connection reset".into()));
    assert!(t.app.take_finished().contains(&Entry::Assistant {
        text: "The parser".into(),
        partial: true
    }));
    assert_eq!(t.press(KeyCode::Char('r')), send("explain"));
    assert_eq!(t.app.phase, Phase::Working);
    t.end("provider_error", None);
    t.press(KeyCode::Char('p'));
    assert_eq!(t.app.phase, Phase::Idle);
    assert_eq!(
        t.app.editor.text(),
        "/provider ",
        "another provider, to complete"
    );
}

#[test]
fn the_popup_completes_then_enter_runs_the_command() {
    let mut t = Typist::new();
    t.type_text("/se");
    assert_eq!(crate::commands::popup(t.app.editor.text()).len(), 2);
    t.press(KeyCode::Down);
    assert_eq!(t.app.popup_selected, 1);
    assert!(t.press(KeyCode::Enter).is_empty());
    assert_eq!(t.app.editor.text(), "/search ", "completed, not run");
    t.type_text("parser");
    assert_eq!(
        t.press(KeyCode::Enter),
        [Effect::Command(Command::Search {
            text: "parser".into()
        })]
    );
    t.type_text("/nope");
    assert!(t.press(KeyCode::Enter).is_empty());
    assert!(matches!(t.app.take_finished().last(), Some(Entry::Error(e)) if e.contains("/nope")));
    assert_eq!(t.app.editor.text(), "/nope", "kept to fix");
}

#[test]
fn new_lines_pastes_and_paste_bursts_never_send() {
    let mut t = Typist::new();
    t.type_text("a");
    t.ctrl('j');
    t.key(KeyCode::Enter, KeyModifiers::SHIFT);
    t.app.update(AppEvent::Paste("b\r\nc".into()));
    assert_eq!(t.app.editor.text(), "a\n\nb\nc");
    // A terminal without bracketed paste: the Enter comes right after a character.
    let at = t.tick();
    t.app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE),
        at,
    ));
    let effects = t.app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        at + Duration::from_millis(1),
    ));
    assert!(effects.is_empty(), "a burst's Enter is a new line");
    assert_eq!(t.app.editor.text(), "a\n\nb\ncx\n");
    assert_eq!(t.press(KeyCode::Enter), send("a\n\nb\ncx\n"));
}

#[test]
fn history_up_down_and_ctrl_r() {
    let mut t = Typist::new();
    for m in ["list files", "fix the test", "run tests"] {
        t.type_text(m);
        t.press(KeyCode::Enter);
        t.end("completed", None);
    }
    t.type_text("dra");
    t.press(KeyCode::Up);
    assert_eq!(t.app.editor.text(), "run tests");
    t.press(KeyCode::Up);
    assert_eq!(t.app.editor.text(), "fix the test");
    t.press(KeyCode::Down);
    t.press(KeyCode::Down);
    assert_eq!(t.app.editor.text(), "dra", "the draft comes back");
    t.ctrl('u');
    t.ctrl('r');
    t.type_text("te");
    t.ctrl('r');
    assert_eq!(t.app.search, Some(("te".into(), Some(1))));
    t.press(KeyCode::Right);
    assert_eq!(t.app.editor.text(), "fix the test");
    assert!(t.app.search.is_none());
}

#[test]
fn roles_and_workflows_enter_agentic_mode_until_new() {
    let mut t = Typist::new();
    t.type_text("@reviewer check main.rs");
    assert_eq!(
        t.press(KeyCode::Enter),
        [Effect::Role {
            role: "reviewer".into(),
            message: "check main.rs".into()
        }]
    );
    assert_eq!(t.app.status.agentic.as_deref(), Some("@reviewer"));
    t.end("completed", None);
    t.type_text("/workflow release");
    assert_eq!(
        t.press(KeyCode::Enter),
        [Effect::Command(Command::Workflow {
            name: "release".into(),
            message: String::new()
        })]
    );
    assert_eq!(t.app.status.agentic.as_deref(), Some("workflow release"));
    t.end("completed", None);
    t.type_text("/new");
    assert_eq!(t.press(KeyCode::Enter), [Effect::Command(Command::New)]);
    assert_eq!(t.app.status.agentic, None);
}

#[test]
fn a_thousand_messages_keep_the_state_small() {
    let mut t = Typist::new();
    for i in 0..1000 {
        let effects = t.app.update(AppEvent::Notice(format!("message {i}")));
        assert!(effects.is_empty());
    }
    assert_eq!(t.app.take_finished().len(), 1000);
    assert_eq!(t.app.entries_written, 1000);
    t.type_text("still typing");
    assert_eq!(t.app.editor.text(), "still typing");
}

#[test]
fn a_model_picked_from_the_list_is_the_command_and_the_status() {
    let mut t = Typist::new();
    let models = vec!["qwen3:8b".to_owned(), "llama3.2:3b".to_owned()];
    t.app.update(AppEvent::Pick(crate::Picker::new(
        "models",
        models,
        crate::PickAction::Model,
    )));
    assert!(t.app.picker.is_some());
    // Keys go to the list, not the input.
    assert!(t.press(KeyCode::Down).is_empty());
    assert_eq!(t.app.editor.text(), "");
    let effects = t.press(KeyCode::Enter);
    assert_eq!(
        effects,
        [Effect::Command(Command::Model {
            name: Some("llama3.2:3b".into())
        })]
    );
    assert!(t.app.picker.is_none());
    // The status line follows once the switch was made.
    assert_eq!(t.app.status.model, "qwen3:8b");
    t.app.update(AppEvent::Using {
        model: "llama3.2:3b".into(),
        provider: "ollama".into(),
    });
    assert_eq!(t.app.status.model, "llama3.2:3b");

    // Esc closes a list without a command.
    t.app.update(AppEvent::Pick(crate::Picker::new(
        "models",
        vec!["a".into()],
        crate::PickAction::Model,
    )));
    assert!(t.press(KeyCode::Esc).is_empty());
    assert!(t.app.picker.is_none());
}

#[test]
fn provider_with_a_url_is_one_command() {
    let mut t = Typist::new();
    t.type_text("/provider openai http://127.0.0.1:9/v1");
    let effects = t.press(KeyCode::Enter);
    assert_eq!(
        effects,
        [Effect::Command(Command::Provider {
            name: "openai".into(),
            base_url: Some("http://127.0.0.1:9/v1".into())
        })]
    );
    assert_eq!(t.app.status.provider, "ollama", "not before it was made");
}

#[test]
fn a_write_allowed_for_the_session_covers_that_file_only() {
    let mut t = Typist::new();
    t.type_text("edit it");
    t.press(KeyCode::Enter);
    let write = |id: u64, path: &str| {
        AppEvent::Approval(ApprovalRequest {
            id,
            kind: ApprovalKind::Write {
                path: path.into(),
                diff: format!("--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"),
            },
        })
    };
    assert!(t.app.update(write(1, "src/a.rs")).is_empty(), "asked");
    t.shown();
    assert_eq!(
        t.press(KeyCode::Char('a')),
        [Effect::Answer {
            id: 1,
            decision: Decision::AllowSession
        }]
    );
    // The same file again: allowed without a question.
    assert_eq!(
        t.app.update(write(2, "src/a.rs")),
        [Effect::Answer {
            id: 2,
            decision: Decision::AllowOnce
        }]
    );
    // Another file: asked.
    assert!(t.app.update(write(3, "src/b.rs")).is_empty());
    assert!(t.app.prompt.is_some());
}
