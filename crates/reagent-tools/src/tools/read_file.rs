//! `read_file{path, start_line?, end_line?}`: a page of a text file.
//!
//! The file is streamed, never loaded whole: lines before `start_line` are skipped chunk by
//! chunk (up to [`FileLimits::read_scan_bytes`]), the page stops at `end_line`, at
//! [`FileLimits::read_default_lines`] lines or at [`FileLimits::read_page_bytes`], whichever
//! comes first, and a note says how to read on. Binary files (NUL or invalid UTF-8 in the
//! first 8 KiB) are refused with their size; raw bytes never reach the model.

use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use reagent_protocol::ToolSpec;
use serde_json::{json, Value};

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
    let opened = ctx.workspace.open_file(path).map_err(|e| e.to_string())?;

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

    let page = read_page(&opened.file, start, last, limits).map_err(|e| format!("{path}: {e}"))?;
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

/// Stream the file and collect lines `start..=last` within the caps.
fn read_page(
    mut file: &std::fs::File,
    start: u64,
    last: u64,
    limits: &FileLimits,
) -> std::io::Result<Page> {
    let mut page = Page::default();
    let mut line: Vec<u8> = Vec::new();
    let mut line_len: usize = 0; // full length of the current line, kept bytes or not
    let mut line_no: u64 = 1;
    let mut scanned: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    let mut done = false;

    let finish_line =
        |page: &mut Page, line: &mut Vec<u8>, line_len: usize, line_no: u64| -> bool {
            // Returns false when the page is full.
            if line_no < start {
                return true;
            }
            if line_no > last {
                page.more = true;
                return false;
            }
            let mut text = String::from_utf8_lossy(line).into_owned();
            if line_len > line.len() {
                page.lines_cut += 1;
                let ends_nl = text.ends_with('\n');
                text = text.trim_end_matches('\n').to_string();
                text.push_str(&format!(" [... {} more bytes]", line_len - line.len()));
                if ends_nl {
                    text.push('\n');
                }
            }
            if page.text.len() + text.len() > limits.read_page_bytes && page.lines_taken > 0 {
                page.more = true;
                page.byte_capped = true;
                return false;
            }
            page.text.push_str(&text);
            page.lines_taken += 1;
            true
        };

    'outer: loop {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        scanned += n as u64;
        for &b in &buf[..n] {
            line_len += 1;
            if line.len() < limits.read_max_line_bytes || b == b'\n' {
                line.push(b);
            }
            if b == b'\n' {
                if !finish_line(&mut page, &mut line, line_len, line_no) {
                    done = true;
                    break 'outer;
                }
                page.lines_seen = line_no;
                line_no += 1;
                line.clear();
                line_len = 0;
            }
        }
        if line_no < start && scanned >= limits.read_scan_bytes {
            page.scan_capped = true;
            break;
        }
    }
    if !done
        && line_len > 0
        && !page.scan_capped
        && finish_line(&mut page, &mut line, line_len, line_no)
    {
        page.lines_seen = line_no;
    }
    page.first_line_missing =
        page.lines_taken == 0 && !(start == 1 && page.lines_seen == 0 && !page.scan_capped);
    Ok(page)
}
