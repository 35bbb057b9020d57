//! `reagent run`: merge config file and flags, build provider, tools and agent, run with live
//! progress, write events, print the result, and map the outcome to an exit code.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use reagent_core::{
    Agent, AgentConfig, Budgets, EventSink, RunResult, Session, SessionSnapshot, ToolMode,
};
use reagent_protocol::{CancellationToken, Event, Outcome, Provider};
use reagent_store::{StoreError, StoredSession};
use reagent_tools::{ToolRegistry, Workspace};
use serde_json::json;

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::progress::Progress;
use crate::setup;
use crate::store::RunStore;

/// Everything a run needs, resolved from flags and the config file.
pub(crate) struct RunPlan {
    pub(crate) task: String,
    pub(crate) workspace: PathBuf,
    pub(crate) agent: AgentConfig,
    pub(crate) provider: reagent_providers::ProviderConfig,
    pub(crate) tools: reagent_tools::ToolsConfig,
    pub(crate) events_file: Option<PathBuf>,
    pub(crate) json: bool,
    pub(crate) quiet: bool,
    /// `--provider local`: the embedded server to start before the run.
    pub(crate) local: Option<setup::LocalPlan>,
    /// Records the run's events, when a store is in use (set by `reagent run`).
    pub(crate) recorder: Option<reagent_store::Recorder>,
    /// `--resume`: the stored session to continue (set by `reagent run`).
    pub(crate) resume: Option<Resume>,
}

/// What `--resume` continues from (see `Session::from_stored`).
type Resume = StoredSession<SessionSnapshot>;

/// Resolve a plan: flags win over the config file, which wins over defaults.
pub(crate) fn plan(args: &RunArgs, file: &FileConfig) -> anyhow::Result<RunPlan> {
    if args.task.trim().is_empty() {
        bail!("the task is empty: say what the agent should do, e.g. reagent run --model qwen3:8b \"fix the failing test\"");
    }
    let provider_name = args.provider.as_deref().or(file.provider.as_deref());
    let local = local_plan(args, file, provider_name)?;
    let model = args
        .model
        .clone()
        .or_else(|| file.model.clone())
        .or_else(|| {
            let local = local.as_ref()?;
            Some(setup::local_model_name(local.model_file.as_deref()))
        })
        .context(
        "no model given: pass --model NAME (e.g. --model qwen3:8b) or set `model` in reagent.toml",
    )?;
    let mut agent = AgentConfig::new(model);
    if let Some(mode) = args.tool_mode.as_deref().or(file.tool_mode.as_deref()) {
        agent.tool_mode = mode.parse::<ToolMode>().map_err(anyhow::Error::msg)?;
    }
    if let Some(n) = args.max_iterations.or(file.max_iterations) {
        agent.max_iterations = n;
    }
    let o = &file.options;
    agent.options.num_ctx = args.num_ctx.or(o.num_ctx);
    if let Some(n) = args.num_predict.or(o.num_predict) {
        agent.options.num_predict = Some(n);
    }
    agent.options.temperature = args.temperature.or(o.temperature);
    agent.options.seed = args.seed.or(o.seed);
    agent.options.keep_alive = args.keep_alive.clone().or_else(|| o.keep_alive.clone());
    agent.options.think = args.think.or(o.think);
    agent.budgets = Budgets {
        max_total_tokens: args.max_tokens.or(file.budgets.max_tokens),
        max_wall_time: args
            .max_time
            .or(file.budgets.max_time_secs)
            .map(secs)
            .transpose()?,
        max_tool_calls: args.max_tool_calls.or(file.budgets.max_tool_calls),
    };
    let g = &file.guardrails;
    if let Some(v) = g.repetition_threshold {
        agent.repetition_threshold = v;
    }
    if let Some(v) = g.max_nudges {
        agent.max_nudges = v;
    }
    if let Some(v) = g.retry_truncated {
        agent.retry_truncated = v;
    }
    if let Some(v) = g.compaction_trigger {
        if !(0.1..=1.0).contains(&v) {
            bail!("guardrails.compaction_trigger must be between 0.1 and 1.0, got {v}");
        }
        agent.compaction.trigger_ratio = v;
    }
    if let Some(v) = g.keep_recent_rounds {
        agent.compaction.keep_recent_rounds = v;
    }
    if let Some(v) = g.compaction_low_water {
        if !(0.05..=1.0).contains(&v) || v >= agent.compaction.trigger_ratio {
            bail!("guardrails.compaction_low_water must be between 0.05 and compaction_trigger, got {v}");
        }
        agent.compaction.low_water_ratio = v;
    }
    if let Some(v) = g.default_ctx_cap {
        agent.default_ctx_cap = v;
    }
    agent.stream = !args.no_stream && file.stream.unwrap_or(true);
    agent.system_prompt = file.system_prompt.clone();
    agent.profiles = file
        .profiles
        .iter()
        .map(|p| reagent_core::ModelProfile {
            matches: p.matches.clone(),
            temperature: p.temperature,
            think: p.think,
            parse_format: p.format.clone(),
            system_hint: p.system_hint.clone(),
            tool_mode: p.tool_mode,
            plain_final_question: p.plain_final_question,
            narrow_schema: p.narrow_schema,
        })
        .collect();
    agent.parse_format = args.format.clone().or_else(|| file.format.clone());
    if let Some(f) = &agent.parse_format {
        f.parse::<reagent_parse::Family>()
            .map_err(|e| anyhow::anyhow!("--format: {e}"))?;
    }

    let provider = setup::provider_config(
        // The embedded server speaks the OpenAI API; its address is known once it runs.
        local.as_ref().map_or(provider_name, |_| Some("openai")),
        args.host.as_deref().or(file.host.as_deref()),
        if args.base_url.is_empty() {
            &file.base_urls
        } else {
            &args.base_url
        },
        file.api_key_env.as_deref(),
        args.timeout.or(file.timeout_secs),
        file.max_retries,
    )?;
    let workspace = args.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut tools = setup::tools_config(
        args.read_only || file.tools.read_only.unwrap_or(false),
        args.disable_tool
            .iter()
            .chain(&file.tools.disabled)
            .cloned()
            .collect(),
        args.sandbox.as_deref(),
        args.allow_network,
        file,
    )?;
    crate::mcp_cmd::attach(&mut tools, file, &workspace)?;
    Ok(RunPlan {
        task: args.task.clone(),
        workspace,
        agent,
        provider,
        tools,
        events_file: args.events.clone(),
        json: args.json,
        quiet: args.quiet || args.json,
        local,
        recorder: None,
        resume: None,
    })
}

/// `--provider local` (with `--model-file`), or an error for `--model-file` without it.
fn local_plan(
    args: &RunArgs,
    file: &FileConfig,
    provider: Option<&str>,
) -> anyhow::Result<Option<setup::LocalPlan>> {
    if provider != Some("local") {
        if args.model_file.is_some() {
            bail!("--model-file is for --provider local (the embedded llama-server)");
        }
        return Ok(None);
    }
    Ok(Some(setup::LocalPlan {
        model_file: args.model_file.clone(),
        ctx_size: args.num_ctx.or(file.options.num_ctx).unwrap_or(8192),
    }))
}

fn secs(v: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| anyhow::anyhow!("{v} is not a valid number of seconds"))
}

/// Writes events as JSON lines, flushing each so a killed run loses nothing.
struct EventsFile(Mutex<BufWriter<File>>);

impl EventsFile {
    fn create(path: &Path) -> anyhow::Result<Self> {
        let f = File::create(path)
            .with_context(|| format!("cannot create events file {}", path.display()))?;
        Ok(EventsFile(Mutex::new(BufWriter::new(f))))
    }

    fn write(&self, event: &Event) {
        if event.kind.is_delta() {
            return;
        }
        if let (Ok(mut w), Ok(line)) = (self.0.lock(), serde_json::to_string(event)) {
            let _ = writeln!(w, "{line}").and_then(|()| w.flush());
        }
    }
}

/// The provider a plan talks to, and (`--provider local`) the embedded server started for it,
/// which must be kept while the provider is used: dropping it starts the server's idle time.
pub(crate) async fn provider_for(
    plan: &RunPlan,
) -> anyhow::Result<(Arc<dyn Provider>, Option<reagent_local::WarmServer>)> {
    let warm = match &plan.local {
        Some(local) => Some(setup::start_local(local, &plan.agent.model, plan.quiet).await?),
        None => None,
    };
    let provider = match &warm {
        Some(server) => {
            reagent_providers::build_provider(&setup::local_provider(&plan.provider, server))?
        }
        None => reagent_providers::build_provider(&plan.provider)?,
    };
    Ok((provider, warm))
}

/// Execute a plan; returns the run's result, the progress renderer and the session.
pub(crate) async fn execute(
    plan: &RunPlan,
    cancel: &CancellationToken,
) -> anyhow::Result<(RunResult, Arc<Progress>, Session)> {
    let workspace = Workspace::open(&plan.workspace)
        .map_err(|e| anyhow::anyhow!("cannot open workspace {}: {e}", plan.workspace.display()))?;
    // Kept until the run ends: dropping it starts the kept server's idle time.
    let (provider, _warm) = provider_for(plan).await?;
    plan.tools.sources.started().await;
    let tools = ToolRegistry::workspace_tools(&plan.tools);
    let mut agent = Agent::new(provider, Arc::new(tools), plan.agent.clone());
    if let Some(approver) = crate::approve::TerminalApprover::if_interactive() {
        agent = agent.with_approver(approver);
    }
    let events_file = plan
        .events_file
        .as_deref()
        .map(EventsFile::create)
        .transpose()?;
    let progress = Arc::new(Progress::new(plan.quiet));
    let quiet = plan.quiet;
    let shown = progress.clone();
    let recorder = plan.recorder.clone();
    let sink = EventSink::new(
        &reagent_core::new_run_id(),
        Arc::new(move |event: Event| {
            shown.show(&event, quiet);
            if let Some(f) = &events_file {
                f.write(&event);
            }
            if let Some(r) = &recorder {
                r.record(event);
            }
        }),
    );
    let (agent, workspace) = (Arc::new(agent), Arc::new(workspace));
    let mut session = match &plan.resume {
        Some(StoredSession { snapshot, events }) => {
            Session::from_stored(agent, workspace, snapshot.clone(), events)
                .map_err(|e| anyhow::anyhow!("the stored session cannot be continued: {e}"))?
        }
        None => Session::new(agent, workspace),
    };
    let result = session.run(&plan.task, &sink, cancel).await;
    Ok((result, progress, session))
}

/// `--resume ID`: the stored session of run ID (or of session ID, continued from its newest
/// run), with that run's model and workspace as defaults for the flags not given.
async fn stored_session(
    args: &mut RunArgs,
    store: Option<&RunStore>,
) -> anyhow::Result<Option<Resume>> {
    let Some(id) = args.resume.clone() else {
        return Ok(None);
    };
    let store = store
        .and_then(RunStore::store)
        .context("--resume needs the run store, and it could not be opened")?;
    let run = match store.resolve_id(&id).await {
        Ok(id) => store
            .run(&id)
            .await?
            .with_context(|| format!("run {id} was deleted meanwhile"))?,
        Err(StoreError::NotFound(message)) => store
            .last_run_of_session(id.trim())
            .await?
            .with_context(|| format!("{message}, nor a session with that id"))?,
        Err(e) => return Err(e.into()),
    };
    let session_id = run
        .session_id
        .clone()
        .with_context(|| format!("run {} has no session to resume", run.id))?;
    // A session killed before it was saved has no snapshot: its events hold the conversation.
    let resume = store
        .load_session_to_continue(&session_id, SessionSnapshot::needs_events)
        .await?;
    args.model.get_or_insert(run.model);
    args.workspace
        .get_or_insert_with(|| PathBuf::from(run.workspace));
    Ok(Some(resume))
}

/// `reagent run`.
pub(crate) async fn run(args: &RunArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let store = RunStore::open(args, file).await?;
    let mut args = args.clone();
    let resume = stored_session(&mut args, store.as_ref()).await?;
    let mut plan = plan(&args, file).map_err(crate::usage)?;
    plan.resume = resume;
    plan.recorder = store.as_ref().and_then(RunStore::recorder);
    let cancel = CancellationToken::new();
    crate::signals::cancel_on_stop(cancel.clone(), "reagent");
    let (result, progress, mut session) = execute(&plan, &cancel).await?;
    let store_error = match &store {
        Some(s) => s.finish(&mut session).await,
        None => None,
    };
    report_with(&result, &progress, plan.json, store_error.as_deref());
    if let Some(s) = &store {
        match &store_error {
            None => eprintln!("reagent: run {} saved in {}", result.run_id, s.location()),
            Some(e) => eprintln!("reagent: run {} not saved: {e}", result.run_id),
        }
    }
    Ok(ExitCode::from_outcome(result.outcome))
}

/// Print the result: the answer (or one JSON object with `--json`) on stdout, errors on stderr.
pub(crate) fn report(result: &RunResult, progress: &Progress, as_json: bool) {
    report_with(result, progress, as_json, None);
}

/// [`report`], with the store's error (if the run was recorded and the store failed) in the
/// JSON result as `store_error`.
fn report_with(result: &RunResult, progress: &Progress, as_json: bool, store_error: Option<&str>) {
    if as_json {
        let out = json!({
            "outcome": result.outcome.as_str(),
            "answer": result.answer,
            "iterations": result.iterations,
            "tool_calls": result.tool_calls,
            "tokens": {
                "prompt": result.prompt_tokens,
                "completion": result.completion_tokens,
                "total": result.prompt_tokens + result.completion_tokens,
            },
            "files_changed": result.files_changed,
            "run_id": result.run_id,
            "tool_mode": result.tool_mode.as_str(),
            "error": result.error.as_ref().map(|e| &e.message),
            "error_kind": result.error.as_ref().map(|e| e.kind),
            "store_error": store_error,
        });
        println!("{out}");
        return;
    }
    if progress.streamed_answer(&result.answer) {
        println!();
    } else if !result.answer.is_empty() {
        println!("{}", result.answer);
    }
    if result.outcome != Outcome::Completed {
        let why = result.error.as_ref().map_or("", |e| e.message.as_str());
        eprintln!("reagent: run ended: {} {why}", result.outcome.as_str());
    }
}
