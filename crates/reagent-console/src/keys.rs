//! Keys at the input (no prompt or dialog open): editing, history, the command popup, sending,
//! queueing and steering.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::{App, Effect, Phase};
use crate::commands;

/// An Enter this soon after a typed character is part of a paste burst (a terminal without
/// bracketed paste types the pasted text): it becomes a new line, never a send.
pub const PASTE_BURST_GAP: Duration = Duration::from_millis(8);

/// The keys and commands, for `/help` and the welcome.
pub fn help_text() -> String {
    let mut lines = vec![
        "keys: Enter send · Ctrl-J or Shift-Enter new line · Up/Down history · Ctrl-R search history".to_owned(),
        "      while the model works: Enter queue for after the turn · Alt-Enter send now to steer".to_owned(),
        "      Ctrl-C cancel the turn (twice at an empty prompt: quit) · Tab complete a command".to_owned(),
        "approvals: y allow once · a allow for this session · n deny · d deny with a note · ↑/↓ scroll".to_owned(),
        "commands:".to_owned(),
    ];
    lines.extend(
        commands::COMMANDS
            .iter()
            .map(|(name, help)| format!("  /{name:<10} {help}")),
    );
    lines.push("  @ROLE       adopt a role from the roles file (agentic mode until /new)".into());
    lines.join("\n")
}

/// Handle a key at the input, pressed at `at`.
pub(crate) fn editing_key(app: &mut App, key: KeyEvent, at: Instant) -> Vec<Effect> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    let popup = commands::popup(app.editor.text());
    let in_burst = app
        .last_char_at
        .is_some_and(|t| at.saturating_duration_since(t) < PASTE_BURST_GAP);
    if !matches!(key.code, KeyCode::Char(_)) || ctrl {
        app.last_char_at = None;
    }
    match key.code {
        KeyCode::Enter if shift || in_burst => app.editor.insert_char('\n'),
        KeyCode::Char('j') if ctrl => app.editor.insert_char('\n'),
        KeyCode::Enter if alt => return app.submit(true),
        KeyCode::Enter => {
            if let Some((name, _)) =
                popup.get(app.popup_selected.min(popup.len().saturating_sub(1)))
            {
                if app.editor.text().trim_end() != format!("/{name}") {
                    app.editor.set(&format!("/{name} "));
                    app.popup_selected = 0;
                    return Vec::new();
                }
            }
            return app.submit(false);
        }
        KeyCode::Tab => {
            if let Some((name, _)) =
                popup.get(app.popup_selected.min(popup.len().saturating_sub(1)))
            {
                app.editor.set(&format!("/{name} "));
                app.popup_selected = 0;
            }
        }
        KeyCode::Char('d') if ctrl => {
            if app.editor.is_empty() && app.phase != Phase::Working {
                return vec![Effect::Quit];
            }
            app.editor.delete();
        }
        KeyCode::Char('r') if ctrl => app.search = Some((String::new(), None)),
        KeyCode::Char('u') if ctrl => app.editor.kill_to_line_start(),
        KeyCode::Char('a') if ctrl => app.editor.home(),
        KeyCode::Char('e') if ctrl => app.editor.end(),
        KeyCode::Char(c) if !ctrl => {
            app.editor.insert_char(c);
            app.last_char_at = Some(at);
            app.popup_selected = 0;
        }
        KeyCode::Backspace => app.editor.backspace(),
        KeyCode::Delete => app.editor.delete(),
        KeyCode::Left => app.editor.left(),
        KeyCode::Right => app.editor.right(),
        KeyCode::Home => app.editor.home(),
        KeyCode::End => app.editor.end(),
        KeyCode::Up if !popup.is_empty() => {
            app.popup_selected = app.popup_selected.saturating_sub(1);
        }
        KeyCode::Down if !popup.is_empty() => {
            app.popup_selected = (app.popup_selected + 1).min(popup.len() - 1);
        }
        KeyCode::Up => {
            if !app.editor.up() {
                let current = app.editor.text().to_owned();
                if let Some(older) = app.history.older(&current) {
                    let older = older.to_owned();
                    app.editor.set(&older);
                }
            }
        }
        KeyCode::Down => {
            if !app.editor.down() {
                if let Some(newer) = app.history.newer() {
                    let newer = newer.to_owned();
                    app.editor.set(&newer);
                }
            }
        }
        KeyCode::Esc => {
            if !popup.is_empty() {
                app.editor.take();
            }
        }
        _ => app.dirty = false,
    }
    Vec::new()
}

impl App {
    /// A key while the failure dialog is open: retry, another provider or model, cancel.
    pub(crate) fn failure_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Char('r') => {
                self.phase = Phase::Working;
                vec![Effect::Send(self.last_sent.clone())]
            }
            KeyCode::Char('p') => {
                self.phase = Phase::Idle;
                self.editor.set("/provider ");
                Vec::new()
            }
            KeyCode::Char('m') => {
                self.phase = Phase::Idle;
                self.editor.set("/model");
                Vec::new()
            }
            KeyCode::Esc | KeyCode::Char('c') => {
                self.phase = Phase::Idle;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// A key during Ctrl-R: refine, older match, leave, or take the match and go on.
    pub(crate) fn search_key(&mut self, key: KeyEvent, at: Instant) -> Vec<Effect> {
        let Some((query, found)) = &mut self.search else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Char('r') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                *found = self
                    .history
                    .search(query, *found)
                    .map(|(i, _)| i)
                    .or(*found);
            }
            KeyCode::Char(c) => {
                query.push(c);
                *found = self.history.search(query, None).map(|(i, _)| i);
            }
            KeyCode::Backspace => {
                query.pop();
                *found = self.history.search(query, None).map(|(i, _)| i);
            }
            KeyCode::Esc => self.search = None,
            _ => {
                // Any other key takes the match into the editor, then acts there.
                let text = found.and_then(|i| self.history.get(i)).map(str::to_owned);
                self.search = None;
                if let Some(text) = text {
                    self.editor.set(&text);
                }
                if key.code == KeyCode::Enter {
                    return Vec::new();
                }
                return crate::keys::editing_key(self, key, at);
            }
        }
        Vec::new()
    }
}
