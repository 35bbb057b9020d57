//! Building a reagent [`Agent`] for a benchmark: the Ollama provider pointed at the scripted
//! server, the workspace's `read_file` tool alone (what the peers offer), and a configuration that
//! lets a long run finish.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, EventSink, RunResult, Session, SessionSnapshot, ToolMode};
use reagent_protocol::{CancellationToken, Event, EventKind, Guardrail, GuardrailAction, Provider};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::{ClientOptions, RetryPolicy};
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};

use crate::BenchError;

/// How an agent for a benchmark is configured.
#[derive(Debug, Clone)]
pub struct AgentSetup {
    /// Model name (a [`crate::workload::Plan`] name for the scripted server).
    pub model: String,
    /// Tool calls the run is expected to make; `max_iterations` is set a little above.
    pub iterations: u32,
    /// Context window; `None` keeps reagent's default (16,384, so compaction fires on long
    /// runs).
    pub num_ctx: Option<u32>,
    /// How tools are offered.
    pub tool_mode: ToolMode,
}

impl AgentSetup {
    /// The [`AgentConfig`] for this setup.
    pub fn config(&self) -> AgentConfig {
        let mut config = AgentConfig::new(self.model.clone());
        config.tool_mode = self.tool_mode;
        config.max_iterations = self.iterations.saturating_add(5);
        config.options.num_ctx = self.num_ctx;
        config
    }
}

/// Client options for benchmarks: a generous timeout (a thousand runs share one server) and no
/// retries (a failure must show, not be papered over).
pub fn client_options() -> ClientOptions {
    ClientOptions {
        timeout: Duration::from_secs(300),
        retry: RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        },
        ..ClientOptions::default()
    }
}

/// An Ollama provider for `base_url`.
pub fn ollama(base_url: &str) -> Result<Arc<dyn Provider>, BenchError> {
    let provider = OllamaProvider::new(base_url, client_options())
        .map_err(|e| BenchError::Setup(format!("provider: {e}")))?;
    Ok(Arc::new(provider))
}

/// An agent and the workspace its runs work in.
pub struct BenchAgent {
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
}

impl BenchAgent {
    /// A new session of the agent over its workspace.
    pub fn session(&self) -> Session {
        Session::new(self.agent.clone(), self.workspace.clone())
    }

    /// A stored session continued, as `reagent run --resume` does (`events`: the session's).
    pub fn from_stored(
        &self,
        snapshot: SessionSnapshot,
        events: &[Event],
    ) -> Result<Session, BenchError> {
        Session::from_stored(
            self.agent.clone(),
            self.workspace.clone(),
            Some(snapshot),
            events,
        )
        .map_err(|e| BenchError::Setup(format!("resume: {e}")))
    }

    /// Run `task` to the end in a new session.
    pub async fn run(
        &self,
        task: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        self.agent
            .run(self.workspace.clone(), task, events, cancel)
            .await
    }
}

/// An agent over `workspace` offering [`BENCH_TOOL`] alone: the same one tool the peers offer
/// (same task, same tools), so the figures compare runtimes, not tool catalogues.
pub fn agent(
    provider: Arc<dyn Provider>,
    workspace: &Path,
    setup: &AgentSetup,
) -> Result<BenchAgent, BenchError> {
    let ws = Workspace::open(workspace)
        .map_err(|e| BenchError::Setup(format!("workspace {}: {e}", workspace.display())))?;
    let mut tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
    for name in tools.names() {
        if name != BENCH_TOOL {
            tools.remove(&name);
        }
    }
    Ok(BenchAgent {
        agent: Arc::new(Agent::new(provider, Arc::new(tools), setup.config())),
        workspace: Arc::new(ws),
    })
}

/// The one tool every agent of the benchmark offers.
pub const BENCH_TOOL: &str = "read_file";

/// Whether `event` is a context compaction.
pub fn is_compaction(event: &Event) -> bool {
    match &event.kind {
        EventKind::Guardrail {
            guardrail, action, ..
        } => *guardrail == Guardrail::ContextWindow && *action == GuardrailAction::Compact,
        _ => false,
    }
}
