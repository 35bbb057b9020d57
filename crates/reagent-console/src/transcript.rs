//! The entries of a conversation as the console shows them, and the folding of long output
//! (its head and tail, with the number of lines left out).

/// One finished piece of the conversation, written to the terminal's scrollback once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// What the user sent.
    User(String),
    /// The model's answer (or the part of it that arrived, when `partial`).
    Assistant {
        /// The text.
        text: String,
        /// The reply was cut (cancelled, or the server dropped).
        partial: bool,
    },
    /// The model's reasoning: shown dimmed and folded.
    Thinking(String),
    /// A tool call and its result.
    Tool {
        /// Tool name.
        name: String,
        /// Its arguments, as one line of JSON.
        arguments: String,
        /// Whether it succeeded.
        ok: bool,
        /// What the model was given.
        output: String,
    },
    /// An approval and how it was answered.
    Approval {
        /// What was asked (the command, or the file).
        subject: String,
        /// `allow_once`, `allow_session`, `deny`, or `auto` (covered by a grant).
        decision: String,
    },
    /// Something the console says (command output, the welcome).
    Notice(String),
    /// Something that went wrong.
    Error(String),
}

/// Lines of head and of tail kept when output is folded.
pub const FOLD_KEEP: usize = 4;

/// `text`'s lines, folded past `2 * keep + 1` lines to its first and last `keep` lines with a
/// marker line between them saying how many were left out.
pub fn fold(text: &str, keep: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= 2 * keep + 1 {
        return lines.into_iter().map(str::to_owned).collect();
    }
    let hidden = lines.len() - 2 * keep;
    let mut out: Vec<String> = lines[..keep].iter().map(|l| (*l).to_owned()).collect();
    out.push(format!("… {hidden} lines folded …"));
    out.extend(lines[lines.len() - keep..].iter().map(|l| (*l).to_owned()));
    out
}

/// The text a tool result carries for people: the `ok` or `error` string of the `{"ok":...}`
/// JSON the model gets, else the output as it is.
pub fn tool_output_text(output: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(output) {
        Ok(serde_json::Value::Object(map)) => match ["error", "output", "ok"]
            .iter()
            .find_map(|k| map.get(*k).filter(|v| !v.is_boolean()))
        {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => output.to_owned(),
        },
        _ => output.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_result_shows_its_output_or_its_error() {
        assert_eq!(
            tool_output_text(r#"{"ok":false,"error":"command not run: the user denied it"}"#),
            "command not run: the user denied it"
        );
        assert_eq!(tool_output_text(r#"{"ok":true,"output":"hi"}"#), "hi");
        assert_eq!(tool_output_text("plain"), "plain");
    }

    #[test]
    fn long_output_keeps_head_and_tail() {
        let text: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let folded = fold(&text, 3);
        assert_eq!(
            folded,
            ["l1", "l2", "l3", "… 14 lines folded …", "l18", "l19", "l20"]
        );
        assert_eq!(
            fold("a\nb\nc", 1),
            ["a", "b", "c"],
            "short text is not folded"
        );
        assert!(fold("", 2).is_empty());
    }

    #[test]
    fn tool_results_show_their_text() {
        assert_eq!(tool_output_text(r#"{"ok":"two\nlines"}"#), "two\nlines");
        assert_eq!(
            tool_output_text(r#"{"error":"no such file"}"#),
            "no such file"
        );
        assert_eq!(tool_output_text(r#"{"ok":{"n":1}}"#), r#"{"n":1}"#);
        assert_eq!(tool_output_text("plain"), "plain");
    }
}
