//! Slash commands: their names (a contract), parsing a typed line, and the popup that filters
//! them as the user types.

use std::fmt;

/// The console's commands, in the order the popup lists them, with their one-line help.
pub const COMMANDS: &[(&str, &str)] = &[
    ("new", "start a new conversation (leaves agentic mode)"),
    ("sessions", "list stored sessions: filter, pick one"),
    ("resume", "continue a stored session: /resume ID"),
    ("rename", "name this session: /rename NAME"),
    ("delete", "delete a stored session: /delete ID"),
    ("search", "search the stored sessions: /search TEXT"),
    ("provider", "switch the model server: /provider NAME [URL]"),
    ("model", "pick one of the server's models: /model [NAME]"),
    ("tools", "list tools, or /tools enable|disable NAME"),
    ("mode", "tool mode: /mode auto|native|constrained|prompt"),
    ("approvals", "approval mode: /approvals read-only|ask|auto"),
    ("diff", "show this session's changes to the files"),
    (
        "undo",
        "restore files and conversation to before the last turn",
    ),
    ("copy", "copy the last answer (OSC 52, and a file)"),
    ("export", "export the session: /export [md|html] [FILE]"),
    ("workflow", "run a workflow: /workflow NAME"),
    ("help", "keys and commands"),
    ("quit", "leave the console"),
];

/// How tool calls that change things are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Writes and commands are asked about.
    ReadOnly,
    /// Commands the rules mark `ask` are asked about; writes go ahead.
    Ask,
    /// Nothing is asked (deny rules still hold).
    Auto,
}

impl ApprovalMode {
    /// The name shown and typed.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::ReadOnly => "read-only",
            ApprovalMode::Ask => "ask",
            ApprovalMode::Auto => "auto",
        }
    }
}

impl std::str::FromStr for ApprovalMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" | "readonly" => Ok(ApprovalMode::ReadOnly),
            "ask" => Ok(ApprovalMode::Ask),
            "auto" => Ok(ApprovalMode::Auto),
            _ => Err(format!(
                "unknown approval mode '{s}' (expected read-only, ask or auto)"
            )),
        }
    }
}

/// What to export to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// A Markdown transcript.
    Markdown,
    /// The HTML report of `reagent runs export`.
    Html,
}

/// A typed line, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A message for the model.
    Message(String),
    /// `@role rest`: adopt a role, with an optional first message.
    Role {
        /// The role's name.
        role: String,
        /// What follows the role name (may be empty).
        message: String,
    },
    /// A slash command.
    Command(Command),
}

/// A slash command with its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // each variant is the command of the same name (see COMMANDS)
pub enum Command {
    New,
    Sessions {
        filter: String,
    },
    Resume {
        id: String,
    },
    Rename {
        name: String,
    },
    Delete {
        id: String,
    },
    Search {
        text: String,
    },
    Provider {
        name: String,
        base_url: Option<String>,
    },
    Model {
        name: Option<String>,
    },
    Tools {
        action: Option<(bool, String)>,
    },
    Mode {
        mode: Option<String>,
    },
    Approvals {
        mode: Option<ApprovalMode>,
    },
    Diff,
    Undo,
    Copy,
    Export {
        format: ExportFormat,
        file: Option<String>,
    },
    Workflow {
        name: String,
        message: String,
    },
    Help,
    Quit,
}

/// Why a line could not be understood, said to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn need(value: &str, usage: &str) -> Result<String, ParseError> {
    if value.is_empty() {
        Err(ParseError(format!("usage: {usage}")))
    } else {
        Ok(value.to_owned())
    }
}

/// Understand a typed line: `/command args`, `@role message`, or a message. `//text` sends
/// `/text` as a message.
pub fn parse(line: &str) -> Result<Input, ParseError> {
    let trimmed = line.trim();
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Ok(Input::Message(format!("/{rest}")));
    }
    if let Some(rest) = trimmed.strip_prefix('@') {
        let (role, message) = split_word(rest);
        if !rest.starts_with(char::is_whitespace) && !role.is_empty() && !role.contains('@') {
            return Ok(Input::Role {
                role: role.to_owned(),
                message: message.to_owned(),
            });
        }
    }
    let Some(rest) = trimmed.strip_prefix('/') else {
        return Ok(Input::Message(line.to_owned()));
    };
    let (name, args) = split_word(rest);
    let command = match name {
        "new" => Command::New,
        "sessions" => Command::Sessions {
            filter: args.to_owned(),
        },
        "resume" => Command::Resume {
            id: need(args, "/resume ID")?,
        },
        "rename" => Command::Rename {
            name: need(args, "/rename NAME")?,
        },
        "delete" => Command::Delete {
            id: need(args, "/delete ID")?,
        },
        "search" => Command::Search {
            text: need(args, "/search TEXT")?,
        },
        "provider" => {
            let (name, url) = split_word(args);
            Command::Provider {
                name: need(name, "/provider NAME [BASE_URL]")?,
                base_url: (!url.is_empty()).then(|| url.to_owned()),
            }
        }
        "model" => Command::Model {
            name: (!args.is_empty()).then(|| args.to_owned()),
        },
        "tools" => Command::Tools {
            action: match split_word(args) {
                ("", _) => None,
                ("enable", tool) => Some((true, need(tool, "/tools enable NAME")?)),
                ("disable", tool) => Some((false, need(tool, "/tools disable NAME")?)),
                _ => return Err(ParseError("usage: /tools [enable|disable NAME]".into())),
            },
        },
        "mode" => Command::Mode {
            mode: (!args.is_empty()).then(|| args.to_owned()),
        },
        "approvals" => Command::Approvals {
            mode: if args.is_empty() {
                None
            } else {
                Some(args.parse().map_err(ParseError)?)
            },
        },
        "diff" => Command::Diff,
        "undo" => Command::Undo,
        "copy" => Command::Copy,
        "export" => {
            let (first, rest) = split_word(args);
            let (format, file) = match first {
                "md" | "markdown" => (ExportFormat::Markdown, rest),
                "html" => (ExportFormat::Html, rest),
                _ => (ExportFormat::Markdown, args),
            };
            Command::Export {
                format,
                file: (!file.is_empty()).then(|| file.to_owned()),
            }
        }
        "workflow" => {
            let (name, message) = split_word(args);
            Command::Workflow {
                name: need(name, "/workflow NAME [MESSAGE]")?,
                message: message.to_owned(),
            }
        }
        "help" | "?" => Command::Help,
        "quit" | "exit" | "q" => Command::Quit,
        other => {
            return Err(ParseError(format!(
                "unknown command /{other} (type / to see the commands, //text to send a message starting with /)"
            )))
        }
    };
    Ok(Input::Command(command))
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

/// The popup's entries for what is typed: the commands whose name starts with the typed word
/// (then those that contain it), when the text is a lone `/word`; empty otherwise.
pub fn popup(typed: &str) -> Vec<(&'static str, &'static str)> {
    let Some(word) = typed.strip_prefix('/') else {
        return Vec::new();
    };
    if word.contains(char::is_whitespace) || word.starts_with('/') {
        return Vec::new();
    }
    let starts = COMMANDS.iter().filter(|(n, _)| n.starts_with(word));
    let contains = COMMANDS
        .iter()
        .filter(|(n, _)| !n.starts_with(word) && n.contains(word));
    starts.chain(contains).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(parse("/new"), Ok(Input::Command(Command::New)));
        assert_eq!(
            parse("  /resume  ab12 "),
            Ok(Input::Command(Command::Resume { id: "ab12".into() }))
        );
        assert_eq!(
            parse("/search the  parser"),
            Ok(Input::Command(Command::Search {
                text: "the  parser".into()
            }))
        );
        assert_eq!(
            parse("/provider openai http://127.0.0.1:8080/v1"),
            Ok(Input::Command(Command::Provider {
                name: "openai".into(),
                base_url: Some("http://127.0.0.1:8080/v1".into())
            }))
        );
        assert_eq!(
            parse("/tools disable run_command"),
            Ok(Input::Command(Command::Tools {
                action: Some((false, "run_command".into()))
            }))
        );
        assert_eq!(
            parse("/approvals read-only"),
            Ok(Input::Command(Command::Approvals {
                mode: Some(ApprovalMode::ReadOnly)
            }))
        );
        assert_eq!(
            parse("/export html out.html"),
            Ok(Input::Command(Command::Export {
                format: ExportFormat::Html,
                file: Some("out.html".into())
            }))
        );
        assert_eq!(
            parse("/export notes.md"),
            Ok(Input::Command(Command::Export {
                format: ExportFormat::Markdown,
                file: Some("notes.md".into())
            }))
        );
        assert_eq!(
            parse("/workflow review focus on tests"),
            Ok(Input::Command(Command::Workflow {
                name: "review".into(),
                message: "focus on tests".into()
            }))
        );
        assert_eq!(parse("/quit"), Ok(Input::Command(Command::Quit)));
    }

    #[test]
    fn bad_commands_say_why() {
        let e = parse("/resume").unwrap_err();
        assert!(e.0.contains("/resume ID"), "{e}");
        let e = parse("/approvals sometimes").unwrap_err();
        assert!(e.0.contains("read-only, ask or auto"), "{e}");
        let e = parse("/frobnicate").unwrap_err();
        assert!(e.0.contains("unknown command /frobnicate"), "{e}");
        assert!(parse("/tools toggle x").is_err());
    }

    #[test]
    fn messages_roles_and_escaped_slashes() {
        assert_eq!(
            parse("fix the bug\nplease"),
            Ok(Input::Message("fix the bug\nplease".into()))
        );
        assert_eq!(
            parse("//etc/hosts is odd"),
            Ok(Input::Message("/etc/hosts is odd".into()))
        );
        assert_eq!(
            parse("@reviewer look at main.rs"),
            Ok(Input::Role {
                role: "reviewer".into(),
                message: "look at main.rs".into()
            })
        );
        assert_eq!(parse("@ hi"), Ok(Input::Message("@ hi".into())));
    }

    #[test]
    fn the_popup_filters_as_you_type() {
        assert_eq!(popup("/").len(), COMMANDS.len());
        let names: Vec<&str> = popup("/re").iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["resume", "rename"]);
        let names: Vec<&str> = popup("/o").iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names[0], "sessions",
            "contains-matches, in order: {names:?}"
        );
        assert!(names.contains(&"model") && names.contains(&"workflow"));
        assert!(popup("/resume x").is_empty(), "closed once arguments start");
        assert!(popup("hello").is_empty());
        assert!(popup("/zzz").is_empty());
    }
}
