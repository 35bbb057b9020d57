//! The console's byte stream checked through a terminal emulator (the vt100 crate): finished
//! entries end up in the terminal's own scrollback as text, the live area is re-laid out after a
//! resize (grow and shrink), and `NO_COLOR` leaves every cell in the default colours.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use reagent_console::commands::ApprovalMode;
use reagent_console::render::{self, Theme};
use reagent_console::{App, AppEvent, Entry, InputHistory, Status};

/// Lines the emulator keeps above its screen.
const SCROLLBACK: usize = 10_000;

/// Bytes written by the backend, read by the emulator.
#[derive(Clone, Default)]
struct Pipe(Rc<RefCell<Vec<u8>>>);

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A terminal: crossterm's real escape sequences, fed into an emulator of `rows` × `cols`.
struct Emulated {
    bytes: CrosstermBackend<Pipe>,
    pipe: Pipe,
    parser: vt100::Parser,
}

impl Emulated {
    fn new(rows: u16, cols: u16) -> Self {
        let pipe = Pipe::default();
        Emulated {
            bytes: CrosstermBackend::new(pipe.clone()),
            pipe,
            parser: vt100::Parser::new(rows, cols, SCROLLBACK),
        }
    }

    fn pump(&mut self) {
        let bytes = std::mem::take(&mut *self.pipe.0.borrow_mut());
        self.parser.process(&bytes);
    }
}

impl Backend for Emulated {
    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.bytes.draw(content)
    }
    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.bytes.append_lines(n)
    }
    fn hide_cursor(&mut self) -> io::Result<()> {
        self.bytes.hide_cursor()
    }
    fn show_cursor(&mut self) -> io::Result<()> {
        self.bytes.show_cursor()
    }
    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.pump();
        let (y, x) = self.parser.screen().cursor_position();
        Ok(Position { x, y })
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.bytes.set_cursor_position(position)
    }
    fn clear(&mut self) -> io::Result<()> {
        self.bytes.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.bytes.clear_region(clear_type)
    }
    fn size(&self) -> io::Result<Size> {
        let (rows, cols) = self.parser.screen().size();
        Ok(Size {
            width: cols,
            height: rows,
        })
    }
    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size()?,
            pixels: Size::default(),
        })
    }
    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.bytes)?;
        self.pump();
        Ok(())
    }
}

fn app() -> App {
    App::new(
        Status::new("qwen3:8b", "ollama", ApprovalMode::Ask),
        InputHistory::default(),
    )
}

fn terminal(backend: Emulated, height: u16) -> Terminal<Emulated> {
    Terminal::with_options(
        backend,
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
    .unwrap()
}

/// The screen and the newest scrollback lines (vt100 0.15 shows at most a screen's height of
/// scrollback at once), as text.
fn visible_and_recent(parser: &mut vt100::Parser) -> Vec<String> {
    let (rows, cols) = parser.screen().size();
    parser.set_scrollback(usize::from(rows));
    let mut lines: Vec<String> = parser.screen().rows(0, cols).collect();
    parser.set_scrollback(0);
    lines.extend(parser.screen().rows(0, cols));
    lines
}

fn screen_rows(parser: &vt100::Parser) -> Vec<String> {
    let (_, cols) = parser.screen().size();
    parser.screen().rows(0, cols).collect()
}

#[test]
fn finished_entries_go_to_the_scrollback_as_text() {
    let mut t = terminal(Emulated::new(24, 80), 10);
    let mut app = app();
    let mut seen = Vec::new();
    for i in 0..40 {
        app.update(AppEvent::Notice(format!(
            "entry number {i} of the conversation"
        )));
        render::frame(&mut t, &mut app, Theme { color: true }).unwrap();
        seen.extend(visible_and_recent(&mut t.backend_mut().parser));
    }
    let text = seen.join("\n");
    let screen = screen_rows(&t.backend().parser).join("\n");
    assert!(
        !screen.contains("entry number 0 "),
        "the first entries left the screen for the scrollback: {screen}"
    );
    for i in 0..40 {
        assert!(
            text.contains(&format!("entry number {i} of the conversation")),
            "entry {i} is in the terminal's scrollback or screen:\n{text}"
        );
    }
    let rows = screen_rows(&t.backend().parser);
    let status = rows.last().unwrap();
    assert!(
        status.contains("qwen3:8b @ ollama"),
        "status on the last row: {rows:#?}"
    );
    assert!(
        rows[rows.len() - 2].starts_with("›"),
        "the input above it: {rows:#?}"
    );
}

#[test]
fn a_resize_re_lays_out_the_live_area_at_once() {
    let mut t = terminal(Emulated::new(24, 80), 10);
    let mut app = app();
    app.update(AppEvent::Notice("before the resize".into()));
    render::frame(&mut t, &mut app, Theme { color: true }).unwrap();
    for (rows, cols) in [(16u16, 40u16), (30, 120), (24, 80)] {
        // The terminal changes size; the next frame lays the live area out again.
        t.backend_mut().parser.set_size(rows, cols);
        app.dirty = true;
        render::frame(&mut t, &mut app, Theme { color: true }).unwrap();
        let screen = screen_rows(&t.backend().parser);
        assert_eq!(screen.len(), usize::from(rows));
        let statuses = screen.iter().filter(|r| r.contains("qwen3:8b @")).count();
        assert_eq!(
            statuses, 1,
            "{rows}x{cols}: no stale status line left: {screen:#?}"
        );
        let at = screen
            .iter()
            .position(|r| r.contains("qwen3:8b @"))
            .unwrap();
        let status = screen[at].trim_end();
        assert!(
            screen[at - 1].starts_with('›'),
            "{rows}x{cols}: the input is right above the status line: {screen:#?}"
        );
        assert!(
            status.chars().count() <= usize::from(cols),
            "{rows}x{cols}: the status line fits: {status:?}"
        );
        if cols == 40 {
            assert!(status.ends_with('…'), "cut to the width: {status:?}");
        }
    }
    let text = visible_and_recent(&mut t.backend_mut().parser).join("\n");
    assert!(text.contains("before the resize"), "{text}");
}

fn colours_used(parser: &vt100::Parser) -> usize {
    let (rows, cols) = parser.screen().size();
    let mut n = 0;
    for r in 0..rows {
        for c in 0..cols {
            if let Some(cell) = parser.screen().cell(r, c) {
                if cell.fgcolor() != vt100::Color::Default
                    || cell.bgcolor() != vt100::Color::Default
                {
                    n += 1;
                }
            }
        }
    }
    n
}

#[test]
fn no_color_leaves_every_cell_in_the_default_colours() {
    let shown = |theme: Theme| {
        let mut t = terminal(Emulated::new(24, 80), 12);
        let mut app = app();
        app.push_entry(Entry::User("hello".into()));
        app.push_entry(Entry::Tool {
            name: "read_file".into(),
            arguments: "{}".into(),
            ok: false,
            output: "no such file".into(),
        });
        app.push_entry(Entry::Error("the server failed".into()));
        render::frame(&mut t, &mut app, theme).unwrap();
        colours_used(&t.backend().parser)
    };
    assert!(
        shown(Theme { color: true }) > 0,
        "colours are used by default"
    );
    assert_eq!(shown(Theme { color: false }), 0, "NO_COLOR: none");
}

#[test]
fn works_at_80_by_24_with_a_long_approval() {
    let mut t = terminal(Emulated::new(24, 80), 12);
    let mut app = app();
    let diff: String = (0..200).map(|i| format!("+added line {i}\n")).collect();
    app.update(AppEvent::Approval(
        reagent_console::approval::ApprovalRequest {
            id: 1,
            kind: reagent_console::approval::ApprovalKind::Write {
                path: "src/lib.rs".into(),
                diff,
            },
        },
    ));
    render::frame(&mut t, &mut app, Theme { color: false }).unwrap();
    let screen = screen_rows(&t.backend().parser).join("\n");
    assert!(
        screen.contains("the model wants to change src/lib.rs"),
        "{screen}"
    );
    assert!(screen.contains("+added line 0"), "{screen}");
    assert!(
        screen.contains("below: ↑/↓"),
        "says there is more, scrollable: {screen}"
    );
    assert!(screen.contains("[y] allow once"), "{screen}");
}
