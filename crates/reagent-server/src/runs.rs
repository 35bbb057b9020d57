//! Starting, following up, cancelling and interrupting runs: each one a [`Session`] of its own
//! [`Agent`] on a tokio task, its events recorded in the store, counted in the metrics and fanned
//! out to live clients.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use reagent_core::{Agent, AgentConfig, Budgets, EventSink, Session, ToolMode};
use reagent_protocol::{Event, EventKind, Outcome};
use reagent_providers::ProviderKind;
use reagent_store::{RunRecord, Scope, Store};
use reagent_tools::{ToolRegistry, Workspace};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use crate::api::{ApprovalPolicy, CreateRun, CreatedRun, RunSummary};
use crate::approvals::{Approvals, RunApprover};
use crate::config::{RunDefaults, ServerConfig};
use crate::egress::Egress;
use crate::error::ApiError;
use crate::live::LiveRun;
use crate::metrics::Metrics;
use crate::roots::WorkspaceRoots;

/// The session memory key under which the request that started a session is kept, so a
/// follow-up (even after a restart) runs with the same settings.
const REQUEST_KEY: &str = "serve.request";
/// How long `POST /v1/runs` waits for the run's first event before answering (so the run is
/// listed by the time the client asks).
const START_WAIT: Duration = Duration::from_secs(2);

struct Entry {
    live: Arc<LiveRun>,
    sink: EventSink,
    task: Option<JoinHandle<()>>,
    /// Its place under the cap on concurrent runs, given back when it is forgotten.
    _slot: OwnedSemaphorePermit,
}

struct Inner {
    entries: Mutex<HashMap<String, Entry>>,
    busy_sessions: Mutex<HashSet<String>>,
    store: Store,
    defaults: RunDefaults,
    roots: WorkspaceRoots,
    egress: Egress,
    approvals: Approvals,
    metrics: Arc<Metrics>,
    subscriber_queue: usize,
    recent_events: usize,
    /// One permit per run in progress.
    slots: Arc<Semaphore>,
    max_concurrent_runs: usize,
}

/// The runs of one server.
#[derive(Clone)]
pub(crate) struct Runs(Arc<Inner>);

/// What one run is given.
struct Launch {
    request: CreateRun,
    message: String,
    workspace: Workspace,
    /// A stored session to continue; `None`: a new one.
    resume: Option<Resumed>,
}

/// A stored session to continue (see `Session::from_stored`).
struct Resumed {
    snapshot: Option<reagent_core::SessionSnapshot>,
    /// The events of the session's runs, when the snapshot needs them or is missing.
    events: Vec<Event>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Runs {
    /// The runs of a server started with `config`.
    pub(crate) fn new(
        config: &ServerConfig,
        store: Store,
        roots: WorkspaceRoots,
        egress: Egress,
        approvals: Approvals,
        metrics: Arc<Metrics>,
    ) -> Self {
        Runs(Arc::new(Inner {
            entries: Mutex::default(),
            busy_sessions: Mutex::default(),
            store,
            defaults: config.defaults.clone(),
            roots,
            egress,
            approvals,
            metrics,
            subscriber_queue: config.subscriber_queue,
            recent_events: config.recent_events,
            slots: Arc::new(Semaphore::new(config.max_concurrent_runs)),
            max_concurrent_runs: config.max_concurrent_runs,
        }))
    }

    /// The server's metrics.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    /// The live run `id`, if it is in progress here.
    pub(crate) fn live(&self, id: &str) -> Option<Arc<LiveRun>> {
        lock(&self.0.entries).get(id).map(|e| e.live.clone())
    }

    /// Whether any run is live (its last events may still be on their way to the store).
    pub(crate) fn any_live(&self) -> bool {
        !lock(&self.0.entries).is_empty()
    }

    /// Start a new session with `request`.
    pub(crate) async fn start(&self, request: CreateRun) -> Result<CreatedRun, ApiError> {
        if request.task.trim().is_empty() {
            return Err(ApiError::bad_request(
                "`task` is empty: say what the agent should do",
            ));
        }
        let workspace = open_workspace(&self.0.roots, &request.workspace)?;
        self.launch(Launch {
            message: request.task.clone(),
            request,
            workspace,
            resume: None,
        })
        .await
    }

    /// A follow-up `content` to the session of the finished run `run_id`.
    pub(crate) async fn follow_up(
        &self,
        run_id: &str,
        content: String,
    ) -> Result<CreatedRun, ApiError> {
        if content.trim().is_empty() {
            return Err(ApiError::bad_request("`content` is empty"));
        }
        if let Some(live) = self.live(run_id) {
            if !live.is_closed() {
                return Err(ApiError::conflict(format!(
                    "run {run_id} is still running: send the follow-up once it has finished"
                )));
            }
            // Its `run_finished` is out; its session is being saved.
            self.wait_forgotten(run_id).await;
        }
        let store = &self.0.store;
        let record = store
            .run(run_id)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("no run with id {run_id}")))?;
        let session_id = record.session_id.clone().ok_or_else(|| {
            ApiError::conflict(format!("run {run_id} has no session to follow up"))
        })?;
        let request = match store
            .memory_get(Scope::Session, &session_id, REQUEST_KEY)
            .await?
        {
            Some(v) => serde_json::from_value(v).unwrap_or_else(|_| request_of(&record)),
            None => request_of(&record),
        };
        let workspace = open_workspace(&self.0.roots, &request.workspace)?;
        let snapshot: Option<reagent_core::SessionSnapshot> = store
            .load_session(&session_id)
            .await?
            .and_then(|s| s.snapshot)
            .and_then(|text| serde_json::from_str(&text).ok());
        let events = if snapshot
            .as_ref()
            .is_none_or(reagent_core::SessionSnapshot::needs_events)
        {
            store
                .session_events(&session_id)
                .await?
                .iter()
                .filter_map(|e| e.parse().ok())
                .collect()
        } else {
            Vec::new()
        };
        let resume = Resumed { snapshot, events };
        self.launch(Launch {
            request,
            message: content,
            workspace,
            resume: Some(resume),
        })
        .await
    }

    async fn launch(&self, launch: Launch) -> Result<CreatedRun, ApiError> {
        let inner = &self.0;
        let request = launch.request;
        let slot = inner
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| ApiError::too_many_runs(inner.max_concurrent_runs))?;
        let provider = reagent_providers::build_provider(
            &inner
                .egress
                .provider_config(&inner.defaults.provider, &request)?,
        )
        .map_err(|e| ApiError::bad_request(format!("provider: {e}")))?;
        let run_id = reagent_core::new_run_id();
        let live_cancel = reagent_protocol::CancellationToken::new();
        let policy = request.approval.unwrap_or_default();
        let approver = match policy {
            ApprovalPolicy::Ask => RunApprover::Ask {
                approvals: inner.approvals.clone(),
                run_id: run_id.clone(),
                cancel: live_cancel.clone(),
            },
            ApprovalPolicy::Allow => RunApprover::Fixed(true),
            ApprovalPolicy::Deny => RunApprover::Fixed(false),
        };
        let tools = Arc::new(run_tools(&inner.defaults.tools, launch.workspace.root()).await);
        let config = agent_config(&inner.defaults.agent, &request)?;
        let mut unstarted = Unstarted {
            task: launch.message.clone(),
            model: config.model.clone(),
            provider: provider.name().to_owned(),
            tool_mode: config.tool_mode.as_str().to_owned(),
            workspace: launch.workspace.root().display().to_string(),
            session_id: String::new(),
            follow_up: launch.resume.is_some(),
        };
        let agent = Arc::new(Agent::new(provider, tools, config).with_approver(Arc::new(approver)));
        let workspace = Arc::new(launch.workspace);
        let mut session = match launch.resume {
            None => Session::new(agent, workspace),
            Some(Resumed { snapshot, events }) => {
                Session::from_stored(agent, workspace, snapshot, &events).map_err(|e| {
                    ApiError::conflict(format!("the stored session cannot be continued: {e}"))
                })?
            }
        };
        let session_id = session.id().to_owned();
        if !lock(&inner.busy_sessions).insert(session_id.clone()) {
            return Err(ApiError::conflict(format!(
                "session {session_id} has a run in progress: send the follow-up once it has finished"
            )));
        }
        let live = Arc::new(LiveRun::new(
            run_id.clone(),
            session_id.clone(),
            live_cancel,
            inner.subscriber_queue,
            inner.recent_events,
            unstarted.summary(&run_id, &session_id),
        ));
        unstarted.session_id = session_id.clone();
        let sink = EventSink::new(&run_id, self.handler(&live, policy, unstarted));
        if let Err(e) = inner
            .store
            .memory_put(
                Scope::Session,
                &session_id,
                REQUEST_KEY,
                &serde_json::to_value(&request).unwrap_or_default(),
            )
            .await
        {
            tracing::warn!("cannot keep the request of session {session_id}: {e}");
        }
        lock(&inner.entries).insert(
            run_id.clone(),
            Entry {
                live: live.clone(),
                sink: sink.clone(),
                task: None,
                _slot: slot,
            },
        );
        let runs = self.clone();
        let (cancel, id) = (live.cancel.clone(), run_id.clone());
        let message = launch.message;
        let task = tokio::spawn(async move {
            session.run(&message, &sink, &cancel).await;
            runs.save_session(&mut session).await;
            runs.finished(&id).await;
        });
        if let Some(entry) = lock(&inner.entries).get_mut(&run_id) {
            entry.task = Some(task);
        }
        if tokio::time::timeout(START_WAIT, live.started())
            .await
            .is_ok()
        {
            inner.store.flush().await;
        }
        Ok(CreatedRun {
            id: run_id,
            session_id,
            status: "running".into(),
        })
    }

    /// Where a run's events go: approvals first (so an answer can never arrive before the
    /// approval is known), then live clients, metrics and the store.
    fn handler(
        &self,
        live: &Arc<LiveRun>,
        policy: ApprovalPolicy,
        unstarted: Unstarted,
    ) -> Arc<dyn Fn(Event) + Send + Sync> {
        let (live, approvals) = (live.clone(), self.0.approvals.clone());
        let (metrics, recorder) = (self.0.metrics.clone(), self.0.store.recorder());
        Arc::new(move |event: Event| {
            if live.is_closed() {
                return;
            }
            if matches!(event.kind, EventKind::RunFinished { .. }) && !live.totals().started {
                // It ended before it began (model server unreachable, unknown model): the
                // store gets a `run_started` at seq 0 — outside the run's numbering, so no
                // reader of events after a seq sees it — to create its row.
                recorder.record(Event::new(&live.id, 0, unstarted.event()));
            }
            if let (
                ApprovalPolicy::Ask,
                EventKind::ApprovalRequested {
                    approval_id,
                    command,
                    ..
                },
            ) = (policy, &event.kind)
            {
                approvals.requested(&live.id, approval_id, command);
            }
            if live.publish(&event) {
                metrics.observe(&event);
                recorder.record(event);
            }
        })
    }

    async fn save_session(&self, session: &mut Session) {
        let id = session.id().to_owned();
        let saved = self
            .0
            .store
            .save_session_after_events(&id, |complete| session.snapshot_over_events(complete))
            .await;
        if let Err(e) = saved {
            tracing::warn!("cannot save session {id}: {e}");
        }
    }

    /// A run's task ended: make sure its events are written, then forget it (later readers
    /// go to the store).
    async fn finished(&self, run_id: &str) {
        self.0.store.flush().await;
        self.forget(run_id);
    }

    fn forget(&self, run_id: &str) {
        let entry = lock(&self.0.entries).remove(run_id);
        if let Some(entry) = entry {
            lock(&self.0.busy_sessions).remove(&entry.live.session_id);
            self.0.metrics.run_ended(entry.live.totals().started);
        }
        self.0.approvals.forget_run(run_id);
    }

    /// Wait (a few seconds at most) until a run that has published `run_finished` has saved
    /// its session and stopped being live.
    async fn wait_forgotten(&self, run_id: &str) {
        for _ in 0..500 {
            if self.live(run_id).is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Cancel run `id`: `Ok(true)` when it was live, `Ok(false)` when it exists but has
    /// finished, 404 when there is no such run.
    pub(crate) async fn cancel(&self, id: &str) -> Result<bool, ApiError> {
        if let Some(live) = self.live(id) {
            if live.is_closed() {
                return Ok(false);
            }
            live.cancel.cancel();
            return Ok(true);
        }
        match self.0.store.run(id).await? {
            Some(_) => Ok(false),
            None => Err(ApiError::not_found(format!("no run with id {id}"))),
        }
    }

    /// The server stops: every live run ends as `interrupted` (its task is stopped and a
    /// `run_finished` written on its behalf), and the store is flushed. The runs stay live
    /// until then, as a run that ends by itself does: a client that starts following one
    /// meanwhile joins it live instead of replaying a store that does not hold its end yet.
    pub(crate) async fn interrupt_all(&self) {
        let ids: Vec<String> = lock(&self.0.entries).keys().cloned().collect();
        for id in &ids {
            let task = lock(&self.0.entries)
                .get_mut(id)
                .and_then(|entry| entry.task.take());
            // Stopped before it is cancelled: a cancelled run would end itself as `cancelled`
            // before the abort lands, and then be finished twice.
            if let Some(task) = task {
                task.abort();
                // Returns once the task is dropped, so nothing of it emits after this.
                let _ = task.await;
            }
            let Some((live, sink)) = lock(&self.0.entries)
                .get(id)
                .map(|entry| (entry.live.clone(), entry.sink.clone()))
            else {
                continue;
            };
            // Releases what the task left waiting on blocking threads (an approval).
            live.cancel.cancel();
            if live.is_closed() {
                // It had ended by itself (stopped while saving its session): finished once.
                continue;
            }
            let t = live.totals();
            sink.emit(EventKind::RunFinished {
                outcome: Outcome::Interrupted,
                iterations: t.iterations,
                tool_calls: t.tool_calls,
                prompt_tokens: t.prompt_tokens,
                completion_tokens: t.completion_tokens,
                wall_ms: u64::try_from(live.created.elapsed().as_millis()).unwrap_or(u64::MAX),
                model_ms: 0,
                files_changed: Vec::new(),
                error: Some("reagent serve stopped before the run finished".into()),
                error_kind: None,
                answer: String::new(),
            });
        }
        self.0.store.flush().await;
        for id in &ids {
            self.forget(id);
        }
    }
}

/// What a run was asked to be, for the row of a run that ends before its `run_started`.
struct Unstarted {
    task: String,
    model: String,
    provider: String,
    tool_mode: String,
    workspace: String,
    session_id: String,
    follow_up: bool,
}

impl Unstarted {
    /// The run as listed before anything of it is stored.
    fn summary(&self, run_id: &str, session_id: &str) -> RunSummary {
        RunSummary {
            id: run_id.to_owned(),
            session_id: Some(session_id.to_owned()),
            started_at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            finished_at: None,
            model: self.model.clone(),
            provider: self.provider.clone(),
            outcome: reagent_store::RUNNING.to_owned(),
            iterations: 0,
            tokens: 0,
            tool_calls: 0,
            task: self.task.clone(),
        }
    }

    fn event(&self) -> EventKind {
        EventKind::RunStarted {
            task: self.task.clone(),
            model: self.model.clone(),
            provider: self.provider.clone(),
            tool_mode: self.tool_mode.clone(),
            workspace: self.workspace.clone(),
            num_ctx: 0,
            tools: Vec::new(),
            session_id: self.session_id.clone(),
            system_prompt: String::new(),
            follow_up: self.follow_up,
        }
    }
}

fn open_workspace(roots: &WorkspaceRoots, workspace: &str) -> Result<Workspace, ApiError> {
    let path = roots.check(workspace)?;
    Workspace::open(&path).map_err(|e| {
        ApiError::bad_request(format!("workspace `{workspace}` cannot be opened: {e}"))
    })
}

/// The request a run not started by this server (or whose request was not kept) would have had.
fn request_of(record: &RunRecord) -> CreateRun {
    CreateRun {
        task: record.task.clone(),
        model: record.model.clone(),
        provider: Some(record.provider.clone()).filter(|p| p.parse::<ProviderKind>().is_ok()),
        base_url: None,
        tool_mode: Some(record.tool_mode.clone()),
        max_iterations: None,
        budgets: None,
        workspace: record.workspace.clone(),
        approval: None,
    }
}

fn agent_config(defaults: &AgentConfig, r: &CreateRun) -> Result<AgentConfig, ApiError> {
    if r.model.trim().is_empty() {
        return Err(ApiError::bad_request(
            "`model` is empty: name the model to use",
        ));
    }
    let mut cfg = defaults.clone();
    cfg.model = r.model.clone();
    if let Some(mode) = &r.tool_mode {
        cfg.tool_mode = mode
            .parse::<ToolMode>()
            .map_err(|e| ApiError::bad_request(format!("`tool_mode`: {e}")))?;
    }
    if let Some(n) = r.max_iterations {
        cfg.max_iterations = n;
    }
    if let Some(b) = &r.budgets {
        let max_wall_time = b
            .max_time_secs
            .map(|s| {
                Duration::try_from_secs_f64(s).map_err(|_| {
                    ApiError::bad_request(format!(
                        "`budgets.max_time_secs`: {s} is not a valid number of seconds"
                    ))
                })
            })
            .transpose()?;
        cfg.budgets = Budgets {
            max_total_tokens: b.max_tokens,
            max_wall_time,
            max_tool_calls: b.max_tool_calls,
        };
    }
    Ok(cfg)
}

/// The tools of a run in the workspace `root`: the built-ins and the tool sources' tools for
/// that workspace (MCP stdio servers confined to it, started with its first run, whose start
/// the run waits for).
async fn run_tools(defaults: &reagent_tools::ToolsConfig, root: &std::path::Path) -> ToolRegistry {
    let mut config = defaults.clone();
    config.sources = defaults.sources.for_workspace(root);
    config.sources.started().await;
    ToolRegistry::workspace_tools(&config)
}
