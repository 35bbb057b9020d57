//! The console's state and its reducer: [`App::update`] takes one [`AppEvent`] (a key, a
//! paste, a run event, an approval request, the end of a turn) and returns the [`Effect`]s the
//! caller carries out (start a turn, cancel it, answer an approval, run a command). No terminal
//! and no I/O here: everything is unit-testable.

use std::collections::VecDeque;
use std::time::Instant;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use reagent_protocol::{Event, EventKind};

use crate::approval::{ApprovalKind, ApprovalRequest, Decision, Grants, Prompt};
use crate::commands::{self, ApprovalMode, Command, Input};
use crate::editor::Editor;
use crate::history::InputHistory;
use crate::picker::{Picked, Picker};
use crate::status::Status;
use crate::transcript::{tool_output_text, Entry};

/// Something that happened, for [`App::update`].
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// A key press, with when it arrived (approval prompts ignore keys from before they showed).
    Key(KeyEvent, Instant),
    /// Bracketed paste: inserted whole, never sent by its line breaks.
    Paste(String),
    /// An event of the running turn.
    Run(Box<Event>),
    /// A tool call waits for an answer.
    Approval(ApprovalRequest),
    /// The turn ended: its outcome (`completed`, `cancelled`, `provider_error`...) and error.
    TurnEnded {
        /// The outcome's name.
        outcome: String,
        /// The error message, if the turn failed.
        error: Option<String>,
    },
    /// A line for the conversation from outside the turn (a command's output).
    Notice(String),
    /// A command failed.
    Failure(String),
    /// Show a list to pick from (the server's models for `/model`).
    Pick(Picker),
    /// The model and provider in use now (after `/model`, `/provider`, a resumed session).
    Using {
        /// The model's name.
        model: String,
        /// The provider's name.
        provider: String,
    },
}

/// What the caller must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Start a turn with this user message (also a retry, and a steering message after the
    /// cancelled turn ended).
    Send(String),
    /// Cancel the current turn (its tool calls still get results).
    Cancel,
    /// Run a slash command.
    Command(Command),
    /// Adopt a role (agentic mode), then send `message` if it is not empty.
    Role {
        /// The role's name.
        role: String,
        /// The first message.
        message: String,
    },
    /// Answer approval `id`.
    Answer {
        /// The request answered.
        id: u64,
        /// The answer.
        decision: Decision,
    },
    /// Leave the console.
    Quit,
}

/// What the console is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the user.
    Idle,
    /// A turn runs.
    Working,
    /// The server failed mid-reply: retry, another provider or model, or cancel.
    ServerFailed(String),
}

/// The console's whole state.
#[derive(Debug)]
pub struct App {
    /// The input being typed.
    pub editor: Editor,
    /// Messages sent before.
    pub history: InputHistory,
    /// The status line's facts.
    pub status: Status,
    /// What the console is doing.
    pub phase: Phase,
    /// The approval on screen, if any (further requests wait in `approvals`).
    pub prompt: Option<Prompt>,
    /// Approval requests behind the one on screen.
    pub approvals: VecDeque<ApprovalRequest>,
    /// What this session allowed for the rest of it.
    pub grants: Grants,
    /// Messages typed during a turn, sent after it.
    pub queued: VecDeque<String>,
    /// The reply streaming now.
    pub live_text: String,
    /// The reasoning streaming now.
    pub live_thinking: String,
    /// Ctrl-R: the query and the history index found.
    pub search: Option<(String, Option<usize>)>,
    /// The selected line of the command popup.
    pub popup_selected: usize,
    /// The list being picked from, if any.
    pub picker: Option<Picker>,
    /// Finished entries not yet written to the scrollback (see [`App::take_finished`]).
    finished: Vec<Entry>,
    /// Entries written so far (the session's length, for the status line).
    pub entries_written: usize,
    /// The last message sent (a retry sends it again).
    pub last_sent: String,
    /// The last answer, for `/copy`.
    pub last_answer: String,
    /// Something changed on screen since the last draw.
    pub dirty: bool,
    /// Arguments of the tool calls started and not yet finished, by call id.
    call_arguments: Vec<(String, String)>,
    /// When the last character was typed (an Enter right after it is part of a paste burst).
    pub(crate) last_char_at: Option<Instant>,
    /// Ctrl-C pressed once at an empty, idle prompt (a second one quits).
    quit_armed: bool,
}

impl App {
    /// A console for `status`, with the user's earlier messages as history.
    pub fn new(status: Status, history: InputHistory) -> Self {
        App {
            editor: Editor::default(),
            history,
            status,
            phase: Phase::Idle,
            prompt: None,
            approvals: VecDeque::new(),
            grants: Grants::default(),
            queued: VecDeque::new(),
            live_text: String::new(),
            live_thinking: String::new(),
            search: None,
            popup_selected: 0,
            picker: None,
            finished: Vec::new(),
            entries_written: 0,
            last_answer: String::new(),
            last_sent: String::new(),
            dirty: true,
            call_arguments: Vec::new(),
            last_char_at: None,
            quit_armed: false,
        }
    }

    /// Add a finished entry (it goes to the scrollback at the next draw).
    pub fn push_entry(&mut self, entry: Entry) {
        self.finished.push(entry);
        self.dirty = true;
    }

    /// The finished entries not yet written out; the renderer writes them above the live area.
    pub fn take_finished(&mut self) -> Vec<Entry> {
        self.entries_written += self.finished.len();
        std::mem::take(&mut self.finished)
    }

    /// Record that a frame showing the approval prompt reached the terminal at `at`.
    pub fn prompt_shown(&mut self, at: Instant) {
        if let Some(p) = &mut self.prompt {
            p.shown_at.get_or_insert(at);
        }
    }

    /// Take one event; return what the caller must do.
    pub fn update(&mut self, event: AppEvent) -> Vec<Effect> {
        self.dirty = true;
        match event {
            AppEvent::Key(key, at) => self.key(key, at),
            AppEvent::Paste(text) => {
                self.editor.insert_str(&text);
                Vec::new()
            }
            AppEvent::Run(event) => {
                self.run_event(*event);
                Vec::new()
            }
            AppEvent::Approval(request) => {
                let covered = self.status.approvals == ApprovalMode::Auto
                    // Deny rules were applied before the question was asked.
                    || self.grants.covers(&request.kind, |_| false);
                if covered {
                    self.push_entry(Entry::Approval {
                        subject: subject(&request.kind),
                        decision: "auto".into(),
                    });
                    return vec![Effect::Answer {
                        id: request.id,
                        decision: Decision::AllowOnce,
                    }];
                }
                if self.prompt.is_none() {
                    self.prompt = Some(Prompt::new(request));
                } else {
                    self.approvals.push_back(request);
                }
                Vec::new()
            }
            AppEvent::TurnEnded { outcome, error } => self.turn_ended(&outcome, error),
            AppEvent::Notice(text) => {
                self.push_entry(Entry::Notice(text));
                Vec::new()
            }
            AppEvent::Failure(text) => {
                self.push_entry(Entry::Error(text));
                Vec::new()
            }
            AppEvent::Pick(picker) => {
                self.picker = Some(picker);
                Vec::new()
            }
            AppEvent::Using { model, provider } => {
                self.status.model = model;
                self.status.provider = provider;
                Vec::new()
            }
        }
    }

    fn run_event(&mut self, event: Event) {
        match event.kind {
            EventKind::RunStarted {
                model,
                provider,
                tool_mode,
                num_ctx,
                ..
            } => {
                self.status.model = model;
                self.status.provider = provider;
                self.status.tool_mode = tool_mode;
                self.status.context_window = u64::from(num_ctx);
            }
            EventKind::LlmRequest {
                estimated_tokens, ..
            } => self.status.context_used = estimated_tokens,
            EventKind::LlmResponse {
                prompt_tokens,
                completion_tokens,
                ..
            } => {
                self.status.session_tokens += prompt_tokens + completion_tokens;
                if prompt_tokens > 0 {
                    self.status.context_used = prompt_tokens + completion_tokens;
                }
            }
            EventKind::TextDelta { text } => self.live_text.push_str(&text),
            EventKind::ReasoningDelta { text } => self.live_thinking.push_str(&text),
            EventKind::AssistantMessage {
                content, reasoning, ..
            } => {
                let thinking = reasoning.unwrap_or_else(|| std::mem::take(&mut self.live_thinking));
                if !thinking.trim().is_empty() {
                    self.push_entry(Entry::Thinking(thinking));
                }
                self.live_thinking.clear();
                // The streamed text has the call markup held back; without streaming, the
                // message's content is the reply.
                let streamed = std::mem::take(&mut self.live_text);
                let text = if streamed.trim().is_empty() {
                    content
                } else {
                    streamed
                };
                if !text.trim().is_empty() {
                    self.last_answer.clone_from(&text);
                    self.push_entry(Entry::Assistant {
                        text,
                        partial: false,
                    });
                }
            }
            EventKind::ToolResult {
                call_id,
                name,
                ok,
                output,
                ..
            } => {
                let arguments = self
                    .call_arguments
                    .iter()
                    .position(|(id, _)| *id == call_id)
                    .map(|i| self.call_arguments.swap_remove(i).1)
                    .unwrap_or_default();
                self.push_entry(Entry::Tool {
                    arguments,
                    name,
                    ok,
                    output: tool_output_text(&output),
                });
            }
            EventKind::ToolCallStarted {
                call_id,
                name,
                arguments,
                ..
            } => {
                self.status.activity = format!("running {name}");
                self.call_arguments.push((call_id, arguments.to_string()));
            }
            _ => {}
        }
    }

    fn turn_ended(&mut self, outcome: &str, error: Option<String>) -> Vec<Effect> {
        self.status.activity.clear();
        self.prompt = None;
        self.approvals.clear();
        let partial = std::mem::take(&mut self.live_text);
        if !partial.trim().is_empty() {
            self.push_entry(Entry::Assistant {
                text: partial,
                partial: true,
            });
        }
        self.live_thinking.clear();
        match outcome {
            "provider_error" => {
                let message = error.unwrap_or_else(|| "the model server failed".into());
                self.phase = Phase::ServerFailed(message);
                return Vec::new();
            }
            "completed" => {}
            "cancelled" => self.push_entry(Entry::Notice("turn cancelled".into())),
            other => self.push_entry(Entry::Error(match error {
                Some(e) => format!("turn ended: {other}: {e}"),
                None => format!("turn ended: {other}"),
            })),
        }
        self.phase = Phase::Idle;
        match self.queued.pop_front() {
            Some(next) => self.send(next),
            None => Vec::new(),
        }
    }

    fn send(&mut self, text: String) -> Vec<Effect> {
        self.push_entry(Entry::User(text.clone()));
        self.last_sent.clone_from(&text);
        self.phase = Phase::Working;
        vec![Effect::Send(text)]
    }

    fn key(&mut self, key: KeyEvent, at: Instant) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            self.dirty = false;
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c();
        }
        self.quit_armed = false;
        if self.prompt.is_some() {
            return self.prompt_key(key, at);
        }
        if let Phase::ServerFailed(_) = self.phase {
            return self.failure_key(key);
        }
        if let Some(picker) = &mut self.picker {
            return match picker.key(key) {
                Picked::Open => Vec::new(),
                Picked::Closed => {
                    self.picker = None;
                    Vec::new()
                }
                Picked::Run(command) => {
                    self.picker = None;
                    self.command(command)
                }
            };
        }
        if self.search.is_some() {
            return self.search_key(key, at);
        }
        crate::keys::editing_key(self, key, at)
    }

    fn ctrl_c(&mut self) -> Vec<Effect> {
        if self.phase == Phase::Working {
            self.status.activity = "cancelling…".into();
            return vec![Effect::Cancel];
        }
        if let Phase::ServerFailed(_) = self.phase {
            self.phase = Phase::Idle;
            return Vec::new();
        }
        if self.search.take().is_some() || !self.editor.is_empty() {
            self.editor.take();
            return Vec::new();
        }
        if self.quit_armed {
            return vec![Effect::Quit];
        }
        self.quit_armed = true;
        self.status.activity = "press Ctrl-C again (or /quit) to leave".into();
        Vec::new()
    }

    /// Enter: understand the line and act on it.
    pub(crate) fn submit(&mut self, steer: bool) -> Vec<Effect> {
        let text = self.editor.text().to_owned();
        if text.trim().is_empty() {
            return Vec::new();
        }
        let parsed = commands::parse(&text);
        let input = match parsed {
            Ok(input) => input,
            Err(e) => {
                self.push_entry(Entry::Error(e.0));
                return Vec::new();
            }
        };
        self.editor.take();
        self.history.push(&text);
        self.popup_selected = 0;
        match input {
            Input::Message(message) => {
                if self.phase != Phase::Working {
                    return self.send(message);
                }
                if steer {
                    // The turn is cancelled (its tool calls still get results), then this
                    // message goes first.
                    self.queued.push_front(message);
                    self.status.activity = "steering: cancelling the turn…".into();
                    return vec![Effect::Cancel];
                }
                self.queued.push_back(message);
                Vec::new()
            }
            Input::Role { role, message } => {
                self.status.agentic = Some(format!("@{role}"));
                if !message.is_empty() {
                    self.push_entry(Entry::User(format!("@{role} {message}")));
                    self.phase = Phase::Working;
                }
                vec![Effect::Role { role, message }]
            }
            Input::Command(command) => self.command(command),
        }
    }

    fn command(&mut self, command: Command) -> Vec<Effect> {
        match &command {
            Command::Quit => return vec![Effect::Quit],
            Command::New | Command::Resume { .. } => {
                self.status.agentic = None;
                self.status.session_tokens = 0;
                self.status.context_used = 0;
                self.grants = Grants::default();
                self.last_answer.clear();
            }
            Command::Approvals { mode: Some(mode) } => self.status.approvals = *mode,
            Command::Approvals { mode: None } => {
                let mut lines = vec![format!("approvals: {}", self.status.approvals.as_str())];
                lines.extend(
                    self.grants
                        .describe()
                        .into_iter()
                        .map(|g| format!("  allowed: {g}")),
                );
                self.push_entry(Entry::Notice(lines.join("\n")));
                return Vec::new();
            }
            Command::Workflow { name, message } => {
                self.status.agentic = Some(format!("workflow {name}"));
                if !message.is_empty() {
                    self.push_entry(Entry::User(format!("/workflow {name} {message}")));
                }
                self.phase = Phase::Working;
            }
            Command::Help => {
                self.push_entry(Entry::Notice(crate::keys::help_text()));
                return Vec::new();
            }
            _ => {}
        }
        vec![Effect::Command(command)]
    }

    fn prompt_key(&mut self, key: KeyEvent, at: Instant) -> Vec<Effect> {
        let Some(prompt) = &mut self.prompt else {
            return Vec::new();
        };
        if !prompt.accepts_key_at(at) {
            prompt.ignored_keys += 1;
            return Vec::new();
        }
        if let Some(note) = &mut prompt.note {
            match key.code {
                KeyCode::Enter => {
                    let note = std::mem::take(note);
                    return self.answer(Decision::Deny { note });
                }
                KeyCode::Esc => prompt.note = None,
                KeyCode::Backspace => {
                    note.pop();
                }
                KeyCode::Char(c) => note.push(c),
                _ => {}
            }
            return Vec::new();
        }
        match key.code {
            KeyCode::Char('y') | KeyCode::Char('1') => self.answer(Decision::AllowOnce),
            KeyCode::Char('a') | KeyCode::Char('2') => self.answer(Decision::AllowSession),
            KeyCode::Char('n') | KeyCode::Char('3') => self.answer(Decision::Deny {
                note: String::new(),
            }),
            KeyCode::Char('d') => {
                prompt.note = Some(String::new());
                Vec::new()
            }
            KeyCode::Up | KeyCode::Char('k') => {
                prompt.scroll_by(-1);
                Vec::new()
            }
            KeyCode::Down | KeyCode::Char('j') => {
                prompt.scroll_by(1);
                Vec::new()
            }
            KeyCode::PageUp => {
                prompt.scroll_by(-10);
                Vec::new()
            }
            KeyCode::PageDown | KeyCode::Char(' ') => {
                prompt.scroll_by(10);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn answer(&mut self, decision: Decision) -> Vec<Effect> {
        let Some(prompt) = self.prompt.take() else {
            return Vec::new();
        };
        if decision == Decision::AllowSession {
            self.grants.grant(&prompt.request.kind);
        }
        self.push_entry(Entry::Approval {
            subject: subject(&prompt.request.kind),
            decision: decision.as_str().into(),
        });
        self.prompt = self.approvals.pop_front().map(Prompt::new);
        vec![Effect::Answer {
            id: prompt.request.id,
            decision,
        }]
    }
}

/// What an approval is about, in one line.
fn subject(kind: &ApprovalKind) -> String {
    match kind {
        ApprovalKind::Command { command } => command.clone(),
        ApprovalKind::Write { path, .. } => format!("write {path}"),
    }
}

#[cfg(test)]
#[path = "app_tests.rs"]
mod tests;
