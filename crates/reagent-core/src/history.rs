//! The conversation a run keeps, its token estimate, and context-window compaction.
//!
//! The history is append-only between compactions, so a server's prompt cache (which reuses an
//! unchanged prefix) stays valid from one iteration to the next. Compaction happens in one large
//! step, rarely, and only *removes*: the oldest rounds go (as few as bring the estimate down to a
//! low-water mark) and a digest of them is appended at the end. Nothing that stays is rewritten,
//! so a server that can reuse cached chunks after a gap (llama-server `--cache-reuse`, which
//! reagent's embedded server enables) still serves the kept rounds from its cache; a prefix-only
//! cache (Ollama) loses what follows the pinned messages either way.

use std::sync::Arc;

use reagent_protocol::{Message, Role};

/// Messages a conversation opens with (system prompt, task), never compacted.
pub(crate) const OPENING_MESSAGES: usize = 2;
/// Bytes per token assumed before the server has told us a real count.
const DEFAULT_BYTES_PER_TOKEN: f64 = 4.0;
/// Fixed per-message overhead of chat templates, in tokens.
const MESSAGE_OVERHEAD_TOKENS: u64 = 4;
/// Bytes a digest line may take (a call's name and arguments, or the start of a result).
const DIGEST_LINE_MAX_BYTES: usize = 180;

/// Outcome of one compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// Old messages folded into the "earlier steps" digest.
    pub folded: usize,
    /// Rounds (assistant turns) among them.
    pub rounds: usize,
    /// Estimated prompt tokens before.
    pub before_tokens: u64,
    /// Estimated prompt tokens after.
    pub after_tokens: u64,
}

/// Messages of a run plus the bookkeeping compaction needs. Serializable (as part of a session
/// snapshot) with its compaction state and token calibration.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct History {
    /// Shared with the requests built from them (and a provider's wire cache): appending or
    /// sending copies pointers, and a message changed while shared is copied first.
    messages: Vec<Arc<Message>>,
    /// Per message: whether it starts a round (an assistant turn).
    round_start: Vec<bool>,
    /// [`message_bytes`] summed over `messages`, kept up to date on every change.
    text_bytes: usize,
    /// Leading messages never compacted (system prompt and task).
    pinned: usize,
    /// Tokens of what is sent besides messages (tool schemas).
    fixed_overhead_tokens: u64,
    bytes_per_token: f64,
}

impl History {
    /// A history starting with `pinned` messages (system prompt, task) that are never compacted.
    pub fn new(pinned: Vec<Message>, fixed_overhead_bytes: usize) -> Self {
        let n = pinned.len();
        History {
            round_start: vec![false; n],
            text_bytes: pinned.iter().map(message_bytes).sum(),
            messages: pinned.into_iter().map(Arc::new).collect(),
            pinned: n,
            fixed_overhead_tokens: (fixed_overhead_bytes as f64 / DEFAULT_BYTES_PER_TOKEN) as u64,
            bytes_per_token: DEFAULT_BYTES_PER_TOKEN,
        }
    }

    /// A history of `messages` (rebuilt from events), the first `pinned` never compacted.
    pub(crate) fn from_messages(messages: Vec<Message>, pinned: usize) -> Self {
        let mut history = History {
            messages: messages.into_iter().map(Arc::new).collect(),
            pinned,
            bytes_per_token: DEFAULT_BYTES_PER_TOKEN,
            ..History::default()
        };
        history.recount();
        history
    }

    /// The settings and calibration without the messages (a snapshot that leaves them to the
    /// events; [`History::replace_messages`] puts them back).
    pub(crate) fn without_messages(&self) -> Self {
        History {
            messages: Vec::new(),
            round_start: Vec::new(),
            text_bytes: self.text_bytes,
            pinned: self.pinned,
            fixed_overhead_tokens: self.fixed_overhead_tokens,
            bytes_per_token: self.bytes_per_token,
        }
    }

    /// Take `rebuilt`'s messages, keeping this history's settings and calibration.
    pub(crate) fn replace_messages(&mut self, rebuilt: History) {
        self.messages = rebuilt.messages;
        self.recount();
    }

    /// Leading messages never compacted.
    pub(crate) fn pinned(&self) -> usize {
        self.pinned
    }

    /// Whether nothing has been added yet (a session that has not started).
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// All messages, in order.
    pub fn messages(&self) -> &[Arc<Message>] {
        &self.messages
    }

    /// Consume into the transcript.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
            .into_iter()
            .map(|m| Arc::try_unwrap(m).unwrap_or_else(|shared| (*shared).clone()))
            .collect()
    }

    /// Append an assistant turn (starts a new round).
    pub fn push_assistant(&mut self, message: Message) {
        self.push(message, true);
    }

    /// Append a tool result (a `tool` message, or a user message carrying one).
    pub fn push_tool_result(&mut self, message: Message) {
        self.push(message, false);
    }

    /// Append any other message (nudges, hints).
    pub fn push_other(&mut self, message: Message) {
        self.push(message, false);
    }

    fn push(&mut self, message: Message, round_start: bool) {
        self.text_bytes += message_bytes(&message);
        self.messages.push(Arc::new(message));
        self.round_start.push(round_start);
    }

    /// Learn the real bytes-per-token ratio from a server's prompt token count for the history
    /// as it was sent (keeps the estimate honest for the model's tokenizer). Only ever makes the
    /// estimate larger than the 4-bytes-per-token default: overflowing the window silently is
    /// worse than compacting a little early, and some servers report only the uncached part.
    /// The tokens the estimate counts apart from the text (tool schemas, per-message template
    /// overhead of the `sent_messages` messages) are taken out first, so a short history with
    /// large schemas does not skew the ratio.
    pub fn calibrate(&mut self, sent_bytes: usize, sent_messages: usize, prompt_tokens: u64) {
        let overhead = self.estimate(0, sent_messages);
        let text_tokens = prompt_tokens.saturating_sub(overhead);
        if text_tokens > 0 && sent_bytes > 0 {
            let ratio = sent_bytes as f64 / text_tokens as f64;
            self.bytes_per_token = ratio.clamp(1.5, DEFAULT_BYTES_PER_TOKEN);
        }
    }

    /// Count the text bytes and round starts again from the messages (after reading a snapshot,
    /// so a hand-edited one cannot skew the estimate or the compaction boundaries).
    pub(crate) fn recount(&mut self) {
        self.pinned = self.pinned.min(self.messages.len());
        self.text_bytes = self.messages.iter().map(|m| message_bytes(m)).sum();
        self.round_start = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| i >= self.pinned && m.role == Role::Assistant)
            .collect();
    }

    /// Bytes of message text (what [`History::calibrate`] relates to prompt tokens).
    pub fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    /// Estimated prompt tokens of the whole request.
    pub fn estimate_tokens(&self) -> u64 {
        self.estimate(self.text_bytes, self.messages.len())
    }

    /// Estimated prompt tokens of a request with this much message text in `messages` messages.
    fn estimate(&self, text_bytes: usize, messages: usize) -> u64 {
        (text_bytes as f64 / self.bytes_per_token) as u64
            + MESSAGE_OVERHEAD_TOKENS * messages as u64
            + self.fixed_overhead_tokens
    }

    /// Make room in one large step: remove the oldest rounds after the pinned messages (never
    /// the last `keep_recent_rounds`), as few as bring the estimate down to
    /// `low_water_tokens` (all it may when that is not enough), and append one "earlier steps"
    /// digest of them at the end, so a long run does not creep back over the trigger one round
    /// at a time and the kept rounds stay byte-for-byte what the server has cached. Returns
    /// `None` when there was nothing to remove.
    pub fn compact(
        &mut self,
        keep_recent_rounds: usize,
        low_water_tokens: u64,
    ) -> Option<Compaction> {
        let before_tokens = self.estimate_tokens();
        let round_starts: Vec<usize> = (self.pinned..self.messages.len())
            .filter(|&i| self.round_start[i])
            .collect();
        if round_starts.len() <= keep_recent_rounds {
            return None;
        }
        let last_boundary = match keep_recent_rounds {
            0 => self.messages.len(),
            keep => round_starts[round_starts.len() - keep],
        };
        // The first round boundary (or the last allowed one) at which what is left, plus a
        // digest of at most one line per removed message, fits under the low-water mark.
        let mut boundary = last_boundary;
        let (mut removed_bytes, mut removed) = (0, 0);
        for at in self.pinned..last_boundary {
            removed_bytes += message_bytes(&self.messages[at]);
            removed += 1;
            let next = at + 1;
            if next < last_boundary && !self.round_start[next] {
                continue;
            }
            let digest_bytes = DIGEST_LINE_MAX_BYTES * (1 + removed.min(DIGEST_MAX_LINES));
            let after = self.estimate(
                self.text_bytes - removed_bytes + digest_bytes,
                self.messages.len() - removed + 1,
            );
            if after <= low_water_tokens {
                boundary = next;
                break;
            }
        }
        if boundary <= self.pinned {
            return None;
        }
        let old: Vec<Arc<Message>> = self.messages.drain(self.pinned..boundary).collect();
        self.round_start.drain(self.pinned..boundary);
        // `removed_bytes` covers exactly `old`: the scan stopped at `boundary` or ran to it.
        let digest = Message::user(digest(&old));
        self.text_bytes = self.text_bytes - removed_bytes + message_bytes(&digest);
        self.messages.push(Arc::new(digest));
        self.round_start.push(false);
        Some(Compaction {
            folded: old.len(),
            rounds: old.iter().filter(|m| m.role == Role::Assistant).count(),
            before_tokens,
            after_tokens: self.estimate_tokens(),
        })
    }
}

/// How the digest that stands in for folded messages begins; the number of rounds it covers
/// follows, then `]`.
pub const DIGEST_PREFIX: &str =
    "[Earlier steps, before the ones above, compacted to save context; rounds: ";
/// The digest keeps at most this many of the most recent lines.
const DIGEST_MAX_LINES: usize = 60;

/// The number of rounds a digest covers, if `content` is one.
pub fn digest_rounds(content: &str) -> Option<u64> {
    let rest = content.strip_prefix(DIGEST_PREFIX)?;
    rest.split(']').next()?.trim().parse().ok()
}

/// One line per earlier tool call and result (a previous digest's lines carried over), the most
/// recent [`DIGEST_MAX_LINES`] kept; the header counts the rounds covered.
fn digest(old: &[Arc<Message>]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut rounds = 0;
    for m in old {
        if let Some(earlier) = digest_rounds(&m.content) {
            rounds += earlier;
            lines.extend(m.content.lines().skip(1).map(str::to_owned));
        } else if m.role == Role::Assistant {
            rounds += 1;
            for call in &m.tool_calls {
                let args: String = call.arguments.to_string().chars().take(100).collect();
                lines.push(format!("- called {} {args}", call.name));
            }
        } else if m.role == Role::Tool || m.tool_name.is_some() {
            let preview: String = m
                .content
                .chars()
                .take(160)
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            lines.push(format!("- {preview}"));
        }
    }
    lines.retain(|l| !l.starts_with("- (") || !l.ends_with("earlier lines omitted)"));
    let omitted = lines.len().saturating_sub(DIGEST_MAX_LINES);
    let mut out = format!("{DIGEST_PREFIX}{rounds}]");
    if omitted > 0 {
        out.push_str(&format!("\n- ({omitted} earlier lines omitted)"));
    }
    for line in &lines[omitted..] {
        out.push('\n');
        out.push_str(line);
    }
    out
}

fn message_bytes(m: &Message) -> usize {
    m.content.len()
        + m.reasoning.as_ref().map_or(0, String::len)
        + m.tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use reagent_protocol::ToolCall;

    /// A history of `rounds` rounds, each a call and a `result_bytes` result.
    fn history(rounds: usize, result_bytes: usize) -> History {
        let mut h = History::new(vec![Message::system("sys"), Message::user("task")], 0);
        for i in 0..rounds {
            let call = ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": format!("f{i}")}),
            };
            let mut asst = Message::assistant("");
            asst.tool_calls = vec![call.clone()];
            h.push_assistant(asst);
            h.push_tool_result(Message::tool_result(&call, "x".repeat(result_bytes)));
        }
        h
    }

    #[test]
    fn compaction_removes_the_fewest_oldest_rounds_and_appends_the_digest() {
        let mut h = history(10, 4000);
        let before: Vec<Arc<Message>> = h.messages().to_vec();
        let low_water = h.estimate_tokens() * 6 / 10;
        let c = h.compact(3, low_water).expect("compacted");
        assert!(c.after_tokens <= low_water, "{c:?}");
        // Fewest: one round fewer would not have been enough.
        assert!(
            c.folded >= 2 && c.folded.is_multiple_of(2),
            "whole rounds: {c:?}"
        );
        let kept = &h.messages()[2..h.messages().len() - 1];
        assert!(kept.len() >= 6, "at least the 3 recent rounds are kept");
        // What stays is the very same messages, in order: nothing rewritten.
        for (k, m) in kept.iter().enumerate() {
            assert!(Arc::ptr_eq(m, &before[2 + c.folded + k]));
        }
        assert!(Arc::ptr_eq(&h.messages()[0], &before[0]));
        assert!(Arc::ptr_eq(&h.messages()[1], &before[1]));
        let digest = &h.messages().last().expect("digest").content;
        assert_eq!(digest_rounds(digest), Some(c.folded as u64 / 2));
        assert!(
            digest.contains("- called read_file {\"path\":\"f0\"}"),
            "{digest}"
        );
        assert_eq!(
            h.text_bytes(),
            h.messages().iter().map(|m| message_bytes(m)).sum::<usize>()
        );
    }

    #[test]
    fn a_later_compaction_folds_the_earlier_digest_in() {
        let mut h = history(10, 4000);
        let first = h.compact(3, 0).expect("compacted");
        assert_eq!(first.folded, 14, "all but the last 3 rounds");
        for _ in 0..4 {
            let call = ToolCall {
                id: "n".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "g"}),
            };
            let mut asst = Message::assistant("");
            asst.tool_calls = vec![call.clone()];
            h.push_assistant(asst);
            h.push_tool_result(Message::tool_result(&call, "y"));
        }
        h.compact(3, 0).expect("compacted again");
        let digests: Vec<&Arc<Message>> = h
            .messages()
            .iter()
            .filter(|m| digest_rounds(&m.content).is_some())
            .collect();
        assert_eq!(digests.len(), 1, "one digest");
        assert_eq!(digest_rounds(&digests[0].content), Some(11));
        assert!(h.compact(3, 0).is_none(), "only the kept rounds are left");
    }
}
