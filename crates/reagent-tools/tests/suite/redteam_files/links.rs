//! Rows 10–13, 15 and 16: symlinks, hard links and mount points.

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::json;

use crate::suite::common::{assert_refused, err, out, Fixture};

#[test]
fn row10_symlink_to_outside_file() {
    let fx = Fixture::new();
    symlink(&fx.sentinel, fx.ws.join("p")).unwrap();
    symlink("/etc/passwd", fx.ws.join("pw")).unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": "p"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "pw"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "p", "old_string": "S", "new_string": "T"}),
        ),
        "escapes the workspace",
    );
    let listing = out(&fx.call("list_directory", json!({})));
    assert!(
        listing.contains(&format!("p -> {}", fx.sentinel.display())),
        "{listing}"
    );
    // grep and find do not follow it.
    let g = out(&fx.call("grep_search", json!({"pattern": "SENTINEL"})));
    assert!(g.starts_with("no matches"), "{g}");
    let f = out(&fx.call("find_files", json!({"pattern": "p*"})));
    assert!(f.starts_with("no files match"), "{f}");
    fx.assert_outside_untouched();
}

#[test]
fn row11_symlinked_directory_out() {
    let fx = Fixture::new();
    symlink("/", fx.ws.join("d")).unwrap();
    symlink("../outside", fx.ws.join("o")).unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": "d/etc/shadow"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "o/sentinel"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("list_directory", json!({"path": "o"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "o/new", "content": "x"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "o/sub/new", "content": "x"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "S", "path": "o"})),
        "escapes the workspace",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row12_symlink_inside_is_allowed() {
    let fx = Fixture::new();
    fx.put("b/c", "inside\n");
    symlink("b/c", fx.ws.join("a")).unwrap();
    symlink("b", fx.ws.join("dl")).unwrap();
    assert_eq!(out(&fx.call("read_file", json!({"path": "a"}))), "inside\n");
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "dl/c"}))),
        "inside\n"
    );
    let w = fx.call(
        "write_file",
        json!({"path": "dl/new.txt", "content": "via link"}),
    );
    assert!(w.is_ok(), "{w:?}");
    assert_eq!(fx.get("b/new.txt"), "via link");
    assert!(out(&fx.call("list_directory", json!({}))).contains("a -> b/c"));
    fx.assert_outside_untouched();
}

#[test]
fn row13_write_to_dangling_symlink_out() {
    let fx = Fixture::new();
    let target = fx.outside.join("pwn");
    symlink(&target, fx.ws.join("new")).unwrap();
    symlink("../outside/pwn2", fx.ws.join("new2")).unwrap();
    assert_refused(
        &fx.call("write_file", json!({"path": "new", "content": "owned"})),
        "symbolic link",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "new2", "content": "owned"})),
        "symbolic link",
    );
    assert!(!err(&fx.call(
        "edit_file",
        json!({"path": "new", "old_string": "a", "new_string": "b"})
    ))
    .is_empty());
    assert!(!target.exists());
    assert!(!fx.outside.join("pwn2").exists());
    // The links themselves are left as they were.
    assert!(fs::symlink_metadata(fx.ws.join("new"))
        .unwrap()
        .file_type()
        .is_symlink());
    fx.assert_outside_untouched();
}

#[test]
fn row15_hard_link_to_outside_file() {
    let fx = Fixture::new();
    let outside_file = fx.outside.join("hl");
    fs::write(&outside_file, "outside data\n").unwrap();
    fs::hard_link(&outside_file, fx.ws.join("x")).unwrap();
    assert_refused(
        &fx.call("write_file", json!({"path": "x", "content": "pwned"})),
        "hard links",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "x", "old_string": "outside", "new_string": "pwned"}),
        ),
        "hard links",
    );
    assert_eq!(fs::read_to_string(&outside_file).unwrap(), "outside data\n");
    // Reading is allowed (the path is inside) but reported.
    let r = out(&fx.call("read_file", json!({"path": "x"})));
    assert!(
        r.starts_with("outside data\n") && r.contains("2 hard links"),
        "{r}"
    );
    fs::remove_file(&outside_file).unwrap();
    fx.assert_outside_untouched();
}

#[test]
fn row16_bind_mount_under_workspace_is_not_crossed() {
    let fx = Fixture::new();
    let mnt = fx.ws.join("mnt");
    fs::create_dir(&mnt).unwrap();
    if let Err(e) = rustix::mount::mount_bind(&fx.outside, &mnt) {
        panic!(
            "row 16 needs CAP_SYS_ADMIN to bind-mount a directory into the workspace, \
             and mount(2) failed with {e}; run the tests as root"
        );
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = rustix::mount::unmount(&self.0, rustix::mount::UnmountFlags::DETACH);
        }
    }
    let _guard = Unmount(mnt.clone());
    assert_refused(
        &fx.call("read_file", json!({"path": "mnt/sentinel"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("list_directory", json!({"path": "mnt"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "mnt/new", "content": "x"})),
        "escapes the workspace",
    );
    let g = out(&fx.call("grep_search", json!({"pattern": "SENTINEL"})));
    assert!(g.starts_with("no matches"), "{g}");
    let f = out(&fx.call("find_files", json!({"pattern": "sentinel"})));
    assert!(f.starts_with("no files match"), "{f}");
    drop(_guard);
    fx.assert_outside_untouched();
}
