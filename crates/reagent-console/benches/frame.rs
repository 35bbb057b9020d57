//! Frame cost of the console on a long session: a 1,000-message conversation already written
//! to the scrollback, then (a) one frame of the live area while a reply streams, (b) one more
//! finished entry written above it. Uses ratatui's test backend (no terminal I/O), so it
//! measures the console's own work per frame.
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use ratatui::backend::TestBackend;
use ratatui::{Terminal, TerminalOptions, Viewport};
use reagent_console::commands::ApprovalMode;
use reagent_console::render::{self, Theme};
use reagent_console::{App, AppEvent, Entry, InputHistory, Status};
use reagent_protocol::{Event, EventKind};

fn long_session() -> (Terminal<TestBackend>, App) {
    let mut terminal = Terminal::with_options(
        TestBackend::new(80, 24),
        TerminalOptions {
            viewport: Viewport::Inline(12),
        },
    )
    .unwrap();
    let mut app = App::new(
        Status::new("qwen3:8b", "ollama", ApprovalMode::Ask),
        InputHistory::default(),
    );
    for i in 0..1000 {
        app.push_entry(if i % 2 == 0 {
            Entry::User(format!("question number {i} about the parser"))
        } else {
            Entry::Assistant {
                text: "an answer of a few lines\n".repeat(5),
                partial: false,
            }
        });
    }
    render::frame(&mut terminal, &mut app, Theme { color: true }).unwrap();
    (terminal, app)
}

fn frames(c: &mut Criterion) {
    let (mut terminal, mut app) = long_session();
    let token = Event::new(
        "r",
        1,
        EventKind::TextDelta {
            text: "word ".into(),
        },
    );
    c.bench_function("frame_streaming_after_1000_messages", |b| {
        b.iter(|| {
            app.update(AppEvent::Run(Box::new(token.clone())));
            render::frame(&mut terminal, &mut app, Theme { color: true }).unwrap();
        })
    });
    let (mut terminal, mut app) = long_session();
    c.bench_function("entry_written_after_1000_messages", |b| {
        b.iter(|| {
            app.push_entry(Entry::Notice("one more finished entry".into()));
            render::frame(&mut terminal, &mut app, Theme { color: true }).unwrap();
        })
    });
}

criterion_group!(benches, frames);
criterion_main!(benches);
