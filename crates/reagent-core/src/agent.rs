//! The [`Agent`]: what every session of it shares — the provider, the tools, the configuration,
//! the compiled argument schemas and what the server said about the model. It holds no
//! conversation: that is a [`Session`](crate::Session)'s, so one agent serves many sessions, at
//! once.

use std::sync::{Arc, OnceLock};

use reagent_protocol::{
    CancellationToken, ModelInfo, ModelOptions, Provider, ProviderError, ToolSpec,
};
use reagent_tools::{workspace_files, Approver, ToolRegistry, Workspace};

use crate::arguments::ArgumentChecker;
use crate::config::{AgentConfig, ToolMode};
use crate::events::EventSink;
use crate::profiles::profile_for;
use crate::result::RunResult;
use crate::session::{Session, SessionSettings};
use crate::weak_model::Policy;
use crate::{prompts, tool_mode};

/// An agent: a provider, the tools and a configuration. Sessions (conversations over a
/// workspace) are started from it; many may run at once.
pub struct Agent {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) config: AgentConfig,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    /// The tools' specs, in registry order (stable across iterations and runs), shared with
    /// every request (so a provider encodes them once).
    pub(crate) specs: Arc<[ToolSpec]>,
    /// The same specs with the tools that only read first, as the constrained mode lists them
    /// and offers them in its schema: a weak model that picks a tool by its position then
    /// falls on one that cannot change the workspace.
    pub(crate) read_first_specs: Arc<[ToolSpec]>,
    /// Compiled argument schemas, shared by every session of this agent.
    pub(crate) checker: ArgumentChecker,
    /// What the server said about the model, asked by the first session that got an answer and
    /// reused by the others (one model per agent: no `/api/show` round trip per run).
    model_info: OnceLock<ModelInfo>,
    /// Stands in for running the verification checks (a replay gives the recorded results).
    pub(crate) check_runner: Option<Arc<crate::verify::CheckRunner>>,
}

impl Agent {
    /// An agent calling `tools`, talking to `provider`.
    pub fn new(provider: Arc<dyn Provider>, tools: Arc<ToolRegistry>, config: AgentConfig) -> Self {
        let specs: Arc<[ToolSpec]> = tools.specs().into();
        let checker = ArgumentChecker::new(&specs);
        let mut read_first = specs.to_vec();
        read_first.sort_by_key(|s| tools.get(&s.name).is_some_and(|t| t.mutates()));
        Agent {
            provider,
            tools,
            config,
            approver: None,
            specs,
            read_first_specs: read_first.into(),
            checker,
            model_info: OnceLock::new(),
            check_runner: None,
        }
    }

    /// The same agent sampling with `seed` (another attempt at a task, [`crate::Attempts`]).
    pub(crate) fn with_seed(&self, seed: Option<i64>) -> Agent {
        let mut config = self.config.clone();
        config.options.seed = seed;
        let model_info = OnceLock::new();
        if let Some(info) = self.model_info.get() {
            let _ = model_info.set(info.clone());
        }
        Agent {
            provider: self.provider.clone(),
            tools: self.tools.clone(),
            config,
            approver: self.approver.clone(),
            specs: self.specs.clone(),
            read_first_specs: self.read_first_specs.clone(),
            checker: ArgumentChecker::new(&self.specs),
            model_info,
            check_runner: self.check_runner.clone(),
        }
    }

    /// Commands matching an `ask` rule go to `approver` (without one they are refused).
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// The provider's short name (`ollama`, `openai`...).
    pub fn provider_name(&self) -> &str {
        self.provider.name()
    }

    /// Run `task` to the end in a new session over `workspace`. Events go to `events`; `cancel`
    /// stops the run cleanly (the result and the `run_finished` event are still produced).
    pub async fn run(
        self: &Arc<Self>,
        workspace: Arc<Workspace>,
        task: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunResult {
        Session::new(self.clone(), workspace)
            .run(task, events, cancel)
            .await
    }

    /// Ask the server about the model, and settle what stays fixed for a session: the tool
    /// mode, the context window, the generation options and the system prompt (in the
    /// constrained mode, its tool list ranked for `task`, the session's first message).
    pub(crate) async fn settle(
        &self,
        workspace: &Workspace,
        task: &str,
        cancel: &CancellationToken,
    ) -> Result<SessionSettings, ProviderError> {
        let info = match self.model_info.get() {
            Some(known) => Ok(known.clone()),
            None => tokio::select! {
                info = self.provider.model_info(&self.config.model) => info,
                () = cancel.cancelled() => Err(ProviderError::Cancelled),
            },
        };
        let info = match info {
            Ok(info) => self.model_info.get_or_init(|| info).clone(),
            Err(
                e @ (ProviderError::Unreachable { .. }
                | ProviderError::ModelNotFound { .. }
                | ProviderError::Cancelled),
            ) => return Err(e),
            Err(e) => {
                tracing::warn!("could not read model info, using defaults: {e}");
                ModelInfo::default()
            }
        };
        let profile = profile_for(&self.config.model, &self.config.profiles);
        let mode = match (self.config.tool_mode, profile.tool_mode) {
            (ToolMode::Auto, Some(mode)) if mode != ToolMode::Auto => mode,
            (mode, _) => tool_mode::resolve(mode, &info.capabilities),
        };
        let cap = self.config.default_ctx_cap;
        let num_ctx = self
            .config
            .options
            .num_ctx
            .unwrap_or_else(|| info.context_length.map_or(cap, |c| c.min(cap)));
        let options = ModelOptions {
            num_ctx: Some(num_ctx),
            temperature: self.config.options.temperature.or(profile.temperature),
            think: self
                .config
                .options
                .think
                .or(if info.capabilities.thinking == Some(true) {
                    profile.think
                } else {
                    None
                }),
            ..self.config.options.clone()
        };
        // Models invent paths and small ones copy example paths: they are shown the real ones
        // (in the constrained mode the schema also allows only those of a small workspace).
        let files = Some(workspace_files(workspace, tool_mode::LISTED_FILES_MAX));
        let policy = Policy::choose(&self.config.model, &profile, mode);
        let (specs, example) = policy.tool_listing(
            task,
            mode,
            &self.specs,
            &self.read_first_specs,
            files.as_ref(),
        );
        let system_prompt = prompts::system_prompt(
            self.config.system_prompt.as_deref(),
            mode,
            &specs,
            &example,
            profile.system_hint.as_deref(),
            files.as_ref(),
        );
        let format = self
            .config
            .parse_format
            .clone()
            .or(profile.parse_format.clone());
        let narrowing = policy.narrowing(profile.narrow_schema, task, workspace, files.as_ref());
        Ok(SessionSettings {
            mode,
            options,
            num_ctx,
            format,
            system_prompt,
            files,
            plain_final_question: policy.ends_with_plain_question(profile.plain_final_question),
            narrowing,
            edit_turns: profile
                .edits_as_text
                .unwrap_or(policy == Policy::Small && mode == ToolMode::Native),
            policy,
        })
    }

    /// Bytes of what is sent besides the messages (the tool schemas, in native mode).
    pub(crate) fn schema_bytes(&self, mode: ToolMode) -> usize {
        if mode == ToolMode::Native {
            self.specs
                .iter()
                .map(|s| s.to_function_json().to_string().len())
                .sum()
        } else {
            0
        }
    }
}
