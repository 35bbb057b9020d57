//! Goals through the hub: decomposed by the planner into a validated task graph (charged to
//! the cost ledger), dispatched through the queue in dependency order, noticed when all their
//! tasks have ended, verified against the acceptance checks, and corrected when they fail.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;
use sqlx::{Any, Transaction};

use super::Hub;
use crate::actions::{self, ActionPolicy};
use crate::error::{HubError, Result};
use crate::goals::{
    get_goal, list_goals, node_key, update_goal, update_goal_in, GoalRecord, GoalState, GoalUpdate,
};
use crate::graph::TaskGraph;
use crate::leader::Fence;
use crate::machine::HubState;
use crate::planner::{Planner, TaskOutcome, Verdict};
use crate::queue::{NewTask, TaskFilter, TaskRecord, TaskSpec};
use crate::{clock, cost};

/// Attempts at a valid graph per round (the second is told why the first was rejected).
const GRAPH_ATTEMPTS: usize = 2;

/// The act recorded when the model could not decompose (or correct) a goal.
const PLAN_FAILED: &str = "plan";
/// The act recorded when the model could not verify a goal.
const VERIFY_FAILED: &str = "verify";

/// The failed act that delays the next model call for a goal in `state`.
fn failure_kind(state: GoalState) -> &'static str {
    if state == GoalState::Checking {
        VERIFY_FAILED
    } else {
        PLAN_FAILED
    }
}

impl Hub {
    /// Whether goals wait for `state`'s work (contemplating: to decompose or verify;
    /// improving: to correct) and the planner and the ledger allow it.
    pub(super) async fn goals_waiting(&self, state: HubState) -> Result<bool> {
        if self.config().planner.is_none() {
            return Ok(false);
        }
        let states: &[GoalState] = match state {
            HubState::Contemplating => &[GoalState::Pending, GoalState::Checking],
            HubState::Improving => &[GoalState::Improving],
            _ => return Ok(false),
        };
        Ok(!self.ready_goals(states).await?.is_empty()
            && cost::has_budget(self.pool(), state, self.config().calls_per_hour).await?)
    }

    /// Goals in `states` whose last failed model call (if any) is past the cooldown, so a
    /// model server that is down is not asked again at every tick.
    async fn ready_goals(&self, states: &[GoalState]) -> Result<Vec<GoalRecord>> {
        let retry = ActionPolicy {
            cooldown: self.config().healing.cooldown,
            max_per_hour: u32::MAX,
        };
        let mut ready = Vec::new();
        for goal in list_goals(self.pool(), states).await? {
            let kind = failure_kind(goal.state);
            let name = &self.config().name;
            if actions::allowed(self.pool(), name, kind, &goal.id, retry).await? {
                ready.push(goal);
            }
        }
        Ok(ready)
    }

    /// Contemplating: verify the first goal whose tasks ended, else decompose the first pending.
    pub(super) async fn contemplate(&self, fence: &Fence) -> Result<()> {
        let Some(planner) = self.config().planner.clone() else {
            return Ok(());
        };
        let goals = self
            .ready_goals(&[GoalState::Checking, GoalState::Pending])
            .await?;
        if let Some(goal) = goals.iter().find(|g| g.state == GoalState::Checking) {
            return self.verify_goal(fence, &planner, goal).await;
        }
        let Some(goal) = goals.first() else {
            return Ok(());
        };
        match self
            .plan(fence, &planner, HubState::Contemplating, goal, None)
            .await?
        {
            Some(graph) => {
                self.dispatch(fence, goal, GoalState::Pending, graph, false)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Improving: plan corrective tasks for the first goal that failed its verification.
    pub(super) async fn improve(&self, fence: &Fence) -> Result<()> {
        let Some(planner) = self.config().planner.clone() else {
            return Ok(());
        };
        let goals = self.ready_goals(&[GoalState::Improving]).await?;
        let Some(goal) = goals.first() else {
            return Ok(());
        };
        let correction = format!(
            "The work done so far did not pass these acceptance checks: {}",
            goal.verdict.clone().unwrap_or_default()
        );
        match self
            .plan(fence, &planner, HubState::Improving, goal, Some(correction))
            .await?
        {
            Some(graph) => {
                self.dispatch(fence, goal, GoalState::Improving, graph, true)
                    .await
            }
            None => Ok(()),
        }
    }

    /// Charge one model call to `state`; a refusal is recorded.
    async fn charge(&self, fence: &Fence, state: HubState) -> Result<bool> {
        let cap = self.config().calls_per_hour;
        let charged = cost::charge(self.pool(), fence, state, cap).await?;
        if !charged {
            let why = format!("{cap} model calls per hour in {state} already made");
            actions::record(
                self.pool(),
                fence,
                "cost_cap",
                state.as_str(),
                "refused",
                Some(&why),
            )
            .await?;
        }
        Ok(charged)
    }

    /// A valid graph for `goal`, or `None` (out of budget, the model failed: try later; or the
    /// graphs were rejected: the goal is failed).
    async fn plan(
        &self,
        fence: &Fence,
        planner: &Planner,
        state: HubState,
        goal: &GoalRecord,
        mut correction: Option<String>,
    ) -> Result<Option<TaskGraph>> {
        let mut rejected = None;
        for _ in 0..GRAPH_ATTEMPTS {
            if !self.charge(fence, state).await? {
                return Ok(None);
            }
            match planner.decompose(&goal.text, correction.as_deref()).await {
                Ok(graph) => return Ok(Some(graph)),
                Err(e @ HubError::InvalidGraph(_)) => {
                    tracing::warn!("hub {}: goal {}: {e}", self.id(), goal.id);
                    actions::record(
                        self.pool(),
                        fence,
                        "graph_rejected",
                        &goal.id,
                        "refused",
                        Some(&e.to_string()),
                    )
                    .await?;
                    correction = Some(format!(
                        "{}Your previous task graph was rejected: {e}. Send a corrected one.",
                        correction.map(|c| format!("{c}\n")).unwrap_or_default()
                    ));
                    rejected = Some(e);
                }
                Err(e) => {
                    tracing::warn!("hub {}: goal {}: {e}", self.id(), goal.id);
                    let detail = e.to_string();
                    actions::record(
                        self.pool(),
                        fence,
                        PLAN_FAILED,
                        &goal.id,
                        "failed",
                        Some(&detail),
                    )
                    .await?;
                    return Ok(None);
                }
            }
        }
        let detail = format!(
            "the model's task graph was rejected: {}",
            rejected.map(|e| e.to_string()).unwrap_or_default()
        );
        update_goal(
            self.pool(),
            fence,
            &goal.id,
            goal.state,
            GoalState::Failed,
            GoalUpdate {
                detail: Some(detail),
                ..GoalUpdate::default()
            },
        )
        .await?;
        Ok(None)
    }

    /// Record the new round's graph and add its tasks in one fenced transaction: afterwards
    /// the goal is running with every node mapped to its task, or (this hub died or was
    /// deposed before the commit) still where it was, with nothing added.
    async fn dispatch(
        &self,
        fence: &Fence,
        goal: &GoalRecord,
        from: GoalState,
        graph: TaskGraph,
        next_round: bool,
    ) -> Result<()> {
        let round = goal.rounds + i64::from(next_round);
        let now = clock::now_ms(self.pool()).await?;
        let mut tx = fence.begin(self.pool()).await?;
        let tasks = self
            .add_graph_tasks(&mut tx, fence, goal, &graph, round, BTreeMap::new())
            .await?;
        let added = tasks.len();
        let update = GoalUpdate {
            graph: Some(graph),
            tasks: Some(tasks),
            next_round,
            ..GoalUpdate::default()
        };
        let moves = (from, GoalState::Running);
        if update_goal_in(&mut tx, now, &goal.id, moves, update).await? {
            self.commit(tx, goal, added).await?;
        }
        Ok(())
    }

    /// Map the graph nodes a running goal's task map lacks (a goal an older reagent left
    /// half-dispatched): a node's task already in the queue is adopted by its node key, the
    /// others are added; one fenced transaction, like [`Hub::dispatch`].
    async fn continue_dispatch(&self, fence: &Fence, goal: &GoalRecord) -> Result<()> {
        let Some(graph) = &goal.graph else {
            return Ok(());
        };
        if graph.tasks.iter().all(|t| goal.tasks.contains_key(&t.id)) {
            return Ok(());
        }
        let now = clock::now_ms(self.pool()).await?;
        let mut tx = fence.begin(self.pool()).await?;
        let tasks = self
            .add_graph_tasks(&mut tx, fence, goal, graph, goal.rounds, goal.tasks.clone())
            .await?;
        let added = tasks.len() - goal.tasks.len();
        let update = GoalUpdate {
            tasks: Some(tasks),
            ..GoalUpdate::default()
        };
        let moves = (GoalState::Running, GoalState::Running);
        if update_goal_in(&mut tx, now, &goal.id, moves, update).await? {
            self.commit(tx, goal, added).await?;
        }
        Ok(())
    }

    /// Commit a dispatch (waking the workers).
    async fn commit(
        &self,
        mut tx: Transaction<'static, Any>,
        goal: &GoalRecord,
        added: usize,
    ) -> Result<()> {
        self.queue().notify(&mut tx).await?;
        tx.commit()
            .await
            .map_err(HubError::db("commit a goal's tasks"))?;
        tracing::info!(
            "hub {}: goal {}: {added} tasks dispatched",
            self.id(),
            goal.id
        );
        Ok(())
    }

    /// Add to the queue inside the fenced `tx`, in dependency order, the nodes of `graph`
    /// (round `round` of `goal`) that `tasks` (node → task) lacks, and give `tasks` with them.
    /// Each task depends on the tasks of its node's dependencies, so the queue runs them in
    /// order, and carries its node's key ([`node_key`]): a node whose task exists already
    /// is mapped to that task, not added again.
    async fn add_graph_tasks(
        &self,
        tx: &mut Transaction<'static, Any>,
        fence: &Fence,
        goal: &GoalRecord,
        graph: &TaskGraph,
        round: i64,
        mut tasks: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>> {
        let order = graph.validate(&[])?;
        tracing::info!(
            "hub {}: goal {}: adding {} tasks of round {round} at epoch {}",
            self.id(),
            goal.id,
            graph.tasks.len() - tasks.len(),
            fence.epoch
        );
        for i in order {
            let node = &graph.tasks[i];
            if tasks.contains_key(&node.id) {
                continue;
            }
            let mut new = NewTask::new(node.task.clone());
            new.spec = TaskSpec {
                workspace: goal.spec.workspace.clone(),
                ..TaskSpec::default()
            };
            new.model = goal.spec.model.clone();
            new.goal_id = Some(goal.id.clone());
            new.goal_node = Some(node_key(&goal.id, round, &node.id));
            new.depends_on = node
                .depends_on
                .iter()
                .filter_map(|d| tasks.get(d).cloned())
                .collect();
            let id = self.queue().add_in(tx, new).await?;
            tracing::debug!(
                "hub {}: goal {}: node {} is task {id}",
                self.id(),
                goal.id,
                node.id
            );
            tasks.insert(node.id.clone(), id);
        }
        Ok(tasks)
    }

    /// Running goals whose tasks have all ended move to checking.
    pub(super) async fn notice_finished_goals(&self, fence: &Fence) -> Result<()> {
        for goal in list_goals(self.pool(), &[GoalState::Running]).await? {
            self.continue_dispatch(fence, &goal).await?;
            let goal = get_goal(self.pool(), &goal.id).await?;
            let outcomes = self.outcomes(&goal).await?;
            if outcomes.iter().all(|o| o.is_some()) {
                update_goal(
                    self.pool(),
                    fence,
                    &goal.id,
                    GoalState::Running,
                    GoalState::Checking,
                    GoalUpdate::default(),
                )
                .await?;
            }
        }
        Ok(())
    }

    /// Each graph task's outcome, `None` while it has not ended.
    async fn outcomes(&self, goal: &GoalRecord) -> Result<Vec<Option<TaskOutcome>>> {
        let Some(graph) = &goal.graph else {
            return Ok(Vec::new());
        };
        let filter = TaskFilter {
            goal_id: Some(goal.id.clone()),
            ..TaskFilter::default()
        };
        let mut queued: HashMap<String, TaskRecord> = self
            .queue()
            .list(&filter)
            .await?
            .into_iter()
            .map(|t| (t.id.clone(), t))
            .collect();
        Ok(graph
            .tasks
            .iter()
            .map(|node| {
                let task = queued.remove(goal.tasks.get(&node.id)?)?;
                task.state.is_final().then(|| TaskOutcome {
                    id: node.id.clone(),
                    task: node.task.clone(),
                    state: task.state.as_str().to_owned(),
                    result: task
                        .result
                        .map(|r| r.to_string())
                        .or(task.error)
                        .unwrap_or_default(),
                })
            })
            .collect())
    }

    /// Verify a goal whose tasks ended and record the verdict (or send it to improving).
    async fn verify_goal(&self, fence: &Fence, planner: &Planner, goal: &GoalRecord) -> Result<()> {
        let Some(graph) = &goal.graph else {
            return Err(HubError::Invalid(format!("goal {} has no graph", goal.id)));
        };
        if !self.charge(fence, HubState::Contemplating).await? {
            return Ok(());
        }
        let outcomes: Vec<TaskOutcome> = self.outcomes(goal).await?.into_iter().flatten().collect();
        let verification = match planner.verify(&goal.text, graph, &outcomes).await {
            Ok(v) => v,
            Err(e) => {
                let detail = e.to_string();
                actions::record(
                    self.pool(),
                    fence,
                    VERIFY_FAILED,
                    &goal.id,
                    "failed",
                    Some(&detail),
                )
                .await?;
                return Ok(());
            }
        };
        let to = match verification.verdict {
            Verdict::Verified => GoalState::Verified,
            _ if goal.rounds < i64::from(self.config().max_rounds) => GoalState::Improving,
            Verdict::Partial => GoalState::Partial,
            Verdict::Failed => GoalState::Failed,
        };
        let verdict = json!({
            "verdict": verification.verdict,
            "checks": verification.checks,
            "round": goal.rounds,
        });
        update_goal(
            self.pool(),
            fence,
            &goal.id,
            GoalState::Checking,
            to,
            GoalUpdate {
                verdict: Some(verdict),
                ..GoalUpdate::default()
            },
        )
        .await?;
        Ok(())
    }
}
