//! The conversation a run keeps, its token estimate, and context-window compaction.
//!
//! The history is append-only between compactions, so a server's prompt cache (which reuses an
//! unchanged prefix) stays valid from one iteration to the next. Compaction happens in one large
//! step: every tool result older than the last few rounds is replaced by a one-line summary at
//! once, so the prefix changes rarely rather than a little every turn.

use std::sync::Arc;

use reagent_protocol::{Message, Role};

/// Bytes per token assumed before the server has told us a real count.
const DEFAULT_BYTES_PER_TOKEN: f64 = 4.0;
/// Fixed per-message overhead of chat templates, in tokens.
const MESSAGE_OVERHEAD_TOKENS: u64 = 4;
/// A summary line keeps at most this many characters of the original result.
const SUMMARY_PREVIEW_CHARS: usize = 100;

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    /// A tool result (a `tool` message, or a user message carrying one in prompt modes).
    tool_result: bool,
    /// Already replaced by a summary.
    compacted: bool,
    /// Starts a round (an assistant turn).
    round_start: bool,
}

/// Outcome of one compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    /// Tool results replaced by summaries.
    pub summarized: usize,
    /// Old messages folded into the one "earlier steps" digest (0 when summaries sufficed).
    pub folded: usize,
    /// Estimated prompt tokens before.
    pub before_tokens: u64,
    /// Estimated prompt tokens after.
    pub after_tokens: u64,
}

/// Messages of a run plus the bookkeeping compaction needs.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Shared with the requests built from them (and a provider's wire cache): appending or
    /// sending copies pointers, and a message changed while shared is copied first.
    messages: Vec<Arc<Message>>,
    meta: Vec<Meta>,
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
            meta: vec![Meta::default(); n],
            text_bytes: pinned.iter().map(message_bytes).sum(),
            messages: pinned.into_iter().map(Arc::new).collect(),
            pinned: n,
            fixed_overhead_tokens: (fixed_overhead_bytes as f64 / DEFAULT_BYTES_PER_TOKEN) as u64,
            bytes_per_token: DEFAULT_BYTES_PER_TOKEN,
        }
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
        self.push(
            message,
            Meta {
                round_start: true,
                ..Meta::default()
            },
        );
    }

    /// Append a tool result (a `tool` message, or a user message carrying one).
    pub fn push_tool_result(&mut self, message: Message) {
        self.push(
            message,
            Meta {
                tool_result: true,
                ..Meta::default()
            },
        );
    }

    /// Append any other message (nudges, hints).
    pub fn push_other(&mut self, message: Message) {
        self.push(message, Meta::default());
    }

    fn push(&mut self, message: Message, meta: Meta) {
        self.text_bytes += message_bytes(&message);
        self.messages.push(Arc::new(message));
        self.meta.push(meta);
    }

    /// Learn the real bytes-per-token ratio from a server's prompt token count for the history
    /// as it was sent (keeps the estimate honest for the model's tokenizer). Only ever makes the
    /// estimate larger than the 4-bytes-per-token default: overflowing the window silently is
    /// worse than compacting a little early, and some servers report only the uncached part.
    pub fn calibrate(&mut self, sent_bytes: usize, prompt_tokens: u64) {
        if prompt_tokens > 0 && sent_bytes > 0 {
            let ratio = sent_bytes as f64 / prompt_tokens as f64;
            self.bytes_per_token = ratio.clamp(1.5, DEFAULT_BYTES_PER_TOKEN);
        }
    }

    /// Bytes of message text (what [`History::calibrate`] relates to prompt tokens).
    pub fn text_bytes(&self) -> usize {
        self.text_bytes
    }

    /// Estimated prompt tokens of the whole request.
    pub fn estimate_tokens(&self) -> u64 {
        let text = self.text_bytes() as f64 / self.bytes_per_token;
        text as u64
            + MESSAGE_OVERHEAD_TOKENS * self.messages.len() as u64
            + self.fixed_overhead_tokens
    }

    /// Make room in one large step. First every tool result older than the last
    /// `keep_recent_rounds` rounds becomes a one-line summary; if the estimate is still above
    /// `low_water_tokens`, every message older than those rounds (after the pinned ones) is
    /// folded into a single "earlier steps" digest, so a long run does not creep back over the
    /// trigger one round at a time. Returns `None` when there was nothing to compact.
    pub fn compact(
        &mut self,
        keep_recent_rounds: usize,
        low_water_tokens: u64,
    ) -> Option<Compaction> {
        let before_tokens = self.estimate_tokens();
        let round_starts: Vec<usize> = (self.pinned..self.messages.len())
            .filter(|&i| self.meta[i].round_start)
            .collect();
        if round_starts.len() <= keep_recent_rounds {
            return None;
        }
        let boundary = match keep_recent_rounds {
            0 => self.messages.len(),
            keep => round_starts[round_starts.len() - keep],
        };
        let mut summarized = 0;
        for i in self.pinned..boundary {
            let meta = &mut self.meta[i];
            if meta.tool_result && !meta.compacted {
                let message = Arc::make_mut(&mut self.messages[i]);
                let summary = summarize(message);
                self.text_bytes = self.text_bytes - message.content.len() + summary.len();
                message.content = summary;
                meta.compacted = true;
                summarized += 1;
            }
        }
        let mut folded = 0;
        if self.estimate_tokens() > low_water_tokens && boundary > self.pinned + 1 {
            let old: Vec<Arc<Message>> = self.messages.drain(self.pinned..boundary).collect();
            self.meta.drain(self.pinned..boundary);
            folded = old.len();
            let digest = Message::user(digest(&old));
            self.text_bytes = self.text_bytes + message_bytes(&digest)
                - old.iter().map(|m| message_bytes(m)).sum::<usize>();
            self.messages.insert(self.pinned, Arc::new(digest));
            self.meta.insert(
                self.pinned,
                Meta {
                    compacted: true,
                    ..Meta::default()
                },
            );
        }
        (summarized + folded > 0).then(|| Compaction {
            summarized,
            folded,
            before_tokens,
            after_tokens: self.estimate_tokens(),
        })
    }
}

/// How the digest that stands in for folded messages begins; the number of rounds it covers
/// follows, then `]`.
pub const DIGEST_PREFIX: &str = "[Earlier steps, compacted to save context; rounds: ";
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
            lines.push(format!(
                "- {}",
                m.content.chars().take(160).collect::<String>()
            ));
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

/// One line standing in for a tool result: which tool, how big, and how it began.
fn summarize(message: &Message) -> String {
    let tool = message.tool_name.as_deref().unwrap_or("tool");
    let status = if message.content.contains("\"ok\":false") {
        "failed"
    } else {
        "ok"
    };
    let preview: String = message
        .content
        .chars()
        .filter(|c| !c.is_control())
        .take(SUMMARY_PREVIEW_CHARS)
        .collect();
    format!(
        "[compacted to save context: {tool} result, {status}, {} bytes; began: {preview}…]",
        message.content.len()
    )
}
