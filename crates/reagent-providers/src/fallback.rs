//! Stepping down when a server refuses a feature of the request, and keeping what a broken
//! stream delivered.
//!
//! Servers that speak a provider's API only in part (third-party implementations of the Ollama
//! API, older Ollama releases, OpenAI-compatible servers without structured output) answer a
//! request that uses a feature they lack with an HTTP 400 naming it. [`Refusals`] recognises
//! such a refusal from what was sent and what the server said, steps that feature down one
//! step, sends again, and remembers the step for the endpoint (one `Refusals` per backend, so
//! per endpoint) for the rest of its life:
//!
//! - a JSON Schema → JSON mode (`format: "json"`, `json_object`) with the schema stated in the
//!   system prompt → the prompt alone;
//! - native tools → the tools described in the system prompt, calls written as
//!   `<tool_call>{"name": .., "arguments": ..}</tool_call>` (the loop's parser reads them);
//! - `think` → left out.
//!
//! Each step is reported once through [`ChatSignal::Fallback`].

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard};

use reagent_protocol::{
    ChatRequest, ChatSignal, Feature, Message, ProviderError, Role, SignalSink, ToolChoice,
    ToolSpec,
};
use serde_json::{json, Value};

/// Marks [`json_mode_schema`]; an `x-` keyword, which JSON Schema validators ignore.
const JSON_MODE_MARK: &str = "x-reagent-json-mode";

/// The schema that stands for JSON mode: any JSON object, marked. Backends send it as their
/// JSON mode (`format: "json"`, `response_format: {"type": "json_object"}`).
pub(crate) fn json_mode_schema() -> Value {
    json!({"type": "object", JSON_MODE_MARK: true})
}

/// Whether `schema` is [`json_mode_schema`].
pub(crate) fn is_json_mode(schema: &Value) -> bool {
    schema.get(JSON_MODE_MARK) == Some(&Value::Bool(true))
}

/// How far the response schema has been stepped down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum SchemaStep {
    /// Sent as it is.
    #[default]
    Schema,
    /// JSON mode, the schema stated in the prompt.
    JsonMode,
    /// The schema stated in the prompt only.
    Prompt,
}

/// The steps taken at one endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Steps {
    schema: SchemaStep,
    tools_in_prompt: bool,
    no_think: bool,
}

/// The system message with the notes added, kept so that its encoding (and the server's prompt
/// cache) is reused from one request to the next.
#[derive(Debug)]
struct Noted {
    original: Option<Arc<Message>>,
    notes: String,
    adapted: Arc<Message>,
}

/// What one endpoint has refused, and the adapted system message.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    steps: Mutex<Steps>,
    noted: Mutex<Option<Noted>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data, no invariant a panic could break.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Refusals {
    /// `request` with the features this endpoint refused stepped down (borrowed when none is).
    pub(crate) fn adapt<'r>(&self, request: &'r ChatRequest) -> Cow<'r, ChatRequest> {
        let steps = *lock(&self.steps);
        let schema = request
            .response_schema
            .as_ref()
            .filter(|_| steps.schema != SchemaStep::Schema);
        let tools = sends_tools(request) && steps.tools_in_prompt;
        let think = request.options.think.is_some() && steps.no_think;
        if schema.is_none() && !tools && !think {
            return Cow::Borrowed(request);
        }
        let mut out = request.clone();
        let mut notes = Vec::new();
        if let Some(schema) = schema {
            notes.push(schema_note(schema));
            out.response_schema = (steps.schema == SchemaStep::JsonMode).then(json_mode_schema);
        }
        if tools {
            notes.push(tools_note(&out.tools));
            out.tools = Arc::default();
        }
        if think {
            out.options.think = None;
        }
        if !notes.is_empty() {
            self.add_notes(&mut out.messages, notes.join("\n\n"));
        }
        Cow::Owned(out)
    }

    /// After `error` answered `sent`: when it is a refusal of a feature that can still step
    /// down, takes the step, reports it through `sink` and returns true (send again).
    pub(crate) fn step_down(
        &self,
        error: &ProviderError,
        sent: &ChatRequest,
        endpoint: &str,
        sink: SignalSink<'_>,
    ) -> bool {
        let Some((feature, message)) = refused_feature(error, sent) else {
            return false;
        };
        let mut steps = lock(&self.steps);
        let instead = match feature {
            Feature::Schema if steps.schema == SchemaStep::Schema => {
                steps.schema = SchemaStep::JsonMode;
                "JSON mode with the schema stated in the prompt"
            }
            Feature::JsonMode if steps.schema != SchemaStep::Prompt => {
                steps.schema = SchemaStep::Prompt;
                "the schema stated in the prompt only"
            }
            Feature::Tools if !steps.tools_in_prompt => {
                steps.tools_in_prompt = true;
                "the tools described in the prompt"
            }
            Feature::Think if !steps.no_think => {
                steps.no_think = true;
                "requests without `think`"
            }
            _ => return false,
        };
        drop(steps);
        tracing::info!(%feature, endpoint, "server refused a feature; stepping down");
        sink(ChatSignal::Fallback {
            feature,
            endpoint: endpoint.to_owned(),
            detail: format!(
                "{endpoint} refused {what} ({message}); using {instead} at this endpoint from now on",
                what = describe(feature),
            ),
        });
        true
    }

    /// Puts `notes` at the end of the leading system message (a new one when there is none),
    /// reusing the message made for the previous request when nothing changed.
    fn add_notes(&self, messages: &mut Vec<Arc<Message>>, notes: String) {
        let original = messages.first().filter(|m| m.role == Role::System).cloned();
        let mut noted = lock(&self.noted);
        let reuse = noted.as_ref().filter(|n| {
            n.notes == notes
                && match (&n.original, &original) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    (None, None) => true,
                    _ => false,
                }
        });
        let adapted = match reuse {
            Some(n) => Arc::clone(&n.adapted),
            None => {
                let adapted = Arc::new(match &original {
                    Some(m) => {
                        let mut m = Message::clone(m);
                        m.content = format!("{}\n\n{notes}", m.content);
                        m
                    }
                    None => Message::system(notes.clone()),
                });
                *noted = Some(Noted {
                    original: original.clone(),
                    notes,
                    adapted: Arc::clone(&adapted),
                });
                adapted
            }
        };
        match original {
            Some(_) => messages[0] = adapted,
            None => messages.insert(0, adapted),
        }
    }
}

/// Whether a request offers tools natively (what the backends put in the body).
fn sends_tools(request: &ChatRequest) -> bool {
    !request.tools.is_empty() && request.tool_choice != ToolChoice::None
}

/// The feature `error` refused in `sent`, and the server's message, shortened: an HTTP 400, 422
/// or 501 whose message names the response format (a schema is refused however it is worded:
/// reagent's own schemas are valid), or says tools or thinking are not supported.
fn refused_feature(error: &ProviderError, sent: &ChatRequest) -> Option<(Feature, String)> {
    let ProviderError::Http {
        status: 400 | 422 | 501,
        message,
        ..
    } = error
    else {
        return None;
    };
    if error.is_context_overflow() {
        return None;
    }
    let lower = message.to_ascii_lowercase();
    let unsupported = [
        "not support",
        "unsupported",
        "not allowed",
        "not permitted",
        "unknown field",
        "unrecognized",
        "extra inputs",
        "input should be",
        "cannot unmarshal",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // The schema first: a body refusing it may quote the schema, and with it tool names.
    let feature = match &sent.response_schema {
        Some(schema) if lower.contains("format") || lower.contains("schema") => {
            if is_json_mode(schema) {
                Feature::JsonMode
            } else {
                Feature::Schema
            }
        }
        _ if unsupported && sends_tools(sent) && lower.contains("tool") => Feature::Tools,
        _ if unsupported && sent.options.think.is_some() && lower.contains("think") => {
            Feature::Think
        }
        _ => return None,
    };
    let short: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let short = match short.char_indices().nth(160) {
        Some((cut, _)) => format!("{}...", &short[..cut]),
        None => short,
    };
    Some((feature, short))
}

fn describe(feature: Feature) -> &'static str {
    match feature {
        Feature::Schema => "the JSON Schema for the reply",
        Feature::JsonMode => "JSON mode",
        Feature::Tools => "native tools",
        Feature::Think => "the `think` switch",
    }
}

/// The schema, stated in the prompt for a server that will not enforce it.
fn schema_note(schema: &Value) -> String {
    format!("Reply with a single JSON object, and nothing else, that matches this JSON Schema:\n{schema}")
}

/// The tools, described in the prompt for a server that will not take them natively.
fn tools_note(tools: &[ToolSpec]) -> String {
    let mut note = String::from(
        "You can call these tools. To call one, reply with only \
         <tool_call>{\"name\": \"TOOL\", \"arguments\": {...}}</tool_call>\nTools:",
    );
    for t in tools {
        note.push_str(&format!(
            "\n- {}: {} Arguments (JSON Schema): {}",
            t.name, t.description, t.parameters
        ));
    }
    note
}

/// The visible text of a streamed reply as it arrives, kept so that a reply that breaks off
/// still gives what was received ([`ProviderError::Incomplete`]). A retry starts it afresh.
#[derive(Debug, Default)]
pub(crate) struct Partial {
    text: Mutex<String>,
}

impl Partial {
    /// Records what `signal` adds.
    pub(crate) fn observe(&self, signal: &ChatSignal) {
        match signal {
            ChatSignal::Content(piece) => lock(&self.text).push_str(piece),
            ChatSignal::Retry { .. } => lock(&self.text).clear(),
            _ => {}
        }
    }

    /// `error`, as [`ProviderError::Incomplete`] with the text received when the reply broke
    /// off (a cut connection, a malformed piece, an idle timeout) after some text came.
    pub(crate) fn keep(&self, error: ProviderError) -> ProviderError {
        let partial = std::mem::take(&mut *lock(&self.text));
        if partial.is_empty() {
            return error;
        }
        match error {
            ProviderError::Protocol { url, detail } => ProviderError::Incomplete {
                url,
                detail: format!("the reply broke off: {detail}"),
                partial,
            },
            ProviderError::Timeout { url, after } => ProviderError::Incomplete {
                detail: format!("the reply broke off: {url} sent nothing for {after:?}"),
                url,
                partial,
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(message: &str) -> ProviderError {
        ProviderError::Http {
            url: "http://h/api/chat".into(),
            status: 400,
            message: message.into(),
            retry_after: None,
        }
    }

    fn request() -> ChatRequest {
        let mut r = ChatRequest::new("m", [Message::system("be brief"), Message::user("hello")]);
        r.response_schema = Some(json!({"type": "object", "required": ["tool"]}));
        r.tools = Arc::from(vec![ToolSpec {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object"}),
        }]);
        r.options.think = Some(false);
        r
    }

    #[test]
    fn a_refused_schema_steps_to_json_mode_then_to_the_prompt() {
        let refusals = Refusals::default();
        let signals = Mutex::new(Vec::new());
        let sink = |s: ChatSignal| signals.lock().unwrap().push(s);
        let original = request();
        let sent = refusals.adapt(&original).into_owned();
        assert_eq!(sent, original, "nothing refused yet: sent as it is");
        let proxy = "Invalid request body: 1 validation error for OllamaChatRequest\nformat\n  \
                     Input should be 'json' [type=literal_error, input_value={'type': 'object'}]";
        assert!(refusals.step_down(&refusal(proxy), &sent, "http://h", &sink));
        let sent = refusals.adapt(&original).into_owned();
        assert_eq!(sent.response_schema, Some(json_mode_schema()));
        assert!(sent.messages[0]
            .content
            .starts_with("be brief\n\nReply with a single JSON"));
        assert!(sent.messages[0].content.contains("\"required\":[\"tool\"]"));
        assert_eq!(sent.messages.len(), 2);
        // The adapted system message is the same `Arc` next time (encoded once).
        let again = refusals.adapt(&original).into_owned();
        assert!(Arc::ptr_eq(&sent.messages[0], &again.messages[0]));
        // JSON mode refused too: the prompt alone.
        assert!(refusals.step_down(&refusal(proxy), &sent, "http://h", &sink));
        let sent = refusals.adapt(&original).into_owned();
        assert_eq!(sent.response_schema, None);
        assert!(sent.messages[0]
            .content
            .contains("Reply with a single JSON"));
        // Nothing left to step down: the error stands.
        assert!(!refusals.step_down(&refusal(proxy), &sent, "http://h", &sink));
        let signals = signals.into_inner().unwrap();
        let features: Vec<Feature> = signals
            .iter()
            .filter_map(|s| match s {
                ChatSignal::Fallback { feature, .. } => Some(*feature),
                _ => None,
            })
            .collect();
        assert_eq!(features, [Feature::Schema, Feature::JsonMode]);
        let ChatSignal::Fallback { detail, .. } = &signals[0] else {
            panic!("{signals:?}")
        };
        assert!(detail.contains("Input should be 'json'"), "{detail}");
        assert!(
            detail.contains("JSON mode with the schema stated in the prompt"),
            "{detail}"
        );
    }

    #[test]
    fn refused_tools_and_think_are_told_apart_and_stepped_down() {
        let refusals = Refusals::default();
        let mut original = request();
        original.response_schema = None;
        let sink = |_: ChatSignal| {};
        let tools = refusal("registry.ollama.ai/library/gemma:2b does not support tools");
        let think = refusal("\"gemma:2b\" does not support thinking");
        assert!(refusals.step_down(&tools, &original, "http://h", &sink));
        assert!(refusals.step_down(&think, &original, "http://h", &sink));
        let sent = refusals.adapt(&original).into_owned();
        assert!(sent.tools.is_empty());
        assert_eq!(sent.options.think, None);
        assert!(sent.messages[0]
            .content
            .contains("- read_file: Read a file."));
        assert!(sent.messages[0].content.contains("<tool_call>"));
        // A request without a leading system message gets one.
        let mut bare = original.clone();
        bare.messages.remove(0);
        let sent = refusals.adapt(&bare).into_owned();
        assert_eq!(sent.messages.len(), 2);
        assert_eq!(sent.messages[0].role, Role::System);
    }

    #[test]
    fn other_errors_are_no_refusal() {
        let refusals = Refusals::default();
        let sink = |_: ChatSignal| {};
        let sent = request();
        for e in [
            refusal("request (9000 tokens) exceeds the available context size (8192 tokens)"),
            ProviderError::Http {
                url: "u".into(),
                status: 500,
                message: "format".into(),
                retry_after: None,
            },
            refusal("messages must alternate"),
            refusal("tools[0] is malformed"),
            ProviderError::Cancelled,
        ] {
            assert!(!refusals.step_down(&e, &sent, "http://h", &sink), "{e}");
        }
        // A request without a schema cannot have its schema refused.
        let mut plain = request();
        plain.response_schema = None;
        plain.tools = Arc::default();
        plain.options.think = None;
        assert!(!refusals.step_down(&refusal("bad format"), &plain, "http://h", &sink));
    }

    #[test]
    fn a_broken_stream_keeps_its_text() {
        let partial = Partial::default();
        partial.observe(&ChatSignal::Content("lost ".into()));
        partial.observe(&ChatSignal::Retry {
            attempt: 1,
            delay: std::time::Duration::ZERO,
            error: "e".into(),
        });
        partial.observe(&ChatSignal::Content("Hello, ".into()));
        partial.observe(&ChatSignal::Reasoning("hmm".into()));
        partial.observe(&ChatSignal::Content("wor".into()));
        let e = partial.keep(ProviderError::Protocol {
            url: "u".into(),
            detail: "the connection closed".into(),
        });
        assert_eq!(e.partial_text(), Some("Hello, wor"));
        assert!(e.to_string().contains("10 characters"), "{e}");
        // Nothing received, or not a broken reply: the error as it was.
        let e = Partial::default().keep(ProviderError::Protocol {
            url: "u".into(),
            detail: "d".into(),
        });
        assert!(matches!(e, ProviderError::Protocol { .. }));
        let p = Partial::default();
        p.observe(&ChatSignal::Content("x".into()));
        assert!(matches!(
            p.keep(ProviderError::Cancelled),
            ProviderError::Cancelled
        ));
    }
}
