//! `list_directory{path?, recursive?}`: the entries of a directory, read through directory
//! fds opened beneath the workspace (never by path string), so nothing outside is listed.
//!
//! Symlinks are shown as `name -> target` and never followed; odd names are escaped; a
//! recursive listing stops at [`FileLimits::list_max_depth`](crate::config::FileLimits) and
//! at `list_max_entries`, and does not expand `.git`, `node_modules` and similar bulk folders.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use reagent_protocol::ToolSpec;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use serde_json::{json, Value};

use super::nearby::not_found_hint;
use super::{opt_bool_arg, opt_str_arg, schema};
use crate::registry::{Tool, ToolContext, ToolResult};
use crate::workspace::{escape_bytes, Workspace};
use crate::ToolsConfig;

/// Folders a recursive listing shows but does not expand.
const NOT_EXPANDED: [&[u8]; 6] = [
    b".git",
    b"node_modules",
    b"target",
    b"__pycache__",
    b".venv",
    b".reagent",
];

/// Most names read from one folder (sorted afterwards; the rest count as cut).
const MAX_NAMES_READ: usize = 100_000;

/// The `list_directory` tool.
pub(crate) struct ListDirectory {
    cfg: Arc<ToolsConfig>,
}

impl ListDirectory {
    pub(crate) fn new(cfg: Arc<ToolsConfig>) -> Self {
        ListDirectory { cfg }
    }
}

impl Tool for ListDirectory {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_directory".into(),
            description: "List the files and folders in a workspace folder. Folders end with /."
                .into(),
            parameters: schema(
                json!({
                    "path": {"type": "string", "description": "Folder relative to the workspace (default: the workspace itself)"},
                    "recursive": {"type": "boolean", "description": "Also list subfolders (default false)"}
                }),
                &[],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match self.list(args, &ctx.workspace) {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::err(e),
        }
    }
}

struct Listing {
    lines: Vec<String>,
    max_entries: usize,
    max_depth: usize,
    cut: bool,
    depth_hit: bool,
}

impl ListDirectory {
    fn list(&self, args: &Value, ws: &Workspace) -> Result<String, String> {
        let path = opt_str_arg(args, "path")?.unwrap_or(".");
        let recursive = opt_bool_arg(args, "recursive")?.unwrap_or(false);
        let dir = ws
            .open_dir(path)
            .map_err(|e| not_found_hint(ws, path, &e, &self.cfg.limits))?;
        let mut listing = Listing {
            lines: Vec::new(),
            max_entries: self.cfg.limits.list_max_entries,
            max_depth: if recursive {
                self.cfg.limits.list_max_depth
            } else {
                1
            },
            cut: false,
            depth_hit: false,
        };
        visit(ws, dir, "", 1, recursive, &mut listing).map_err(|e| format!("{path}: {e}"))?;
        let mut out = if listing.lines.is_empty() {
            "(empty directory)".to_string()
        } else {
            listing.lines.join("\n")
        };
        if listing.cut {
            out.push_str(&format!(
                "\n[listing cut at {} entries]",
                listing.max_entries
            ));
        }
        if listing.depth_hit {
            out.push_str(&format!(
                "\n[folders deeper than {} levels not listed; list them by path]",
                listing.max_depth
            ));
        }
        Ok(out)
    }
}

/// List `dir` into `listing`, depth-first, entries sorted by name.
fn visit(
    ws: &Workspace,
    dir: OwnedFd,
    prefix: &str,
    depth: usize,
    recursive: bool,
    listing: &mut Listing,
) -> rustix::io::Result<()> {
    let reader = Dir::new(rustix::io::dup(&dir)?)?;
    let mut names: Vec<Vec<u8>> = Vec::new();
    for entry in reader {
        // Bound memory on huge folders: names beyond this are never shown anyway.
        if names.len() >= MAX_NAMES_READ {
            listing.cut = true;
            break;
        }
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(name.to_vec());
        }
    }
    names.sort();
    for name in names {
        if listing.lines.len() >= listing.max_entries {
            listing.cut = true;
            return Ok(());
        }
        let name_os = OsStr::from_bytes(&name);
        let shown = format!("{prefix}{}", escape_bytes(&name));
        let Ok(st) = rustix::fs::statat(&dir, name_os, AtFlags::SYMLINK_NOFOLLOW) else {
            listing.lines.push(format!("{shown} [unreadable]"));
            continue;
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => {
                let skip = NOT_EXPANDED.contains(&name.as_slice());
                if recursive && skip {
                    listing.lines.push(format!("{shown}/ [not expanded]"));
                    continue;
                }
                listing.lines.push(format!("{shown}/"));
                if !recursive {
                    continue;
                }
                if depth >= listing.max_depth {
                    listing.depth_hit = true;
                    continue;
                }
                let sub = ws.openat2(
                    dir.as_fd(),
                    std::path::Path::new(name_os),
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
                    Mode::empty(),
                );
                if let Ok(sub) = sub {
                    visit(ws, sub, &format!("{shown}/"), depth + 1, recursive, listing)?;
                }
            }
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(&dir, name_os, Vec::new())
                    .map(|t| escape_bytes(t.as_bytes()))
                    .unwrap_or_else(|_| "?".into());
                listing.lines.push(format!("{shown} -> {target}"));
            }
            FileType::RegularFile => listing
                .lines
                .push(format!("{shown} ({} bytes)", st.st_size)),
            FileType::Fifo => listing.lines.push(format!("{shown} [fifo]")),
            FileType::Socket => listing.lines.push(format!("{shown} [socket]")),
            FileType::CharacterDevice | FileType::BlockDevice => {
                listing.lines.push(format!("{shown} [device]"))
            }
            FileType::Unknown => listing.lines.push(format!("{shown} [unknown]")),
        }
    }
    Ok(())
}
