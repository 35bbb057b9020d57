//! One model turn: build the request for the run's tool mode, send it (streaming text through
//! the incremental parser), retry once when the reply was cut off, and extract the tool calls in
//! layers: native `tool_calls` first, then the constrained JSON shape, then the text parser.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reagent_parse::{ParseOptions, StreamParser, ToolSchema};
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, ChatSignal, EventKind, FinishReason, Guardrail,
    GuardrailAction, Message, ModelOptions, Provider, ProviderError, ToolCall, ToolChoice,
    ToolSpec, Usage, WireCache,
};
use tracing::Instrument;

use crate::config::ToolMode;
use crate::degenerate;
use crate::events::EventSink;
use crate::spans;
use crate::tool_mode::{self, ConstrainedReply};

/// What the loop needs to send requests; fixed for the run.
pub(crate) struct TurnSetup<'a> {
    pub(crate) provider: &'a dyn Provider,
    pub(crate) model: &'a str,
    pub(crate) mode: ToolMode,
    pub(crate) specs: &'a Arc<[ToolSpec]>,
    /// Whether the request offers the tools (native mode): not in a small model's edit turn.
    pub(crate) offer_tools: bool,
    pub(crate) options: ModelOptions,
    pub(crate) stream: bool,
    pub(crate) retry_truncated: bool,
    pub(crate) parse: &'a ParseOptions,
    pub(crate) constrained_schema: Option<&'a serde_json::Value>,
    /// The run's encoded messages, shared by its requests.
    pub(crate) wire: WireCache,
    pub(crate) events: &'a EventSink,
    pub(crate) cancel: &'a CancellationToken,
}

/// A model turn, extracted.
pub(crate) struct Turn {
    /// The assistant message to append to the history.
    pub(crate) message: Message,
    /// Visible text without tool-call markup or reasoning.
    pub(crate) text: String,
    /// The calls found.
    pub(crate) calls: Vec<ToolCall>,
    /// A final answer given in the constrained shape.
    pub(crate) final_answer: Option<String>,
    /// Which extraction layer found the calls.
    pub(crate) layer: Option<String>,
    /// Why a tool call the reply attempted could not be read (the parser's errors), when
    /// the reply holds no call and no final answer.
    pub(crate) unread_call: Option<String>,
    /// The reply's calls only repeated the calls made for a small model before its first turn
    /// (`session::preload`) and were dropped.
    pub(crate) copied_preload: bool,
    /// The reply text as the server sent it, when the message keeps something else.
    pub(crate) raw: Option<String>,
    /// Tokens used, retries included.
    pub(crate) usage: Usage,
    /// Time spent waiting for the model, retries included.
    pub(crate) model_time: Duration,
}

impl Turn {
    /// Keep each distinct call of the reply once (the first of those with the same name and
    /// arguments), in the calls run and in the message the history keeps. A model that writes
    /// one call again and again in a reply (Qwen2.5-Coder-0.5B wrote 60 `read_file` calls of
    /// two files) gets one result per call. Returns how many were left out.
    pub(crate) fn drop_repeated_calls(&mut self) -> usize {
        self.trim_calls(|calls| {
            let mut kept: Vec<ToolCall> = Vec::with_capacity(calls.len());
            for call in calls.drain(..) {
                let repeated = kept
                    .iter()
                    .any(|k| k.name == call.name && k.arguments == call.arguments);
                if !repeated {
                    kept.push(call);
                }
            }
            *calls = kept;
        })
    }

    /// Keep only the reply's first calls of one tool (`edit_file`, `edit_file`, then the
    /// rest), in the calls run and in the message the history keeps. Returns how many were
    /// left out.
    pub(crate) fn keep_first_tool_calls(&mut self) -> usize {
        self.trim_calls(|calls| {
            if let Some(first) = calls.first().map(|c| c.name.clone()) {
                let n = calls.iter().take_while(|c| c.name == first).count();
                calls.truncate(n);
            }
        })
    }

    /// Apply `trim` to the calls run and to the message's calls alike; how many calls it left
    /// out of those run.
    fn trim_calls(&mut self, trim: fn(&mut Vec<ToolCall>)) -> usize {
        trim(&mut self.message.tool_calls);
        let before = self.calls.len();
        trim(&mut self.calls);
        before - self.calls.len()
    }
}

impl TurnSetup<'_> {
    /// Parse options with the run's tool schemas.
    pub(crate) fn parse_options(
        specs: &[ToolSpec],
        format: Option<reagent_parse::Family>,
    ) -> ParseOptions {
        ParseOptions {
            format,
            tools: specs
                .iter()
                .map(|s| ToolSchema {
                    name: s.name.clone(),
                    parameters: s.parameters.clone(),
                })
                .collect(),
            ..ParseOptions::default()
        }
    }

    /// Run one turn of `iteration` over `messages`.
    pub(crate) async fn run(
        &self,
        iteration: u32,
        messages: &[Arc<Message>],
        estimated_tokens: u64,
    ) -> Result<Turn, ProviderError> {
        let mut options = self.options.clone();
        let mut usage = Usage::default();
        let mut model_time = Duration::ZERO;
        let mut retried = false;
        loop {
            let request = ChatRequest {
                model: self.model.to_owned(),
                messages: messages.to_vec(),
                tools: if self.mode == ToolMode::Native && self.offer_tools {
                    Arc::clone(self.specs)
                } else {
                    Arc::default()
                },
                tool_choice: ToolChoice::Auto,
                options: options.clone(),
                response_schema: self.constrained_schema.cloned(),
                stream: self.stream,
                wire: self.wire.clone(),
            };
            self.events.emit(EventKind::LlmRequest {
                iteration,
                messages: messages.len(),
                estimated_tokens,
            });
            // A constrained reply is JSON, not text for the user.
            let live_text = self.mode != ToolMode::Constrained;
            let response = self.send(&request, live_text).await?;
            usage.prompt_tokens += response.usage.prompt_tokens;
            usage.completion_tokens += response.usage.completion_tokens;
            usage.cached_prompt_tokens = response.usage.cached_prompt_tokens;
            model_time += response.latency;
            let truncated = response.finish == FinishReason::Length
                || options
                    .num_predict
                    .is_some_and(|n| response.usage.completion_tokens >= u64::from(n));
            if truncated && self.retry_truncated && !retried {
                retried = true;
                // The cut-off reply is discarded; its call still gets its response event.
                self.events.emit(response_event(
                    iteration,
                    &response.usage,
                    response.latency,
                    &response.finish,
                    response.endpoint.clone(),
                    None,
                    0,
                ));
                let doubled = options.num_predict.unwrap_or(1024).saturating_mul(2);
                self.events.guardrail(
                    Guardrail::Truncation,
                    GuardrailAction::Retry,
                    format!(
                        "reply cut off at {} tokens; retrying once with num_predict={doubled}",
                        response.usage.completion_tokens
                    ),
                );
                options.num_predict = Some(doubled);
                continue;
            }
            let turn = self.extract(iteration, response, usage, model_time);
            return Ok(turn);
        }
    }

    /// Send a request, turning stream signals into events; with `live_text`, streamed text
    /// (call markup held back by the streaming parser) becomes `text_delta` events.
    pub(crate) async fn send(
        &self,
        request: &ChatRequest,
        live_text: bool,
    ) -> Result<ChatResponse, ProviderError> {
        let live_text = request.stream && live_text;
        let live = Mutex::new(StreamParser::new(self.parse.clone()));
        let stream = request.stream;
        let events = self.events;
        // Stops this model call (not the run) once the streamed text degenerates.
        let call_cancel = self.cancel.child_token();
        let watch = Mutex::new(degenerate::StreamWatch::default());
        let sink = |signal: ChatSignal| match signal {
            ChatSignal::Content(piece) => {
                if watch.lock().is_ok_and(|mut w| w.push(&piece)) {
                    call_cancel.cancel();
                }
                if !live_text {
                    return;
                }
                let released = match live.lock() {
                    Ok(mut parser) => parser.push(&piece),
                    Err(_) => String::new(),
                };
                if !released.is_empty() {
                    events.emit(EventKind::TextDelta { text: released });
                }
            }
            ChatSignal::Reasoning(text) if stream => {
                events.emit(EventKind::ReasoningDelta { text });
            }
            ChatSignal::Reasoning(_) => {}
            ChatSignal::Retry {
                attempt,
                delay,
                error,
            } => events.emit(EventKind::Retry {
                attempt,
                delay_ms: delay.as_millis() as u64,
                error,
            }),
            ChatSignal::Pool(endpoints) => events.emit(EventKind::PoolState { endpoints }),
            ChatSignal::Fallback { detail, .. } => events.guardrail(
                Guardrail::FeatureFallback,
                GuardrailAction::Fallback,
                detail,
            ),
        };
        let started = Instant::now();
        let span = spans::chat_span(self.provider.name(), request);
        let reply = match self
            .provider
            .chat(request, &sink, &call_cancel)
            .instrument(span.clone())
            .await
        {
            // Only this call was stopped (its text degenerated): what came is the reply.
            Err(ProviderError::Cancelled) if !self.cancel.is_cancelled() => watch
                .into_inner()
                .map_err(|_| ProviderError::Cancelled)
                .and_then(|w| w.into_reply(started.elapsed())),
            other => other,
        };
        spans::finish_chat(&span, &reply);
        let response = reply?;
        if live_text {
            // Text the parser held back (it might have begun a call) turned out to be content.
            if let Ok(parser) = live.into_inner() {
                let released = parser.released().to_owned();
                let content = parser.finish().content.unwrap_or_default();
                if let Some(tail) = content.strip_prefix(released.as_str()) {
                    if !tail.is_empty() {
                        events.emit(EventKind::TextDelta {
                            text: tail.to_owned(),
                        });
                    }
                }
            }
        }
        Ok(response)
    }

    /// Find the tool calls in a reply, in layers, and record which layer found them.
    fn extract(
        &self,
        iteration: u32,
        response: ChatResponse,
        usage: Usage,
        model_time: Duration,
    ) -> Turn {
        let ChatResponse {
            mut message,
            finish,
            endpoint,
            latency,
            ..
        } = response;
        let mut final_answer = None;
        let mut layer: Option<String> = None;
        let mut calls = std::mem::take(&mut message.tool_calls);
        let raw = std::mem::take(&mut message.content);
        let parsed = reagent_parse::parse(&raw, self.parse);
        if message.reasoning.is_none() {
            message.reasoning = parsed.reasoning.clone();
        }
        let mut text = parsed.content.clone().unwrap_or_default();
        if !calls.is_empty() {
            layer = Some("native".to_owned());
        } else if self.mode == ToolMode::Constrained {
            match tool_mode::read_constrained(&raw) {
                Some(ConstrainedReply::Call { name, arguments }) => {
                    calls.push(ToolCall {
                        id: String::new(),
                        name,
                        arguments,
                    });
                    layer = Some("constrained".to_owned());
                    text.clear();
                }
                Some(ConstrainedReply::Answer(answer)) => {
                    layer = Some("constrained".to_owned());
                    text = answer.clone();
                    final_answer = Some(answer);
                }
                None => {}
            }
        }
        let unread_call = (calls.is_empty()
            && final_answer.is_none()
            && parsed.calls.is_empty()
            && !parsed.errors.is_empty())
        .then(|| parsed.errors.join("; "));
        if calls.is_empty() && final_answer.is_none() && !parsed.calls.is_empty() {
            layer = parsed
                .format
                .map(|f| f.to_string())
                .or(Some("text".to_owned()));
            calls = parsed
                .calls
                .into_iter()
                .map(|c| ToolCall {
                    id: c.id.unwrap_or_default(),
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect();
        }
        for (i, call) in calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{}", i + 1);
            }
        }
        self.events.emit(response_event(
            iteration,
            &usage,
            latency,
            &finish,
            endpoint,
            layer.clone(),
            calls.len(),
        ));
        if degenerate::cut(&mut text, self.events) {
            if let Some(answer) = final_answer.as_mut() {
                answer.clone_from(&text);
            }
        }
        // The history keeps what the model wrote: native calls as structured calls, text calls
        // as the text itself (so the model sees its own format again).
        let kept_raw = self.mode != ToolMode::Native || text == raw;
        message.content = if kept_raw { raw.clone() } else { text.clone() };
        let raw = (!kept_raw).then_some(raw);
        if self.mode == ToolMode::Native {
            message.tool_calls = calls.clone();
        }
        Turn {
            message,
            text,
            calls,
            final_answer,
            layer,
            unread_call,
            copied_preload: false,
            raw,
            usage,
            model_time,
        }
    }
}

/// The `llm_response` event of one model call.
pub(crate) fn response_event(
    iteration: u32,
    usage: &Usage,
    latency: Duration,
    finish: &FinishReason,
    endpoint: String,
    parse_layer: Option<String>,
    tool_calls: usize,
) -> EventKind {
    EventKind::LlmResponse {
        iteration,
        latency_ms: latency.as_millis() as u64,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        cached_prompt_tokens: usage.cached_prompt_tokens,
        parse_layer,
        finish_reason: finish_name(finish),
        tool_calls,
        endpoint,
    }
}

/// The name of a finish reason, as events and spans carry it.
pub(crate) fn finish_name(f: &FinishReason) -> String {
    match f {
        FinishReason::Stop => "stop".to_owned(),
        FinishReason::Length => "length".to_owned(),
        FinishReason::ToolCalls => "tool_calls".to_owned(),
        FinishReason::Other(s) => s.clone(),
    }
}
