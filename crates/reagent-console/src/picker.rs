//! A list to pick one item from — the server's models for `/model`, stored sessions — shown
//! in the live area: typing filters it, Up/Down move, Enter picks, Esc closes.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::commands::Command;

/// What picking an item does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickAction {
    /// `/model NAME`.
    Model,
    /// `/resume ID` (the item's first word).
    Resume,
}

/// A list on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// The box's title.
    pub title: String,
    /// Every item.
    pub items: Vec<String>,
    /// The text typed to filter the items.
    pub filter: String,
    /// The selected line among the shown items.
    pub selected: usize,
    /// What picking does.
    pub action: PickAction,
}

/// What a key did to a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Picked {
    /// Still open.
    Open,
    /// Closed without a choice.
    Closed,
    /// Closed by picking: run this command.
    Run(Command),
}

impl Picker {
    /// A picker of `items` titled `title`.
    pub fn new(title: impl Into<String>, items: Vec<String>, action: PickAction) -> Self {
        Picker {
            title: title.into(),
            items,
            filter: String::new(),
            selected: 0,
            action,
        }
    }

    /// The items the filter leaves (case-insensitive substring), in order.
    pub fn shown(&self) -> Vec<&str> {
        let filter = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| i.to_lowercase().contains(&filter))
            .map(String::as_str)
            .collect()
    }

    /// Handle one key.
    pub fn key(&mut self, key: KeyEvent) -> Picked {
        let count = self.shown().len();
        match key.code {
            KeyCode::Esc => return Picked::Closed,
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Enter => {
                let Some(item) = self.shown().get(self.selected).map(|s| s.to_string()) else {
                    return Picked::Open;
                };
                return Picked::Run(match self.action {
                    PickAction::Model => Command::Model { name: Some(item) },
                    PickAction::Resume => Command::Resume {
                        id: item
                            .split_whitespace()
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                    },
                });
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.selected = 0;
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        Picked::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn models() -> Picker {
        Picker::new(
            "models",
            vec![
                "qwen3:8b".into(),
                "llama3.2:3b".into(),
                "qwen2.5-coder:1.5b".into(),
            ],
            PickAction::Model,
        )
    }

    #[test]
    fn moving_then_enter_picks_the_selected_model() {
        let mut p = models();
        assert_eq!(p.key(key(KeyCode::Down)), Picked::Open);
        assert_eq!(p.key(key(KeyCode::Down)), Picked::Open);
        assert_eq!(p.key(key(KeyCode::Down)), Picked::Open, "stays on the last");
        assert_eq!(
            p.key(key(KeyCode::Enter)),
            Picked::Run(Command::Model {
                name: Some("qwen2.5-coder:1.5b".into())
            })
        );
    }

    #[test]
    fn typing_filters_and_esc_closes() {
        let mut p = models();
        p.key(key(KeyCode::Down));
        for c in "LLAMA".chars() {
            p.key(key(KeyCode::Char(c)));
        }
        assert_eq!(p.shown(), ["llama3.2:3b"]);
        assert_eq!(p.selected, 0, "the filter starts from the top");
        for c in "zz".chars() {
            p.key(key(KeyCode::Char(c)));
        }
        assert!(p.shown().is_empty());
        assert_eq!(p.key(key(KeyCode::Enter)), Picked::Open, "nothing to pick");
        assert_eq!(p.key(key(KeyCode::Esc)), Picked::Closed);
    }

    #[test]
    fn a_session_is_resumed_by_its_id() {
        let mut p = Picker::new(
            "sessions",
            vec!["abc123  3 turns  fix the parser".into()],
            PickAction::Resume,
        );
        assert_eq!(
            p.key(key(KeyCode::Enter)),
            Picked::Run(Command::Resume {
                id: "abc123".into()
            })
        );
    }
}
