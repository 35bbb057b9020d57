//! Drawing: finished entries become plain lines for the terminal's own scrollback
//! ([`entry_lines`], written above the live area with `insert_before`, so they stay selectable
//! and copyable), and [`draw`] paints the live area at the bottom: the streaming reply, an
//! approval prompt, a failure dialog or the command popup, the input and the status line.

use std::time::Instant;

use ratatui::backend::Backend;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};
use ratatui::{Frame, Terminal};

use crate::app::{App, Phase};
use crate::approval::ApprovalKind;
use crate::commands;
use crate::transcript::{fold, Entry, FOLD_KEEP};
use crate::wrap::wrap;

/// Colours on or off (`NO_COLOR` turns them off; bold and dim stay).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether to use colours.
    pub color: bool,
}

impl Theme {
    /// The theme for this environment: no colours when `NO_COLOR` is set and not empty.
    pub fn from_env() -> Self {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn dim(self) -> Style {
        Style::default().add_modifier(Modifier::DIM)
    }
}

/// The lines an entry takes in the scrollback at `width` columns, wrapped (so their number is
/// the height to insert) and folded where long.
pub fn entry_lines(entry: &Entry, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let width = usize::from(width.max(10));
    let mut out = Vec::new();
    let mut block = |prefix: &str, text: &str, style: Style| {
        let first = prefix.to_owned();
        let indent = " ".repeat(first.chars().count());
        for (i, line) in wrap(text, width - indent.len()).into_iter().enumerate() {
            let lead = if i == 0 {
                first.clone()
            } else {
                indent.clone()
            };
            out.push(Line::from(vec![
                Span::styled(lead, style.add_modifier(Modifier::BOLD)),
                Span::styled(line, style),
            ]));
        }
    };
    match entry {
        Entry::User(text) => block("› ", text, theme.fg(Color::Cyan)),
        Entry::Assistant { text, partial } => {
            block("", text, Style::default());
            if *partial {
                block("", "[reply cut short]", theme.dim());
            }
        }
        Entry::Thinking(text) => block("thinking: ", &fold(text, 1).join("\n"), theme.dim()),
        Entry::Tool {
            name,
            arguments,
            ok,
            output,
        } => {
            let (mark, color) = if *ok {
                ("✓", Color::Green)
            } else {
                ("✗", Color::Red)
            };
            block(
                &format!("{mark} "),
                &format!("{name} {arguments}"),
                theme.fg(color),
            );
            block("  │ ", &fold(output, FOLD_KEEP).join("\n"), theme.dim());
        }
        Entry::Approval { subject, decision } => block(
            "approval: ",
            &format!("{decision}: {subject}"),
            theme.fg(Color::Yellow),
        ),
        Entry::Notice(text) => block("", text, theme.dim()),
        Entry::Error(text) => block("error: ", text, theme.fg(Color::Red)),
    }
    out.push(Line::from(""));
    out
}

/// One update of the screen: the finished entries are written into the scrollback above the
/// live area (in pieces no taller than the screen), then the live area is painted; the app is
/// told the frame reached the terminal (approval prompts take keys from then on).
pub fn frame<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    theme: Theme,
) -> std::io::Result<()> {
    let size = terminal.size()?;
    for entry in app.take_finished() {
        let lines = entry_lines(&entry, size.width, theme);
        for chunk in lines.chunks(usize::from(size.height.max(1))) {
            let chunk = chunk.to_vec();
            terminal.insert_before(chunk.len() as u16, |buf| {
                Paragraph::new(chunk).render(buf.area, buf);
            })?;
        }
    }
    terminal.draw(|f| draw(f, app, theme))?;
    app.dirty = false;
    app.prompt_shown(Instant::now());
    Ok(())
}

/// Paint the live area of `app` into the frame.
pub fn draw(frame: &mut Frame<'_>, app: &App, theme: Theme) {
    let area = frame.area();
    let input_lines = app.editor.text().split('\n').count().clamp(1, 5) as u16;
    let [live, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(input_lines),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_live(frame, app, live, theme);
    draw_input(frame, app, input, theme);
    frame.render_widget(Paragraph::new(status_line(app, area.width, theme)), status);
    if let Some(prompt) = &app.prompt {
        draw_prompt(frame, prompt, live, theme);
    } else if let Phase::ServerFailed(message) = &app.phase {
        let text = vec![
            Line::from(Span::styled(
                format!("The model server failed: {message}"),
                theme.fg(Color::Red),
            )),
            Line::from("The partial reply is kept."),
            Line::from("[r] retry · [p] another provider · [m] another model · [Esc] cancel"),
        ];
        draw_box(frame, live, "server failed", text, theme);
    } else if let Some(picker) = &app.picker {
        let shown = picker.shown();
        let room = usize::from(live.height.saturating_sub(3)).max(1);
        let top = picker.selected.saturating_sub(room.saturating_sub(1));
        let mut lines: Vec<Line<'_>> = shown
            .iter()
            .enumerate()
            .skip(top)
            .take(room)
            .map(|(i, item)| {
                let style = if i == picker.selected {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                Line::styled(item.to_string(), style)
            })
            .collect();
        lines.push(Line::styled(
            format!(
                "filter: {}_ · {} of {} · ↑/↓ Enter pick · Esc close",
                picker.filter,
                shown.len(),
                picker.items.len()
            ),
            theme.dim(),
        ));
        draw_box(frame, live, &picker.title, lines, theme);
    } else {
        let popup = commands::popup(app.editor.text());
        if !popup.is_empty() {
            let selected = app.popup_selected.min(popup.len() - 1);
            let lines = popup
                .iter()
                .enumerate()
                .map(|(i, (name, help))| {
                    let style = if i == selected {
                        Style::default().add_modifier(Modifier::REVERSED)
                    } else {
                        Style::default()
                    };
                    Line::styled(format!("/{name:<10} {help}"), style)
                })
                .collect();
            draw_box(frame, live, "commands", lines, theme);
        }
    }
}

fn draw_live(frame: &mut Frame<'_>, app: &App, area: Rect, theme: Theme) {
    let width = usize::from(area.width.max(1));
    let mut lines: Vec<Line<'_>> = Vec::new();
    if !app.live_thinking.is_empty() {
        let thinking = wrap(&app.live_thinking, width);
        let last = thinking.last().cloned().unwrap_or_default();
        lines.push(Line::styled(format!("thinking… {last}"), theme.dim()));
    }
    lines.extend(
        wrap(
            tail(&app.live_text, width * usize::from(area.height) * 4),
            width,
        )
        .into_iter()
        .map(Line::from),
    );
    if app.phase == Phase::Working && app.live_text.is_empty() && app.live_thinking.is_empty() {
        lines.push(Line::styled("working…", theme.dim()));
    }
    for (i, q) in app.queued.iter().enumerate() {
        lines.push(Line::styled(format!("queued {}: {q}", i + 1), theme.dim()));
    }
    if let Some(hint) = hint(app) {
        lines.push(Line::styled(hint, theme.dim()));
    }
    // The tail fits the area, at its bottom (next to the input); only what is visible is
    // laid out again while streaming.
    let height = usize::from(area.height);
    let skip = lines.len().saturating_sub(height);
    let mut shown = lines.split_off(skip);
    let mut padded = vec![Line::from(""); height - shown.len()];
    padded.append(&mut shown);
    frame.render_widget(Paragraph::new(padded), area);
}

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect, theme: Theme) {
    let (line, col) = app.editor.cursor_position();
    let (prefix, text) = match &app.search {
        Some((query, found)) => {
            let hit = found.and_then(|i| app.history.get(i)).unwrap_or("");
            (format!("(search '{query}') "), hit.to_owned())
        }
        None => ("› ".to_owned(), app.editor.text().to_owned()),
    };
    let top = line.saturating_sub(usize::from(area.height).saturating_sub(1));
    let lines: Vec<Line<'_>> = text
        .split('\n')
        .enumerate()
        .skip(top)
        .map(|(i, l)| {
            let lead = if i == 0 { prefix.clone() } else { "  ".into() };
            Line::from(vec![
                Span::styled(lead, theme.fg(Color::Cyan)),
                Span::raw(l.to_owned()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
    if app.prompt.is_none() && app.search.is_none() {
        let x = area.x + 2 + col as u16;
        let y = area.y + (line - top) as u16;
        if x < area.right() && y < area.bottom() {
            frame.set_cursor_position((x, y));
        }
    }
}

/// The end of `text` that can fill `cells` cells at most: only it is wrapped at each frame,
/// so a frame costs the same however long the reply grows.
fn tail(text: &str, cells: usize) -> &str {
    let mut start = text.len().saturating_sub(cells);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// What happens now, or the keys of the moment while a turn runs.
fn hint(app: &App) -> Option<String> {
    if !app.status.activity.is_empty() {
        Some(app.status.activity.clone())
    } else if app.phase == Phase::Working {
        Some("Enter: queue · Alt-Enter: send now (steer) · Ctrl-C: cancel".into())
    } else {
        None
    }
}

/// The status line: agentic mode, model, provider, tool mode, approvals, context bar, session
/// tokens (cut with `…` to the width).
pub fn status_line(app: &App, width: u16, theme: Theme) -> Line<'static> {
    let s = &app.status;
    let mut parts = vec![
        format!("{} @ {}", s.model, s.provider),
        format!("tools {}", s.tool_mode),
        format!("approvals {}", s.approvals.as_str()),
        s.context_bar(8),
        format!("{} tok", crate::status::tokens(s.session_tokens)),
    ];
    if let Some(agentic) = &s.agentic {
        parts.insert(0, format!("agentic: {agentic}"));
    }
    let mut text = parts.join(" │ ");
    let width = usize::from(width);
    if text.chars().count() > width {
        text = text
            .chars()
            .take(width.saturating_sub(1))
            .collect::<String>()
            + "…";
    }
    Line::styled(text, theme.fg(Color::Black).bg_if(theme, Color::Gray))
}

trait BgIf {
    fn bg_if(self, theme: Theme, color: Color) -> Style;
}

impl BgIf for Style {
    fn bg_if(self, theme: Theme, color: Color) -> Style {
        if theme.color {
            self.bg(color)
        } else {
            self.add_modifier(Modifier::REVERSED)
        }
    }
}

fn draw_prompt(frame: &mut Frame<'_>, prompt: &crate::approval::Prompt, area: Rect, theme: Theme) {
    let (title, subject) = match &prompt.request.kind {
        ApprovalKind::Command { .. } => ("run this command?", "the model wants to run:".to_owned()),
        ApprovalKind::Write { path, .. } => (
            "write this file?",
            format!("the model wants to change {path}:"),
        ),
    };
    let body = prompt.body_lines();
    let room = usize::from(area.height.saturating_sub(5)).max(1);
    // Scrolled past the end, the last page stays full.
    let scroll = prompt.scroll.min(body.len().saturating_sub(room));
    let shown = body.iter().skip(scroll).take(room);
    let mut lines = vec![Line::from(subject)];
    lines.extend(shown.map(|l| {
        let style = match l.chars().next() {
            Some('+') => theme.fg(Color::Green),
            Some('-') => theme.fg(Color::Red),
            _ => Style::default(),
        };
        Line::styled(format!("  {l}"), style)
    }));
    let below = body.len().saturating_sub(scroll + room);
    if scroll > 0 || below > 0 {
        lines.push(Line::styled(
            format!("  ({scroll} above, {below} below: ↑/↓ PgUp/PgDn)"),
            theme.dim(),
        ));
    }
    lines.push(match &prompt.note {
        Some(note) => Line::from(format!("note to the model (Enter to deny): {note}")),
        None => Line::from(
            "[y] allow once · [a] allow for this session · [n] deny · [d] deny with a note",
        ),
    });
    if prompt.ignored_keys > 0 {
        lines.push(Line::styled(
            format!(
                "({} keys typed before this prompt were ignored)",
                prompt.ignored_keys
            ),
            theme.dim(),
        ));
    }
    draw_box(frame, area, title, lines, theme);
}

fn draw_box(frame: &mut Frame<'_>, area: Rect, title: &str, lines: Vec<Line<'_>>, theme: Theme) {
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect {
        y: area.bottom() - height,
        height,
        ..area
    };
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title.to_owned())
        .border_style(theme.fg(Color::Yellow));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
