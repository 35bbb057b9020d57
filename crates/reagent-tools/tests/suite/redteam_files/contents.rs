//! Rows 24–33: file contents and special files.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{FileType, Mode};
use serde_json::json;

use crate::suite::common::{assert_refused, err, out, Fixture};

/// Create a device node in the workspace (root only; a failure is reported loudly).
fn mknod(fx: &Fixture, name: &str, kind: FileType, major: u32, minor: u32) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.ws.join(name),
        kind,
        Mode::from_raw_mode(0o644),
        rustix::fs::makedev(major, minor),
    )
    .unwrap_or_else(|e| panic!("mknod needs CAP_MKNOD (run the tests as root): {e}"));
}

#[test]
fn row24_huge_file_is_never_loaded() {
    let fx = Fixture::new();
    let f = fs::File::create(fx.ws.join("big")).unwrap();
    f.set_len(10 << 30).unwrap(); // 10 GiB, sparse
    assert_refused(
        &fx.call("read_file", json!({"path": "big"})),
        "binary file (10737418240 bytes)",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "big", "start_line": 1_000_000})),
        "binary",
    );
    // A large text file is paged: capped output and a note saying how to go on.
    let line = "0123456789".repeat(10) + "\n"; // 101 bytes
    fx.put("big.txt", line.repeat(60_000)); // ~6 MB
    let first = out(&fx.call("read_file", json!({"path": "big.txt"})));
    assert!(
        first.contains("[showing lines 1-2000;"),
        "{}",
        &first[first.len() - 200..]
    );
    assert!(first.contains("start_line=2001"));
    let all = out(&fx.call(
        "read_file",
        json!({"path": "big.txt", "start_line": 1, "end_line": 60_000}),
    ));
    assert!(
        all.len() < 256 * 1024 + 300,
        "page not capped: {} bytes",
        all.len()
    );
    assert!(all.contains("output is capped at 262144 bytes"));
    let last = out(&fx.call(
        "read_file",
        json!({"path": "big.txt", "start_line": 59_999}),
    ));
    assert_eq!(last, line.repeat(2));
    fx.assert_outside_untouched();
}

#[test]
fn row25_binary_files_are_not_shown() {
    let fx = Fixture::new();
    let mut elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
    elf.extend(std::iter::repeat_n(0xAB, 4000));
    fs::write(fx.ws.join("prog"), &elf).unwrap();
    let png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe".to_vec();
    fs::write(fx.ws.join("img.png"), &png).unwrap();
    let no_nul_bad_utf8 = b"text then \xff\xfe\xfd bytes".to_vec();
    fs::write(fx.ws.join("latin"), &no_nul_bad_utf8).unwrap();
    for (name, len) in [
        ("prog", elf.len()),
        ("img.png", png.len()),
        ("latin", no_nul_bad_utf8.len()),
    ] {
        let e = err(&fx.call("read_file", json!({"path": name})));
        assert!(e.contains(&format!("binary file ({len} bytes)")), "{e}");
        assert!(
            !e.contains("ELF") && !e.contains("PNG"),
            "raw bytes shown: {e}"
        );
    }
    // grep skips binary files instead of printing their bytes.
    let g = out(&fx.call("grep_search", json!({"pattern": "ELF|PNG"})));
    assert!(g.starts_with("no matches"), "{g}");
    fx.assert_outside_untouched();
}

#[test]
fn row26_dev_zero_and_urandom() {
    let fx = Fixture::new();
    for p in ["/dev/zero", "/dev/urandom"] {
        assert_refused(
            &fx.call("read_file", json!({"path": p})),
            "absolute path outside",
        );
    }
    std::os::unix::fs::symlink("/dev/zero", fx.ws.join("z")).unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": "z"})),
        "escapes the workspace",
    );
    mknod(&fx, "zero", FileType::CharacterDevice, 1, 5);
    assert_refused(
        &fx.call("read_file", json!({"path": "zero"})),
        "not a regular file (character device)",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "zero", "content": "x"})),
        "not a regular file",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "zero", "old_string": "\0", "new_string": "x"}),
        ),
        "not a regular file",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row27_fifo_does_not_block() {
    let fx = Fixture::new();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        fx.ws.join("f"),
        FileType::Fifo,
        Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    fx.put("ok.txt", "needle\n");
    // Run the calls on a thread so a blocking open would show up as a timeout, not a hang.
    let (tx, rx) = mpsc::channel();
    let registry = std::sync::Arc::new(reagent_tools::ToolRegistry::workspace_tools(
        &Default::default(),
    ));
    let ctx = fx.ctx.clone();
    std::thread::spawn(move || {
        let results = [
            registry.call("read_file", &json!({"path": "f"}), &ctx),
            registry.call("write_file", &json!({"path": "f", "content": "x"}), &ctx),
            registry.call(
                "edit_file",
                &json!({"path": "f", "old_string": "a", "new_string": "b"}),
                &ctx,
            ),
            registry.call("grep_search", &json!({"pattern": "needle"}), &ctx),
        ];
        let _ = tx.send(results);
    });
    let results = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("a tool blocked on the FIFO for more than 5 s");
    assert_refused(&results[0], "not a regular file (FIFO)");
    assert_refused(&results[1], "not a regular file");
    assert_refused(&results[2], "not a regular file (FIFO)");
    assert_eq!(out(&results[3]), "ok.txt:1: needle");
    fx.assert_outside_untouched();
}

#[test]
fn row28_sockets_devices_and_tty() {
    let fx = Fixture::new();
    let _listener = std::os::unix::net::UnixListener::bind(fx.ws.join("sock")).unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": "sock"})),
        "not a regular file (socket)",
    );
    mknod(&fx, "loop", FileType::BlockDevice, 7, 0);
    assert_refused(
        &fx.call("read_file", json!({"path": "loop"})),
        "not a regular file (block device)",
    );
    mknod(&fx, "tty", FileType::CharacterDevice, 5, 0);
    assert_refused(
        &fx.call("read_file", json!({"path": "tty"})),
        "not a regular file (character device)",
    );
    for p in ["/dev/tty", "/dev/stdin"] {
        assert_refused(
            &fx.call("read_file", json!({"path": p})),
            "absolute path outside",
        );
    }
    let listing = out(&fx.call("list_directory", json!({})));
    assert!(
        listing.contains("sock [socket]") && listing.contains("loop [device]"),
        "{listing}"
    );
    fx.assert_outside_untouched();
}

#[test]
fn row29_write_size_cap() {
    let fx = Fixture::new();
    let big = "a".repeat(10 * 1024 * 1024 + 1);
    assert_refused(
        &fx.call("write_file", json!({"path": "big.txt", "content": big})),
        "over the limit of 10485760 bytes",
    );
    assert!(!fx.ws.join("big.txt").exists());
    let at_cap = "a".repeat(10 * 1024 * 1024);
    assert!(fx
        .call("write_file", json!({"path": "cap.txt", "content": at_cap}))
        .is_ok());
    assert_eq!(
        fs::metadata(fx.ws.join("cap.txt")).unwrap().len(),
        10 * 1024 * 1024
    );
    // No temporary file is left behind by the refused write.
    assert_eq!(fs::read_dir(&fx.ws).unwrap().count(), 1);
    fx.assert_outside_untouched();
}

#[test]
fn row30_edit_ambiguity_caps_and_atomicity() {
    let fx = Fixture::new();
    fx.put("f.txt", "x = 1\nx = 1\n");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "f.txt", "old_string": "", "new_string": "y"}),
        ),
        "old_string is empty",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "f.txt", "old_string": "x = 1", "new_string": "y"}),
        ),
        "occurs 2 times",
    );
    assert_eq!(fx.get("f.txt"), "x = 1\nx = 1\n");
    fx.put("many.txt", "a".repeat(1_000_000));
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "many.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
        ),
        "more than 10000 times",
    );
    assert_eq!(fx.get("many.txt"), "a".repeat(1_000_000));
    // A successful edit replaces the file by rename (new inode) and keeps its mode.
    let path = fx.ws.join("f.txt");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
    let ino = fs::metadata(&path).unwrap().ino();
    let r = fx.call(
        "edit_file",
        json!({"path": "f.txt", "old_string": "x = 1", "new_string": "y = 2", "replace_all": true}),
    );
    assert!(r.is_ok(), "{r:?}");
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o751);
    assert_ne!(
        meta.ino(),
        ino,
        "edit did not go through temp file + rename"
    );
    assert_eq!(fx.get("f.txt"), "y = 2\ny = 2\n");
    fx.assert_outside_untouched();
}

#[test]
fn row31_catastrophic_and_huge_regexes() {
    let fx = Fixture::new();
    fx.put("a.txt", "a".repeat(100_000) + "b\n");
    let t = std::time::Instant::now();
    let r = out(&fx.call("grep_search", json!({"pattern": "(a+)+$"})));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    assert!(r.starts_with("no matches"), "{}", &r[..r.len().min(200)]);
    let huge = "a".repeat(10 * 1024 * 1024);
    assert_refused(
        &fx.call("grep_search", json!({"pattern": huge})),
        "longer than the limit",
    );
    // Short but enormous once compiled: refused by the size limit.
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "\\w{500}{500}"})),
        "invalid regex",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row32_bulk_trees_and_symlink_loops() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(".", fx.ws.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", fx.ws.join("up")).unwrap();
    for i in 0..3000 {
        fx.put(
            &format!("node_modules/pkg{}/index.js", i % 50),
            format!("needle {i}\n"),
        );
        fx.put(&format!("node_modules/pkg{}/f{i}.js", i % 50), "needle\n");
    }
    fx.put(".git/objects/x.js", "needle\n");
    fx.put("src/app.js", "needle\n");
    // Without a .gitignore the caps apply and say so.
    let f = out(&fx.call("find_files", json!({"pattern": "*.js"})));
    assert!(
        f.contains("[results capped at 200"),
        "{}",
        &f[f.len().saturating_sub(200)..]
    );
    let g = out(&fx.call("grep_search", json!({"pattern": "needle"})));
    assert!(g.contains("[matches capped at 200"));
    assert!(!f.contains(".git/") && !g.contains(".git/"));
    assert!(!f.contains("loop/") && !g.contains("loop/") && !f.contains("up/"));
    // With node_modules ignored only the real source is found.
    fx.put(".gitignore", "node_modules/\n");
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.js"}))),
        "src/app.js"
    );
    assert_eq!(
        out(&fx.call("grep_search", json!({"pattern": "needle"}))),
        "src/app.js:1: needle"
    );
    fx.assert_outside_untouched();
}

#[test]
fn row33_find_takes_no_passthrough_arguments() {
    let fx = Fixture::new();
    fx.put("keep/a.txt", "a");
    let fprint = format!("-fprint {}/x", fx.outside.display());
    for pattern in [
        "-exec rm {} \\;",
        "-delete",
        &fprint,
        "-ok rm {} ;",
        "-execdir rm {} +",
    ] {
        let r = fx.call("find_files", json!({"pattern": pattern}));
        // Taken as a glob that matches nothing (or refused as a bad glob), never run.
        if let reagent_tools::ToolResult::Ok { output, .. } = &r {
            assert!(
                output
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("no files match"),
                "{output}"
            );
        }
    }
    let r = fx.call(
        "find_files",
        json!({"pattern": "*.txt", "exec": "rm -rf .", "args": ["-delete"]}),
    );
    assert_eq!(out(&r), "keep/a.txt");
    assert_eq!(fx.get("keep/a.txt"), "a");
    fx.assert_outside_untouched();
}
