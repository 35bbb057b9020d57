//! The session commands of `reagent chat` over the store's runs (a chat is a stored session
//! of runs, one per turn): `/sessions`, `/search`, `/delete`, and `/export` of the conversation
//! as Markdown. Each returns the text to show.

use std::fmt::Write as _;

use reagent_protocol::{Message, Role};
use reagent_store::{RunFilter, RunRecord, Scope, Store};

/// The key of a session's title (`/rename`) in the store's session memory.
const TITLE_KEY: &str = "reagent.chat.title";

/// Runs looked at when listing or searching sessions.
const RUNS_SCANNED: u32 = 2000;

/// One session, from its runs (newest first).
struct SessionRow {
    id: String,
    last: String,
    model: String,
    turns: usize,
    first_task: String,
}

async fn session_rows(store: &Store) -> anyhow::Result<Vec<(SessionRow, Vec<RunRecord>)>> {
    let runs = store
        .list_runs(&RunFilter {
            limit: RUNS_SCANNED,
            ..Default::default()
        })
        .await?;
    let mut rows: Vec<(SessionRow, Vec<RunRecord>)> = Vec::new();
    for run in runs {
        let Some(id) = run.session_id.clone() else {
            continue;
        };
        match rows.iter_mut().find(|(row, _)| row.id == id) {
            Some((row, runs)) => {
                row.turns += 1;
                row.first_task.clone_from(&run.task);
                runs.push(run);
            }
            None => rows.push((
                SessionRow {
                    id,
                    last: run.started.clone(),
                    model: run.model.clone(),
                    turns: 1,
                    first_task: run.task.clone(),
                },
                vec![run],
            )),
        }
    }
    Ok(rows)
}

fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        line.chars().take(max).collect::<String>() + "…"
    } else {
        line
    }
}

/// `/sessions [FILTER]`: the stored sessions, newest first (those whose first message, model,
/// title or id contains FILTER), one line each starting with the id's first 12 characters.
pub(crate) async fn list(store: &Store, filter: &str) -> anyhow::Result<Vec<String>> {
    let filter = filter.to_lowercase();
    let mut out = Vec::new();
    for (row, _) in session_rows(store).await? {
        let title = title(store, &row.id).await?;
        let hay = format!(
            "{} {} {} {}",
            row.id,
            row.model,
            row.first_task,
            title.as_deref().unwrap_or_default()
        )
        .to_lowercase();
        if !filter.is_empty() && !hay.contains(&filter) {
            continue;
        }
        out.push(format!(
            "{}  {}  {:>3} turns  {}  {}",
            &row.id[..row.id.len().min(12)],
            row.last.get(..16).unwrap_or(&row.last),
            row.turns,
            row.model,
            match &title {
                Some(title) => format!("\"{}\"", one_line(title, 60)),
                None => one_line(&row.first_task, 60),
            }
        ));
    }
    Ok(out)
}

/// The title `/rename` gave session `id`, if any.
async fn title(store: &Store, id: &str) -> anyhow::Result<Option<String>> {
    let value = store.memory_get(Scope::Session, id, TITLE_KEY).await?;
    Ok(value.and_then(|v| v.as_str().map(str::to_owned)))
}

/// `/rename NAME`: store `name` as the title of session `id` (`/sessions` shows and filters it).
pub(crate) async fn rename(store: &Store, id: &str, name: &str) -> anyhow::Result<String> {
    let name = name.trim();
    store
        .memory_put(
            Scope::Session,
            id,
            TITLE_KEY,
            &serde_json::Value::String(name.to_owned()),
        )
        .await?;
    Ok(format!("session {id} is now named \"{name}\""))
}

/// `/search TEXT`: the messages of stored sessions that contain TEXT.
pub(crate) async fn search(store: &Store, text: &str) -> anyhow::Result<String> {
    let needle = text.to_lowercase();
    let mut out = String::new();
    for (row, runs) in session_rows(store).await? {
        for run in runs
            .iter()
            .filter(|r| r.task.to_lowercase().contains(&needle))
        {
            let _ = writeln!(
                out,
                "{}  {}  {}",
                &row.id[..row.id.len().min(12)],
                run.started.get(..16).unwrap_or(&run.started),
                one_line(&run.task, 80)
            );
        }
    }
    if out.is_empty() {
        return Ok(format!("no stored message contains '{text}'"));
    }
    Ok(out.trim_end().to_owned())
}

/// The one stored session whose id starts with `prefix`, with its runs.
async fn find(store: &Store, prefix: &str) -> anyhow::Result<(SessionRow, Vec<RunRecord>)> {
    let mut matching: Vec<(SessionRow, Vec<RunRecord>)> = session_rows(store)
        .await?
        .into_iter()
        .filter(|(row, _)| row.id.starts_with(prefix.trim()))
        .collect();
    if matching.len() != 1 {
        anyhow::bail!(
            "{} stored sessions start with '{prefix}': give more of the id (/sessions lists them)",
            matching.len()
        );
    }
    Ok(matching.remove(0))
}

/// The full id of the stored session whose id starts with `prefix`, else `prefix` as it is
/// (it may be a run's id).
pub(crate) async fn resolve(store: &Store, prefix: &str) -> String {
    match find(store, prefix).await {
        Ok((row, _)) => row.id,
        Err(_) => prefix.trim().to_owned(),
    }
}

/// `/delete ID`: delete every run of the session whose id starts with ID (it must be one).
pub(crate) async fn delete(store: &Store, id: &str, current: &str) -> anyhow::Result<String> {
    let (row, runs) = find(store, id).await?;
    if row.id == current {
        anyhow::bail!("session {} is this one: /new first, then delete it", row.id);
    }
    for run in &runs {
        store.delete_run(&run.id).await?;
    }
    Ok(format!("deleted session {} ({} turns)", row.id, runs.len()))
}

/// `/export html`: the HTML report of `reagent runs export`, over every turn of the session
/// (its runs' events, in order), headed by its newest run.
pub(crate) async fn html(store: &Store, session_id: &str) -> anyhow::Result<String> {
    store.flush().await;
    let run = store
        .last_run_of_session(session_id)
        .await?
        .ok_or_else(|| anyhow::anyhow!("session {session_id} has no stored turn yet"))?;
    let events = store.session_events(session_id).await?;
    Ok(crate::runs_html::page(&run, &events))
}

/// The conversation as Markdown (`/export`): user messages, answers, tool calls and results.
pub(crate) fn markdown(title: &str, messages: &[std::sync::Arc<Message>]) -> String {
    let mut out = format!("# {title}\n\n");
    for m in messages {
        match m.role {
            Role::System => {}
            Role::User => {
                let _ = write!(out, "## You\n\n{}\n\n", m.content);
            }
            Role::Assistant => {
                if !m.content.trim().is_empty() {
                    let _ = write!(out, "## Model\n\n{}\n\n", m.content);
                }
                for call in &m.tool_calls {
                    let _ = write!(
                        out,
                        "**Tool call** `{}` `{}`\n\n",
                        call.name, call.arguments
                    );
                }
            }
            Role::Tool => {
                let _ = write!(out, "```text\n{}\n```\n\n", m.content.replace("```", "ʼʼʼ"));
            }
        }
    }
    out
}
