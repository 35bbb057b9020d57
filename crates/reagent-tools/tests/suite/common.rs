//! The test fixture: a temp dir holding the workspace `ws/` and, beside it, `outside/` with a
//! sentinel file whose content, mtime and atime are recorded, so a test can assert that
//! nothing outside the workspace was read, changed or created.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reagent_tools::{ToolContext, ToolRegistry, ToolResult, ToolsConfig, Workspace};
use rustix::fs::{Timespec, Timestamps};
use serde_json::Value;

/// Content of the sentinel outside the workspace.
pub(crate) const SECRET: &str = "SENTINEL-SECRET-7f3a";

/// A workspace with a sentinel next to it.
pub(crate) struct Fixture {
    _tmp: tempfile::TempDir,
    /// The workspace root.
    pub(crate) ws: PathBuf,
    /// A directory outside the workspace.
    pub(crate) outside: PathBuf,
    /// A file in `outside`.
    pub(crate) sentinel: PathBuf,
    /// The tools.
    pub(crate) registry: ToolRegistry,
    /// The tool context over `ws`.
    pub(crate) ctx: ToolContext,
    sentinel_times: (i64, i64),
}

impl Fixture {
    /// A fixture with the default tool configuration.
    pub(crate) fn new() -> Self {
        Self::with_config(&ToolsConfig::default())
    }

    /// A fixture with `config`.
    pub(crate) fn with_config(config: &ToolsConfig) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        fs::create_dir(&ws).unwrap();
        fs::create_dir(&outside).unwrap();
        let sentinel = outside.join("sentinel");
        fs::write(&sentinel, SECRET).unwrap();
        let ctx = ToolContext::new(Arc::new(Workspace::open(&ws).unwrap()));
        let mut fx = Fixture {
            _tmp: tmp,
            ws,
            outside,
            sentinel,
            registry: ToolRegistry::workspace_tools(config),
            ctx,
            sentinel_times: (0, 0),
        };
        // Control: on this filesystem a read of the sentinel must move its atime, or the
        // "unread" check below would prove nothing.
        fx.age_sentinel_atime();
        let _ = fs::read(&fx.sentinel).unwrap();
        let after = fs::metadata(&fx.sentinel).unwrap();
        assert!(
            after.atime() > after.mtime() - 3000,
            "atime is not updated by reads on this filesystem (noatime?): cannot check 'unread'"
        );
        fx.age_sentinel_atime();
        fx
    }

    /// Set the sentinel's atime one hour before its mtime (relatime then updates it on read).
    fn age_sentinel_atime(&mut self) {
        let m = fs::metadata(&self.sentinel).unwrap();
        let times = Timestamps {
            last_access: Timespec {
                tv_sec: m.mtime() - 3600,
                tv_nsec: 0,
            },
            last_modification: Timespec {
                tv_sec: m.mtime(),
                tv_nsec: m.mtime_nsec(),
            },
        };
        rustix::fs::utimensat(
            rustix::fs::CWD,
            &self.sentinel,
            &times,
            rustix::fs::AtFlags::empty(),
        )
        .unwrap();
        let m = fs::metadata(&self.sentinel).unwrap();
        self.sentinel_times = (m.atime(), m.mtime());
    }

    /// Call a tool; every call must return within 10 s.
    pub(crate) fn call(&self, name: &str, args: Value) -> ToolResult {
        let t = Instant::now();
        let r = self.registry.call(name, &args, &self.ctx);
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{name} took {:?}",
            t.elapsed()
        );
        r
    }

    /// Write a file inside the workspace directly (test setup).
    pub(crate) fn put(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.ws.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(p, content).unwrap();
    }

    /// Read a workspace file directly.
    pub(crate) fn get(&self, rel: &str) -> String {
        fs::read_to_string(self.ws.join(rel)).unwrap()
    }

    /// Nothing outside the workspace was read, changed or created: `outside/` holds only the
    /// sentinel, whose content, mtime and atime are unchanged, and the temp dir holds only
    /// `ws/` and `outside/`.
    pub(crate) fn assert_outside_untouched(&self) {
        let names = |d: &Path| {
            let mut v: Vec<String> = fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&self.outside), vec!["sentinel".to_string()]);
        assert_eq!(
            names(self.outside.parent().unwrap()),
            vec!["outside".to_string(), "ws".to_string()]
        );
        // Times first: reading the content below moves the atime.
        let m = fs::metadata(&self.sentinel).unwrap();
        assert_eq!(
            (m.atime(), m.mtime()),
            self.sentinel_times,
            "the sentinel outside the workspace was read or modified"
        );
        assert_eq!(fs::read_to_string(&self.sentinel).unwrap(), SECRET);
    }
}

/// The error text of a failed result (panics on success).
pub(crate) fn err(r: &ToolResult) -> String {
    match r {
        ToolResult::Err { error } => error.clone(),
        ToolResult::Ok { output, .. } => panic!("expected an error, got ok: {output}"),
    }
}

/// The output text of a successful result (panics on failure).
pub(crate) fn out(r: &ToolResult) -> String {
    match r {
        ToolResult::Ok { output, .. } => match output {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        ToolResult::Err { error } => panic!("expected ok, got error: {error}"),
    }
}

/// Assert that a result is an error whose text contains `needle`, and that it never shows
/// the sentinel's content.
#[track_caller]
pub(crate) fn assert_refused(r: &ToolResult, needle: &str) {
    let e = err(r);
    assert!(
        e.contains(needle),
        "error {e:?} does not mention {needle:?}"
    );
    assert!(!e.contains(SECRET));
}
