//! The status line's facts: model, provider, tool mode, approval mode, context use (as a
//! bar), the session's tokens, agentic mode, and what runs now.

use crate::commands::ApprovalMode;

/// What the status line shows.
#[derive(Debug, Clone)]
pub struct Status {
    /// Model name.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// Tool mode (`auto`, `native`, `constrained`, `prompt`).
    pub tool_mode: String,
    /// How changes are approved.
    pub approvals: ApprovalMode,
    /// Tokens the conversation takes in the context window (last request).
    pub context_used: u64,
    /// The context window (0: not known yet).
    pub context_window: u64,
    /// Tokens the session used (prompt and completion, every request).
    pub session_tokens: u64,
    /// `Some("workflow NAME")` or `Some("@role")` in agentic mode.
    pub agentic: Option<String>,
    /// What happens now (a running tool, "cancelling…"), or empty.
    pub activity: String,
}

impl Status {
    /// A status for `model` on `provider`.
    pub fn new(model: &str, provider: &str, approvals: ApprovalMode) -> Self {
        Status {
            model: model.to_owned(),
            provider: provider.to_owned(),
            tool_mode: "auto".into(),
            approvals,
            context_used: 0,
            context_window: 0,
            session_tokens: 0,
            agentic: None,
            activity: String::new(),
        }
    }

    /// The context use as a bar of `width` cells and its numbers: `[███░░░] 3.1k/8.2k`.
    pub fn context_bar(&self, width: usize) -> String {
        if self.context_window == 0 {
            return format!("ctx {}", tokens(self.context_used));
        }
        let ratio = (self.context_used as f64 / self.context_window as f64).clamp(0.0, 1.0);
        let filled = (ratio * width as f64).round() as usize;
        format!(
            "[{}{}] {}/{}",
            "█".repeat(filled),
            "░".repeat(width - filled),
            tokens(self.context_used),
            tokens(self.context_window)
        )
    }
}

/// A token count, short: `950`, `3.1k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_bar_fills_with_use() {
        let mut s = Status::new("m", "ollama", ApprovalMode::Ask);
        assert_eq!(s.context_bar(4), "ctx 0");
        s.context_window = 8000;
        s.context_used = 4000;
        assert_eq!(s.context_bar(4), "[██░░] 4.0k/8.0k");
        s.context_used = 20_000;
        assert_eq!(
            s.context_bar(4),
            "[████] 20.0k/8.0k",
            "over the window: full"
        );
        assert_eq!(tokens(1_500_000), "1.5M");
    }
}
