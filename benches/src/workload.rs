//! The benchmark workload, shared by the scripted server, reagent and the Python peers: a
//! workspace of distinct 4 KB text files, the task, and model names that carry the plan.
//!
//! A model name is `bench-N` (read N files, then answer), optionally followed by `-hMS`
//! (hold the reply for MS milliseconds) and `-aK` (hold only the call made after K tool
//! results; default 0, the first call). The server is stateless: it decides each reply from
//! the request alone, so every client framework can drive it without sessions.

use std::io;
use std::path::Path;
use std::time::Duration;

/// Size of every workspace file, in bytes.
pub const FILE_BYTES: usize = 4096;

/// The task every agent is given.
pub const TASK: &str = "Read the files f0000.txt, f0001.txt and so on, one at a time, with \
the read_file tool, until told to stop, then say how many you read.";

/// What a model name asks the scripted server to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Tool calls before the final answer.
    pub iterations: u32,
    /// How long to hold the held reply.
    pub hold: Duration,
    /// The reply made after this many tool results is the held one.
    pub hold_at: u32,
}

impl Plan {
    /// Read a model name (`bench-150`, `bench-1-h3000`, `bench-5-h200-a2`); `None` when it is
    /// not one. A provider prefix such as `ollama_chat/` is ignored.
    pub fn from_model(name: &str) -> Option<Plan> {
        let name = name.rsplit('/').next().unwrap_or(name);
        let name = name.split(':').next().unwrap_or(name);
        let mut parts = name.split('-');
        if parts.next()? != "bench" {
            return None;
        }
        let iterations = parts.next()?.parse().ok()?;
        let mut plan = Plan {
            iterations,
            hold: Duration::ZERO,
            hold_at: 0,
        };
        for part in parts {
            if let Some(ms) = part.strip_prefix('h') {
                plan.hold = Duration::from_millis(ms.parse().ok()?);
            } else if let Some(k) = part.strip_prefix('a') {
                plan.hold_at = k.parse().ok()?;
            } else {
                return None;
            }
        }
        Some(plan)
    }

    /// The model name for this plan (inverse of [`Plan::from_model`]).
    pub fn model_name(&self) -> String {
        let mut name = format!("bench-{}", self.iterations);
        if !self.hold.is_zero() {
            name.push_str(&format!("-h{}", self.hold.as_millis()));
            if self.hold_at != 0 {
                name.push_str(&format!("-a{}", self.hold_at));
            }
        }
        name
    }

    /// A plan of `iterations` tool calls without holds.
    pub fn simple(iterations: u32) -> Plan {
        Plan {
            iterations,
            hold: Duration::ZERO,
            hold_at: 0,
        }
    }
}

/// The final answer the scripted server gives after `files` tool calls.
pub fn final_answer(files: u32) -> String {
    format!("I read {files} files.")
}

/// Name of the file read at step `k` (0-based): `f0007.txt`.
pub fn file_name(k: u32) -> String {
    format!("f{k:04}.txt")
}

/// Content of file `k`: `bytes` bytes of English-like text in 64-byte lines, distinct for every
/// `k` (each line names its file and line number).
pub fn file_content(k: u32, bytes: usize) -> String {
    const WORDS: [&str; 16] = [
        "agent", "model", "tool", "result", "runtime", "history", "cache", "prompt", "server",
        "token", "loop", "guard", "budget", "event", "schema", "reply",
    ];
    let mut out = String::with_capacity(bytes + 64);
    let mut line_no = 0u32;
    while out.len() < bytes {
        let mut line = format!("file {k} line {line_no}:");
        let mut w = (k as usize).wrapping_mul(7).wrapping_add(line_no as usize);
        while line.len() < 63 {
            line.push(' ');
            line.push_str(WORDS[w % WORDS.len()]);
            w = w.wrapping_mul(5).wrapping_add(3);
        }
        line.truncate(63);
        line.push('\n');
        out.push_str(&line);
        line_no += 1;
    }
    out.truncate(bytes.saturating_sub(1));
    out.push('\n');
    out
}

/// Write files `0..files` of `bytes` bytes each into `dir` (created if missing).
pub fn prepare_workspace(dir: &Path, files: u32, bytes: usize) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for k in 0..files {
        std::fs::write(dir.join(file_name(k)), file_content(k, bytes))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_round_trip() {
        let cases = [
            ("bench-150", Some(Plan::simple(150))),
            (
                "bench-1-h3000",
                Some(Plan {
                    iterations: 1,
                    hold: Duration::from_millis(3000),
                    hold_at: 0,
                }),
            ),
            (
                "ollama_chat/bench-5-h200-a2",
                Some(Plan {
                    iterations: 5,
                    hold: Duration::from_millis(200),
                    hold_at: 2,
                }),
            ),
            ("bench-7:latest", Some(Plan::simple(7))),
            ("bench", None),
            ("bench-x", None),
            ("qwen3-8", None),
            ("bench-3-z1", None),
        ];
        for (name, want) in cases {
            assert_eq!(Plan::from_model(name), want, "{name}");
        }
        for plan in [
            Plan::simple(3),
            Plan::from_model("bench-5-h200-a2").unwrap(),
        ] {
            assert_eq!(Plan::from_model(&plan.model_name()), Some(plan));
        }
    }

    #[test]
    fn files_are_distinct_text_of_the_exact_size() {
        let a = file_content(0, FILE_BYTES);
        let b = file_content(1, FILE_BYTES);
        assert_eq!(a.len(), FILE_BYTES);
        assert_eq!(b.len(), FILE_BYTES);
        assert_ne!(a, b);
        assert!(a.lines().all(|l| l.len() <= 63));
        assert_eq!(file_content(3, 100).len(), 100);
        assert_eq!(file_name(7), "f0007.txt");
    }
}
