//! `read_file{path, start_line?, end_line?}`: a page of a text file.
//!
//! The file is streamed, never loaded whole: lines before `start_line` are skipped chunk by
//! chunk (up to [`FileLimits::read_scan_bytes`]), the page stops at `end_line`, at
//! [`FileLimits::read_default_lines`] lines or at [`FileLimits::read_page_bytes`], whichever
//! comes first, and a note says how to read on. Binary files (NUL or invalid UTF-8 in the
//! first 8 KiB) are refused with their size; raw bytes never reach the model.

use std::borrow::Cow;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

use super::nearby::not_found_hint;
use super::{opt_u64_arg, schema, str_arg};
use crate::config::FileLimits;
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::ToolsConfig;

/// Bytes inspected for binary detection.
const SNIFF_BYTES: usize = 8192;

/// The `read_file` tool.
pub(crate) struct ReadFile {
    cfg: Arc<ToolsConfig>,
}

impl ReadFile {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        ReadFile { cfg }
    }
}

impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file".into(),
            description: format!(
                "Read a text file in the workspace. Returns its lines (the first {} unless \
                 you give start_line/end_line, counted from 1).",
                self.cfg.limits.read_default_lines
            ),
            parameters: schema(
                json!({
                    "path": {"type": "string", "description": "File path relative to the workspace"},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line to read (default 1)"},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to read (inclusive)"}
                }),
                &["path"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    /// The first page of a file is bounded by `read_page_bytes`; a later `start_line` may scan
    /// up to `read_scan_bytes` first, so it goes to a blocking thread.
    fn is_quick(&self, args: &Value) -> bool {
        args.get("start_line")
            .is_none_or(|s| s.is_null() || s.as_u64() == Some(1))
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match read(args, ctx, &self.cfg.limits) {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::err(e),
        }
    }
}

fn read(args: &Value, ctx: &ToolContext, limits: &FileLimits) -> Result<String, String> {
    let path = str_arg(args, "path")?;
    let start = opt_u64_arg(args, "start_line")?.unwrap_or(1).max(1);
    let end = opt_u64_arg(args, "end_line")?;
    if let Some(end) = end {
        if end < start {
            return Err(format!("end_line ({end}) is before start_line ({start})"));
        }
    }
    let last = end.unwrap_or_else(|| start.saturating_add(limits.read_default_lines - 1));
    let opened = ctx
        .workspace
        .open_file(path)
        .map_err(|e| not_found_hint(&ctx.workspace, path, &e, limits))?;

    let mut head = vec![0u8; SNIFF_BYTES.min(usize::try_from(opened.size).unwrap_or(SNIFF_BYTES))];
    let n = read_at_full(&opened.file, &mut head).map_err(|e| format!("{path}: {e}"))?;
    head.truncate(n);
    if is_binary(&head) {
        return Err(format!(
            "binary file ({} bytes), not shown: {}",
            opened.size,
            crate::workspace::escape_str(path)
        ));
    }

    let pager = Pager::new(start, last, limits);
    let page = pager
        .read(&opened.file, &head, opened.size)
        .map_err(|e| format!("{path}: {e}"))?;
    if page.first_line_missing {
        return Err(match page.scan_capped {
            true => format!(
                "start_line {start} is beyond the first {} bytes this tool scans; \
                 use grep_search to find the line you need",
                limits.read_scan_bytes
            ),
            false => format!(
                "start_line {start} is past the end of the file ({} lines)",
                page.lines_seen
            ),
        });
    }
    let mut out = page.text;
    let shown_last = start + page.lines_taken.saturating_sub(1);
    if page.more {
        let why = if page.byte_capped {
            format!("output is capped at {} bytes", limits.read_page_bytes)
        } else {
            "the file has more lines".to_string()
        };
        out.push_str(&format!(
            "\n[showing lines {start}-{shown_last}; {why}; call read_file with start_line={} to continue]",
            shown_last + 1
        ));
    }
    if page.lines_cut > 0 {
        out.push_str(&format!(
            "\n[{} long line(s) were cut at {} bytes]",
            page.lines_cut, limits.read_max_line_bytes
        ));
    }
    if opened.nlink > 1 {
        out.push_str(&format!(
            "\n[note: this file has {} hard links; the same data may exist outside the workspace]",
            opened.nlink
        ));
    }
    Ok(out)
}

/// Fill `buf` from offset 0 as far as the file allows.
fn read_at_full(file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// NUL bytes, or bytes that are not UTF-8 (ignoring a sequence cut at the end of the sample).
fn is_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        Err(e) => e.error_len().is_some(),
    }
}

#[derive(Default)]
struct Page {
    text: String,
    lines_taken: u64,
    lines_seen: u64,
    lines_cut: u64,
    more: bool,
    byte_capped: bool,
    scan_capped: bool,
    first_line_missing: bool,
}

/// Collects lines `start..=last` within the caps from the file's bytes, fed in chunks.
struct Pager<'a> {
    page: Page,
    /// The kept bytes of the current line (at most `read_max_line_bytes`, plus its newline).
    line: Vec<u8>,
    /// The full length of the current line, kept bytes or not.
    line_len: usize,
    line_no: u64,
    start: u64,
    last: u64,
    limits: &'a FileLimits,
}

impl<'a> Pager<'a> {
    fn new(start: u64, last: u64, limits: &'a FileLimits) -> Self {
        Pager {
            page: Page::default(),
            line: Vec::new(),
            line_len: 0,
            line_no: 1,
            start,
            last,
            limits,
        }
    }

    /// The page of `file`, whose first bytes `head` were already read (and whose size was
    /// `size` when opened). The rest is read by offset, in chunks of at most 64 KiB, until the
    /// page is full, the file ends or the scan cap is reached before `start`.
    fn read(mut self, file: &std::fs::File, head: &[u8], size: u64) -> std::io::Result<Page> {
        let mut offset = head.len() as u64;
        let mut full = !self.feed(head);
        if !full && !self.scan_capped_at(offset) {
            let room = size
                .saturating_sub(offset)
                .saturating_add(1)
                .clamp(4096, 64 * 1024);
            let mut buf = vec![0u8; usize::try_from(room).unwrap_or(64 * 1024)];
            loop {
                let n = match file.read_at(&mut buf, offset) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                offset += n as u64;
                if !self.feed(&buf[..n]) {
                    full = true;
                    break;
                }
                if self.scan_capped_at(offset) {
                    break;
                }
            }
        }
        if !full && self.line_len > 0 && !self.page.scan_capped && self.finish_line() {
            self.page.lines_seen = self.line_no;
        }
        let page = &mut self.page;
        page.first_line_missing = page.lines_taken == 0
            && !(page.lines_seen == 0 && self.start == 1 && !page.scan_capped);
        Ok(self.page)
    }

    /// Whether `scanned` bytes were read without reaching `start` (and so the scan stops).
    fn scan_capped_at(&mut self, scanned: u64) -> bool {
        if self.line_no < self.start && scanned >= self.limits.read_scan_bytes {
            self.page.scan_capped = true;
        }
        self.page.scan_capped
    }

    /// Takes the next bytes of the file; false once the page is full.
    fn feed(&mut self, mut chunk: &[u8]) -> bool {
        while !chunk.is_empty() {
            let newline = memchr::memchr(b'\n', chunk);
            let (segment, rest) = chunk.split_at(newline.map_or(chunk.len(), |i| i + 1));
            chunk = rest;
            self.line_len += segment.len();
            if self.line_no >= self.start {
                let body = segment.strip_suffix(b"\n").unwrap_or(segment);
                let room = self
                    .limits
                    .read_max_line_bytes
                    .saturating_sub(self.line.len());
                self.line.extend_from_slice(&body[..body.len().min(room)]);
                if newline.is_some() {
                    self.line.push(b'\n');
                }
            }
            if newline.is_some() {
                if !self.finish_line() {
                    return false;
                }
                self.page.lines_seen = self.line_no;
                self.line_no += 1;
                self.line.clear();
                self.line_len = 0;
            }
        }
        true
    }

    /// Ends the current line: adds it to the page when it is in range and fits. Returns false
    /// when the page is full.
    fn finish_line(&mut self) -> bool {
        let page = &mut self.page;
        if self.line_no < self.start {
            return true;
        }
        if self.line_no > self.last {
            page.more = true;
            return false;
        }
        // Checking valid UTF-8 first is several times faster than the lossy conversion's scan.
        let mut text = match std::str::from_utf8(&self.line) {
            Ok(valid) => Cow::Borrowed(valid),
            Err(_) => String::from_utf8_lossy(&self.line),
        };
        let dropped = self.line_len - self.line.len();
        if dropped > 0 {
            page.lines_cut += 1;
            let ends_nl = text.ends_with('\n');
            let mut cut = text.trim_end_matches('\n').to_owned();
            cut.push_str(&format!(" [... {dropped} more bytes]"));
            if ends_nl {
                cut.push('\n');
            }
            text = cut.into();
        }
        if page.text.len() + text.len() > self.limits.read_page_bytes && page.lines_taken > 0 {
            page.more = true;
            page.byte_capped = true;
            return false;
        }
        page.text.push_str(&text);
        page.lines_taken += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    /// What the page should be, from the whole file in memory: lines `start..=last` (each cut
    /// to `max_line` bytes with a note), stopping before the line that would pass `page_bytes`
    /// (unless it is the first).
    fn model(data: &[u8], start: u64, last: u64, limits: &FileLimits) -> (String, u64, bool) {
        let mut text = String::new();
        let mut taken = 0;
        for (i, line) in data.split_inclusive(|&b| b == b'\n').enumerate() {
            let no = i as u64 + 1;
            if no < start {
                continue;
            }
            if no > last {
                return (text, taken, true);
            }
            let ends_nl = line.ends_with(b"\n");
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            let mut shown =
                String::from_utf8_lossy(&body[..body.len().min(limits.read_max_line_bytes)])
                    .into_owned();
            if body.len() > limits.read_max_line_bytes {
                shown.push_str(&format!(
                    " [... {} more bytes]",
                    body.len() - limits.read_max_line_bytes
                ));
            }
            if ends_nl {
                shown.push('\n');
            }
            if text.len() + shown.len() > limits.read_page_bytes && taken > 0 {
                return (text, taken, true);
            }
            text.push_str(&shown);
            taken += 1;
        }
        (text, taken, false)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The chunked pager gives the page the whole-file model gives, for files that span
        /// the sniffed head and several reads, with long lines and invalid UTF-8 after the head.
        #[test]
        fn pages_match_the_whole_file_model(
            lines in prop::collection::vec((0usize..300, any::<u8>(), any::<bool>()), 0..400),
            start in 1u64..50,
            span in 0u64..400,
            max_line in 1usize..200,
            page_bytes in 1usize..20_000,
            tail in any::<bool>(),
        ) {
            let mut data = Vec::new();
            for (len, fill, odd) in &lines {
                let byte = if *odd { 0x80 | (fill & 0x3f) } else { b'a' + fill % 26 };
                data.extend(std::iter::repeat_n(byte, *len));
                data.push(b'\n');
            }
            if tail {
                data.extend_from_slice(b"no newline at the end");
            }
            let limits = FileLimits {
                read_page_bytes: page_bytes,
                read_max_line_bytes: max_line,
                ..FileLimits::default()
            };
            let mut file = tempfile::tempfile().unwrap();
            file.write_all(&data).unwrap();
            let head_len = data.len().min(SNIFF_BYTES);
            let last = start + span;
            let page = Pager::new(start, last, &limits)
                .read(&file, &data[..head_len], data.len() as u64)
                .unwrap();
            let (text, taken, more) = model(&data, start, last, &limits);
            prop_assert_eq!(page.text, text);
            prop_assert_eq!(page.lines_taken, taken);
            prop_assert_eq!(page.more, more);
        }
    }
}
