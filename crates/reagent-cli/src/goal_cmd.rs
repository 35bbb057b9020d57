//! `reagent goal add | list | show`: goals for the hub to decompose into tasks, and how they
//! went.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use reagent_hub::goals::{add_goal, get_goal, list_goals, GoalRecord, GoalSpec};
use reagent_hub::queue::Queue;

use crate::config::FileConfig;
use crate::exit::ExitCode;

/// Flags of `reagent goal`.
#[derive(Debug, Args)]
pub(crate) struct GoalArgs {
    /// The store: a SQLite file or postgres://… (default: $REAGENT_STORE, the config file's
    /// `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: GoalCommand,
}

/// `reagent goal …`. ID may be any unique prefix of a goal id.
#[derive(Debug, Subcommand)]
pub(crate) enum GoalCommand {
    /// Add a goal; prints its id.
    Add {
        /// The goal, in plain words.
        text: String,
        /// The model its tasks run on (routed to workers that serve it).
        #[arg(long)]
        model: Option<String>,
        /// The directory its tasks work in (on the workers' machines).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Print {"id": ...} instead of the bare id.
        #[arg(long)]
        json: bool,
    },
    /// Goals, oldest first.
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A goal: its graph, its tasks and their states, its verdict.
    Show {
        /// Goal id (or a unique prefix).
        id: String,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// `reagent goal …`.
pub(crate) async fn run(args: &GoalArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(args.store.as_deref(), file).await?;
    let pool = store.pool();
    match &args.command {
        GoalCommand::Add {
            text,
            model,
            workspace,
            json,
        } => {
            let spec = GoalSpec {
                model: model.clone(),
                workspace: workspace.as_ref().map(|w| w.display().to_string()),
            };
            let id = add_goal(pool, text, &spec).await.map_err(|e| match e {
                reagent_hub::HubError::Invalid(_) => crate::usage(e.into()),
                e => e.into(),
            })?;
            if *json {
                println!("{}", serde_json::json!({ "id": id }));
            } else {
                println!("{id}");
            }
        }
        GoalCommand::List { json } => {
            let goals = list_goals(pool, &[]).await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&goals)?);
            } else {
                for g in &goals {
                    println!(
                        "{}  {:<9}  round {}  {}",
                        &g.id[..8.min(g.id.len())],
                        g.state.as_str(),
                        g.rounds,
                        g.text
                    );
                }
            }
        }
        GoalCommand::Show { id, json } => {
            let goal = get_goal(pool, id).await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&goal)?);
            } else {
                print!("{}", goal_text(&goal, &Queue::new(&store)).await);
            }
        }
    }
    Ok(ExitCode::Completed)
}

async fn goal_text(g: &GoalRecord, queue: &Queue) -> String {
    let mut out = format!(
        "goal {}\n  {}\nstate: {} (round {}), added {}\n",
        g.id,
        g.text,
        g.state.as_str(),
        g.rounds,
        crate::hub_cmd::when(g.created_ms)
    );
    if let Some(d) = &g.detail {
        out.push_str(&format!("detail: {d}\n"));
    }
    if let Some(graph) = &g.graph {
        out.push_str("tasks:\n");
        for t in &graph.tasks {
            let (task_id, state) = match g.tasks.get(&t.id) {
                Some(tid) => (
                    tid.as_str(),
                    queue
                        .get(tid)
                        .await
                        .map(|r| r.state.as_str().to_owned())
                        .unwrap_or_else(|e| e.to_string()),
                ),
                None => ("-", "not dispatched".to_owned()),
            };
            let after = if t.depends_on.is_empty() {
                String::new()
            } else {
                format!(" (after {})", t.depends_on.join(", "))
            };
            out.push_str(&format!(
                "  {}  {:<10} {}{after}  [task {}]\n",
                t.id, state, t.task, task_id
            ));
        }
        out.push_str("acceptance:\n");
        for c in &graph.acceptance {
            out.push_str(&format!("  - {c}\n"));
        }
    }
    if let Some(v) = &g.verdict {
        out.push_str(&format!(
            "verdict: {}\n",
            v.get("verdict").and_then(|x| x.as_str()).unwrap_or("?")
        ));
        for c in v
            .get("checks")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
        {
            let mark = if c.get("passed").and_then(|p| p.as_bool()) == Some(true) {
                "pass"
            } else {
                "FAIL"
            };
            out.push_str(&format!(
                "  {mark}  {}: {}\n",
                c.get("check").and_then(|x| x.as_str()).unwrap_or(""),
                c.get("note").and_then(|x| x.as_str()).unwrap_or("")
            ));
        }
    }
    out
}
