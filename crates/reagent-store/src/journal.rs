//! The journal: events the database did not take in time, as JSON lines in files of their own.
//!
//! A segment is `<dir>/<pid>-<start ms>-<ordinal>.jsonl`: the process that wrote it, when that
//! process's writer started, and the position of its first event in that writer's queue (so
//! the names of one writer sort in the order its events were recorded). Each line is one event
//! as stored in the `json` column. A segment is held under an exclusive `flock` by the writer
//! that owns it; any other process opening the store takes over (and replays) the segments it
//! can lock, that is those whose writer is gone. A segment is removed once replayed.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use reagent_protocol::Event;

/// One journal file, locked by this process.
pub(crate) struct Segment {
    path: PathBuf,
    file: File,
    /// Bytes of whole lines in the file (a failed append is cut back to this).
    len: u64,
    /// Bytes already replayed into the database.
    replayed: u64,
    /// Events in the file not yet replayed (counted from its lines when taken over).
    pub(crate) events: usize,
    /// The pid recorded in the run rows this segment's `run_started` events create.
    pub(crate) pid: i64,
    /// Whether appends may still go here (a segment being replayed takes no more).
    pub(crate) open: bool,
    /// The queue position of its first event (0 for a segment taken over: it comes first).
    pub(crate) ordinal: u64,
    /// Whether bytes were appended since the last `sync`.
    dirty: bool,
    reader: Option<BufReader<File>>,
}

/// Lines of a segment read for one batch.
pub(crate) struct Read {
    /// The events, in order.
    pub(crate) events: Vec<Event>,
    /// Where the next batch starts once these are written.
    pub(crate) end: u64,
    /// Lines that could not be read as events (a line cut by a crash, or damage).
    pub(crate) unreadable: usize,
}

impl Segment {
    /// Create segment `ordinal` of this writer in `dir` (created when missing), locked.
    pub(crate) fn create(dir: &Path, pid: i64, start_ms: i64, ordinal: u64) -> io::Result<Segment> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{pid}-{start_ms}-{ordinal:020}.jsonl"));
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(&path)?;
        if !try_lock(&file)? {
            return Err(io::Error::other(format!(
                "{} is locked by another process",
                path.display()
            )));
        }
        Ok(Segment {
            path,
            file,
            len: 0,
            replayed: 0,
            events: 0,
            pid,
            open: true,
            ordinal,
            dirty: false,
            reader: None,
        })
    }

    /// Take over the segment at `path` when no live writer holds it: `None` when it is locked,
    /// gone, or not a segment name.
    pub(crate) fn take_over(path: &Path) -> io::Result<Option<Segment>> {
        let Some(pid) = segment_pid(path) else {
            return Ok(None);
        };
        let file = match OpenOptions::new().read(true).append(true).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if !try_lock(&file)? {
            return Ok(None);
        }
        // Replayed and removed by another process between our listing and our lock.
        let same = match std::fs::metadata(path) {
            Ok(m) => {
                let held = file.metadata()?;
                m.ino() == held.ino() && m.dev() == held.dev()
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if !same {
            return Ok(None);
        }
        let len = file.metadata()?.len();
        let events = BufReader::new(&file)
            .split(b'\n')
            .filter(|l| l.as_ref().is_ok_and(|l| !l.is_empty()))
            .count();
        Ok(Some(Segment {
            path: path.to_owned(),
            file,
            len,
            replayed: 0,
            events,
            pid,
            open: false,
            ordinal: 0,
            dirty: false,
            reader: None,
        }))
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Append `events` as whole lines. On failure the file is cut back to its last whole line
    /// (a half-written line would spoil the next one) and nothing counts as appended.
    pub(crate) fn append(&mut self, events: &[Event]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(events.len() * 512);
        for e in events {
            serde_json::to_writer(&mut buf, e)?;
            buf.push(b'\n');
        }
        if let Err(e) = self.file.write_all(&buf) {
            // The cut may fail too (the disk that is full is the same); the next append then
            // fails again, and a replay skips the partial line.
            let _ = self.file.set_len(self.len);
            return Err(e);
        }
        self.len += buf.len() as u64;
        self.events += events.len();
        self.dirty = true;
        Ok(())
    }

    /// Make the appended lines durable.
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        if self.dirty {
            self.file.sync_data()?;
            self.dirty = false;
        }
        Ok(())
    }

    /// Read up to `max` events from where the replay stands, without moving it.
    pub(crate) fn read(&mut self, max: usize) -> io::Result<Read> {
        let start = self.replayed;
        let reader = match &mut self.reader {
            Some(r) => r,
            None => self.reader.insert(BufReader::new(File::open(&self.path)?)),
        };
        reader.seek(SeekFrom::Start(start))?;
        let mut out = Read {
            events: Vec::new(),
            end: start,
            unreadable: 0,
        };
        let mut line = Vec::new();
        while out.events.len() < max && out.end < self.len {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            out.end += n as u64;
            match serde_json::from_slice::<Event>(&line) {
                Ok(e) => out.events.push(e),
                Err(_) if line.iter().all(u8::is_ascii_whitespace) => {}
                Err(_) => out.unreadable += 1,
            }
        }
        Ok(out)
    }

    /// Record that the lines up to `end` are in the database.
    pub(crate) fn replayed(&mut self, end: u64, events: usize) {
        self.replayed = end;
        self.events = self.events.saturating_sub(events);
    }

    /// Whether every line was replayed (and no more can come).
    pub(crate) fn finished(&self) -> bool {
        !self.open && self.replayed >= self.len
    }

    /// Remove the file (while still holding its lock, so no one replays it again).
    pub(crate) fn remove(self) -> io::Result<()> {
        std::fs::remove_file(&self.path)
    }
}

/// The segments in `dir` no live writer holds, oldest first, locked by this process.
pub(crate) fn orphans(dir: &Path) -> io::Result<Vec<Segment>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| segment_pid(p).is_some())
        .collect();
    paths.sort();
    let mut taken = Vec::new();
    for p in paths {
        if let Some(s) = Segment::take_over(&p)? {
            taken.push(s);
        }
    }
    Ok(taken)
}

/// The pid in a segment's name, when it is one.
fn segment_pid(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let mut parts = name.split('-');
    let pid = parts.next()?.parse().ok()?;
    parts.next()?.parse::<i64>().ok()?;
    parts.next()?.parse::<u64>().ok()?;
    parts.next().is_none().then_some(pid)
}

/// Take the file's exclusive lock without waiting: `false` when another holder has it.
fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: flock on a descriptor we own; no memory is passed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(false)
    } else {
        Err(e)
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

    #[test]
    fn appends_reads_in_batches_and_is_taken_over_only_when_unlocked() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Segment::create(dir.path(), 7, 1, 3).unwrap();
        s.append(&(1..=5).map(ev).collect::<Vec<_>>()).unwrap();
        // Held by us: not an orphan.
        assert!(orphans(dir.path()).unwrap().is_empty());
        s.open = false;
        let first = s.read(2).unwrap();
        assert_eq!(
            first.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2]
        );
        // Not replayed yet: the same lines again.
        assert_eq!(s.read(2).unwrap().events[0].seq, 1);
        s.replayed(first.end, 2);
        let rest = s.read(10).unwrap();
        assert_eq!(
            rest.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        drop(s);
        // Its writer gone, another takes it over, and a cut last line is skipped as unreadable.
        let path = dir.path().join(format!("7-1-{:020}.jsonl", 3));
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"run_id\":\"r\",\"se").unwrap();
        // Another test of this binary that spawns a process may hold a copy of the descriptor
        // between its fork and its exec (the lock goes with it): a take-over then waits for
        // the next try, as the writer's would.
        let mut taken = Vec::new();
        for _ in 0..100 {
            taken = orphans(dir.path()).unwrap();
            if !taken.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(taken.len(), 1);
        let mut t = taken.pop().unwrap();
        assert_eq!(t.pid, 7);
        assert_eq!(t.events, 6);
        let all = t.read(100).unwrap();
        assert_eq!(all.events.len(), 5);
        assert_eq!(all.unreadable, 1);
        t.replayed(all.end, 6);
        assert!(t.finished());
        t.remove().unwrap();
        assert!(orphans(dir.path()).unwrap().is_empty());
    }
}
