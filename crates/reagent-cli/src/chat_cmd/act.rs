//! Slash commands and `@role`, carried out on a [`Chat`] — the same for the console and line
//! mode.

use reagent_console::commands::{ApprovalMode, Command, ExportFormat};
use reagent_console::{PickAction, Picker};

use super::{sessions, Chat};

/// What a command leaves to do.
pub(crate) enum Acted {
    /// Show this text.
    Say(String),
    /// Send this message as a turn (a workflow's or a role's first message).
    Send(String),
    /// Offer this list to pick from (on a terminal; line mode prints it).
    Pick(Picker),
    /// Leave.
    Quit,
}

/// The message a workflow starts with when none was typed after its name.
const START_WORKFLOW: &str = "Start the workflow.";

/// Carry out `command`.
pub(crate) async fn command(chat: &mut Chat, command: Command) -> anyhow::Result<Acted> {
    let say = |s: String| Ok(Acted::Say(s));
    match command {
        Command::Quit => Ok(Acted::Quit),
        Command::New => {
            chat.reset();
            say(format!("new session {}", chat.session.id()))
        }
        Command::Help => say(reagent_console::help_text()),
        Command::Approvals { mode: Some(mode) } => {
            let read_only = mode == ApprovalMode::ReadOnly;
            chat.set_read_only(read_only)?;
            say(if chat.asks_writes() {
                "approvals: read-only — every write shows its diff and waits for your answer; run_command is not offered (from the next turn)".to_owned()
            } else if read_only {
                "approvals: read-only — the tools that write or run commands are not offered from the next turn".to_owned()
            } else {
                format!("approvals: {}", mode.as_str())
            })
        }
        Command::Approvals { mode: None } => say("approvals: see the status line".to_owned()),
        Command::Workflow { name, message } => {
            chat.workflow(&name)?;
            Ok(Acted::Send(if message.is_empty() {
                START_WORKFLOW.to_owned()
            } else {
                message
            }))
        }
        Command::Resume { id } => {
            let messages = chat.resume(&id).await?;
            say(format!(
                "resumed session {} ({messages} messages)",
                chat.session.id()
            ))
        }
        Command::Model { name: Some(name) } => {
            chat.reconfigure(|config| {
                config.model.clone_from(&name);
                Ok(())
            })?;
            say(format!("model: {name} (the conversation goes on)"))
        }
        Command::Mode { mode: Some(mode) } => {
            chat.reconfigure(|config| {
                config.tool_mode = mode.parse().map_err(anyhow::Error::msg)?;
                Ok(())
            })?;
            say(format!("tool mode: {mode}"))
        }
        Command::Model { name: None } => {
            let models = chat.models().await?;
            if models.is_empty() {
                anyhow::bail!("the server lists no models (/model NAME still switches)");
            }
            Ok(Acted::Pick(Picker::new(
                format!("models of the server (now: {})", chat.model()),
                models,
                PickAction::Model,
            )))
        }
        Command::Provider { name, base_url } => {
            let line = chat.set_provider(&name, base_url)?;
            say(format!(
                "provider: {name} (the conversation goes on)\n{line}"
            ))
        }
        Command::Rename { name } => {
            let id = chat.session.id().to_owned();
            say(sessions::rename(store(chat)?, &id, &name).await?)
        }
        Command::Mode { mode: None } => say(format!(
            "tool mode: {} (/mode auto|native|constrained|prompt)",
            chat.tool_mode()
        )),
        Command::Tools { action: None } => say(chat.tools_list()),
        Command::Tools {
            action: Some((enabled, name)),
        } => {
            chat.set_tool(&name, enabled)?;
            say(format!(
                "{name} {} from the next turn",
                if enabled { "offered" } else { "not offered" }
            ))
        }
        Command::Undo => say(chat.undo().await?),
        Command::Diff => say(chat.diff()?),
        Command::Sessions { filter } => {
            let rows = sessions::list(store(chat)?, &filter).await?;
            if rows.is_empty() && filter.is_empty() {
                say("no stored sessions".to_owned())
            } else if rows.is_empty() {
                say(format!("no stored sessions match '{filter}'"))
            } else {
                Ok(Acted::Pick(Picker::new(
                    "stored sessions (Enter resumes one; /resume ID does too)",
                    rows,
                    PickAction::Resume,
                )))
            }
        }
        Command::Search { text } => say(sessions::search(store(chat)?, &text).await?),
        Command::Delete { id } => {
            let current = chat.session.id().to_owned();
            say(sessions::delete(store(chat)?, &id, &current).await?)
        }
        Command::Export { format, file } => {
            let id = chat.session.id().to_owned();
            let (text, ext) = match format {
                ExportFormat::Markdown => (
                    sessions::markdown(&format!("reagent chat {id}"), chat.session.messages()),
                    "md",
                ),
                ExportFormat::Html => (sessions::html(store(chat)?, &id).await?, "html"),
            };
            let path = file.unwrap_or_else(|| format!("reagent-chat-{id}.{ext}"));
            std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("cannot write {path}: {e}"))?;
            say(format!("exported to {path}"))
        }
        other => anyhow::bail!(
            "{} is not available yet in this version of reagent chat",
            name(&other)
        ),
    }
}

/// `@role message`: adopt the role; the message (or a greeting to the role) is sent.
pub(crate) fn role(chat: &mut Chat, role: &str, message: String) -> anyhow::Result<Acted> {
    chat.role(role)?;
    Ok(if message.trim().is_empty() {
        Acted::Say(format!("now in agentic mode as @{role} (until /new)"))
    } else {
        Acted::Send(message)
    })
}

fn store(chat: &Chat) -> anyhow::Result<&reagent_store::Store> {
    chat.store().ok_or_else(|| {
        anyhow::anyhow!("the run store is not open (--no-store, or it failed to open)")
    })
}

fn name(command: &Command) -> String {
    let debug = format!("{command:?}");
    let word = debug.split([' ', '{']).next().unwrap_or_default();
    format!("/{}", word.to_lowercase())
}
