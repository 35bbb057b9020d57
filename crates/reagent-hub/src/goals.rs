//! Goals as stored (`goals`): added by people (`reagent goal add`), then moved along by the
//! hub — decomposed, dispatched, checked, corrected — with fenced writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{Any, AnyPool, Row, Transaction};

use crate::clock;
use crate::error::{HubError, Result};
use crate::graph::TaskGraph;
use crate::leader::Fence;

/// Where a goal is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoalState {
    /// Waiting to be decomposed.
    Pending,
    /// Its tasks are in the queue.
    Running,
    /// Its tasks are finished; waiting to be verified.
    Checking,
    /// Verification failed and a corrective round is allowed: waiting for corrective tasks.
    Improving,
    /// Every acceptance check passed.
    Verified,
    /// Some checks passed (no corrective round left).
    Partial,
    /// No check passed, or the goal could not be decomposed.
    Failed,
}

impl GoalState {
    const ALL: [GoalState; 7] = [
        GoalState::Pending,
        GoalState::Running,
        GoalState::Checking,
        GoalState::Improving,
        GoalState::Verified,
        GoalState::Partial,
        GoalState::Failed,
    ];

    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalState::Pending => "pending",
            GoalState::Running => "running",
            GoalState::Checking => "checking",
            GoalState::Improving => "improving",
            GoalState::Verified => "verified",
            GoalState::Partial => "partial",
            GoalState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self> {
        GoalState::ALL
            .into_iter()
            .find(|g| g.as_str() == s)
            .ok_or_else(|| HubError::Invalid(format!("unknown goal state `{s}`")))
    }
}

/// How a goal's tasks are run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoalSpec {
    /// The model the tasks run on (routing picks a worker that serves it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The workspace the tasks work in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// A stored goal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoalRecord {
    /// Its id (uuid).
    pub id: String,
    /// The goal in plain words.
    pub text: String,
    /// How its tasks run.
    pub spec: GoalSpec,
    /// Where it is.
    pub state: GoalState,
    /// The current round's graph, once decomposed.
    pub graph: Option<TaskGraph>,
    /// The queue task of each graph task id (current round).
    pub tasks: BTreeMap<String, String>,
    /// The last verification (JSON), if any.
    pub verdict: Option<Value>,
    /// Why it failed, or notes on its progress.
    pub detail: Option<String>,
    /// Corrective rounds made so far.
    pub rounds: i64,
    /// When it was added (epoch ms).
    pub created_ms: i64,
    /// When it last changed.
    pub updated_ms: i64,
}

/// Add a goal (a person's command: no lease needed). Its id.
pub async fn add_goal(pool: &AnyPool, text: &str, spec: &GoalSpec) -> Result<String> {
    if text.trim().is_empty() {
        return Err(HubError::Invalid("a goal needs some words".to_owned()));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = clock::now_ms(pool).await?;
    let spec = serde_json::to_string(spec).map_err(|e| HubError::Invalid(e.to_string()))?;
    // `created_ms` orders goals (oldest first): one added in the same millisecond as the last
    // one still comes after it.
    sqlx::query(
        "INSERT INTO goals (id, text, spec, state, rounds, created_ms, updated_ms) \
         SELECT $1, $2, $3, $4, 0, \
           CASE WHEN COALESCE(MAX(created_ms), 0) < $5 THEN $5 ELSE MAX(created_ms) + 1 END, $5 \
         FROM goals",
    )
    .bind(&id)
    .bind(text)
    .bind(spec)
    .bind(GoalState::Pending.as_str())
    .bind(now)
    .execute(pool)
    .await
    .map_err(HubError::db("add a goal"))?;
    Ok(id)
}

const COLUMNS: &str =
    "id, text, spec, state, graph, tasks, verdict, detail, rounds, created_ms, updated_ms";

fn goal_from_row(r: &sqlx::any::AnyRow) -> Result<GoalRecord> {
    let what = "read a goal";
    let json = |i: usize| -> Result<Option<String>> { r.try_get(i).map_err(HubError::db(what)) };
    let parse = |text: Option<String>, field: &str| -> Result<Option<Value>> {
        text.map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| HubError::Invalid(format!("goal's {field} is not JSON: {e}")))
    };
    let spec: String = r.try_get(2).map_err(HubError::db(what))?;
    let state: String = r.try_get(3).map_err(HubError::db(what))?;
    let graph = parse(json(4)?, "graph")?
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| HubError::Invalid(format!("goal's graph is malformed: {e}")))?;
    let tasks = parse(json(5)?, "tasks")?
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| HubError::Invalid(format!("goal's task map is malformed: {e}")))?
        .unwrap_or_default();
    Ok(GoalRecord {
        id: r.try_get(0).map_err(HubError::db(what))?,
        text: r.try_get(1).map_err(HubError::db(what))?,
        spec: serde_json::from_str(&spec).unwrap_or_default(),
        state: GoalState::parse(&state)?,
        graph,
        tasks,
        verdict: parse(json(6)?, "verdict")?,
        detail: r.try_get(7).map_err(HubError::db(what))?,
        rounds: r.try_get(8).map_err(HubError::db(what))?,
        created_ms: r.try_get(9).map_err(HubError::db(what))?,
        updated_ms: r.try_get(10).map_err(HubError::db(what))?,
    })
}

/// Goals, oldest first; only those in `states` when it is not empty.
pub async fn list_goals(pool: &AnyPool, states: &[GoalState]) -> Result<Vec<GoalRecord>> {
    let filter = if states.is_empty() {
        String::new()
    } else {
        let marks: Vec<String> = (1..=states.len()).map(|i| format!("${i}")).collect();
        format!(" WHERE state IN ({})", marks.join(", "))
    };
    let sql = format!("SELECT {COLUMNS} FROM goals{filter} ORDER BY created_ms, id");
    let mut query = sqlx::query(&sql);
    for state in states {
        query = query.bind(state.as_str());
    }
    let rows = query
        .fetch_all(pool)
        .await
        .map_err(HubError::db("list goals"))?;
    rows.iter().map(goal_from_row).collect()
}

/// The goal with this id or unique id prefix.
pub async fn get_goal(pool: &AnyPool, id: &str) -> Result<GoalRecord> {
    let pattern = format!("{}%", id.replace(['%', '_'], ""));
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM goals WHERE id LIKE $1 ORDER BY id LIMIT 2"
    ))
    .bind(pattern)
    .fetch_all(pool)
    .await
    .map_err(HubError::db("read a goal"))?;
    match rows.as_slice() {
        [one] => goal_from_row(one),
        [] => Err(HubError::NotFound(format!("no goal `{id}`"))),
        _ => Err(HubError::NotFound(format!(
            "`{id}` matches several goals; give more of the id"
        ))),
    }
}

/// A change to a goal the hub makes.
#[derive(Debug, Clone, Default)]
pub struct GoalUpdate {
    /// The new graph (a new round).
    pub graph: Option<TaskGraph>,
    /// The new task map.
    pub tasks: Option<BTreeMap<String, String>>,
    /// The new verification.
    pub verdict: Option<Value>,
    /// A new detail.
    pub detail: Option<String>,
    /// Count one more corrective round.
    pub next_round: bool,
}

/// Move goal `id` from `from` to `to` with `update` (fenced); `false` when the goal was no
/// longer in `from` (nothing changed).
pub async fn update_goal(
    pool: &AnyPool,
    fence: &Fence,
    id: &str,
    from: GoalState,
    to: GoalState,
    update: GoalUpdate,
) -> Result<bool> {
    let now = clock::now_ms(pool).await?;
    let mut tx = fence.begin(pool).await?;
    let changed = update_goal_in(&mut tx, now, id, (from, to), update).await?;
    tx.commit().await.map_err(HubError::db("update a goal"))?;
    Ok(changed)
}

/// [`update_goal`] inside a transaction begun with [`Fence::begin`], which the caller commits
/// (`now`: the database's clock).
pub(crate) async fn update_goal_in(
    tx: &mut Transaction<'static, Any>,
    now: i64,
    id: &str,
    (from, to): (GoalState, GoalState),
    update: GoalUpdate,
) -> Result<bool> {
    let graph = update.graph.as_ref().map(json_text).transpose()?;
    let tasks = update.tasks.as_ref().map(json_text).transpose()?;
    let verdict = update.verdict.map(|v| v.to_string());
    let changed = sqlx::query(
        "UPDATE goals SET state = $3, graph = COALESCE($4, graph), tasks = COALESCE($5, tasks), \
         verdict = COALESCE($6, verdict), detail = COALESCE($7, detail), \
         rounds = rounds + $8, updated_ms = $9 WHERE id = $1 AND state = $2",
    )
    .bind(id)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(graph)
    .bind(tasks)
    .bind(verdict)
    .bind(update.detail)
    .bind(i64::from(update.next_round))
    .bind(now)
    .execute(&mut **tx)
    .await
    .map_err(HubError::db("update a goal"))?
    .rows_affected();
    Ok(changed == 1)
}

/// The key of the task that node `node` of round `round` of goal `goal` becomes (stored in
/// the task's unique `goal_node`): a node is added to the queue once, however often a
/// dispatch is retried or taken over, and a task added before the goal's map was saved is
/// found by it — never by its text, which two nodes may share.
pub fn node_key(goal: &str, round: i64, node: &str) -> String {
    format!("{goal}/{round}/{node}")
}

fn json_text<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| HubError::Invalid(e.to_string()))
}
