//! Helpers shared by the protocol tests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reagent_protocol::{ChatRequest, ChatResponse, ChatSignal, Message, ModelOptions, ToolSpec};
use reagent_providers::{ClientOptions, RetryPolicy};
use serde_json::json;

/// Collects signals.
#[derive(Clone, Default)]
pub(crate) struct Signals(pub Arc<Mutex<Vec<ChatSignal>>>);

impl Signals {
    pub(crate) fn sink(&self) -> impl Fn(ChatSignal) + Send + Sync + 'static {
        let inner = Arc::clone(&self.0);
        move |s| inner.lock().unwrap().push(s)
    }

    pub(crate) fn all(&self) -> Vec<ChatSignal> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn text(&self) -> (String, String) {
        let mut content = String::new();
        let mut reasoning = String::new();
        for s in self.all() {
            match s {
                ChatSignal::Content(c) => content.push_str(&c),
                ChatSignal::Reasoning(r) => reasoning.push_str(&r),
                _ => {}
            }
        }
        (content, reasoning)
    }

    pub(crate) fn retries(&self) -> Vec<(u32, Duration)> {
        self.all()
            .into_iter()
            .filter_map(|s| match s {
                ChatSignal::Retry { attempt, delay, .. } => Some((attempt, delay)),
                _ => None,
            })
            .collect()
    }
}

/// Fast retries for tests.
pub(crate) fn fast_opts() -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
        },
        ..ClientOptions::default()
    }
}

pub(crate) fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a file.".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
    }
}

/// A request with a system and user message and one tool.
pub(crate) fn request(model: &str, stream: bool) -> ChatRequest {
    ChatRequest {
        tools: vec![read_file_tool()].into(),
        options: ModelOptions {
            num_ctx: Some(4096),
            num_predict: Some(256),
            temperature: Some(0.0),
            seed: Some(1),
            ..ModelOptions::default()
        },
        stream,
        ..ChatRequest::new(
            model,
            [
                Message::system("You are terse."),
                Message::user("read a.txt"),
            ],
        )
    }
}

/// The response with latency zeroed, for comparing streamed and non-streamed replies.
pub(crate) fn timeless(mut r: ChatResponse) -> ChatResponse {
    r.latency = Duration::ZERO;
    r
}
