//! Rebuilding a session's conversation from its events alone — the proof that the events are
//! complete, and what lets a stored run be shown, replayed or continued without a snapshot.

use std::collections::HashMap;

use reagent_protocol::{Event, EventKind, Message, ToolCall};
use reagent_tools::ToolResult;
use serde_json::Value;

use crate::config::ToolMode;
use crate::history::OPENING_MESSAGES;
use crate::prompts;

/// Why a conversation could not be rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RebuildError {
    /// An event that adds to the conversation came before any `run_started`.
    NotStarted {
        /// The event's `seq`.
        seq: u64,
    },
    /// A tool result was cut at the event output cap, so the message the model saw is lost.
    TruncatedResult {
        /// The call's id.
        call_id: String,
    },
    /// `run_started` names a tool mode this version does not know.
    UnknownToolMode(String),
    /// A compaction removed more messages than there were.
    CompactionOutOfRange {
        /// The event's `seq`.
        seq: u64,
    },
    /// The events rebuild another conversation than the snapshot was taken of (messages, text
    /// bytes): a run of the session was deleted, or events are missing.
    Mismatch {
        /// What the snapshot recorded.
        expected: (usize, usize),
        /// What the events rebuilt.
        found: (usize, usize),
    },
    /// A snapshot that left its messages to the events was resumed before they were restored.
    MessagesNotRestored,
}

impl std::fmt::Display for RebuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RebuildError::NotStarted { seq } => {
                write!(f, "event {seq} adds to a conversation that has not started")
            }
            RebuildError::TruncatedResult { call_id } => write!(
                f,
                "the result of call {call_id} was cut at the event output cap; raise event_output_cap"
            ),
            RebuildError::UnknownToolMode(mode) => write!(f, "unknown tool mode '{mode}'"),
            RebuildError::CompactionOutOfRange { seq } => {
                write!(f, "compaction event {seq} removes more messages than there are")
            }
            RebuildError::Mismatch { expected, found } => write!(
                f,
                "the stored events rebuild {} messages of {} bytes, but the saved session had {} \
                 of {} bytes (a run of the session was deleted, or events are missing)",
                found.0, found.1, expected.0, expected.1
            ),
            RebuildError::MessagesNotRestored => write!(
                f,
                "the saved session keeps its messages in the events, which were not given"
            ),
        }
    }
}

impl std::error::Error for RebuildError {}

/// The conversation a session holds after the runs whose events are given, in order (one run,
/// or a session's runs one after another).
pub fn rebuild_transcript<'a>(
    events: impl IntoIterator<Item = &'a Event>,
) -> Result<Vec<Message>, RebuildError> {
    let mut messages: Vec<Message> = Vec::new();
    let mut mode: Option<ToolMode> = None;
    // The arguments of each call, by id, for the plain-text labels of the text modes.
    let mut arguments: HashMap<String, Value> = HashMap::new();
    for event in events {
        let started =
            |mode: Option<ToolMode>| mode.ok_or(RebuildError::NotStarted { seq: event.seq });
        match &event.kind {
            EventKind::RunStarted {
                task,
                tool_mode,
                system_prompt,
                follow_up,
                ..
            } => {
                mode = Some(
                    tool_mode
                        .parse()
                        .map_err(|_| RebuildError::UnknownToolMode(tool_mode.clone()))?,
                );
                if !follow_up {
                    messages = vec![
                        Message::system(system_prompt.clone()),
                        Message::user(task.clone()),
                    ];
                }
            }
            EventKind::AssistantMessage {
                content,
                reasoning,
                tool_calls,
                ..
            } => {
                started(mode)?;
                let mut message = Message::assistant(content.clone());
                message.reasoning = reasoning.clone();
                message.tool_calls = tool_calls.clone();
                messages.push(message);
            }
            EventKind::ToolCallStarted {
                call_id,
                arguments: args,
                ..
            } => {
                arguments.insert(call_id.clone(), args.clone());
            }
            EventKind::ToolResult {
                call_id,
                name,
                output,
                truncated,
                ..
            } => {
                let mode = started(mode)?;
                if *truncated {
                    return Err(RebuildError::TruncatedResult {
                        call_id: call_id.clone(),
                    });
                }
                let call = ToolCall {
                    id: call_id.clone(),
                    name: name.clone(),
                    arguments: Value::Null,
                };
                let args = arguments.remove(call_id).unwrap_or(Value::Null);
                let result = serde_json::from_str(output).map_or_else(
                    |_| ToolResult::err(output.clone()),
                    |v| ToolResult::from_json(&v),
                );
                messages.push(prompts::tool_result_message(
                    mode,
                    &call,
                    &args,
                    &result,
                    output.clone(),
                ));
            }
            EventKind::UserMessage { content, .. } => {
                started(mode)?;
                messages.push(Message::user(content.clone()));
            }
            EventKind::Compaction {
                messages_removed,
                digest,
                ..
            } => {
                started(mode)?;
                let end = OPENING_MESSAGES + messages_removed;
                if end > messages.len() {
                    return Err(RebuildError::CompactionOutOfRange { seq: event.seq });
                }
                messages.drain(OPENING_MESSAGES..end);
                messages.push(Message::user(digest.clone()));
            }
            _ => {}
        }
    }
    Ok(messages)
}
