//! The console on a terminal: raw mode, bracketed paste, no mouse capture; ratatui with an
//! inline viewport (finished entries go into the terminal's own scrollback with
//! `insert_before`; the live area stays at the bottom). Three parts talk over channels:
//!
//! - a thread reading the terminal (keys stamped with their arrival time);
//! - the worker task, which owns the [`Chat`] and runs turns and commands one at a time;
//! - this loop, which feeds everything to [`App::update`], carries out its effects, and draws
//!   only when something changed (nothing while idle; at most every [`FRAME`] while streaming).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_console::approval::{ApprovalKind, ApprovalRequest, Decision};
use reagent_console::commands::{ApprovalMode, Command};
use reagent_console::ratatui::backend::CrosstermBackend;
use reagent_console::ratatui::crossterm::event::{
    self as term, DisableBracketedPaste, EnableBracketedPaste,
};
use reagent_console::ratatui::crossterm::execute;
use reagent_console::ratatui::crossterm::terminal::{disable_raw_mode, enable_raw_mode};
use reagent_console::ratatui::{Terminal, TerminalOptions, Viewport};
use reagent_console::render::{self, Theme};
use reagent_console::{App, AppEvent, Effect, Entry, InputHistory, Status};
use reagent_protocol::{CancellationToken, Role};
use reagent_tools::{Approval, Approver, Verdict};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::act::{self, Acted};
use super::{Chat, ChatArgs};
use crate::config::FileConfig;
use crate::exit::ExitCode;

/// The shortest time between two frames while something streams.
const FRAME: Duration = Duration::from_millis(33);

enum UiMsg {
    Term(term::Event, Instant),
    App(AppEvent),
}

/// What the worker is asked to do.
enum Work {
    Send(String),
    Command(Command),
    Role { role: String, message: String },
}

/// Asks the console (through the loop) and waits for the answer, on the tools' blocking thread.
struct ConsoleApprover {
    ui: UnboundedSender<UiMsg>,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, std::sync::mpsc::Sender<Decision>>>,
}

impl Approver for ConsoleApprover {
    fn approve(&self, asked: &Approval) -> Verdict {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = std::sync::mpsc::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id, tx);
        }
        let kind = match asked {
            Approval::Write { path, diff } => ApprovalKind::Write {
                path: path.clone(),
                diff: diff.clone(),
            },
            other => ApprovalKind::Command {
                command: other.summary(),
            },
        };
        let request = ApprovalRequest { id, kind };
        if self
            .ui
            .send(UiMsg::App(AppEvent::Approval(request)))
            .is_err()
        {
            return Verdict::DENY;
        }
        // A cancelled turn drops the sender: the action is refused.
        match rx.recv() {
            Ok(Decision::AllowOnce | Decision::AllowSession) => Verdict::Allow,
            Ok(Decision::Deny { note }) if !note.trim().is_empty() => Verdict::Deny {
                note: Some(note.trim().to_owned()),
            },
            Ok(Decision::Deny { .. }) | Err(_) => Verdict::DENY,
        }
    }
}

impl ConsoleApprover {
    fn answer(&self, id: u64, decision: Decision) {
        if let Some(tx) = self.waiting.lock().ok().and_then(|mut w| w.remove(&id)) {
            let _ = tx.send(decision);
        }
    }

    fn refuse_all(&self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

/// Puts the terminal back however the console ends, stderr included.
struct TerminalGuard {
    /// The terminal's stderr while it is pointed at the log file (see [`stderr_to_file`]).
    saved_stderr: Option<i32>,
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(std::io::stdout(), DisableBracketedPaste);
        let _ = disable_raw_mode();
        if let Some(fd) = self.saved_stderr.take() {
            // SAFETY: `fd` is the duplicate of stderr made by `stderr_to_file`, still open.
            unsafe {
                libc::dup2(fd, 2);
                libc::close(fd);
            }
        }
        eprintln!();
    }
}

/// While the console owns the screen, diagnostics (log lines on stderr) would scribble over it:
/// stderr goes to `~/.cache/reagent/chat.log` instead. Returns the terminal's stderr, to put
/// back, and the log file's path; `None` if the file cannot be opened (stderr stays).
fn stderr_to_file() -> Option<(i32, std::path::PathBuf)> {
    use std::os::fd::AsRawFd;
    let path = std::path::PathBuf::from(std::env::var_os("HOME")?).join(".cache/reagent/chat.log");
    std::fs::create_dir_all(path.parent()?).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    // SAFETY: plain fd calls on descriptors this process owns; `file` stays open until dup2
    // has made fd 2 its copy.
    unsafe {
        let saved = libc::dup(2);
        if saved < 0 {
            return None;
        }
        if libc::dup2(file.as_raw_fd(), 2) < 0 {
            libc::close(saved);
            return None;
        }
        Some((saved, path))
    }
}

/// `reagent chat` on a terminal.
pub(crate) async fn run(args: &ChatArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let (ui_tx, mut ui_rx) = unbounded_channel();
    let approver = Arc::new(ConsoleApprover {
        ui: ui_tx.clone(),
        next: AtomicU64::new(1),
        waiting: Mutex::new(HashMap::new()),
    });
    let chat = Chat::open(args, file, Some(approver.clone() as Arc<dyn Approver>)).await?;
    let approvals = if args.run.read_only {
        ApprovalMode::ReadOnly
    } else {
        ApprovalMode::Ask
    };
    let history: Vec<String> = chat
        .session
        .messages()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .collect();
    let resumed = history.len();
    let mut app = App::new(
        Status::new(chat.model(), chat.provider_name(), approvals),
        InputHistory::with_entries(history),
    );
    app.push_entry(Entry::Notice(format!(
        "reagent chat — session {}{}\n{}\nType a message, / for commands, /help for keys.",
        chat.session.id(),
        if resumed > 0 {
            format!(" (resumed: {resumed} messages before)")
        } else {
            String::new()
        },
        chat.provider_line()
    )));

    let turn_cancel = Arc::new(Mutex::new(CancellationToken::new()));
    let (work_tx, work_rx) = unbounded_channel();
    let worker = tokio::spawn(worker(chat, work_rx, ui_tx.clone(), turn_cancel.clone()));

    let redirected = stderr_to_file();
    if let Some((_, log)) = &redirected {
        app.push_entry(Entry::Notice(format!(
            "(diagnostics go to {})",
            log.display()
        )));
    }
    let guard = TerminalGuard {
        saved_stderr: redirected.map(|(fd, _)| fd),
    };
    enable_raw_mode()?;
    execute!(std::io::stdout(), EnableBracketedPaste)?;
    let (_, rows) = reagent_console::ratatui::crossterm::terminal::size()?;
    let mut terminal = Terminal::with_options(
        CrosstermBackend::new(std::io::stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(inline_height(rows)),
        },
    )?;
    // After the viewport asked where the cursor is: the reader must not take that answer.
    let (resume_reader, resumed) = std::sync::mpsc::channel();
    spawn_reader(ui_tx, resumed);
    let theme = Theme::from_env();
    let mut last_draw = Instant::now() - FRAME;
    loop {
        if app.dirty {
            let wait = FRAME.saturating_sub(last_draw.elapsed());
            let streaming = !app.live_text.is_empty() || !app.live_thinking.is_empty();
            if !streaming || wait.is_zero() {
                render::frame(&mut terminal, &mut app, theme)?;
                last_draw = Instant::now();
            }
        }
        let msg = if app.dirty {
            // Something waits for its frame: wake for it, or earlier for input.
            match tokio::time::timeout(FRAME.saturating_sub(last_draw.elapsed()), ui_rx.recv())
                .await
            {
                Ok(msg) => msg,
                Err(_) => continue,
            }
        } else {
            ui_rx.recv().await
        };
        let Some(msg) = msg else { break };
        let effects = match msg {
            UiMsg::Term(term::Event::Key(key), at) => app.update(AppEvent::Key(key, at)),
            UiMsg::Term(term::Event::Paste(text), _) => app.update(AppEvent::Paste(text)),
            UiMsg::Term(term::Event::Resize(..), _) => {
                // Drawn at once: the inline viewport is placed again and cleared from its top
                // (ratatui's autoresize asks where the cursor is while the reader stands
                // aside), so no stale layout stays.
                app.dirty = true;
                let drawn = render::frame(&mut terminal, &mut app, theme);
                last_draw = Instant::now();
                let _ = resume_reader.send(());
                drawn?;
                Vec::new()
            }
            UiMsg::Term(..) => Vec::new(),
            UiMsg::App(event) => app.update(event),
        };
        let mut quit = false;
        for effect in effects {
            match effect {
                Effect::Send(message) => {
                    let _ = work_tx.send(Work::Send(message));
                }
                Effect::Cancel => {
                    if let Ok(token) = turn_cancel.lock() {
                        token.cancel();
                    }
                    approver.refuse_all();
                }
                Effect::Command(Command::Copy) => {
                    let said = copy(&app.last_answer);
                    app.update(said);
                }
                Effect::Command(command) => {
                    let _ = work_tx.send(Work::Command(command));
                }
                Effect::Role { role, message } => {
                    let _ = work_tx.send(Work::Role { role, message });
                }
                Effect::Answer { id, decision } => approver.answer(id, decision),
                Effect::Quit => quit = true,
            }
        }
        if quit {
            break;
        }
    }
    if let Ok(token) = turn_cancel.lock() {
        token.cancel();
    }
    approver.refuse_all();
    render::frame(&mut terminal, &mut app, theme)?;
    drop(work_tx);
    let _ = worker.await;
    drop(guard);
    Ok(ExitCode::Completed)
}

/// `/copy`: the last answer to the clipboard through the terminal (OSC 52, so it works over
/// SSH), and to a file as a fallback (`~/.cache/reagent/last-answer.md`).
fn copy(answer: &str) -> AppEvent {
    use std::io::Write as _;
    if answer.is_empty() {
        return AppEvent::Failure("/copy: no answer yet".into());
    }
    let mut out = std::io::stdout();
    let _ = out
        .write_all(reagent_console::clipboard::osc52(answer).as_bytes())
        .and_then(|()| out.flush());
    let file = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_default()
        .join(".cache/reagent/last-answer.md");
    let saved = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&file, answer));
    AppEvent::Notice(match saved {
        Ok(()) => format!(
            "copied the last answer to the clipboard (OSC 52) and to {}",
            file.display()
        ),
        Err(e) => format!(
            "copied to the clipboard (OSC 52); {} not written: {e}",
            file.display()
        ),
    })
}

/// The live area's height for a terminal of `rows` rows: about half, 6 to 14 rows.
fn inline_height(rows: u16) -> u16 {
    (rows / 2).clamp(6, 14).min(rows.max(1))
}

/// How long the reader stands aside after a resize at most.
const RESIZE_PAUSE: Duration = Duration::from_secs(2);

/// Read the terminal on a thread of its own, blocking (no wake-up while idle): every event
/// stamped with when it arrived. The blocked read holds crossterm's input lock, which ratatui
/// needs only after a size change (its inline viewport asks where the cursor is); a size
/// change wakes the read with a resize event, after which the reader stands aside until
/// `resumed` (the loop drew the new layout) before reading on.
fn spawn_reader(ui: UnboundedSender<UiMsg>, resumed: std::sync::mpsc::Receiver<()>) {
    std::thread::spawn(move || {
        while let Ok(event) = term::read() {
            let resize = matches!(event, term::Event::Resize(..));
            if ui.send(UiMsg::Term(event, Instant::now())).is_err() {
                break;
            }
            if resize {
                let _ = resumed.recv_timeout(RESIZE_PAUSE);
            }
        }
    });
}

/// Runs turns and commands one at a time, reporting to the loop.
async fn worker(
    mut chat: Chat,
    mut work: UnboundedReceiver<Work>,
    ui: UnboundedSender<UiMsg>,
    turn_cancel: Arc<Mutex<CancellationToken>>,
) {
    let tell = |event: AppEvent| {
        let _ = ui.send(UiMsg::App(event));
    };
    while let Some(job) = work.recv().await {
        let acted = match job {
            Work::Send(message) => Ok(Acted::Send(message)),
            Work::Command(command) => act::command(&mut chat, command).await,
            Work::Role { role, message } => act::role(&mut chat, &role, message),
        };
        let message = match acted {
            Ok(Acted::Send(message)) => message,
            Ok(Acted::Say(text)) => {
                tell(AppEvent::Notice(text));
                tell(AppEvent::Using {
                    model: chat.model().to_owned(),
                    provider: chat.provider_name().to_owned(),
                });
                continue;
            }
            Ok(Acted::Pick(picker)) => {
                tell(AppEvent::Pick(picker));
                continue;
            }
            Ok(Acted::Quit) => break,
            Err(e) => {
                tell(AppEvent::Failure(format!("{e:#}")));
                // A failed workflow or role leaves the console waiting for the user.
                tell(AppEvent::TurnEnded {
                    outcome: "completed".into(),
                    error: None,
                });
                continue;
            }
        };
        let cancel = CancellationToken::new();
        if let Ok(mut slot) = turn_cancel.lock() {
            *slot = cancel.clone();
        }
        let events = ui.clone();
        let on_event: super::OnEvent = Arc::new(move |event| {
            let _ = events.send(UiMsg::App(AppEvent::Run(Box::new(event.clone()))));
        });
        let (result, store_error) = chat.turn(&message, on_event, &cancel).await;
        if let Some(e) = store_error {
            tell(AppEvent::Failure(format!("the turn was not saved: {e}")));
        }
        tell(AppEvent::TurnEnded {
            outcome: result.outcome.as_str().to_owned(),
            error: result.error.map(|e| e.message),
        });
    }
}
