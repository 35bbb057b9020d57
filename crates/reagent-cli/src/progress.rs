//! Live progress on the terminal: a spinner with elapsed time while the model thinks, one line
//! per tool call, guardrails and nudges, and the answer's text as it streams.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use reagent_protocol::{Event, EventKind};

/// Renders events for a person. All output except streamed answer text goes to stderr.
pub(crate) struct Progress {
    spinner: Option<ProgressBar>,
    /// Stream answer text to stdout as it arrives (stdout is a terminal).
    live_text: bool,
    /// Text streamed since the last model request.
    streamed: Mutex<String>,
}

impl Progress {
    /// A renderer; `quiet` shows nothing.
    pub(crate) fn new(quiet: bool) -> Self {
        let spinner = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            pb
        });
        Progress {
            spinner,
            live_text: !quiet && std::io::stdout().is_terminal(),
            streamed: Mutex::new(String::new()),
        }
    }

    /// Whether the answer text was streamed to stdout in full already.
    pub(crate) fn streamed_answer(&self, answer: &str) -> bool {
        self.live_text
            && self
                .streamed
                .lock()
                .map(|s| !answer.trim().is_empty() && s.trim() == answer.trim())
                .unwrap_or(false)
    }

    fn line(&self, text: &str) {
        match &self.spinner {
            Some(pb) => pb.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Render one event.
    pub(crate) fn show(&self, event: &Event, quiet: bool) {
        if quiet {
            return;
        }
        match &event.kind {
            EventKind::RunStarted { model, provider, tool_mode, num_ctx, workspace, .. } => self.line(&format!(
                "reagent: {model} via {provider} ({tool_mode} tools, num_ctx {num_ctx}) in {workspace}"
            )),
            EventKind::LlmRequest { iteration, .. } => {
                if let Ok(mut s) = self.streamed.lock() {
                    s.clear();
                }
                if let Some(pb) = &self.spinner {
                    pb.reset_elapsed();
                    pb.set_message(format!("model thinking (iteration {iteration})"));
                    pb.enable_steady_tick(Duration::from_millis(100));
                }
            }
            EventKind::LlmResponse { .. } => {
                if let Some(pb) = &self.spinner {
                    pb.disable_steady_tick();
                    pb.finish_and_clear();
                }
            }
            EventKind::TextDelta { text } => {
                if let Ok(mut s) = self.streamed.lock() {
                    s.push_str(text);
                }
                if self.live_text {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(text.as_bytes());
                    let _ = out.flush();
                }
            }
            EventKind::ToolCall { name, arguments, ok, duration_ms, summary, .. } => {
                let mark = if *ok { "ok" } else { "FAILED" };
                let args = one_line(&arguments.to_string(), 100);
                self.line(&format!("  -> {name} {args}  [{mark}, {duration_ms} ms] {}", one_line(summary, 100)));
            }
            EventKind::Guardrail { guardrail, action, detail } => {
                self.line(&format!("  !! guardrail {}: {} ({detail})", guardrail.as_str(), action.as_str()));
            }
            EventKind::Nudge { reason, count } => self.line(&format!("  .. nudge {count} ({reason})")),
            EventKind::Retry { attempt, delay_ms, error } => {
                self.line(&format!("  .. retry after attempt {attempt} in {delay_ms} ms: {error}"));
            }
            EventKind::Checkpoint { method, location, .. } => {
                self.line(&format!("  .. checkpoint ({method}) at {location}"));
            }
            EventKind::VerificationCheck { round, check, passed, output, .. } => {
                let mark = if *passed { "passed" } else { "FAILED" };
                let first = output.lines().next().unwrap_or_default();
                self.line(&format!("  == check {check} (round {round}): {mark} {}", one_line(first, 100)));
            }
            EventKind::Attempt { number, of, .. } => self.line(&format!("reagent: attempt {number} of {of}")),
            _ => {}
        }
    }
}

/// Escape control characters and cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let mut out: String = s
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .take(max)
        .collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}
