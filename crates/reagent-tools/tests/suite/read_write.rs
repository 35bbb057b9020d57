//! `read_file` and `write_file`: pages, caps, notes and errors.

use std::fs;

use reagent_tools::{FileLimits, ToolResult, ToolsConfig};
use serde_json::json;

use crate::suite::common::{assert_refused, err, out, Fixture};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn read_whole_small_file() {
    let fx = Fixture::new();
    fx.put("a.txt", "one\ntwo\nthree");
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "a.txt"}))),
        "one\ntwo\nthree"
    );
    fx.put("empty", "");
    assert_eq!(out(&fx.call("read_file", json!({"path": "empty"}))), "");
}

#[test]
fn read_pages_with_start_and_end_line() {
    let fx = Fixture::new();
    fx.put("n.txt", numbered(10));
    let r = out(&fx.call(
        "read_file",
        json!({"path": "n.txt", "start_line": 3, "end_line": 5}),
    ));
    assert_eq!(
        r,
        "line 3\nline 4\nline 5\n\n[showing lines 3-5; the file has more lines; call read_file with start_line=6 to continue]"
    );
    let tail = out(&fx.call("read_file", json!({"path": "n.txt", "start_line": 9})));
    assert_eq!(tail, "line 9\nline 10\n");
    // Lenient types: numbers as strings.
    let s = out(&fx.call(
        "read_file",
        json!({"path": "n.txt", "start_line": "10", "end_line": "10"}),
    ));
    assert_eq!(s, "line 10\n");
    assert_refused(
        &fx.call("read_file", json!({"path": "n.txt", "start_line": 11})),
        "past the end of the file (10 lines)",
    );
    assert_refused(
        &fx.call(
            "read_file",
            json!({"path": "n.txt", "start_line": 5, "end_line": 2}),
        ),
        "before start_line",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "n.txt", "start_line": -1})),
        "non-negative integer",
    );
}

#[test]
fn read_default_page_and_byte_cap_from_config() {
    let config = ToolsConfig {
        limits: FileLimits {
            read_default_lines: 4,
            read_page_bytes: 20,
            read_max_line_bytes: 10,
            ..FileLimits::default()
        },
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    fx.put("n.txt", numbered(9));
    let r = out(&fx.call("read_file", json!({"path": "n.txt"})));
    // 7 bytes per line, 20-byte page: two lines fit.
    assert!(
        r.starts_with("line 1\nline 2\n\n[showing lines 1-2; output is capped at 20 bytes"),
        "{r}"
    );
    fx.put("long.txt", format!("{}\nshort\n", "x".repeat(50)));
    let r = out(&fx.call("read_file", json!({"path": "long.txt", "end_line": 1})));
    assert_eq!(
        r,
        "xxxxxxxxxx [... 40 more bytes]\n\n[showing lines 1-1; the file has more lines; \
         call read_file with start_line=2 to continue]\n[1 long line(s) were cut at 10 bytes]"
    );
}

#[test]
fn read_missing_file_and_bad_args() {
    let fx = Fixture::new();
    assert_refused(
        &fx.call("read_file", json!({"path": "nope.txt"})),
        "no such file or directory: nope.txt",
    );
    assert_refused(
        &fx.call("read_file", json!({})),
        "missing required argument `path`",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": 7})),
        "must be a string",
    );
}

#[test]
fn read_reports_binary_with_size() {
    let fx = Fixture::new();
    fx.put("b.bin", b"abc\0def");
    assert_eq!(
        err(&fx.call("read_file", json!({"path": "b.bin"}))),
        "binary file (7 bytes), not shown: b.bin"
    );
    // A UTF-8 sequence cut by the 8 KiB sniff window is still text.
    let mut text = "abcdefghi\n".repeat(819);
    text.push_str("aé\n");
    assert_eq!(text.find('é'), Some(8191));
    fx.put("edge.txt", &text);
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "edge.txt"}))),
        text
    );
}

#[test]
fn write_creates_parents_and_reports() {
    let fx = Fixture::new();
    let r = fx.call(
        "write_file",
        json!({"path": "src/deep/new.rs", "content": "fn x() {}\n"}),
    );
    match &r {
        ToolResult::Ok {
            output, changed, ..
        } => {
            assert_eq!(output, "created src/deep/new.rs (10 bytes)");
            assert_eq!(changed, &vec!["src/deep/new.rs".to_string()]);
        }
        ToolResult::Err { error } => panic!("{error}"),
    }
    assert_eq!(fx.get("src/deep/new.rs"), "fn x() {}\n");
    let r = out(&fx.call(
        "write_file",
        json!({"path": "src/deep/new.rs", "content": ""}),
    ));
    assert_eq!(r, "overwrote src/deep/new.rs (0 bytes)");
    assert_eq!(fx.get("src/deep/new.rs"), "");
    // No temporary files are left behind.
    let names: Vec<_> = fs::read_dir(fx.ws.join("src/deep"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("new.rs")]);
}

#[test]
fn write_through_a_file_as_folder_fails_cleanly() {
    let fx = Fixture::new();
    fx.put("file", "x");
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": "file/sub.txt", "content": "y"}),
        ),
        "not a directory",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "a.txt"})),
        "missing required argument `content`",
    );
    assert_eq!(fx.get("file"), "x");
}

#[test]
fn write_size_cap_is_configurable() {
    let config = ToolsConfig {
        limits: FileLimits {
            write_max_bytes: 8,
            ..FileLimits::default()
        },
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    assert!(fx
        .call("write_file", json!({"path": "ok", "content": "12345678"}))
        .is_ok());
    assert_refused(
        &fx.call("write_file", json!({"path": "no", "content": "123456789"})),
        "content is 9 bytes, over the limit of 8 bytes",
    );
    assert!(!fx.ws.join("no").exists());
}

#[test]
fn configured_protected_paths_replace_defaults() {
    let config = ToolsConfig {
        protected: vec!["secrets/keys.txt".into()],
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": "secrets/keys.txt", "content": "x"}),
        ),
        "protected: secrets/keys.txt",
    );
    assert!(fx
        .call(
            "write_file",
            json!({"path": "other/secrets/keys.txt", "content": "x"})
        )
        .is_ok());
    assert!(fx
        .call("write_file", json!({"path": ".env", "content": "x"}))
        .is_ok());
}

#[test]
fn absolute_paths_through_a_symlinked_root_are_accepted() {
    let fx = Fixture::new();
    fx.put("a.txt", "via link\n");
    let link = fx.outside.parent().unwrap().join("ws-link");
    std::os::unix::fs::symlink(&fx.ws, &link).unwrap();
    let ws = reagent_tools::Workspace::open(&link).unwrap();
    assert_eq!(ws.root(), fx.ws.canonicalize().unwrap());
    let ctx = reagent_tools::ToolContext::new(std::sync::Arc::new(ws));
    let abs = link.join("a.txt");
    let r = fx
        .registry
        .call("read_file", &json!({"path": abs.to_str().unwrap()}), &ctx);
    assert_eq!(out(&r), "via link\n");
    let climb = format!("{}/../outside/sentinel", link.display());
    assert_refused(
        &fx.registry.call("read_file", &json!({"path": climb}), &ctx),
        "escapes the workspace",
    );
    fs::remove_file(&link).unwrap();
    fx.assert_outside_untouched();
}
