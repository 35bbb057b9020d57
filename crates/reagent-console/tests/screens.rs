//! Snapshot tests of the live area on ratatui's test backend: idle at 80×24's live height, a
//! reply streaming with a queued message, the command popup, an approval, the failure dialog.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use reagent_console::approval::{ApprovalKind, ApprovalRequest};
use reagent_console::commands::ApprovalMode;
use reagent_console::render::{self, Theme};
use reagent_console::{App, AppEvent, InputHistory, Status};
use reagent_protocol::{Event, EventKind};

fn app() -> App {
    let mut status = Status::new("qwen3:8b", "ollama", ApprovalMode::Ask);
    status.context_window = 8192;
    status.context_used = 2048;
    status.session_tokens = 3100;
    App::new(status, InputHistory::default())
}

fn screen(app: &App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| render::draw(f, app, Theme { color: false }))
        .unwrap();
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        app.update(AppEvent::Key(
            KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            Instant::now(),
        ));
    }
}

#[test]
fn idle() {
    let app = app();
    assert_eq!(
        screen(&app, 80, 6),
        [
            "",
            "",
            "",
            "",
            "›",
            "qwen3:8b @ ollama │ tools auto │ approvals ask │ [██░░░░░░] 2.0k/8.2k │ 3.1k tok",
        ]
    );
}

#[test]
fn streaming_with_a_queued_message() {
    let mut app = app();
    typed(&mut app, "go");
    app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        Instant::now() + std::time::Duration::from_secs(1),
    ));
    app.update(AppEvent::Run(Box::new(Event::new(
        "r",
        1,
        EventKind::TextDelta {
            text: "Reading the parser first, then the tests.".into(),
        },
    ))));
    typed(&mut app, "and the docs");
    app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
        Instant::now() + std::time::Duration::from_secs(2),
    ));
    assert_eq!(
        screen(&app, 80, 6),
        [
            "",
            "Reading the parser first, then the tests.",
            "queued 1: and the docs",
            "Enter: queue · Alt-Enter: send now (steer) · Ctrl-C: cancel",
            "›",
            "qwen3:8b @ ollama │ tools auto │ approvals ask │ [██░░░░░░] 2.0k/8.2k │ 3.1k tok",
        ]
    );
}

#[test]
fn the_command_popup() {
    let mut app = app();
    typed(&mut app, "/re");
    assert_eq!(
        screen(&app, 60, 7),
        [
            "",
            "┌commands──────────────────────────────────────────────────┐",
            "│/resume     continue a stored session: /resume ID         │",
            "│/rename     name this session: /rename NAME               │",
            "└──────────────────────────────────────────────────────────┘",
            "› /re",
            "qwen3:8b @ ollama │ tools auto │ approvals ask │ [██░░░░░░]…",
        ]
    );
}

#[test]
fn an_approval_shows_the_exact_command() {
    let mut app = app();
    app.update(AppEvent::Approval(ApprovalRequest {
        id: 1,
        kind: ApprovalKind::Command {
            command: "cargo test --workspace".into(),
        },
    }));
    assert_eq!(
        screen(&app, 80, 8),
        [
            "",
            "┌run this command?─────────────────────────────────────────────────────────────┐",
            "│the model wants to run:                                                       │",
            "│  cargo test --workspace                                                      │",
            "│[y] allow once · [a] allow for this session · [n] deny · [d] deny with a note │",
            "└──────────────────────────────────────────────────────────────────────────────┘",
            "›",
            "qwen3:8b @ ollama │ tools auto │ approvals ask │ [██░░░░░░] 2.0k/8.2k │ 3.1k tok",
        ]
    );
}

#[test]
fn the_server_failure_dialog() {
    let mut app = app();
    app.update(AppEvent::TurnEnded {
        outcome: "provider_error".into(),
        error: Some("connection reset".into()),
    });
    let rows = screen(&app, 80, 8);
    assert_eq!(
        rows[1],
        "┌server failed─────────────────────────────────────────────────────────────────┐"
    );
    assert_eq!(
        rows[2],
        "│The model server failed: connection reset                                     │"
    );
    assert_eq!(
        rows[4],
        "│[r] retry · [p] another provider · [m] another model · [Esc] cancel           │"
    );
}

#[test]
fn a_long_reply_shows_its_end() {
    let mut app = app();
    let long: String = (0..20_000).map(|i| format!("w{i} ")).collect();
    app.update(AppEvent::Run(Box::new(Event::new(
        "r",
        1,
        EventKind::TextDelta {
            text: long + "é the end",
        },
    ))));
    let rows = screen(&app, 40, 6);
    assert_eq!(rows[3], "the end", "{rows:#?}");
    assert_eq!(rows[2], "w19995 w19996 w19997 w19998 w19999 é", "{rows:#?}");
}

#[test]
fn a_long_diff_scrolled_to_its_end_keeps_a_full_page() {
    let mut app = app();
    let diff: String = (1..=20).map(|i| format!("+line{i}\n")).collect();
    app.update(AppEvent::Approval(ApprovalRequest {
        id: 1,
        kind: ApprovalKind::Write {
            path: "a.txt".into(),
            diff,
        },
    }));
    app.prompt_shown(Instant::now() - std::time::Duration::from_secs(1));
    for _ in 0..5 {
        app.update(AppEvent::Key(
            KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
            Instant::now(),
        ));
    }
    let rows = screen(&app, 80, 14);
    let shown: Vec<&String> = rows.iter().filter(|r| r.starts_with("│  +line")).collect();
    assert_eq!(shown.len(), 7, "a full page of the diff: {rows:#?}");
    assert!(shown[0].starts_with("│  +line14 "), "{rows:#?}");
    assert!(shown[6].starts_with("│  +line20 "), "{rows:#?}");
    assert!(
        rows.iter()
            .any(|r| r.contains("(13 above, 0 below: ↑/↓ PgUp/PgDn)")),
        "{rows:#?}"
    );
    // One PgUp moves back from the end at once.
    app.update(AppEvent::Key(
        KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE),
        Instant::now(),
    ));
    let rows = screen(&app, 80, 14);
    assert!(
        rows.iter().any(|r| r.starts_with("│  +line10 ")),
        "{rows:#?}"
    );
}

#[test]
fn the_model_picker() {
    let mut app = app();
    app.update(AppEvent::Pick(reagent_console::Picker::new(
        "models of the server (now: qwen3:8b)",
        vec!["qwen3:8b".into(), "llama3.2:3b".into()],
        reagent_console::PickAction::Model,
    )));
    typed(&mut app, "lla");
    let rows = screen(&app, 80, 8);
    let top = rows
        .iter()
        .position(|r| r.starts_with("┌models of the server (now: qwen3:8b)──"))
        .unwrap_or_else(|| panic!("the picker's box: {rows:#?}"));
    assert_eq!(
        rows[top + 1],
        "│llama3.2:3b                                                                   │",
        "the filter leaves one model"
    );
    assert!(rows[top + 2].contains("filter: lla_ · 1 of 2"), "{rows:#?}");
    assert_eq!(rows[6], "›", "typing went to the list, not the input");
}
