//! What one cycle did, counted from its session's events: tool calls (each logged as a
//! `TOOL_CALL`), memory operations, operator messages, response characters, guardrails.

use std::collections::{BTreeMap, HashMap};

use reagent_protocol::{Event, EventKind};
use serde_json::{json, Value};

use crate::log::{LogEvent, Logger, TOOL_CALL};
use crate::memory::{MEMORY_TOOLS, OPERATOR_TOOL};

/// The counts of one cycle.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) tool_calls: BTreeMap<String, u64>,
    pub(crate) memory_ops: u64,
    pub(crate) memory_write_chars: u64,
    pub(crate) operator_messages: u64,
    pub(crate) response_chars: u64,
    pub(crate) guardrails: Vec<String>,
    pub(crate) compactions: u64,
    /// The reasoning of the last assistant message, when the server kept it apart.
    pub(crate) last_reasoning: Option<String>,
    /// Arguments of calls whose result has not come yet, by call id.
    pending: HashMap<String, Value>,
}

impl Tally {
    /// Count `event`; a tool result is logged as a `TOOL_CALL` of `run_id`'s `cycle`.
    pub(crate) fn observe(&mut self, event: &Event, logger: &Logger, run_id: &str, cycle: u32) {
        match &event.kind {
            EventKind::AssistantMessage {
                content, reasoning, ..
            } => {
                self.response_chars += content.chars().count() as u64;
                self.last_reasoning.clone_from(reasoning);
            }
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
                ok,
                ..
            } => {
                *self.tool_calls.entry(name.clone()).or_default() += 1;
                if MEMORY_TOOLS.contains(&name.as_str()) {
                    self.memory_ops += 1;
                }
                if name == OPERATOR_TOOL {
                    self.operator_messages += 1;
                }
                if name == "write" && *ok {
                    let chars = arguments
                        .get("value")
                        .and_then(Value::as_str)
                        .map_or(0, |v| v.chars().count());
                    self.memory_write_chars += chars as u64;
                }
                self.pending.insert(call_id.clone(), arguments.clone());
            }
            EventKind::ToolResult {
                call_id,
                name,
                ok,
                output,
                ..
            } => {
                let parameters = self.pending.remove(call_id).unwrap_or(Value::Null);
                let output = serde_json::from_str::<Value>(output)
                    .unwrap_or_else(|_| Value::String(output.clone()));
                logger.log(LogEvent::now(
                    run_id,
                    cycle,
                    TOOL_CALL,
                    json!({"tool_name": name, "parameters": parameters, "output": output, "ok": ok}),
                ));
            }
            EventKind::Guardrail {
                guardrail, action, ..
            } => {
                self.guardrails
                    .push(format!("{}:{}", name(guardrail), name(action)));
            }
            EventKind::Compaction { .. } => self.compactions += 1,
            _ => {}
        }
    }

    /// Every tool call of the cycle.
    pub(crate) fn tool_calls_total(&self) -> u64 {
        self.tool_calls.values().sum()
    }
}

/// The serialized name of a guardrail or action (`max_iterations`, `stop`...).
fn name(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
