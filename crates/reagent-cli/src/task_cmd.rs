//! `reagent task add|list|show|cancel|retry`: the task queue that `reagent worker`s run.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use reagent_hub::queue::{NewTask, Queue, QueueError, TaskFilter, TaskRecord, TaskState};
use serde_json::json;

use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::{store, usage};

/// Flags of `reagent task`.
#[derive(Debug, Args)]
pub(crate) struct TaskArgs {
    /// The store: a SQLite file or postgres://… (default: $REAGENT_STORE, the config file's
    /// `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: TaskCommand,
}

/// `reagent task …`. ID may be any unique prefix of a task id.
#[derive(Debug, Subcommand)]
pub(crate) enum TaskCommand {
    /// Queue a task for the workers; prints its id.
    Add {
        /// The task, in plain words.
        task: String,
        /// The model it must run on (only workers serving it take it).
        #[arg(long)]
        model: Option<String>,
        /// Directory the agent works in, on the worker's machine (default: the worker's).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Higher runs first.
        #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
        priority: i64,
        /// Capabilities a worker must have (comma-separated or repeated).
        #[arg(long, value_delimiter = ',')]
        tags: Vec<String>,
        /// Attempts before the task is dead-lettered.
        #[arg(long, default_value_t = reagent_hub::queue::DEFAULT_MAX_ATTEMPTS)]
        max_attempts: u32,
        /// A task that must be done first (repeatable).
        #[arg(long = "depends-on", value_name = "ID")]
        depends_on: Vec<String>,
        /// Tool mode for its run: auto, native, constrained or prompt.
        #[arg(long)]
        tool_mode: Option<String>,
        /// Most model calls of its run.
        #[arg(long)]
        max_iterations: Option<u32>,
    },
    /// Tasks, newest first, with their status and attempt count.
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// Only tasks in this state (waiting, queued, running, done, failed, dead, cancelled).
        #[arg(long)]
        state: Option<String>,
        /// At most N tasks.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One task: its settings, status, attempts, result and history.
    Show {
        /// Task id (or a unique prefix).
        id: String,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task that has not ended (a running one's result will be refused).
    Cancel {
        /// Task id (or a unique prefix).
        id: String,
    },
    /// Queue a failed, dead or cancelled task again with a fresh set of attempts.
    Retry {
        /// Task id (or a unique prefix).
        id: String,
    },
}

/// Errors about what was asked (an unknown id, a bad state) are usage errors.
fn asked(e: QueueError) -> anyhow::Error {
    match e {
        QueueError::UnknownTask(_)
        | QueueError::Ambiguous(_)
        | QueueError::InvalidState { .. }
        | QueueError::BadInput(_) => usage(e.into()),
        other => other.into(),
    }
}

/// `reagent task …`.
pub(crate) async fn run(args: &TaskArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let state = match &args.command {
        TaskCommand::List { state: Some(s), .. } => Some(
            s.parse::<TaskState>()
                .map_err(|e| usage(anyhow::anyhow!(e)))?,
        ),
        _ => None,
    };
    let store = store::open(args.store.as_deref(), file).await?;
    let queue = Queue::new(&store);
    match &args.command {
        TaskCommand::Add {
            task,
            model,
            workspace,
            priority,
            tags,
            max_attempts,
            depends_on,
            tool_mode,
            max_iterations,
        } => {
            let mut new = NewTask::new(task.clone());
            new.model = model.clone();
            new.priority = *priority;
            new.tags = tags.clone();
            new.max_attempts = *max_attempts;
            new.spec.tool_mode = tool_mode.clone();
            new.spec.max_iterations = *max_iterations;
            if let Some(path) = workspace {
                let path = std::path::absolute(path)
                    .with_context(|| format!("cannot resolve workspace {}", path.display()))?;
                new.spec.workspace = Some(path.to_string_lossy().into_owned());
            }
            for dep in depends_on {
                new.depends_on
                    .push(queue.resolve_id(dep).await.map_err(asked)?);
            }
            let id = queue.add(new).await.map_err(asked)?;
            println!("{id}");
        }
        TaskCommand::List { json, limit, .. } => {
            let filter = TaskFilter {
                states: state.into_iter().collect(),
                goal_id: None,
                limit: Some(*limit),
            };
            let tasks = queue.list(&filter).await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&tasks)?);
            } else {
                print_table(&tasks);
            }
        }
        TaskCommand::Show { id, json } => {
            let task = queue.get(id).await.map_err(asked)?;
            let deps = queue.dependencies(&task.id).await?;
            let history = queue.history(&task.id).await?;
            if *json {
                let mut value = serde_json::to_value(&task)?;
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("depends_on".into(), json!(deps));
                    obj.insert("history".into(), serde_json::to_value(&history)?);
                }
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                print_task(&task, &deps, &history);
            }
        }
        TaskCommand::Cancel { id } => {
            queue.cancel(id).await.map_err(asked)?;
            eprintln!("reagent: task {id} cancelled");
        }
        TaskCommand::Retry { id } => {
            queue.retry(id).await.map_err(asked)?;
            eprintln!("reagent: task {id} queued again");
        }
    }
    Ok(ExitCode::Completed)
}

fn print_table(tasks: &[TaskRecord]) {
    if tasks.is_empty() {
        eprintln!("reagent: no tasks");
        return;
    }
    println!(
        "{:<8}  {:<9}  {:>7}  {:>4}  {:<14}  TASK",
        "ID", "STATUS", "ATTEMPT", "PRIO", "MODEL"
    );
    for t in tasks {
        println!(
            "{:<8}  {:<9}  {:>3}/{:<3}  {:>4}  {:<14}  {}",
            short(&t.id),
            t.state.as_str(),
            t.attempt,
            t.max_attempts,
            t.priority,
            t.model.as_deref().unwrap_or("-"),
            one_line(&t.task, 60)
        );
    }
}

/// Epoch milliseconds as RFC 3339 (the number itself when out of range).
fn when(ms: i64) -> String {
    // 9999-12-31T23:59:59.999Z, the last instant RFC 3339 can write.
    const LAST: i64 = 253_402_300_799_999;
    match u64::try_from(ms) {
        Ok(ms) if ms <= LAST.unsigned_abs() => humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms),
        )
        .to_string(),
        _ => ms.to_string(),
    }
}

/// The first 8 characters of an id.
fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

fn print_task(task: &TaskRecord, deps: &[String], history: &[reagent_hub::queue::HistoryEntry]) {
    println!("task      {}", task.id);
    println!("status    {}", task.state);
    println!("attempts  {} of {}", task.attempt, task.max_attempts);
    println!("priority  {}", task.priority);
    println!(
        "model     {}",
        task.model.as_deref().unwrap_or("(the worker's)")
    );
    if !task.tags.is_empty() {
        println!("tags      {}", task.tags.join(", "));
    }
    if let Some(ws) = &task.spec.workspace {
        println!("workspace {ws}");
    }
    if !deps.is_empty() {
        println!("after     {}", deps.join(", "));
    }
    if let Some(owner) = &task.lease_owner {
        println!("worker    {owner}");
    }
    if let Some(run) = &task.run_id {
        println!("run       {run}  (reagent runs show {run})");
    }
    if let Some(error) = &task.error {
        println!("error     {error}");
    }
    if let Some(result) = &task.result {
        println!("result    {result}");
    }
    println!("\n{}\n", task.task);
    for h in history {
        let at = when(h.at_ms);
        println!(
            "{at}  #{:<2} {:<20} {}{}",
            h.attempt,
            h.what,
            h.worker
                .as_deref()
                .map(|w| format!("[{}] ", short(w)))
                .unwrap_or_default(),
            h.detail.as_deref().unwrap_or("")
        );
    }
}
