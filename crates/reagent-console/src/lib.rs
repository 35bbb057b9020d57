//! # reagent-console
//!
//! `reagent chat`'s terminal console, as a library the binary drives:
//!
//! - [`App`]: the whole state, changed only by [`App::update`] (keys, pastes, run events,
//!   approval requests, the end of a turn), which returns the [`Effect`]s to carry out — pure,
//!   no terminal, unit-tested;
//! - [`Editor`] (multi-line input), [`InputHistory`] (Up/Down, Ctrl-R), [`commands`] (slash
//!   commands, their parsing and the popup), [`approval`] (inline approvals: grants for a
//!   command prefix or a file, keys typed before a prompt appeared ignored; a write shows its
//!   whole diff, scrollable), [`Picker`] (a list to pick from: the server's models for
//!   `/model`, the stored sessions for `/sessions`);
//! - [`render`]: the live area at the bottom drawn with ratatui, and the finished entries as
//!   lines written into the terminal's own scrollback (`insert_before` of an inline viewport).
//!
//! Architecture invariant: depends on reagent-protocol's event types and ratatui only; never
//! runs a model, a tool or the store, and never prints — the binary does.
#![deny(missing_docs)]

pub mod app;
pub mod approval;
pub mod clipboard;
pub mod commands;
pub mod editor;
pub mod history;
mod keys;
pub mod picker;
pub mod render;
pub mod status;
pub mod transcript;

pub use app::{App, AppEvent, Effect, Phase};
pub use editor::Editor;
pub use history::InputHistory;
pub use keys::{help_text, PASTE_BURST_GAP};
pub use picker::{PickAction, Picker};
/// The ratatui this crate draws with (its crossterm too), for the binary's terminal setup.
pub use ratatui;
pub use status::Status;
pub use transcript::Entry;
pub mod wrap;
