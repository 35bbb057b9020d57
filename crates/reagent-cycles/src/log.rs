//! The study's log: one JSON object a line with `timestamp`, `run_id`, `cycle_number`,
//! `event_type` and `payload` (ContReAct-Ollama's shape). Every event also goes to the store
//! (`cycle_events`). One task writes both, in the order the events happened; each line is
//! flushed as it is written, so a killed experiment loses nothing it logged.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use reagent_store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A cycle begins.
pub const CYCLE_START: &str = "CYCLE_START";
/// A model call (`prompt_messages`, `response_message`, `model_options`).
pub const LLM_INVOCATION: &str = "LLM_INVOCATION";
/// A tool call (`tool_name`, `parameters`, `output`).
pub const TOOL_CALL: &str = "TOOL_CALL";
/// A cycle ends (`final_reflection`, `metrics`).
pub const CYCLE_END: &str = "CYCLE_END";

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEvent {
    /// When (RFC 3339, UTC, milliseconds).
    pub timestamp: String,
    /// The experiment.
    pub run_id: String,
    /// The cycle, from 1.
    pub cycle_number: u32,
    /// One of [`CYCLE_START`], [`LLM_INVOCATION`], [`TOOL_CALL`], [`CYCLE_END`].
    pub event_type: String,
    /// What happened.
    pub payload: Value,
}

impl LogEvent {
    /// An event of `run_id`'s cycle `cycle`, stamped now.
    pub fn now(run_id: &str, cycle: u32, event_type: &str, payload: Value) -> Self {
        LogEvent {
            timestamp: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            run_id: run_id.to_owned(),
            cycle_number: cycle,
            event_type: event_type.to_owned(),
            payload,
        }
    }
}

/// Watches the log as it is written (the CLI's progress lines).
pub type Watcher = Arc<dyn Fn(&LogEvent) + Send + Sync>;

enum Message {
    Event(LogEvent),
    Flush(oneshot::Sender<Option<String>>),
}

/// Sends events to the writing task. Cheap to clone.
#[derive(Clone)]
pub struct Logger {
    tx: mpsc::UnboundedSender<Message>,
}

impl Logger {
    /// Start the writing task: events go to the store, to `file` (appended to) when given,
    /// and to `watcher`. Opening the file is the only error; later write errors are
    /// reported by [`Logger::flush`].
    pub fn start(
        store: Store,
        file: Option<&Path>,
        watcher: Option<Watcher>,
    ) -> Result<Logger, crate::CyclesError> {
        let mut out = match file {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| log_error(path, &e))?;
                }
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| log_error(path, &e))?;
                Some((path.to_path_buf(), f))
            }
            None => None,
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        tokio::spawn(async move {
            let mut error: Option<String> = None;
            while let Some(message) = rx.recv().await {
                match message {
                    Message::Event(event) => {
                        if let Some(w) = &watcher {
                            w(&event);
                        }
                        let line = serde_json::to_string(&event).unwrap_or_default();
                        if let Some((path, f)) = &mut out {
                            if let Err(e) = writeln!(f, "{line}").and_then(|()| f.flush()) {
                                error.get_or_insert_with(|| log_error(path, &e).to_string());
                            }
                        }
                        let payload = event.payload.to_string();
                        if let Err(e) = store
                            .append_cycle_event(
                                &event.run_id,
                                event.cycle_number,
                                &event.timestamp,
                                &event.event_type,
                                &payload,
                            )
                            .await
                        {
                            error.get_or_insert_with(|| e.to_string());
                        }
                    }
                    Message::Flush(done) => {
                        let _ = done.send(error.clone());
                    }
                }
            }
        });
        Ok(Logger { tx })
    }

    /// Log `event`.
    pub fn log(&self, event: LogEvent) {
        let _ = self.tx.send(Message::Event(event));
    }

    /// Wait until every event logged so far is written; the first write error, if any.
    pub async fn flush(&self) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        if self.tx.send(Message::Flush(tx)).is_err() {
            return Some("the log writer stopped".to_owned());
        }
        rx.await
            .unwrap_or_else(|_| Some("the log writer stopped".to_owned()))
    }
}

fn log_error(path: &Path, e: &std::io::Error) -> crate::CyclesError {
    crate::CyclesError::Log {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Read a JSONL log: every line must be a [`LogEvent`] with a known `event_type` and the payload
/// fields that type requires; the error names the line.
pub fn read_jsonl(path: &Path) -> Result<Vec<LogEvent>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| format!("{} line {}: {e}", path.display(), i + 1);
        let event: LogEvent = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        validate(&event).map_err(at)?;
        events.push(event);
    }
    Ok(events)
}

/// Whether an event has the payload its type requires.
pub fn validate(event: &LogEvent) -> Result<(), String> {
    let required: &[&str] = match event.event_type.as_str() {
        CYCLE_START => &[],
        LLM_INVOCATION => &["prompt_messages", "response_message", "model_options"],
        TOOL_CALL => &["tool_name", "parameters", "output"],
        CYCLE_END => &["final_reflection", "metrics"],
        other => return Err(format!("unknown event_type `{other}`")),
    };
    if !event.payload.is_object() {
        return Err(format!("{}: payload is not an object", event.event_type));
    }
    for key in required {
        if event.payload.get(key).is_none() {
            return Err(format!("{}: payload has no `{key}`", event.event_type));
        }
    }
    if event.event_type == CYCLE_END {
        for key in crate::runner::REQUIRED_METRICS {
            if event.payload["metrics"].get(key).is_none() {
                return Err(format!("CYCLE_END: metrics has no `{key}`"));
            }
        }
    }
    Ok(())
}

/// The default log file of experiment `run_id`: `logs/RUN_ID.jsonl`.
pub fn default_path(run_id: &str) -> PathBuf {
    Path::new("logs").join(format!("{run_id}.jsonl"))
}
