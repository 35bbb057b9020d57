//! `reagent run`: merge config file and flags, build provider, tools and agent, run with live
//! progress, write events, print the result, and map the outcome to an exit code.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context};
use reagent_core::verify::Check;
use reagent_core::{
    Agent, AgentConfig, Attempts, Budgets, EventSink, RunResult, Session, SessionSnapshot, ToolMode,
};
use reagent_protocol::{CancellationToken, Event, Provider};
use reagent_store::{StoreError, StoredSession};
use reagent_tools::{ToolRegistry, Workspace};
use serde_json::json;

use crate::cli::RunArgs;
use crate::config::{FileConfig, VerifyFileConfig};
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
    /// `--attempts`: runs at most this many attempts (1: one run).
    pub(crate) attempts: u32,
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
            Some(setup::local_model_name(
                local.model_file.as_deref(),
                reagent_local::DEFAULT_MODEL,
            ))
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
            edits_as_text: p.edits_as_text,
            small_model: p.small_model,
        })
        .collect();
    // The config file's [verify] is `reagent run`'s own (see [`run`]): eval suites have their
    // own checks, and queued tasks differ from one another.
    let attempts = verify_settings(args, &VerifyFileConfig::default(), &mut agent.verify)?;
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
        attempts,
    })
}

/// `--verify`, `--verify-retries`, `--attempts` and the file's `[verify]` (`v`) into `verify`;
/// the number of attempts. Checkpoints are left as they are: `reagent run` turns them on.
fn verify_settings(
    args: &RunArgs,
    v: &VerifyFileConfig,
    verify: &mut reagent_core::VerifyConfig,
) -> anyhow::Result<u32> {
    let written = if args.verify.is_empty() {
        &v.checks
    } else {
        &args.verify
    };
    verify.checks = written
        .iter()
        .map(|c| {
            c.parse::<Check>().map_err(|e| {
                let from = if args.verify.is_empty() {
                    "[verify] checks"
                } else {
                    "--verify"
                };
                anyhow::anyhow!("{from}: {e}")
            })
        })
        .collect::<anyhow::Result<_>>()?;
    if let Some(n) = args.verify_retries.or(v.retries) {
        verify.retries = n;
    }
    if let Some(limit) = v.timeout_secs {
        verify.check_timeout = secs(limit).context("[verify] timeout_secs")?;
    }
    verify.checkpoint_dir = v.checkpoint_dir.clone().or_else(default_checkpoint_dir);
    let attempts = args.attempts.or(v.attempts).unwrap_or(1);
    if attempts == 0 {
        bail!("--attempts must be at least 1");
    }
    if attempts > 1 && verify.checks.is_empty() {
        bail!("--attempts {attempts} needs checks to choose the best attempt by: add --verify CHECK (e.g. --verify auto or --verify \"tests:pytest -q\")");
    }
    if attempts > 1 && (args.no_checkpoint || v.checkpoints == Some(false)) {
        bail!("--attempts {attempts} restores the workspace between attempts and needs checkpoints; drop --no-checkpoint (or `checkpoints = false` in [verify])");
    }
    if attempts > 1 && args.resume.is_some() {
        bail!("--attempts starts new runs; it cannot be used with --resume");
    }
    Ok(attempts)
}

/// Where checkpoints of workspaces outside git keep their copies by default: beside the
/// default store, `$XDG_DATA_HOME/reagent/checkpoints` (else `~/.local/share/…`); outside the
/// workspace, where the run's commands cannot write.
pub(crate) fn default_checkpoint_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("reagent").join("checkpoints"))
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

/// What the runs of a plan share: the agent, the workspace, where events go.
struct Prepared {
    agent: Arc<Agent>,
    workspace: Arc<Workspace>,
    progress: Arc<Progress>,
    events_file: Option<Arc<EventsFile>>,
    /// Kept until the runs end: dropping it starts the kept server's idle time.
    _warm: Option<reagent_local::WarmServer>,
}

impl Prepared {
    async fn new(plan: &RunPlan) -> anyhow::Result<Self> {
        let workspace = Workspace::open(&plan.workspace).map_err(|e| {
            anyhow::anyhow!("cannot open workspace {}: {e}", plan.workspace.display())
        })?;
        let (provider, warm) = provider_for(plan).await?;
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
            .transpose()?
            .map(Arc::new);
        Ok(Prepared {
            agent: Arc::new(agent),
            workspace: Arc::new(workspace),
            progress: Arc::new(Progress::new(plan.quiet)),
            events_file,
            _warm: warm,
        })
    }

    /// The sink of a new run: progress, the events file, the store.
    fn sink(&self, plan: &RunPlan) -> EventSink {
        let quiet = plan.quiet;
        let shown = self.progress.clone();
        let recorder = plan.recorder.clone();
        let events_file = self.events_file.clone();
        EventSink::new(
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
        )
    }
}

/// Execute a plan; returns the run's result, the progress renderer and the session.
pub(crate) async fn execute(
    plan: &RunPlan,
    cancel: &CancellationToken,
) -> anyhow::Result<(RunResult, Arc<Progress>, Session)> {
    let prepared = Prepared::new(plan).await?;
    let sink = prepared.sink(plan);
    let (agent, workspace) = (prepared.agent.clone(), prepared.workspace.clone());
    let mut session = match &plan.resume {
        Some(StoredSession { snapshot, events }) => {
            Session::from_stored(agent, workspace, snapshot.clone(), events)
                .map_err(|e| anyhow::anyhow!("the stored session cannot be continued: {e}"))?
        }
        None => Session::new(agent, workspace),
    };
    let result = session.run(&plan.task, &sink, cancel).await;
    Ok((result, prepared.progress, session))
}

/// `--attempts N`: run attempts until one is verified or N ran, each recorded as a run of its
/// own; the workspace keeps the best attempt's files. Returns the best attempt's result, the
/// progress renderer, every attempt's run id and the store's first error.
async fn execute_attempts(
    plan: &RunPlan,
    cancel: &CancellationToken,
    store: Option<&RunStore>,
) -> anyhow::Result<(RunResult, Arc<Progress>, Vec<String>, Option<String>)> {
    let prepared = Prepared::new(plan).await?;
    let mut attempts = Attempts::new(
        prepared.agent.clone(),
        prepared.workspace.clone(),
        plan.attempts,
    );
    let mut store_error = None;
    let mut number = 0;
    while let Some(mut session) = attempts.next_session() {
        number += 1;
        let result = session.run(&plan.task, &prepared.sink(plan), cancel).await;
        if let Some(store) = store {
            if let Some(e) = store.finish(&mut session).await {
                store_error.get_or_insert(e);
            }
        }
        if !plan.quiet {
            eprintln!(
                "reagent: attempt {number} of {}: run {} ended {} ({} of {} checks passed)",
                plan.attempts,
                result.run_id,
                result.outcome.as_str(),
                result.checks.iter().filter(|c| c.passed).count(),
                result.checks.len()
            );
        }
        if let Err(e) = attempts.finished(result) {
            eprintln!("reagent: the workspace could not be restored after attempt {number}: {e}; no further attempt");
        }
    }
    let summary = attempts.finish();
    if let Some(e) = &summary.error {
        eprintln!("reagent: the best attempt's files could not be put back: {e}");
    }
    let ids = summary.results.iter().map(|r| r.run_id.clone()).collect();
    let best = summary
        .results
        .into_iter()
        .nth(summary.best)
        .context("internal: no attempt ran")?;
    if !plan.quiet && plan.attempts > 1 {
        eprintln!(
            "reagent: best attempt: run {} ({})",
            best.run_id,
            best.outcome.as_str()
        );
    }
    Ok((best, prepared.progress, ids, store_error))
}

/// `--resume ID`: the stored session of run ID (or of session ID, continued from its newest
/// run), with that run's model and workspace as defaults for the flags not given.
pub(crate) async fn stored_session(
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
    plan.attempts =
        verify_settings(&args, &file.verify, &mut plan.agent.verify).map_err(crate::usage)?;
    plan.resume = resume;
    plan.recorder = store.as_ref().and_then(RunStore::recorder);
    plan.agent.verify.checkpoints = !args.no_checkpoint && file.verify.checkpoints.unwrap_or(true);
    let cancel = CancellationToken::new();
    crate::signals::cancel_on_stop(cancel.clone(), "reagent");
    let (result, progress, attempt_ids, store_error) = if plan.attempts > 1 {
        execute_attempts(&plan, &cancel, store.as_ref()).await?
    } else {
        let (result, progress, mut session) = execute(&plan, &cancel).await?;
        let store_error = match &store {
            Some(s) => s.finish(&mut session).await,
            None => None,
        };
        let ids = vec![result.run_id.clone()];
        (result, progress, ids, store_error)
    };
    let extra = Extra {
        store_error: store_error.as_deref(),
        attempts: (attempt_ids.len() > 1).then_some(attempt_ids.as_slice()),
    };
    report_with(&result, &progress, plan.json, &extra);
    if let Some(s) = &store {
        match &store_error {
            None => eprintln!("reagent: run {} saved in {}", result.run_id, s.location()),
            Some(e) => eprintln!("reagent: run {} not saved: {e}", result.run_id),
        }
        if result.checkpoint.is_some() && store_error.is_none() && !plan.json {
            eprintln!(
                "reagent: to undo its changes: reagent runs undo {}",
                result.run_id
            );
        }
    }
    Ok(ExitCode::from_outcome(result.outcome))
}

/// Print the result: the answer (or one JSON object with `--json`) on stdout, errors on stderr.
pub(crate) fn report(result: &RunResult, progress: &Progress, as_json: bool) {
    report_with(result, progress, as_json, &Extra::default());
}

/// What `reagent run` reports beside a run's result.
#[derive(Default)]
struct Extra<'a> {
    /// The store's error, if the run was recorded and the store failed (`store_error`).
    store_error: Option<&'a str>,
    /// With `--attempts`: every attempt's run id, in order (`attempts`).
    attempts: Option<&'a [String]>,
}

/// [`report`], with what [`Extra`] holds in the JSON result.
fn report_with(result: &RunResult, progress: &Progress, as_json: bool, extra: &Extra<'_>) {
    let store_error = extra.store_error;
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
            "checks": result.checks.iter().map(|c| json!({"check": c.check, "passed": c.passed})).collect::<Vec<_>>(),
            "attempts": extra.attempts,
        });
        println!("{out}");
        return;
    }
    if progress.streamed_answer(&result.answer) {
        println!();
    } else if !result.answer.is_empty() {
        println!("{}", result.answer);
    }
    for failed in result.checks.iter().filter(|c| !c.passed) {
        let first = failed.output.lines().next().unwrap_or_default();
        eprintln!("reagent: check failed: {} ({first})", failed.check);
    }
    if !result.outcome.is_success() {
        let why = result.error.as_ref().map_or("", |e| e.message.as_str());
        eprintln!("reagent: run ended: {} {why}", result.outcome.as_str());
    }
}
