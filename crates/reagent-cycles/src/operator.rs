//! Who answers `send_message_to_operator`: nobody ([`Absent`]), the lines of a script file
//! ([`Scripted`]), a person typing lines within a timeout ([`Lines`]: the CLI gives it the
//! terminal's standard input), or a person answering in the dashboard of `reagent serve`
//! within a timeout ([`Mailbox`]).

use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reagent_protocol::CancellationToken;

/// What the agent is told when nobody is there.
pub const ABSENT_REPLY: &str = "No operator is present. Continue on your own.";
/// What the agent is told when a script has no reply left.
pub const SCRIPT_EXHAUSTED_REPLY: &str = "The operator has no further reply.";

/// Answers the agent's messages. Called from a blocking thread; may wait for a person.
pub trait Operator: Send + Sync {
    /// The reply to `message` (never fails: silence is a reply too). Returns early once
    /// `cancel` fires.
    fn reply(&self, message: &str, cancel: &CancellationToken) -> String;
}

/// Mode `none`.
pub struct Absent;

impl Operator for Absent {
    fn reply(&self, _message: &str, _cancel: &CancellationToken) -> String {
        ABSENT_REPLY.to_owned()
    }
}

/// Mode `script`: one reply a line (blank lines skipped), in order.
pub struct Scripted {
    replies: Mutex<VecDeque<String>>,
}

impl Scripted {
    /// The replies of `path`, starting after the first `used` (those given in the cycles
    /// already done, when an experiment resumes).
    pub fn from_file(path: &Path, used: usize) -> Result<Self, crate::CyclesError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            crate::CyclesError::Config(format!(
                "operator.replies: cannot read {}: {e}",
                path.display()
            ))
        })?;
        Ok(Self::new(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .skip(used)
                .map(str::to_owned),
        ))
    }

    /// These replies, in order.
    pub fn new(replies: impl IntoIterator<Item = String>) -> Self {
        Scripted {
            replies: Mutex::new(replies.into_iter().collect()),
        }
    }
}

impl Operator for Scripted {
    fn reply(&self, _message: &str, _cancel: &CancellationToken) -> String {
        let mut replies = self
            .replies
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        replies
            .pop_front()
            .unwrap_or_else(|| SCRIPT_EXHAUSTED_REPLY.to_owned())
    }
}

/// A person answering one line per message, within a timeout: each message is shown with
/// `show`, and the next line read from the input is the reply. Lines are read on a thread of
/// their own, so a timed-out question leaves the reader waiting for the next one.
pub struct Lines {
    lines: Mutex<mpsc::Receiver<String>>,
    show: Box<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
}

impl Lines {
    /// Read replies from `input`; `show` presents each message to the person.
    pub fn new(
        input: impl BufRead + Send + 'static,
        show: impl Fn(&str) + Send + Sync + 'static,
        timeout: Duration,
    ) -> Self {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in input.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            lines: Mutex::new(rx),
            show: Box::new(show),
            timeout,
        }
    }
}

impl Operator for Lines {
    fn reply(&self, message: &str, cancel: &CancellationToken) -> String {
        (self.show)(message);
        let lines = self
            .lines
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return timed_out(self.timeout);
            }
            if cancel.is_cancelled() {
                return GONE_REPLY.to_owned();
            }
            match lines.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(line) => return line.trim().to_owned(),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return "The operator has left (no more input).".to_owned()
                }
            }
        }
    }
}

/// A message waiting in a [`Mailbox`] for its answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PendingMessage {
    /// Its id in the mailbox (`1`, `2`, …), to answer it by.
    pub id: String,
    /// What the agent wrote.
    pub message: String,
    /// When it was sent (RFC 3339, UTC).
    pub asked: String,
    /// How long it waits for an answer, in seconds.
    pub timeout_secs: f64,
}

#[derive(Default)]
struct Slots {
    next: u64,
    waiting: Vec<(PendingMessage, mpsc::Sender<String>)>,
}

/// Mode `dashboard`: each message waits in the mailbox until someone answers it
/// ([`Mailbox::answer`]) or its timeout passes (then the agent gets [`timed_out`]'s reply, as
/// at the terminal). Cheap to clone; the clones share the messages.
#[derive(Clone, Default)]
pub struct Mailbox {
    slots: Arc<Mutex<Slots>>,
    timeout: Duration,
}

impl Mailbox {
    /// An empty mailbox whose messages wait `timeout` for an answer.
    pub fn new(timeout: Duration) -> Self {
        Mailbox {
            slots: Arc::default(),
            timeout,
        }
    }

    fn slots(&self) -> MutexGuard<'_, Slots> {
        self.slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The messages waiting for an answer, oldest first.
    pub fn pending(&self) -> Vec<PendingMessage> {
        self.slots()
            .waiting
            .iter()
            .map(|(m, _)| m.clone())
            .collect()
    }

    /// Answer message `id`; false when no such message waits (answered, timed out, unknown).
    pub fn answer(&self, id: &str, reply: &str) -> bool {
        let mut slots = self.slots();
        let Some(at) = slots.waiting.iter().position(|(m, _)| m.id == id) else {
            return false;
        };
        let (_, tx) = slots.waiting.remove(at);
        tx.send(reply.trim().to_owned()).is_ok()
    }

    fn withdraw(&self, id: &str) {
        self.slots().waiting.retain(|(m, _)| m.id != id);
    }
}

impl Operator for Mailbox {
    fn reply(&self, message: &str, cancel: &CancellationToken) -> String {
        let (tx, rx) = mpsc::channel();
        let id = {
            let mut slots = self.slots();
            slots.next += 1;
            let id = slots.next.to_string();
            slots.waiting.push((
                PendingMessage {
                    id: id.clone(),
                    message: message.to_owned(),
                    asked: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                        .to_string(),
                    timeout_secs: self.timeout.as_secs_f64(),
                },
                tx,
            ));
            id
        };
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || cancel.is_cancelled() {
                self.withdraw(&id);
                // An answer that came in while it was being withdrawn still counts.
                if let Ok(reply) = rx.try_recv() {
                    return reply;
                }
                return if cancel.is_cancelled() {
                    GONE_REPLY.to_owned()
                } else {
                    timed_out(self.timeout)
                };
            }
            match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(reply) => return reply,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.withdraw(&id);
                    return timed_out(self.timeout);
                }
            }
        }
    }
}

/// The reply when the experiment stops while a message waits.
const GONE_REPLY: &str = "The operator is gone: the experiment is stopping.";

/// The reply when nobody answered in time.
pub fn timed_out(after: Duration) -> String {
    format!(
        "The operator did not reply within {} seconds. Continue on your own.",
        after.as_secs_f64().round()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_replies_come_in_order_then_run_out() {
        let s = Scripted::new(["a".to_owned(), "b".to_owned()]);
        let c = CancellationToken::new();
        assert_eq!(s.reply("x", &c), "a");
        assert_eq!(s.reply("x", &c), "b");
        assert_eq!(s.reply("x", &c), SCRIPT_EXHAUSTED_REPLY);
    }

    #[test]
    fn the_mailbox_is_answered_or_times_out() {
        let mailbox = Mailbox::new(Duration::from_millis(300));
        let c = CancellationToken::new();
        let answering = mailbox.clone();
        let answerer = std::thread::spawn(move || loop {
            if let Some(m) = answering.pending().first() {
                assert_eq!(m.message, "hello?");
                assert!(!answering.answer("99", "nobody asked"));
                assert!(answering.answer(&m.id, "  hi there "));
                assert!(!answering.answer(&m.id, "twice"));
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        });
        assert_eq!(mailbox.reply("hello?", &c), "hi there");
        answerer.join().expect("answerer");
        let started = Instant::now();
        assert!(mailbox
            .reply("anyone?", &c)
            .contains("did not reply within"));
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(
            mailbox.pending().is_empty(),
            "a timed-out message is withdrawn"
        );
        c.cancel();
        assert_eq!(mailbox.reply("still?", &c), GONE_REPLY);
        assert!(mailbox.pending().is_empty());
    }

    #[test]
    fn a_person_who_does_not_answer_times_out() {
        let (reader, mut writer) = std::os::unix::net::UnixStream::pair().expect("socket pair");
        let shown = std::sync::Arc::new(Mutex::new(Vec::<String>::new()));
        let seen = shown.clone();
        let op = Lines::new(
            std::io::BufReader::new(reader),
            move |m| seen.lock().expect("lock").push(m.to_owned()),
            Duration::from_millis(300),
        );
        let c = CancellationToken::new();
        let started = Instant::now();
        assert!(op.reply("anyone?", &c).contains("did not reply"));
        assert!(started.elapsed() >= Duration::from_millis(300));
        use std::io::Write;
        writeln!(writer, "  here now ").expect("write");
        assert_eq!(op.reply("hello?", &c), "here now");
        assert_eq!(*shown.lock().expect("lock"), ["anyone?", "hello?"]);
        writer
            .shutdown(std::net::Shutdown::Write)
            .expect("shutdown");
        assert!(op.reply("still there?", &c).contains("left"));
    }
}
