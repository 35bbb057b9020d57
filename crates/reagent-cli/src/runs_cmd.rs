//! `reagent runs list | show | events | export | replay | delete | undo`: reading the run
//! store (and, for `undo`, restoring a run's checkpoint).

use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Context};
use reagent_core::checkpoint::{Checkpoint, Method};
use reagent_core::SessionSnapshot;
use reagent_protocol::{Event, EventKind};
use reagent_store::{RunFilter, RunRecord, Store, StoredEvent};

use crate::cli::{RunsArgs, RunsCommand};
use crate::config::FileConfig;
use crate::exit::ExitCode;

/// How often `runs events --follow` asks the store for new events.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// `reagent runs …`.
pub(crate) async fn run(args: &RunsArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    if let RunsCommand::List {
        outcome: Some(o), ..
    } = &args.command
    {
        if o != reagent_store::RUNNING {
            o.parse::<reagent_protocol::Outcome>()
                .map_err(|e| crate::usage(anyhow::anyhow!("--outcome: {e} or running")))?;
        }
    }
    let store = crate::store::open(args.store.as_deref(), file).await?;
    match &args.command {
        RunsCommand::List {
            json,
            limit,
            outcome,
        } => {
            let runs = store
                .list_runs(&RunFilter {
                    outcome: outcome.clone(),
                    limit: *limit,
                    before: None,
                })
                .await?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&runs)?);
            } else {
                print!("{}", table(&runs));
            }
        }
        RunsCommand::Show { id } => {
            let (run, events) = load(&store, id).await?;
            print!("{}", transcript(&run, &events));
        }
        RunsCommand::Events { id, follow } => {
            let id = store.resolve_id(id).await?;
            print_events(&store, &id, *follow).await?;
        }
        RunsCommand::Export { id, html } => {
            let (run, events) = load(&store, id).await?;
            std::fs::write(html, crate::runs_html::page(&run, &events))
                .with_context(|| format!("cannot write {}", html.display()))?;
            eprintln!("reagent: run {} written to {}", run.id, html.display());
        }
        RunsCommand::Replay { id } => {
            let (run, events) = load(&store, id).await?;
            return replay(&run, &events).await;
        }
        RunsCommand::Undo { id, dry_run, force } => {
            let (run, events) = load(&store, id).await?;
            undo(&run, &events, *dry_run, *force)?;
        }
        RunsCommand::Delete { id } => {
            let (run, events) = load(&store, id).await?;
            let id = run.id.clone();
            keep_session_whole(&store, &id).await?;
            // Its checkpoints go with it (a ref, or a folder of copies).
            let (start, end) = checkpoints(&run, &events);
            for checkpoint in start.iter().chain(&end) {
                if let Err(e) = checkpoint.discard() {
                    eprintln!(
                        "reagent: checkpoint {} of run {id} not deleted: {e}",
                        checkpoint.id
                    );
                }
            }
            store.delete_run(&id).await?;
            eprintln!("reagent: run {id} deleted from {}", store.location());
        }
    }
    Ok(ExitCode::Completed)
}

/// `runs undo`: restore the checkpoint run `run` recorded before its first change; print
/// each path restored (`restored PATH`) and deleted (`deleted PATH`) on stdout. Refused (unless
/// `force`) when a file it would write back or delete changed after the run ended.
fn undo(run: &RunRecord, events: &[StoredEvent], dry_run: bool, force: bool) -> anyhow::Result<()> {
    if run.outcome == reagent_store::RUNNING {
        bail!(
            "run {} is still running; undo it once it has finished (or stop it first)",
            run.id
        );
    }
    let (start, end) = checkpoints(run, events);
    let start = start.with_context(|| {
        format!(
            "run {} recorded no checkpoint: it changed no file, or ran with --no-checkpoint \
             (or `checkpoints = false`), or its checkpoint could not be taken",
            run.id
        )
    })?;
    let pending = start
        .preview()
        .with_context(|| format!("cannot read run {}'s checkpoint", run.id))?;
    match &end {
        Some(end) => {
            let since = end
                .preview()
                .with_context(|| format!("cannot read the state run {} left", run.id))?;
            let touched: BTreeSet<&String> =
                pending.restored.iter().chain(&pending.deleted).collect();
            let clobbered: Vec<&str> = since
                .restored
                .iter()
                .chain(&since.deleted)
                .filter(|p| touched.contains(p))
                .map(String::as_str)
                .collect();
            if !clobbered.is_empty() && !force && !dry_run {
                bail!(
                    "these files changed after run {} ended, and undo would overwrite or delete \
                     them: {}; pass --force to restore anyway (--dry-run shows what it restores)",
                    run.id,
                    clobbered.join(", ")
                );
            }
        }
        None => eprintln!(
            "reagent: run {} did not record the state it left; files changed since are not told apart",
            run.id
        ),
    }
    let done = if dry_run {
        pending
    } else {
        start
            .restore()
            .with_context(|| format!("cannot restore run {}'s checkpoint", run.id))?
    };
    let mut out = std::io::stdout().lock();
    for path in &done.restored {
        writeln!(out, "restored {path}")?;
    }
    for path in &done.deleted {
        writeln!(out, "deleted {path}")?;
    }
    let verb = if dry_run { "would restore" } else { "restored" };
    eprintln!(
        "reagent: run {}: {verb} {} file(s) and {} {} created file(s) in {} (checkpoint: {})",
        run.id,
        done.restored.len(),
        if dry_run { "would delete" } else { "deleted" },
        done.deleted.len(),
        start.workspace.display(),
        match &start.method {
            Method::Git { reference, .. } => reference.clone(),
            Method::Files { dir } => dir.display().to_string(),
        }
    );
    Ok(())
}

/// The checkpoints run `run` recorded: before its first change, and as it left the workspace.
fn checkpoints(
    run: &RunRecord,
    events: &[StoredEvent],
) -> (Option<Checkpoint>, Option<Checkpoint>) {
    let (mut start, mut end) = (None, None);
    let found = events
        .iter()
        .filter(|e| e.kind == "checkpoint")
        .filter_map(|e| serde_json::from_str::<Event>(&e.json).ok())
        .filter_map(|e| Checkpoint::from_event(&run.id, &e.kind));
    for (checkpoint, after) in found {
        if after {
            end = Some(checkpoint);
        } else {
            start.get_or_insert(checkpoint);
        }
    }
    (start, end)
}

/// Before run `id` is deleted: a saved session of it that leaves its messages to the events
/// gets them back, so `--resume` still works without the deleted run's events.
async fn keep_session_whole(store: &Store, id: &str) -> anyhow::Result<()> {
    let Some(session_id) = store.run(id).await?.and_then(|r| r.session_id) else {
        return Ok(());
    };
    let stored = match store
        .load_session_to_continue(&session_id, SessionSnapshot::needs_events)
        .await
    {
        Ok(stored) => stored,
        // Not readable by this version: there is nothing to keep.
        Err(e) => {
            eprintln!("reagent: session {session_id} is left as it is: {e}");
            return Ok(());
        }
    };
    let Some(mut snapshot) = stored.snapshot.filter(SessionSnapshot::needs_events) else {
        return Ok(());
    };
    snapshot.restore_messages(&stored.events).with_context(|| {
        format!("session {session_id} cannot be kept whole; the run was not deleted")
    })?;
    snapshot.detach_from_events();
    store
        .save_session(&session_id, &serde_json::to_string(&snapshot)?)
        .await?;
    Ok(())
}

/// `reagent runs replay`: today's loop on the recorded replies and results.
async fn replay(run: &RunRecord, stored: &[StoredEvent]) -> anyhow::Result<ExitCode> {
    let events = stored
        .iter()
        .map(|e| e.parse())
        .collect::<Result<Vec<Event>, _>>()
        .with_context(|| format!("run {} has an event that cannot be read", run.id))?;
    let scratch = tempfile::tempdir().context("cannot make a scratch workspace")?;
    let workspace = std::sync::Arc::new(reagent_tools::Workspace::open(scratch.path())?);
    let specs = reagent_tools::ToolRegistry::workspace_tools(&Default::default()).specs();
    let config = reagent_core::AgentConfig::new(run.model.clone());
    let report = reagent_core::replay(&events, config, &specs, workspace)
        .await
        .map_err(|e| anyhow::anyhow!("run {} cannot be replayed: {e}", run.id))?;
    match report.divergence {
        None => {
            println!(
                "run {}: today's loop makes the same {} decisions",
                run.id, report.decisions
            );
            Ok(ExitCode::Completed)
        }
        Some(d) => {
            let show = |x: Option<reagent_core::Decision>| {
                x.map_or_else(|| "(the run had ended)".to_owned(), |d| d.to_string())
            };
            println!(
                "run {}: today's loop differs at iteration {} (after {} matching decisions)\n  recorded: {}\n  today:    {}",
                run.id,
                d.iteration,
                report.decisions,
                show(d.recorded),
                show(d.replayed)
            );
            Ok(ExitCode::ReplayDiffers)
        }
    }
}

/// A run and its events, by id or prefix.
async fn load(store: &Store, id: &str) -> anyhow::Result<(RunRecord, Vec<StoredEvent>)> {
    let id = store.resolve_id(id).await?;
    let run = store
        .run(&id)
        .await?
        .with_context(|| format!("run {id} was deleted meanwhile"))?;
    let events = store.events_after(&id, 0, 0).await?;
    Ok((run, events))
}

/// Events read from the store at a time.
const EVENTS_PAGE: u32 = 1000;

/// Print the events as JSON lines, every page of them; with `follow`, until the run finishes or
/// reads interrupted.
async fn print_events(store: &Store, id: &str, follow: bool) -> anyhow::Result<()> {
    let mut last = 0;
    let mut out = std::io::stdout().lock();
    loop {
        let batch = store.events_after(id, last, EVENTS_PAGE).await?;
        let mut finished = false;
        for e in &batch {
            writeln!(out, "{}", e.json)?;
            last = e.seq;
            finished |= e.kind == "run_finished";
        }
        out.flush()?;
        if batch.len() == EVENTS_PAGE as usize {
            // More may follow at once: read the next page before looking at the run.
            continue;
        }
        if !follow || finished {
            return Ok(());
        }
        if batch.is_empty() {
            let run = store.run(id).await?;
            match run {
                None => anyhow::bail!("run {id} was deleted while following it"),
                Some(r) if !r.is_running() => {
                    // Whatever was committed before it ended is printed; then stop.
                    for e in store.events_after(id, last, 0).await? {
                        writeln!(out, "{}", e.json)?;
                    }
                    out.flush()?;
                    eprintln!(
                        "reagent: run {id} ended without run_finished: {}",
                        r.outcome
                    );
                    return Ok(());
                }
                Some(_) => tokio::time::sleep(FOLLOW_POLL).await,
            }
        }
    }
}

/// `runs list` as a table.
fn table(runs: &[RunRecord]) -> String {
    let mut s = format!(
        "{:<12}  {:<19}  {:<20}  {:<16}  {:>5}  {:>8}  {}\n",
        "ID", "STARTED", "MODEL", "OUTCOME", "ITER", "TOKENS", "TASK"
    );
    for r in runs {
        s.push_str(&format!(
            "{:<12}  {:<19}  {:<20}  {:<16}  {:>5}  {:>8}  {}\n",
            clip(&r.id, 12),
            clip(&r.started.replace('T', " "), 19),
            clip(&r.model, 20),
            r.outcome,
            r.iterations,
            r.total_tokens(),
            clip(&one_line(&r.task), 60)
        ));
    }
    s
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `n` characters, with `…` when cut.
pub(crate) fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}\n"))
        .collect::<String>()
}

/// The transcript of `runs show`.
pub(crate) fn transcript(run: &RunRecord, events: &[StoredEvent]) -> String {
    let mut s = format!(
        "run {}  {}  {} ({}, {})  started {}\n",
        run.id, run.outcome, run.model, run.provider, run.tool_mode, run.started
    );
    for stored in events {
        let Ok(event) = stored.parse() else {
            s.push_str(&format!(
                "({} event #{} not shown)\n",
                stored.kind, stored.seq
            ));
            continue;
        };
        s.push_str(&transcript_line(&event));
    }
    if !events.iter().any(|e| e.kind == "run_finished") {
        s.push_str(&format!(
            "\n[no run_finished: the run is {}]\n",
            run.outcome
        ));
    }
    s
}

fn transcript_line(event: &Event) -> String {
    match &event.kind {
        EventKind::RunStarted {
            task, follow_up, ..
        } => {
            let what = if *follow_up { "follow-up" } else { "task" };
            format!("\n{what}:\n{}", indent(task, "  "))
        }
        EventKind::LlmResponse {
            iteration,
            latency_ms,
            prompt_tokens,
            completion_tokens,
            ..
        } => format!(
            "\n— step {iteration} ({latency_ms} ms, {prompt_tokens} prompt + {completion_tokens} completion tokens)\n"
        ),
        EventKind::AssistantMessage {
            content, reasoning, ..
        } => {
            let mut s = String::new();
            if let Some(r) = reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                s.push_str(&format!("  (thinking)\n{}", indent(r, "    ")));
            }
            if !content.trim().is_empty() {
                s.push_str(&indent(content, "  "));
            }
            s
        }
        EventKind::ToolCall {
            name,
            arguments,
            ok,
            duration_ms,
            summary,
            ..
        } => format!(
            "  → {name} {arguments}  [{} in {duration_ms} ms] {summary}\n",
            if *ok { "ok" } else { "failed" }
        ),
        EventKind::ToolResult {
            name,
            output,
            truncated,
            ..
        } => format!(
            "  ← {name}{}\n{}",
            if *truncated { " (cut at the cap)" } else { "" },
            indent(output, "    ")
        ),
        EventKind::Guardrail {
            guardrail,
            action,
            detail,
        } => format!(
            "  ! guardrail {} → {}: {detail}\n",
            guardrail.as_str(),
            action.as_str()
        ),
        EventKind::UserMessage { content, .. } => {
            format!("  » user:\n{}", indent(content, "    "))
        }
        EventKind::Compaction {
            rounds_removed,
            estimated_tokens_before,
            estimated_tokens_after,
            ..
        } => format!(
            "  ~ compaction: {rounds_removed} rounds removed, ~{estimated_tokens_before} → ~{estimated_tokens_after} tokens\n"
        ),
        EventKind::ApprovalRequested { command, .. } => {
            format!("  ? approval asked for: {command}\n")
        }
        EventKind::ApprovalDecided { approved, note, .. } => match (approved, note) {
            (true, _) => "  ? approved\n".to_owned(),
            (false, None) => "  ? denied\n".to_owned(),
            (false, Some(note)) => format!("  ? denied: {note}\n"),
        },
        EventKind::Retry {
            attempt,
            delay_ms,
            error,
        } => format!("  ↻ attempt {attempt} failed ({error}); retried after {delay_ms} ms\n"),
        EventKind::VerificationCheck {
            round,
            check,
            passed,
            output,
            ..
        } => format!(
            "  ✓ check {check} (round {round}): {}\n{}",
            if *passed { "passed" } else { "failed" },
            if *passed {
                String::new()
            } else {
                indent(output, "    ")
            }
        ),
        EventKind::Checkpoint {
            method,
            location,
            after,
            ..
        } => format!(
            "  ⚑ checkpoint ({method}, {}): {location}\n",
            if *after { "as the run left it" } else { "before the first change" }
        ),
        EventKind::Attempt {
            number,
            of,
            parent_run_id,
            ..
        } => match parent_run_id {
            Some(parent) => format!("attempt {number} of {of} (first attempt: run {parent})\n"),
            None => format!("attempt {number} of {of}\n"),
        },
        EventKind::RunFinished {
            outcome,
            answer,
            error,
            ..
        } => {
            let mut s = format!("\noutcome: {}", outcome.as_str());
            if let Some(e) = error {
                s.push_str(&format!(" ({e})"));
            }
            s.push('\n');
            if !answer.trim().is_empty() {
                s.push_str(&format!("answer:\n{}", indent(answer, "  ")));
            }
            s
        }
        _ => String::new(),
    }
}
