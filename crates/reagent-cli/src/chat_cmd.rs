//! `reagent chat`: a conversation with the model that acts on the workspace, as a stored
//! session. On a terminal, the console of `reagent-console` (`chat_cmd/tui.rs`); without one
//! (stdin not a TTY), line mode (`chat_cmd/line.rs`): a message per line on stdin, the replies on
//! stdout, tool calls on stderr, or with `--json` one JSON object per turn.

mod act;
mod line;
mod sessions;
mod tui;
mod undo;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use reagent_core::{Agent, EventSink, RunResult, Session};
use reagent_protocol::{CancellationToken, Event, Provider};
use reagent_tools::{Approver, ToolRegistry, Workspace};

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::run_cmd::{self, RunPlan};
use crate::store::RunStore;

/// Flags of `reagent chat`: the model, store and tool flags of `reagent run` (no task: the
/// conversation gives the messages).
#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

/// What is called on every event of a turn.
pub(crate) type OnEvent = Arc<dyn Fn(&Event) + Send + Sync>;

/// One chat: what its agent is made of, its session over the workspace, and the store it is
/// recorded in.
pub(crate) struct Chat {
    plan: RunPlan,
    provider: Arc<dyn Provider>,
    tools: Arc<ToolRegistry>,
    approver: Option<Arc<dyn Approver>>,
    workspace: Arc<Workspace>,
    pub(crate) session: Session,
    /// Agentic mode: its name (`workflow NAME`, `@role`) and the text added to the system
    /// prompt, until `/new`.
    pub(crate) agentic: Option<(String, String)>,
    store: Option<RunStore>,
    /// Approval mode read-only: writes are asked about with their diff (without an approver:
    /// not offered) and `run_command` is not offered.
    read_only: bool,
    /// This session's turns in this process, for `/undo` and `/diff`.
    turns: Vec<undo::TurnRecord>,
    /// Kept while the provider is used (`--provider local`).
    _warm: Option<reagent_local::WarmServer>,
}

impl Chat {
    /// Resolve the flags, open the store (and the session of `--resume`), build the agent.
    async fn open(
        args: &ChatArgs,
        file: &FileConfig,
        approver: Option<Arc<dyn Approver>>,
    ) -> anyhow::Result<Chat> {
        let store = RunStore::open(&args.run, file).await?;
        let mut run_args = args.run.clone();
        let resume = run_cmd::stored_session(&mut run_args, store.as_ref()).await?;
        // `plan` wants a task; a chat's messages come one by one.
        run_args.task = "chat".into();
        let mut plan = run_cmd::plan(&run_args, file).map_err(crate::usage)?;
        plan.quiet = true;
        // Each turn that changes files takes a checkpoint first (for `/undo`).
        plan.agent.verify.checkpoints =
            !args.run.no_checkpoint && file.verify.checkpoints.unwrap_or(true);
        plan.agent.verify.checkpoint_dir = file
            .verify
            .checkpoint_dir
            .clone()
            .or_else(crate::run_cmd::default_checkpoint_dir);
        let read_only = std::mem::take(&mut plan.tools.read_only);
        let workspace = Workspace::open(&plan.workspace).map_err(|e| {
            anyhow::anyhow!("cannot open workspace {}: {e}", plan.workspace.display())
        })?;
        let (provider, warm) = run_cmd::provider_for(&plan).await?;
        let tools = Arc::new(ToolRegistry::workspace_tools(&tools_config(
            &plan.tools,
            read_only,
            approver.is_some(),
        )));
        let workspace = Arc::new(workspace);
        let placeholder = Session::new(
            Arc::new(Agent::new(
                provider.clone(),
                tools.clone(),
                plan.agent.clone(),
            )),
            workspace.clone(),
        );
        let mut chat = Chat {
            plan,
            provider,
            tools,
            approver,
            workspace,
            session: placeholder,
            agentic: None,
            store,
            read_only,
            turns: Vec::new(),
            _warm: warm,
        };
        let agent = chat.agent();
        chat.session = match resume {
            Some(stored) => Session::from_stored(
                agent,
                chat.workspace.clone(),
                stored.snapshot,
                &stored.events,
            )
            .map_err(|e| anyhow::anyhow!("the stored session cannot be continued: {e}"))?,
            None => Session::new(agent, chat.workspace.clone()),
        };
        Ok(chat)
    }

    /// The agent for the current mode: the configured one, with agentic mode's text added to
    /// its system prompt.
    fn agent(&self) -> Arc<Agent> {
        let mut config = self.plan.agent.clone();
        if let Some((name, text)) = &self.agentic {
            let base = config.system_prompt.take().unwrap_or_default();
            config.system_prompt = Some(
                format!("{base}\n\n# Agentic mode: {name}\n\n{text}")
                    .trim_start()
                    .to_owned(),
            );
        }
        let mut agent = Agent::new(self.provider.clone(), self.tools.clone(), config);
        if let Some(approver) = &self.approver {
            agent = agent.with_approver(approver.clone());
        }
        Arc::new(agent)
    }

    /// Enter agentic mode with `text` added to the system prompt: a new session (the one so
    /// far stays stored), whose follow-ups keep the mode until `/new`.
    pub(crate) fn enter_agentic(&mut self, name: String, text: String) {
        self.agentic = Some((name, text));
        self.turns.clear();
        self.session = Session::new(self.agent(), self.workspace.clone());
    }

    /// `/workflow NAME`: its Markdown, from the workspace or the user's config directory.
    pub(crate) fn workflow(&mut self, name: &str) -> anyhow::Result<()> {
        let text = find_markdown(&self.plan.workspace, "workflows", name)?;
        self.enter_agentic(format!("workflow {name}"), text);
        Ok(())
    }

    /// `@role`: the role's Markdown (`.reagent/roles/ROLE.md`, or in the config directory).
    pub(crate) fn role(&mut self, role: &str) -> anyhow::Result<()> {
        let text = find_markdown(&self.plan.workspace, "roles", role)?;
        self.enter_agentic(format!("@{role}"), text);
        Ok(())
    }

    /// Send `message` and run the turn to its end; every event goes to `on_event` and the
    /// store, and the session is saved after the turn (so `--resume` finds it).
    pub(crate) async fn turn(
        &mut self,
        message: &str,
        on_event: OnEvent,
        cancel: &CancellationToken,
    ) -> (RunResult, Option<String>) {
        self.turns.push(undo::TurnRecord {
            before: self.session.snapshot(),
            checkpoints: Vec::new(),
        });
        self.session.push_user(message);
        self.run_pending(on_event, cancel).await
    }

    /// Run what the session has waiting (a message pushed, or the run a failure left).
    pub(crate) async fn run_pending(
        &mut self,
        on_event: OnEvent,
        cancel: &CancellationToken,
    ) -> (RunResult, Option<String>) {
        let recorder = self.store.as_ref().and_then(RunStore::recorder);
        let sink = EventSink::new(
            &reagent_core::new_run_id(),
            Arc::new(move |event: Event| {
                on_event(&event);
                if let Some(r) = &recorder {
                    r.record(event);
                }
            }),
        );
        let result = self.session.run_to_end(&sink, cancel).await;
        if let (Some(checkpoint), Some(turn)) = (&result.checkpoint, self.turns.last_mut()) {
            turn.checkpoints.push(checkpoint.clone());
        }
        let store_error = match &self.store {
            Some(store) => store.finish(&mut self.session).await,
            None => None,
        };
        (result, store_error)
    }

    /// `/new`: a fresh session, out of agentic mode.
    pub(crate) fn reset(&mut self) {
        self.agentic = None;
        self.turns.clear();
        self.session = Session::new(self.agent(), self.workspace.clone());
    }

    /// `/undo`: the files and the conversation as they were before the last turn (of this
    /// session, in this process); the stored session follows.
    pub(crate) async fn undo(&mut self) -> anyhow::Result<String> {
        let record = self
            .turns
            .pop()
            .context("nothing to undo: no turn of this session ran in this console")?;
        let said = match undo::restore_files(&record) {
            Ok(said) => said,
            Err(e) => {
                self.turns.push(record);
                return Err(e);
            }
        };
        let mut before = record.before;
        before.settings = None;
        let kept = before.messages().len();
        self.session = Session::resume(self.agent(), self.workspace.clone(), before)
            .map_err(|e| anyhow::anyhow!("the conversation cannot be put back: {e}"))?;
        if let Some(store) = self.store.as_ref().and_then(RunStore::store) {
            // Whole: the undone turn's events stay stored, so they must not rebuild it.
            let id = self.session.id().to_owned();
            let session = &mut self.session;
            store
                .save_session_after_events(&id, |_| session.snapshot_over_events(false))
                .await
                .map_err(|e| anyhow::anyhow!("the undone session was not saved: {e}"))?;
        }
        let files = if said.is_empty() {
            "no file had changed".to_owned()
        } else {
            said.join("\n")
        };
        Ok(format!(
            "undid the last turn: the conversation is back to {kept} messages\n{files}"
        ))
    }

    /// `/diff`: what this session's turns changed in the workspace, as a unified diff.
    pub(crate) fn diff(&self) -> anyhow::Result<String> {
        let diff = undo::session_diff(&self.plan.workspace, &self.turns)?;
        Ok(if diff.is_empty() {
            "no changes in this session".to_owned()
        } else {
            diff
        })
    }

    /// `/resume ID`: continue the stored session ID (or the session of run ID) in place of
    /// this one, which stays stored.
    pub(crate) async fn resume(&mut self, id: &str) -> anyhow::Result<usize> {
        let id = match self.store() {
            Some(store) => sessions::resolve(store, id).await,
            None => id.to_owned(),
        };
        let mut args = RunArgs {
            resume: Some(id),
            ..RunArgs::default()
        };
        let stored = run_cmd::stored_session(&mut args, self.store.as_ref())
            .await?
            .context("no session to resume")?;
        self.agentic = None;
        self.turns.clear();
        self.session = Session::from_stored(
            self.agent(),
            self.workspace.clone(),
            stored.snapshot,
            &stored.events,
        )
        .map_err(|e| anyhow::anyhow!("the stored session cannot be continued: {e}"))?;
        Ok(self.session.messages().len())
    }

    /// `/model NAME`, `/mode MODE`: change the agent's configuration and go on with the same
    /// conversation (the tool mode and window are settled again at the next turn).
    pub(crate) fn reconfigure(
        &mut self,
        change: impl FnOnce(&mut reagent_core::AgentConfig) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        change(&mut self.plan.agent)?;
        let mut snapshot = self.session.snapshot();
        snapshot.settings = None;
        self.session = Session::resume(self.agent(), self.workspace.clone(), snapshot)
            .map_err(|e| anyhow::anyhow!("the conversation cannot go on with the change: {e}"))?;
        Ok(())
    }

    /// `/model`: the names of the models the server offers (Ollama `/api/tags`, an
    /// OpenAI-compatible server's `/models`).
    pub(crate) async fn models(&self) -> anyhow::Result<Vec<String>> {
        use reagent_providers::ProviderKind;
        let base = self
            .plan
            .provider
            .base_urls
            .first()
            .cloned()
            .unwrap_or_else(|| self.plan.provider.kind.default_base_url());
        let base = base.trim_end_matches('/');
        let (url, list, field) = match self.plan.provider.kind {
            ProviderKind::Ollama => (format!("{base}/api/tags"), "models", "name"),
            ProviderKind::OpenAi => (format!("{base}/models"), "data", "id"),
            other => anyhow::bail!(
                "listing the models of the {other} provider is not supported; use /model NAME"
            ),
        };
        let mut request = reqwest::Client::new()
            .get(&url)
            .timeout(std::time::Duration::from_secs(10));
        if let Some(key) = &self.plan.provider.api_key {
            request = request.bearer_auth(key);
        }
        let body: serde_json::Value = request
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .with_context(|| format!("cannot list the models: GET {url}"))?
            .json()
            .await
            .with_context(|| format!("GET {url} did not answer JSON"))?;
        Ok(body[list]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|m| m[field].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `/provider NAME [URL]`: talk to another provider (at URL, else its default address)
    /// from the next turn on; the conversation goes on. Returns the welcome's line about where
    /// tool results go.
    pub(crate) fn set_provider(
        &mut self,
        name: &str,
        base_url: Option<String>,
    ) -> anyhow::Result<String> {
        let mut config = self.plan.provider.clone();
        config.kind = name.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        config.base_urls = base_url.into_iter().collect();
        if config.kind != self.plan.provider.kind {
            config.api_key = None;
        }
        let provider = reagent_providers::build_provider(&config)
            .map_err(|e| anyhow::anyhow!("cannot use provider {name}: {e}"))?;
        self.plan.provider = config;
        self.plan.local = None;
        self._warm = None;
        self.provider = provider;
        self.reconfigure(|_| Ok(()))?;
        Ok(self.provider_line())
    }

    /// The model's name.
    pub(crate) fn model(&self) -> &str {
        &self.plan.agent.model
    }

    /// `/tools`: every workspace tool, and whether it is offered.
    pub(crate) fn tools_list(&self) -> String {
        let all = ToolRegistry::workspace_tools(&reagent_tools::ToolsConfig {
            disabled: Vec::new(),
            read_only: false,
            ..self.plan.tools.clone()
        })
        .names();
        let on = self.tools.names();
        all.iter()
            .map(|name| {
                let state = if on.contains(name) { "on " } else { "off" };
                format!("{state} {name}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `/tools enable|disable NAME`: offer the tool or not from the next turn on; the
    /// conversation goes on.
    pub(crate) fn set_tool(&mut self, name: &str, enabled: bool) -> anyhow::Result<()> {
        if !self.tools_list().lines().any(|l| l.get(4..) == Some(name)) {
            anyhow::bail!("no tool named '{name}' (/tools lists them)");
        }
        self.plan.tools.disabled.retain(|d| d != name);
        if !enabled {
            self.plan.tools.disabled.push(name.to_owned());
        }
        self.rebuild_tools()
    }

    /// `/approvals MODE`: read-only asks about every write with its diff (without an approver,
    /// as in line mode, the writing tools are not offered) and does not offer `run_command`;
    /// ask and auto offer them again. From the next turn on.
    pub(crate) fn set_read_only(&mut self, read_only: bool) -> anyhow::Result<()> {
        self.read_only = read_only;
        self.rebuild_tools()
    }

    /// Whether writes are asked about (read-only with an approver).
    pub(crate) fn asks_writes(&self) -> bool {
        self.read_only && self.approver.is_some()
    }

    fn rebuild_tools(&mut self) -> anyhow::Result<()> {
        self.tools = Arc::new(ToolRegistry::workspace_tools(&tools_config(
            &self.plan.tools,
            self.read_only,
            self.approver.is_some(),
        )));
        self.reconfigure(|_| Ok(()))
    }

    /// The configured tool mode.
    pub(crate) fn tool_mode(&self) -> &'static str {
        self.plan.agent.tool_mode.as_str()
    }

    /// The provider's name.
    pub(crate) fn provider_name(&self) -> &'static str {
        self.plan.provider.kind.as_str()
    }

    /// The open store, if any.
    pub(crate) fn store(&self) -> Option<&reagent_store::Store> {
        self.store.as_ref().and_then(RunStore::store)
    }

    /// The provider's name and whether its endpoints are on this machine (for the welcome).
    pub(crate) fn provider_line(&self) -> String {
        let kind = self.plan.provider.kind.as_str();
        let urls = if self.plan.provider.base_urls.is_empty() {
            vec![self.plan.provider.kind.default_base_url()]
        } else {
            self.plan.provider.base_urls.clone()
        };
        let local = self.plan.local.is_some() || urls.iter().all(|u| is_local_url(u));
        format!(
            "Tool results (file contents, command output) are sent to the {kind} provider at {} — {}.",
            urls.join(", "),
            if local {
                "a server on this machine"
            } else {
                "NOT on this machine: they leave it"
            }
        )
    }
}

/// The tools' configuration for approval mode read-only (or not): with an approver, writes are
/// asked about and `run_command` (whose effects have no diff to show) is not offered; without
/// one, nothing that changes things is offered.
fn tools_config(
    base: &reagent_tools::ToolsConfig,
    read_only: bool,
    approver: bool,
) -> reagent_tools::ToolsConfig {
    let mut config = base.clone();
    if read_only && approver {
        config.approve_writes = true;
        config.disabled.push("run_command".to_owned());
    } else {
        config.read_only = read_only;
    }
    config
}

/// Whether `url`'s host is this machine.
fn is_local_url(url: &str) -> bool {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host == "localhost" || host.starts_with("127.") || host == "::1"
}

/// `reagent chat`.
pub(crate) async fn run(args: &ChatArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && !args.run.json {
        tui::run(args, file).await
    } else {
        line::run(args, file).await
    }
}

/// A workflow's or a role's Markdown: `.reagent/workflows/NAME.md` in the workspace, else in
/// the user's config directory (`$XDG_CONFIG_HOME` or `~/.config`, then `reagent/workflows/`).
pub(crate) fn find_markdown(
    workspace: &std::path::Path,
    dir: &str,
    name: &str,
) -> anyhow::Result<String> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        anyhow::bail!("'{name}' is not a {dir} name (letters, digits, - and _)");
    }
    let file = format!("{name}.md");
    let mut places = vec![workspace.join(".reagent").join(dir).join(&file)];
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if let Some(config) = config {
        places.push(config.join("reagent").join(dir).join(&file));
    }
    for place in &places {
        if place.is_file() {
            return std::fs::read_to_string(place)
                .with_context(|| format!("cannot read {}", place.display()));
        }
    }
    let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
    anyhow::bail!(
        "no {dir} named '{name}' (looked for {})",
        looked.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_are_told_apart() {
        assert!(is_local_url("http://127.0.0.1:11434"));
        assert!(is_local_url("http://localhost:8080/v1"));
        assert!(is_local_url("http://[::1]:8080/v1"));
        assert!(!is_local_url("https://api.openai.com/v1"));
        assert!(!is_local_url("http://10.0.0.5:11434"));
    }
}
