//! The writer's queue: every event not yet in the database, oldest first. Up to a bound they
//! wait in memory; past it they go to journal segments (see [`crate::journal`]), and the queue
//! remembers where, so the database gets them in the order they were recorded.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};

use reagent_protocol::Event;

use crate::journal::Segment;

/// Events waiting in memory, or a journal segment.
enum Chunk {
    /// `first` is the queue position of the first event (it names the segment they may go to).
    Memory {
        first: u64,
        events: VecDeque<Event>,
    },
    Journal(Segment),
}

/// Events taken from the front of the queue for one write.
pub(crate) struct Batch {
    /// The events, in order.
    pub(crate) events: Vec<Event>,
    /// The pid for the rows of the runs they start.
    pub(crate) pid: i64,
    source: Source,
}

enum Source {
    Memory { first: u64 },
    Journal { end: u64, read: usize },
}

/// Events that will never reach the database, and why.
pub(crate) struct Loss {
    pub(crate) events: usize,
    pub(crate) why: String,
}

/// The queue of one writer.
pub(crate) struct Queue {
    chunks: VecDeque<Chunk>,
    in_memory: usize,
    in_journal: usize,
    /// Events held in memory before new ones go to the journal.
    bound: usize,
    /// Events held in memory at most when the journal cannot be written either.
    hard_cap: usize,
    dir: PathBuf,
    pid: i64,
    start_ms: i64,
    next: u64,
    /// The last journal failure not yet reported.
    journal_error: Option<String>,
    losses: Vec<Loss>,
}

impl Queue {
    /// An empty queue holding up to `bound` events in memory, with its journal in `dir`.
    pub(crate) fn new(bound: usize, dir: PathBuf, pid: i64, start_ms: i64) -> Queue {
        Queue {
            chunks: VecDeque::new(),
            in_memory: 0,
            in_journal: 0,
            bound,
            hard_cap: bound.saturating_mul(4).max(4096),
            dir,
            pid,
            start_ms,
            next: 0,
            journal_error: None,
            losses: Vec::new(),
        }
    }

    /// The journal's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Events waiting (in memory and in the journal).
    pub(crate) fn len(&self) -> usize {
        self.in_memory + self.in_journal
    }

    /// Events waiting in the journal.
    pub(crate) fn journalled(&self) -> usize {
        self.in_journal
    }

    /// The queue position the next event pushed gets.
    pub(crate) fn pushed(&self) -> u64 {
        self.next
    }

    /// Every event pushed before this position is in the database.
    pub(crate) fn written_before(&self) -> u64 {
        for c in &self.chunks {
            match c {
                Chunk::Memory { events, .. } if events.is_empty() => {}
                Chunk::Memory { first, .. } => return *first,
                Chunk::Journal(s) => return s.ordinal,
            }
        }
        self.next
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Take over segments left by writers that are gone, before any event is pushed: they
    /// take the first queue positions, so a flush waits for their replay like any event.
    pub(crate) fn adopt(&mut self, segments: Vec<Segment>) {
        for mut s in segments {
            s.ordinal = self.next;
            self.next += s.events as u64;
            self.in_journal += s.events;
            self.chunks.push_back(Chunk::Journal(s));
        }
    }

    /// Queue new events: in memory while there is room, else appended to the journal; when the
    /// journal cannot be written they stay in memory up to the hard cap, and past it are lost.
    pub(crate) fn push(&mut self, mut events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let room = self.bound.saturating_sub(self.in_memory);
        let rest = if events.len() > room {
            events.split_off(room)
        } else {
            Vec::new()
        };
        self.push_memory(events);
        if rest.is_empty() {
            return;
        }
        match self.append_journal(&rest) {
            Ok(()) => {
                self.journal_error = None;
                self.next += rest.len() as u64;
            }
            Err(e) => {
                self.journal_error = Some(format!(
                    "its journal {} cannot be written: {e}",
                    self.dir.display()
                ));
                let room = self.hard_cap.saturating_sub(self.in_memory);
                let mut keep = rest;
                if keep.len() > room {
                    let lost = keep.len() - room;
                    keep.truncate(room);
                    self.losses.push(Loss {
                        events: lost,
                        why: format!(
                            "{} events already wait in memory and {}",
                            self.hard_cap,
                            self.journal_error.as_deref().unwrap_or_default()
                        ),
                    });
                }
                self.push_memory(keep);
            }
        }
    }

    fn push_memory(&mut self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let n = events.len();
        match self.chunks.back_mut() {
            Some(Chunk::Memory { events: back, .. }) => back.extend(events),
            _ => self.chunks.push_back(Chunk::Memory {
                first: self.next,
                events: events.into(),
            }),
        }
        self.in_memory += n;
        self.next += n as u64;
    }

    fn append_journal(&mut self, events: &[Event]) -> io::Result<()> {
        if !matches!(self.chunks.back(), Some(Chunk::Journal(s)) if s.open) {
            let s = Segment::create(&self.dir, self.pid, self.start_ms, self.next)?;
            self.chunks.push_back(Chunk::Journal(s));
        }
        let Some(Chunk::Journal(s)) = self.chunks.back_mut() else {
            return Err(io::Error::other(
                "the journal segment just opened is missing",
            ));
        };
        s.append(events)?;
        self.in_journal += events.len();
        Ok(())
    }

    /// Why the journal could not be written at the last attempt, if it could not.
    pub(crate) fn journal_error(&self) -> Option<&str> {
        self.journal_error.as_deref()
    }

    /// Events lost since the last call.
    pub(crate) fn take_losses(&mut self) -> Vec<Loss> {
        std::mem::take(&mut self.losses)
    }

    /// Up to `max` events from the front, to write. A journal segment that reaches the front
    /// takes no more appends; replayed segments are removed.
    pub(crate) fn next_batch(&mut self, max: usize) -> Option<Batch> {
        loop {
            match self.chunks.front_mut()? {
                Chunk::Memory { events, .. } if events.is_empty() => {
                    self.chunks.pop_front();
                }
                Chunk::Memory { first, events } => {
                    let n = max.min(events.len());
                    let batch = Batch {
                        events: events.drain(..n).collect(),
                        pid: self.pid,
                        source: Source::Memory { first: *first },
                    };
                    *first += n as u64;
                    self.in_memory -= n;
                    return Some(batch);
                }
                Chunk::Journal(s) => {
                    s.open = false;
                    if s.finished() {
                        self.remove_front();
                        continue;
                    }
                    match s.read(max) {
                        Ok(r) => {
                            if r.unreadable > 0 {
                                self.losses.push(Loss {
                                    events: r.unreadable,
                                    why: format!("lines of {} cannot be read", s.path().display()),
                                });
                            }
                            if r.events.is_empty() {
                                s.replayed(r.end, r.unreadable);
                                self.in_journal = self.in_journal.saturating_sub(r.unreadable);
                                continue;
                            }
                            return Some(Batch {
                                pid: s.pid,
                                source: Source::Journal {
                                    end: r.end,
                                    read: r.events.len() + r.unreadable,
                                },
                                events: r.events,
                            });
                        }
                        Err(e) => {
                            self.losses.push(Loss {
                                events: s.events,
                                why: format!("{} cannot be read: {e}", s.path().display()),
                            });
                            self.in_journal = self.in_journal.saturating_sub(s.events);
                            self.chunks.pop_front();
                        }
                    }
                }
            }
        }
    }

    fn remove_front(&mut self) {
        if let Some(Chunk::Journal(s)) = self.chunks.pop_front() {
            self.in_journal = self.in_journal.saturating_sub(s.events);
            let path = s.path().to_owned();
            // A file that cannot be removed is replayed again later: harmless, the writes
            // are idempotent.
            if let Err(e) = s.remove() {
                tracing::debug!("cannot remove the replayed journal {}: {e}", path.display());
            }
        }
    }

    /// `batch` (the last one taken) is in the database.
    pub(crate) fn done(&mut self, batch: Batch) {
        if let Source::Journal { end, read } = batch.source {
            if let Some(Chunk::Journal(s)) = self.chunks.front_mut() {
                s.replayed(end, read);
                self.in_journal = self.in_journal.saturating_sub(read);
                if s.finished() {
                    self.remove_front();
                }
            }
        }
    }

    /// `batch` (the last one taken) could not be written: it goes back to the front.
    pub(crate) fn undo(&mut self, batch: Batch) {
        let Source::Memory { first } = batch.source else {
            // Still in its segment, which stays at the front.
            return;
        };
        let n = batch.events.len();
        match self.chunks.front_mut() {
            Some(Chunk::Memory { first: f, events }) => {
                for e in batch.events.into_iter().rev() {
                    events.push_front(e);
                }
                *f = first;
            }
            _ => self.chunks.push_front(Chunk::Memory {
                first,
                events: batch.events.into(),
            }),
        }
        self.in_memory += n;
    }

    /// Move every event held in memory to the journal and make the journal durable (the
    /// database does not answer and the caller wants them safe). On failure the events not
    /// moved stay in memory, and the error says why.
    pub(crate) fn spill(&mut self) -> Result<(), String> {
        for i in 0..self.chunks.len() {
            let Some(Chunk::Memory { first, events }) = self.chunks.get_mut(i) else {
                continue;
            };
            if events.is_empty() {
                continue;
            }
            let first = *first;
            let events = events.make_contiguous();
            let n = events.len();
            let moved =
                Segment::create(&self.dir, self.pid, self.start_ms, first).and_then(|mut s| {
                    s.open = false;
                    match s.append(events) {
                        Ok(()) => Ok(s),
                        Err(e) => {
                            let _ = s.remove();
                            Err(e)
                        }
                    }
                });
            match moved {
                Ok(s) => {
                    self.chunks[i] = Chunk::Journal(s);
                    self.in_memory -= n;
                    self.in_journal += n;
                }
                Err(e) => {
                    let why = format!("its journal {} cannot be written: {e}", self.dir.display());
                    self.journal_error = Some(why.clone());
                    return Err(why);
                }
            }
        }
        for c in &mut self.chunks {
            if let Chunk::Journal(s) = c {
                s.sync().map_err(|e| {
                    format!("its journal {} cannot be synced: {e}", s.path().display())
                })?;
            }
        }
        self.journal_error = None;
        Ok(())
    }

    /// Give up the events still held in memory (the writer is ending and could store them
    /// nowhere): how many.
    pub(crate) fn drop_memory(&mut self) -> usize {
        let n = self.in_memory;
        self.chunks.retain(|c| matches!(c, Chunk::Journal(_)));
        self.in_memory = 0;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reagent_protocol::EventKind;

    fn ev(seq: u64) -> Event {
        Event::new(
            "r",
            seq,
            EventKind::LlmRequest {
                iteration: 1,
                messages: 2,
                estimated_tokens: seq,
            },
        )
    }

    /// A segment left by writer `pid` with events `seqs`, taken over.
    fn orphan(dir: &Path, pid: i64, seqs: std::ops::RangeInclusive<u64>) -> Segment {
        let mut s = Segment::create(dir, pid, 1, 0).unwrap();
        s.append(&seqs.map(ev).collect::<Vec<_>>()).unwrap();
        let path = s.path().to_owned();
        drop(s);
        Segment::take_over(&path)
            .unwrap()
            .expect("its writer is gone")
    }

    #[test]
    fn adopted_segments_are_written_first_and_a_flush_waits_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut q = Queue::new(8, dir.path().join("mine"), 99, 2);
        q.adopt(vec![
            orphan(dir.path(), 7, 1..=3),
            orphan(dir.path(), 8, 4..=5),
        ]);
        // A flush asked now waits for the five adopted events, not for nothing.
        let upto = q.pushed();
        assert_eq!(upto, 5);
        assert!(q.written_before() < upto);
        q.push(vec![ev(6)]);
        let mut seqs = Vec::new();
        while let Some(b) = q.next_batch(2) {
            seqs.extend(b.events.iter().map(|e| e.seq));
            q.done(b);
        }
        assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);
        assert!(q.written_before() >= upto);
        assert!(q.is_empty());
    }
}
