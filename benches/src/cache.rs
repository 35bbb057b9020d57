//! Prompt-cache friendliness against a real llama-server: how many of each request's prompt
//! tokens the server served from its cache across the iterations of a reagent run.
//!
//! The run is a real reagent run in constrained tool mode (the mode for SmolLM2-class models):
//! reagent builds every request from its own history, llama-server evaluates it and generates
//! the reply. Only the *choice* of the reply is scripted: [`ScriptedSequence`] wraps the
//! provider and replaces the response schema of each request with a single constant (read file
//! `K` after `K` turns, then `{"final_answer": ...}`), so the 135M model generates exactly that
//! JSON and the run reads `N` distinct files whatever the model would have chosen. What reagent
//! sends — system prompt, tool catalogue, history, compaction — is untouched.
//!
//! Figures per iteration come from the loop's own `llm_response` events (`prompt_tokens`,
//! `cached_prompt_tokens`, from llama-server's `timings.cache_n`), and compactions from its
//! `guardrail` events.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use reagent_core::{EventSink, ToolMode};
use reagent_protocol::{
    CancellationToken, ChatRequest, ChatResponse, EventKind, ModelInfo, Outcome, Provider,
    ProviderError, Role, SignalSink,
};
use serde_json::{json, Value};

use crate::runner::{self, AgentSetup};
use crate::workload::{file_name, final_answer, TASK};
use crate::BenchError;

/// A provider that makes the model follow a fixed sequence of constrained replies.
pub struct ScriptedSequence {
    inner: Arc<dyn Provider>,
    iterations: u32,
}

impl ScriptedSequence {
    /// Wrap `inner`; the model reads `iterations` files, then answers.
    pub fn new(inner: Arc<dyn Provider>, iterations: u32) -> Self {
        ScriptedSequence { inner, iterations }
    }
}

/// Assistant turns in `request` (consecutive assistant messages count once), plus the rounds a
/// reagent "earlier steps" digest stands for.
pub fn assistant_turns(request: &ChatRequest) -> u32 {
    let mut turns = 0;
    let mut previous = false;
    for m in &request.messages {
        if let Some(folded) = reagent_core::digest_rounds(&m.content) {
            turns += u32::try_from(folded).unwrap_or(u32::MAX);
        }
        let assistant = m.role == Role::Assistant;
        if assistant && !previous {
            turns += 1;
        }
        previous = assistant;
    }
    turns
}

/// The one reply allowed after `turns` turns of a run reading `iterations` files, as a JSON
/// Schema `const`.
pub fn scripted_schema(turns: u32, iterations: u32) -> Value {
    let reply = if turns < iterations {
        json!({"tool": "read_file", "arguments": {"path": file_name(turns)}})
    } else {
        json!({"final_answer": final_answer(turns)})
    };
    json!({ "const": reply })
}

#[async_trait]
impl Provider for ScriptedSequence {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, ProviderError> {
        self.inner.model_info(model).await
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: SignalSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<ChatResponse, ProviderError> {
        if request.response_schema.is_none() {
            // A plain question (e.g. the final answer after a guardrail): left alone.
            return self.inner.chat(request, sink, cancel).await;
        }
        let mut scripted = request.clone();
        scripted.response_schema = Some(scripted_schema(assistant_turns(request), self.iterations));
        self.inner.chat(&scripted, sink, cancel).await
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// OpenAI-compatible base URL of llama-server (`http://127.0.0.1:P/v1`).
    pub base_url: String,
    /// Workspace with at least `iterations` files.
    pub workspace: PathBuf,
    /// Files to read.
    pub iterations: u32,
    /// Context window reagent plans for (`None`: the server's `n_ctx`).
    pub num_ctx: Option<u32>,
}

/// One iteration's prompt, as the server reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheIteration {
    /// 1-based iteration.
    pub iteration: u32,
    /// Prompt tokens of the request.
    pub prompt_tokens: u64,
    /// Of which served from the cache.
    pub cached_tokens: u64,
    /// Whether the history was compacted just before this request.
    pub after_compaction: bool,
}

/// A measured run.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheReport {
    /// How the run ended.
    pub outcome: Outcome,
    /// Tool calls executed.
    pub tool_calls: u32,
    /// Every model request.
    pub iterations: Vec<CacheIteration>,
}

impl CacheReport {
    /// Compactions during the run.
    pub fn compactions(&self) -> usize {
        self.iterations
            .iter()
            .filter(|i| i.after_compaction)
            .count()
    }

    /// Cached share of all prompt tokens after the first request (`None` with fewer than two).
    pub fn share_after_first(&self) -> Option<f64> {
        share(self.iterations.iter().skip(1))
    }

    /// The same, leaving out the requests that directly follow a compaction.
    pub fn share_between_compactions(&self) -> Option<f64> {
        share(
            self.iterations
                .iter()
                .skip(1)
                .filter(|i| !i.after_compaction),
        )
    }

    /// For each request after the first, the cached tokens over the previous request's prompt
    /// tokens: 1.0 means the whole previous prompt was reused (everything an append-only
    /// history can reuse). The lowest value, leaving out requests after a compaction.
    pub fn min_prefix_reuse(&self) -> Option<f64> {
        self.iterations
            .windows(2)
            .filter(|w| !w[1].after_compaction && w[0].prompt_tokens > 0)
            .map(|w| w[1].cached_tokens as f64 / w[0].prompt_tokens as f64)
            .min_by(f64::total_cmp)
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .iterations
            .iter()
            .map(|i| {
                json!({"iteration": i.iteration, "prompt_tokens": i.prompt_tokens,
                       "cached_tokens": i.cached_tokens, "after_compaction": i.after_compaction})
            })
            .collect();
        json!({
            "outcome": self.outcome.as_str(),
            "tool_calls": self.tool_calls,
            "compactions": self.compactions(),
            "share_after_first": self.share_after_first(),
            "share_between_compactions": self.share_between_compactions(),
            "min_prefix_reuse": self.min_prefix_reuse(),
            "iterations": rows,
        })
    }
}

fn share<'a>(rows: impl Iterator<Item = &'a CacheIteration>) -> Option<f64> {
    let (cached, total) = rows.fold((0u64, 0u64), |(c, t), i| {
        (c + i.cached_tokens, t + i.prompt_tokens)
    });
    (total > 0).then(|| cached as f64 / total as f64)
}

#[derive(Default)]
struct Seen {
    compacted: bool,
    rows: Vec<CacheIteration>,
}

/// Run once against `provider` (llama-server's OpenAI-compatible API, wrapped here).
pub async fn run_cache(
    provider: Arc<dyn Provider>,
    config: &CacheConfig,
) -> Result<CacheReport, BenchError> {
    let scripted: Arc<dyn Provider> = Arc::new(ScriptedSequence::new(provider, config.iterations));
    let setup = AgentSetup {
        model: "SmolLM2-135M-Instruct".into(),
        iterations: config.iterations,
        num_ctx: config.num_ctx,
        tool_mode: ToolMode::Constrained,
    };
    let agent = runner::agent(scripted, &config.workspace, &setup)?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink_seen = seen.clone();
    let events = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |e| {
            let Ok(mut s) = sink_seen.lock() else { return };
            if runner::is_compaction(&e) {
                s.compacted = true;
            }
            if let EventKind::LlmResponse {
                iteration,
                prompt_tokens,
                cached_prompt_tokens,
                ..
            } = e.kind
            {
                let after_compaction = std::mem::take(&mut s.compacted);
                s.rows.push(CacheIteration {
                    iteration,
                    prompt_tokens,
                    cached_tokens: cached_prompt_tokens.unwrap_or(0),
                    after_compaction,
                });
            }
        }),
    );
    let result = agent.run(TASK, &events, &CancellationToken::new()).await;
    let rows = std::mem::take(
        &mut seen
            .lock()
            .map_err(|_| BenchError::Setup("event lock poisoned".into()))?
            .rows,
    );
    if let Some(error) = result.error {
        return Err(BenchError::Incomplete(error.message));
    }
    Ok(CacheReport {
        outcome: result.outcome,
        tool_calls: result.tool_calls,
        iterations: rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reagent_protocol::Message;

    fn row(iteration: u32, prompt: u64, cached: u64, after: bool) -> CacheIteration {
        CacheIteration {
            iteration,
            prompt_tokens: prompt,
            cached_tokens: cached,
            after_compaction: after,
        }
    }

    #[test]
    fn shares_leave_out_the_first_request_and_compactions() {
        let report = CacheReport {
            outcome: Outcome::Completed,
            tool_calls: 3,
            iterations: vec![
                row(1, 100, 0, false),
                row(2, 200, 100, false),
                row(3, 300, 200, false),
                row(4, 150, 50, true),
            ],
        };
        assert_eq!(report.share_after_first(), Some(350.0 / 650.0));
        assert_eq!(report.share_between_compactions(), Some(300.0 / 500.0));
        assert_eq!(report.min_prefix_reuse(), Some(1.0));
        assert_eq!(report.compactions(), 1);
        let one = CacheReport {
            iterations: vec![row(1, 10, 0, false)],
            ..report
        };
        assert_eq!(one.share_after_first(), None);
        assert_eq!(one.min_prefix_reuse(), None);
    }

    #[test]
    fn the_script_follows_the_turns() {
        let mut request = ChatRequest::new("m", [Message::system("s"), Message::user("t")]);
        assert_eq!(assistant_turns(&request), 0);
        assert_eq!(
            scripted_schema(0, 2),
            json!({"const": {"tool": "read_file", "arguments": {"path": "f0000.txt"}}})
        );
        request.messages.push(Message::assistant("a").into());
        request.messages.push(Message::assistant("b").into());
        request.messages.push(Message::user("r").into());
        request.messages.push(Message::assistant("c").into());
        assert_eq!(assistant_turns(&request), 2);
        assert_eq!(
            scripted_schema(2, 2),
            json!({"const": {"final_answer": "I read 2 files."}})
        );
    }
}
