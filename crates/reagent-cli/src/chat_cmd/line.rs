//! Line mode (stdin not a terminal): each line of stdin is a message (or a command), the reply
//! goes to stdout, tool calls to stderr; `--json` writes one JSON object per turn instead. So a
//! chat can be scripted: `printf 'list the files\nnow count them\n' | reagent chat ...`.

use std::sync::{Arc, Mutex};

use reagent_console::commands::{self, Input};
use reagent_core::RunResult;
use reagent_protocol::{CancellationToken, Event, EventKind, Outcome};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::act::{self, Acted};
use super::{Chat, ChatArgs};
use crate::config::FileConfig;
use crate::exit::ExitCode;

/// `reagent chat` without a terminal.
pub(crate) async fn run(args: &ChatArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let mut chat = Chat::open(args, file, None).await?;
    let as_json = args.run.json;
    eprintln!("reagent chat: session {}", chat.session.id());
    eprintln!("reagent chat: {}", chat.provider_line());
    // Ctrl-C cancels the turn in progress; the chat goes on with the next line.
    let current = Arc::new(Mutex::new(CancellationToken::new()));
    let watched = current.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if let Ok(token) = watched.lock() {
                token.cancel();
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut turn = 0u32;
    let mut last = Outcome::Completed;
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let acted = match commands::parse(&line) {
            Ok(Input::Message(m)) => Ok(Acted::Send(m)),
            Ok(Input::Role { role, message }) => act::role(&mut chat, &role, message),
            Ok(Input::Command(command)) => act::command(&mut chat, command).await,
            Err(e) => {
                eprintln!("reagent chat: {e}");
                continue;
            }
        };
        let message = match acted {
            Ok(Acted::Send(m)) => m,
            Ok(acted) => {
                if say(acted) {
                    break;
                }
                continue;
            }
            Err(e) => {
                eprintln!("reagent chat: {e:#}");
                continue;
            }
        };
        turn += 1;
        let cancel = CancellationToken::new();
        if let Ok(mut slot) = current.lock() {
            *slot = cancel.clone();
        }
        let calls = Arc::new(Mutex::new(Vec::new()));
        let (result, store_error) = chat
            .turn(&message, on_event(calls.clone(), as_json), &cancel)
            .await;
        last = result.outcome;
        let calls = calls.lock().map(|c| c.clone()).unwrap_or_default();
        if as_json {
            println!(
                "{}",
                turn_json(
                    turn,
                    &message,
                    &result,
                    calls,
                    chat.session.id(),
                    store_error
                )
            );
        } else {
            println!("{}", result.answer);
            if result.outcome != Outcome::Completed {
                let why = result.error.as_ref().map_or("", |e| e.message.as_str());
                eprintln!(
                    "reagent chat: turn ended: {} {why}",
                    result.outcome.as_str()
                );
            }
            if let Some(e) = store_error {
                eprintln!("reagent chat: the turn was not saved: {e}");
            }
        }
    }
    Ok(ExitCode::from_outcome(last))
}

/// Print what a command said (stderr: stdout holds only replies); `true` to quit.
fn say(acted: Acted) -> bool {
    match acted {
        Acted::Say(text) => {
            eprintln!("{text}");
            false
        }
        Acted::Pick(picker) => {
            eprintln!("{}:\n{}", picker.title, picker.items.join("\n"));
            false
        }
        Acted::Send(_) => false,
        Acted::Quit => true,
    }
}

/// Tool calls to stderr as they finish (not with `--json`), and kept for the turn's JSON.
fn on_event(calls: Arc<Mutex<Vec<Value>>>, as_json: bool) -> super::OnEvent {
    Arc::new(move |event: &Event| {
        if let EventKind::ToolCall {
            name,
            arguments,
            ok,
            summary,
            duration_ms,
            ..
        } = &event.kind
        {
            if !as_json {
                let mark = if *ok { "ok" } else { "failed" };
                eprintln!("[tool] {name} {arguments} → {mark}: {summary}");
            }
            if let Ok(mut calls) = calls.lock() {
                calls.push(json!({
                    "name": name,
                    "arguments": arguments,
                    "ok": ok,
                    "summary": summary,
                    "duration_ms": duration_ms,
                }));
            }
        }
    })
}

/// One turn as JSON: the message, the answer, the outcome, the tool calls, the tokens.
fn turn_json(
    turn: u32,
    message: &str,
    result: &RunResult,
    calls: Vec<Value>,
    session_id: &str,
    store_error: Option<String>,
) -> Value {
    json!({
        "turn": turn,
        "message": message,
        "outcome": result.outcome.as_str(),
        "answer": result.answer,
        "tool_calls": calls,
        "iterations": result.iterations,
        "tokens": {
            "prompt": result.prompt_tokens,
            "completion": result.completion_tokens,
            "total": result.prompt_tokens + result.completion_tokens,
        },
        "files_changed": result.files_changed,
        "run_id": result.run_id,
        "session_id": session_id,
        "tool_mode": result.tool_mode.as_str(),
        "error": result.error.as_ref().map(|e| &e.message),
        "store_error": store_error,
    })
}
