//! Replaying a recorded run through today's loop: the recorded model replies stand in for the
//! model and the recorded tool results for the tools, and the first step where today's loop
//! decides differently (other calls extracted, another guardrail, another ending) is reported.
//! A folder of real runs becomes a regression suite for the parser and the guardrails.
//!
//! Limits: a reply the recording discarded as truncated (and retried) has no text in the events,
//! so a run with a truncation retry reports the retry as a difference; a tool result cut at the
//! event output cap cannot be replayed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, Event, EventKind, FinishReason, Message,
    ModelInfo, Provider, ProviderError, SignalSink, ToolSpec, Usage,
};
use reagent_tools::{Tool, ToolContext, ToolRegistry, ToolResult, Workspace};
use serde_json::Value;

use crate::config::{AgentConfig, ToolMode};
use crate::verify::{Check, CheckResult};
use crate::{Agent, EventSink, Session};

/// One decision of the loop that a replay compares.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// The calls extracted from a reply (name and arguments), with the extraction layer.
    Calls {
        /// The calls, as `name(arguments)`.
        calls: Vec<String>,
        /// The layer that found them.
        layer: Option<String>,
    },
    /// A guardrail fired.
    Guardrail(String),
    /// The run ended.
    End(String),
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Calls { calls, .. } if calls.is_empty() => f.write_str("no tool call"),
            Decision::Calls { calls, layer } => {
                let layer = layer.as_deref().unwrap_or("none");
                write!(f, "calls {} (layer {layer})", calls.join(", "))
            }
            Decision::Guardrail(g) => write!(f, "guardrail {g}"),
            Decision::End(outcome) => write!(f, "end: {outcome}"),
        }
    }
}

/// Where today's loop first acted differently from the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The loop iteration (1-based) of today's loop in which it happened (of the recording
    /// when today's loop had already ended).
    pub iteration: u32,
    /// What the recording did there (`None`: the recording had ended).
    pub recorded: Option<Decision>,
    /// What today's loop did (`None`: today's loop had ended).
    pub replayed: Option<Decision>,
}

/// The outcome of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayReport {
    /// Decisions compared.
    pub decisions: usize,
    /// The first difference, if any.
    pub divergence: Option<Divergence>,
}

/// Why a run cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError(pub String);

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

/// Replay the run recorded in `events` (one run's events, in order) through today's loop with
/// `config` (its model and tool mode are taken from the recording) and the tools of `specs`.
pub async fn replay(
    events: &[Event],
    mut config: AgentConfig,
    specs: &[ToolSpec],
    workspace: Arc<Workspace>,
) -> Result<ReplayReport, ReplayError> {
    let Some(EventKind::RunStarted {
        task,
        model,
        tool_mode,
        num_ctx,
        follow_up,
        ..
    }) = events.first().map(|e| &e.kind)
    else {
        return Err(ReplayError(
            "the events do not start with run_started".into(),
        ));
    };
    if *follow_up {
        return Err(ReplayError(
            "a follow-up run continues an earlier conversation; replay the session's first run"
                .into(),
        ));
    }
    config.model = model.clone();
    config.tool_mode = tool_mode
        .parse::<ToolMode>()
        .map_err(|e| ReplayError(format!("run_started: {e}")))?;
    config.options.num_ctx = Some(*num_ctx);
    let provider = Arc::new(RecordedModel::from_events(events));
    let results = Arc::new(Mutex::new(recorded_results(events)?));
    let mut tools = ToolRegistry::new();
    for spec in specs {
        tools
            .register(Arc::new(RecordedTool {
                spec: spec.clone(),
                results: results.clone(),
            }))
            .map_err(|e| ReplayError(format!("run_started: {e}")))?;
    }
    // The recording's checks, answered with their recorded results in the order they ran.
    let (checks, results, rounds) = recorded_checks(events)?;
    config.verify.checks = checks;
    config.verify.retries = rounds.saturating_sub(1);
    config.verify.checkpoints = false;
    let mut agent = Agent::new(provider, Arc::new(tools), config);
    let results = Mutex::new(results);
    agent.check_runner = Some(Arc::new(move |check: &Check| {
        let next = results.lock().ok().and_then(|mut r| r.pop_front());
        match next {
            Some(result) if result.check == check.to_string() => result,
            _ => CheckResult {
                check: check.to_string(),
                passed: false,
                output: "replay: the recording ran no such check here".into(),
                duration: Duration::ZERO,
            },
        }
    }));
    let agent = Arc::new(agent);
    let replayed = Arc::new(Mutex::new(Vec::new()));
    let seen = replayed.clone();
    let sink = EventSink::new(
        &crate::new_run_id(),
        Arc::new(move |e| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(e);
            }
        }),
    );
    Session::new(agent, workspace)
        .run(task, &sink, &CancellationToken::new())
        .await;
    let replayed = replayed.lock().map(|e| e.clone()).unwrap_or_default();
    Ok(compare(&decisions(events), &decisions(&replayed)))
}

/// The checks a recording ran (each once, in the order of its first round), every result in
/// the order it was given, and the number of rounds.
fn recorded_checks(
    events: &[Event],
) -> Result<(Vec<Check>, VecDeque<CheckResult>, u32), ReplayError> {
    let (mut checks, mut results, mut rounds) = (Vec::new(), VecDeque::new(), 0);
    for event in events {
        let EventKind::VerificationCheck {
            round,
            check,
            passed,
            output,
            duration_ms,
        } = &event.kind
        else {
            continue;
        };
        rounds = rounds.max(*round);
        let parsed: Check = check
            .parse()
            .map_err(|e| ReplayError(format!("verification_check {}: {e}", event.seq)))?;
        if !checks.contains(&parsed) {
            checks.push(parsed);
        }
        results.push_back(CheckResult {
            check: check.clone(),
            passed: *passed,
            output: output.clone(),
            duration: Duration::from_millis(*duration_ms),
        });
    }
    Ok((checks, results, rounds))
}

/// The decisions of a run, each with the iteration it was made in.
fn decisions(events: &[Event]) -> Vec<(u32, Decision)> {
    let mut iteration = 0;
    let mut out = Vec::new();
    for event in events {
        match &event.kind {
            EventKind::LlmRequest { iteration: i, .. } => iteration = *i,
            EventKind::AssistantMessage {
                calls, parse_layer, ..
            } => out.push((
                iteration,
                Decision::Calls {
                    calls: calls
                        .iter()
                        .map(|c| format!("{}({})", c.name, c.arguments))
                        .collect(),
                    layer: parse_layer.clone(),
                },
            )),
            EventKind::Guardrail {
                guardrail, action, ..
            } => out.push((
                iteration,
                Decision::Guardrail(format!("{} {}", guardrail.as_str(), action.as_str())),
            )),
            EventKind::RunFinished { outcome, .. } => {
                out.push((iteration, Decision::End(outcome.as_str().to_owned())))
            }
            _ => {}
        }
    }
    out
}

fn compare(recorded: &[(u32, Decision)], replayed: &[(u32, Decision)]) -> ReplayReport {
    let n = recorded.len().max(replayed.len());
    for i in 0..n {
        let (r, p) = (recorded.get(i), replayed.get(i));
        if r.map(|x| &x.1) != p.map(|x| &x.1) {
            return ReplayReport {
                decisions: i,
                divergence: Some(Divergence {
                    iteration: p.or(r).map_or(0, |x| x.0),
                    recorded: r.map(|x| x.1.clone()),
                    replayed: p.map(|x| x.1.clone()),
                }),
            };
        }
    }
    ReplayReport {
        decisions: n,
        divergence: None,
    }
}

/// The recorded tool results, in order: (tool name, result).
fn recorded_results(events: &[Event]) -> Result<VecDeque<(String, ToolResult)>, ReplayError> {
    let mut out = VecDeque::new();
    for event in events {
        if let EventKind::ToolResult {
            call_id,
            name,
            output,
            truncated,
            ..
        } = &event.kind
        {
            if *truncated {
                return Err(ReplayError(format!(
                    "the result of call {call_id} was cut at the event output cap"
                )));
            }
            let value: Value = serde_json::from_str(output)
                .map_err(|e| ReplayError(format!("the result of call {call_id}: {e}")))?;
            out.push_back((name.clone(), ToolResult::from_json(&value)));
        }
    }
    Ok(out)
}

/// A model that answers with the recorded replies, in order.
struct RecordedModel {
    provider: String,
    num_ctx: Option<u32>,
    replies: Mutex<VecDeque<ChatResponse>>,
}

impl RecordedModel {
    fn from_events(events: &[Event]) -> Self {
        let mut replies = VecDeque::new();
        let mut provider = String::new();
        let mut num_ctx = None;
        let mut last_response = (Usage::default(), FinishReason::Stop, String::new());
        for event in events {
            match &event.kind {
                EventKind::RunStarted {
                    provider: p,
                    num_ctx: n,
                    ..
                } => {
                    provider = p.clone();
                    num_ctx = Some(*n);
                }
                EventKind::LlmResponse {
                    prompt_tokens,
                    completion_tokens,
                    finish_reason,
                    endpoint,
                    ..
                } => {
                    let finish = match finish_reason.as_str() {
                        "stop" => FinishReason::Stop,
                        "length" => FinishReason::Length,
                        "tool_calls" => FinishReason::ToolCalls,
                        other => FinishReason::Other(other.to_owned()),
                    };
                    let usage = Usage {
                        prompt_tokens: *prompt_tokens,
                        completion_tokens: *completion_tokens,
                        cached_prompt_tokens: None,
                    };
                    last_response = (usage, finish, endpoint.clone());
                }
                // The files the loop read for the model before its first turn: the loop's
                // own calls, not a reply.
                EventKind::AssistantMessage { parse_layer, .. }
                    if parse_layer.as_deref() == Some("preload") => {}
                EventKind::AssistantMessage {
                    content,
                    reasoning,
                    calls,
                    parse_layer,
                    raw,
                    ..
                } => {
                    let mut message = Message::assistant(raw.clone().unwrap_or(content.clone()));
                    message.reasoning = reasoning.clone();
                    if parse_layer.as_deref() == Some("native") {
                        message.tool_calls = calls.clone();
                    }
                    let (usage, finish, endpoint) = last_response.clone();
                    replies.push_back(ChatResponse {
                        message,
                        finish,
                        usage,
                        latency: Duration::ZERO,
                        endpoint,
                    });
                }
                _ => {}
            }
        }
        RecordedModel {
            provider,
            num_ctx,
            replies: Mutex::new(replies),
        }
    }
}

#[async_trait]
impl Provider for RecordedModel {
    fn name(&self) -> &str {
        &self.provider
    }

    async fn model_info(&self, _model: &str) -> Result<ModelInfo, ProviderError> {
        Ok(ModelInfo {
            context_length: self.num_ctx,
            ..ModelInfo::default()
        })
    }

    async fn chat(
        &self,
        _request: &ChatRequest,
        _sink: SignalSink<'_>,
        _cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        let next = self.replies.lock().ok().and_then(|mut r| r.pop_front());
        next.ok_or_else(|| ProviderError::Protocol {
            url: "recording".into(),
            detail: "today's loop asks for more replies than the recording has".into(),
        })
    }
}

/// The tools whose success changed the file at their `path`.
const WRITERS: &[&str] = &["write_file", "edit_file"];

/// A tool that answers with the recorded results, in order.
struct RecordedTool {
    spec: ToolSpec,
    results: Arc<Mutex<VecDeque<(String, ToolResult)>>>,
}

impl Tool for RecordedTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, _ctx: &ToolContext) -> ToolResult {
        let next = self.results.lock().ok().and_then(|mut r| r.pop_front());
        match next {
            // A recorded result does not say which files it changed: a write or an edit
            // changed its `path` (what the endings and the narrowed schema follow).
            Some((name, ToolResult::Ok { output, .. }))
                if name == self.spec.name && WRITERS.contains(&name.as_str()) =>
            {
                let path = args.get("path").and_then(Value::as_str);
                ToolResult::ok_changed(output, path.map(str::to_owned).into_iter().collect())
            }
            // The recorded form does not say that a result ended the run; a recorded
            // `task_complete` that succeeded did.
            Some((name, result)) if name == self.spec.name => match result.run_answer() {
                None if name == "task_complete" && result.is_ok() => match result {
                    ToolResult::Ok { output, .. } => {
                        ToolResult::ends_run(output.as_str().unwrap_or_default())
                    }
                    other => other,
                },
                _ => result,
            },
            Some((name, _)) => ToolResult::err(format!(
                "replay: the recording ran {name} here, today's loop {}",
                self.spec.name
            )),
            None => ToolResult::err("replay: the recording has no more tool results"),
        }
    }

    fn is_quick(&self, _args: &Value) -> bool {
        true
    }
}
