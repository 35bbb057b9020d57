//! Running a task with the same `Session` loop as `reagent run`, recorded in the store.

use std::path::PathBuf;
use std::sync::Arc;

use reagent_core::{Agent, AgentConfig, EventSink, Session, ToolMode};
use reagent_protocol::{CancellationToken, ErrorKind, Event, Outcome, Provider};
use reagent_providers::ProviderConfig;
use reagent_store::Recorder;
use reagent_tools::{ToolRegistry, ToolsConfig, Workspace};
use serde_json::json;

use super::{Attempt, TaskRunner};
use crate::queue::{Lease, Queue};

/// Runs each task as one agent run: the worker's model settings, overridden by the task's
/// model, tool mode and iteration cap; the task's workspace (else the worker's). Every event
/// goes to the store through its [`Recorder`], so the run shows in `reagent runs`; the task row
/// gets the run's id, and the session is saved for `reagent run --resume`.
pub struct SessionRunner {
    provider: Arc<dyn Provider>,
    agent: AgentConfig,
    tools: ToolsConfig,
    workspace: PathBuf,
    recorder: Recorder,
    /// The worker's model server, for the embeddings of experiments' similarity monitors.
    embeddings: Option<ProviderConfig>,
}

impl SessionRunner {
    /// A runner talking to `provider` with `agent`'s settings and `tools`, working in
    /// `workspace` unless a task names its own, recording into `recorder`.
    pub fn new(
        provider: Arc<dyn Provider>,
        agent: AgentConfig,
        tools: ToolsConfig,
        workspace: PathBuf,
        recorder: Recorder,
    ) -> SessionRunner {
        SessionRunner {
            provider,
            agent,
            tools,
            workspace,
            recorder,
            embeddings: None,
        }
    }

    /// Experiments this runner runs ask `server` for their embeddings (else their similarity
    /// monitor uses TF-IDF).
    pub fn with_embeddings(mut self, server: ProviderConfig) -> SessionRunner {
        self.embeddings = Some(server);
        self
    }

    /// The agent settings for `lease`'s task, or why the task cannot run anywhere.
    fn config_for(&self, lease: &Lease) -> Result<AgentConfig, String> {
        let task = &lease.task;
        let mut config = self.agent.clone();
        if let Some(model) = &task.model {
            config.model = model.clone();
        }
        if let Some(mode) = &task.spec.tool_mode {
            config.tool_mode = mode.parse::<ToolMode>()?;
        }
        if let Some(n) = task.spec.max_iterations {
            config.max_iterations = n;
        }
        Ok(config)
    }
}

#[async_trait::async_trait]
impl TaskRunner for SessionRunner {
    async fn run(&self, lease: &Lease, queue: &Queue, cancel: CancellationToken) -> Attempt {
        if let Some(id) = &lease.task.spec.experiment {
            let worker = super::cycles::WorkerModel {
                provider: self.provider.clone(),
                embeddings: self.embeddings.as_ref(),
            };
            return super::cycles::run_experiment(worker, id, queue, cancel).await;
        }
        let config = match self.config_for(lease) {
            Ok(c) => c,
            Err(e) => return Attempt::failed(format!("the task's settings are wrong: {e}"), false),
        };
        let path = lease
            .task
            .spec
            .workspace
            .as_ref()
            .map_or_else(|| self.workspace.clone(), PathBuf::from);
        // Another worker's machine may have the directory: worth another attempt.
        let workspace = match Workspace::open(&path) {
            Ok(w) => Arc::new(w),
            Err(e) => {
                let error = format!("cannot open workspace {}: {e}", path.display());
                return Attempt::failed(error, true);
            }
        };
        // Tool sources confined to a workspace (MCP stdio servers) serve this task's.
        let mut tools = self.tools.clone();
        tools.sources = self.tools.sources.for_workspace(workspace.root());
        tools.sources.started().await;
        let tools = Arc::new(ToolRegistry::workspace_tools(&tools));
        let agent = Arc::new(Agent::new(self.provider.clone(), tools, config));
        let run_id = reagent_core::new_run_id();
        match queue.set_run_id(lease, &run_id).await {
            Ok(true) => {}
            Ok(false) => return Attempt::LeaseLost,
            Err(e) => tracing::warn!("task {}: cannot record its run id: {e}", lease.task_id()),
        }
        let recorder = self.recorder.clone();
        let sink = EventSink::new(
            &run_id,
            Arc::new(move |event: Event| recorder.record(event)),
        );
        let mut session = Session::new(agent, workspace);
        let result = session.run(&lease.task.task, &sink, &cancel).await;
        let saved = queue
            .store()
            .save_session_after_events(&result.session_id, |complete| {
                session.snapshot_over_events(complete)
            })
            .await;
        if let Err(e) = saved {
            tracing::warn!("task {}: session not saved: {e}", lease.task_id());
        }
        let summary = json!({
            "outcome": result.outcome.as_str(),
            "answer": result.answer,
            "run_id": result.run_id,
            "iterations": result.iterations,
            "tool_calls": result.tool_calls,
            "files_changed": result.files_changed,
        });
        let why = result.error.as_ref().map_or("", |e| e.message.as_str());
        match result.outcome {
            // An unchecked edit is done for the queue: a goal's own verification checks it.
            Outcome::Completed | Outcome::Verified | Outcome::Unchecked => {
                Attempt::Completed(summary)
            }
            Outcome::Cancelled => Attempt::Stopped,
            // The model server failing is worth another attempt (maybe on another worker);
            // a bad request or a missing model is not.
            Outcome::ProviderError => {
                let retryable = !matches!(
                    result.error.as_ref().map(|e| e.kind),
                    Some(ErrorKind::ModelNotFound | ErrorKind::RefusedRequest)
                );
                let error = format!("run {}: provider error: {why}", result.run_id);
                Attempt::failed(error, retryable)
            }
            other => {
                let error = format!("run {} ended {}: {why}", result.run_id, other.as_str());
                Attempt::failed(error.trim_end_matches(": ").to_owned(), false)
            }
        }
    }
}
