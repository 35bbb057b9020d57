//! Rows 1–13 and 15–23: path confinement.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use serde_json::json;

use crate::suite::common::{assert_refused, err, out, Fixture};

#[test]
fn row01_dotdot_escapes() {
    let fx = Fixture::new();
    assert_refused(
        &fx.call("read_file", json!({"path": "../../etc/passwd"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "../outside/sentinel"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": "../outside/pwn", "content": "x"}),
        ),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("list_directory", json!({"path": ".."})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call(
            "grep_search",
            json!({"pattern": "SENTINEL", "path": "../outside"}),
        ),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("find_files", json!({"pattern": "*", "path": ".."})),
        "escapes the workspace",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row02_absolute_paths() {
    let fx = Fixture::new();
    assert_refused(
        &fx.call("read_file", json!({"path": "/etc/passwd"})),
        "absolute path outside",
    );
    let sentinel = fx.sentinel.to_str().unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": sentinel})),
        "absolute path outside",
    );
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": fx.outside.join("new").to_str().unwrap(), "content": "x"}),
        ),
        "absolute path outside",
    );
    // The one exception: an absolute path lexically inside the workspace.
    fx.put("a.txt", "inside\n");
    let inside = fx.ws.join("a.txt");
    assert_eq!(
        out(&fx.call("read_file", json!({"path": inside.to_str().unwrap()}))),
        "inside\n"
    );
    // ...but it is still resolved beneath the workspace fd, so climbing out of it fails.
    let climb = format!("{}/../outside/sentinel", fx.ws.display());
    assert_refused(
        &fx.call("read_file", json!({"path": climb})),
        "escapes the workspace",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row03_climb_after_valid_prefix() {
    let fx = Fixture::new();
    fx.put("src/main.rs", "fn main() {}\n");
    assert_refused(
        &fx.call("read_file", json!({"path": "src/../../outside/sentinel"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": "src/../../outside/x", "content": "x"}),
        ),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "src/../../outside/sentinel", "old_string": "S", "new_string": "T"}),
        ),
        "escapes the workspace",
    );
    // Climbing that stays inside is fine.
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "src/../src/main.rs"}))),
        "fn main() {}\n"
    );
    fx.assert_outside_untouched();
}

/// Each name is taken literally: a missing one is "not found", an existing one is read.
fn literal_name_check(fx: &Fixture, names: &[&str]) {
    for name in names {
        assert_refused(&fx.call("read_file", json!({"path": name})), "no such file");
        fx.put(name, format!("literal {name}"));
        assert_eq!(
            out(&fx.call("read_file", json!({"path": name}))),
            format!("literal {name}")
        );
    }
    fx.assert_outside_untouched();
}

#[test]
fn row04_url_encoded_is_literal() {
    let fx = Fixture::new();
    literal_name_check(
        &fx,
        &[
            "..%2f..%2foutside%2fsentinel",
            "%2e%2e",
            "%2e%2e%2f%2e%2e%2f",
        ],
    );
}

#[test]
fn row05_double_encoded_is_literal() {
    let fx = Fixture::new();
    literal_name_check(
        &fx,
        &["%252e%252e%252f", "%252e%252e%252foutside%252fsentinel"],
    );
}

#[test]
fn row06_backslashes_are_literal() {
    let fx = Fixture::new();
    literal_name_check(&fx, &["..\\..\\outside\\sentinel", "..\\..\\etc\\passwd"]);
}

#[test]
fn row07_no_tilde_or_variable_expansion() {
    let fx = Fixture::new();
    for p in ["~/.ssh/id_rsa", "$HOME/.aws/credentials", "${HOME}"] {
        assert_refused(&fx.call("read_file", json!({"path": p})), "no such file");
    }
    fx.put("~/.ssh/id_rsa", "fake key in the workspace");
    fx.put("$HOME/.aws/credentials", "fake creds");
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "~/.ssh/id_rsa"}))),
        "fake key in the workspace"
    );
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "$HOME/.aws/credentials"}))),
        "fake creds"
    );
    fx.assert_outside_untouched();
}

#[test]
fn row08_proc_magic_paths() {
    let fx = Fixture::new();
    for p in [
        "/proc/self/root/etc/shadow",
        "/proc/self/cwd/../..",
        "/proc/self/root",
    ] {
        assert_refused(
            &fx.call("read_file", json!({"path": p})),
            "absolute path outside",
        );
    }
    // Reached through symlinks inside the workspace, absolute or relative.
    symlink("/proc/self/root", fx.ws.join("rootlink")).unwrap();
    symlink("../../../../../../../../proc/self/root", fx.ws.join("rel")).unwrap();
    symlink("/proc/self/cwd", fx.ws.join("cwdlink")).unwrap();
    for p in [
        "rootlink/etc/hostname",
        "rel/etc/hostname",
        "cwdlink",
        "rootlink",
    ] {
        let e = err(&fx.call("read_file", json!({"path": p})));
        assert!(
            e.contains("escapes the workspace") || e.contains("magic link"),
            "{p}: {e}"
        );
    }
    assert_refused(
        &fx.call("list_directory", json!({"path": "rootlink"})),
        "escapes the workspace",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row09_proc_and_dev_fd_files() {
    let fx = Fixture::new();
    let mem = format!("/proc/{}/mem", std::process::id());
    for p in [
        "/proc/self/environ",
        "/proc/1/environ",
        "/dev/fd/3",
        mem.as_str(),
    ] {
        let e = err(&fx.call("read_file", json!({"path": p})));
        assert!(e.contains("absolute path outside"), "{p}: {e}");
        assert!(!e.contains("PATH="), "environment leaked: {e}");
    }
    symlink("/proc/self/environ", fx.ws.join("env")).unwrap();
    symlink("/dev/fd/0", fx.ws.join("fd0")).unwrap();
    assert_refused(
        &fx.call("read_file", json!({"path": "env"})),
        "escapes the workspace",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "fd0"})),
        "escapes the workspace",
    );
    fx.assert_outside_untouched();
}

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

#[test]
fn row17_lookalike_and_hidden_names() {
    let fx = Fixture::new();
    fs::create_dir(fx.ws.join(".git")).unwrap();
    for p in [
        ".GIT/config",
        "\u{FF0E}env",
        ".g\u{0456}t/config",
        ".Env",
        "REAGENT.TOML",
    ] {
        assert_refused(
            &fx.call("write_file", json!({"path": p, "content": "x"})),
            "protected",
        );
    }
    for p in [
        ".e\u{200D}nv",
        "a\u{202E}txt.sh",
        "zero\u{200B}width",
        "bell\u{7}",
    ] {
        assert_refused(
            &fx.call("write_file", json!({"path": p, "content": "x"})),
            "invisible",
        );
    }
    let mut left: Vec<_> = fs::read_dir(&fx.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from(".git")],
        "a refused write created something"
    );
    assert_eq!(fs::read_dir(fx.ws.join(".git")).unwrap().count(), 0);
    // Odd names that already exist are shown escaped.
    fx.put("evil\u{202E}gpj.exe", "x");
    let listing = out(&fx.call("list_directory", json!({})));
    assert!(listing.contains("evil\\u{202E}gpj.exe"), "{listing}");
    assert!(!listing.contains('\u{202E}'));
    fx.assert_outside_untouched();
}

#[test]
fn row18_protected_files_stay_read_only() {
    let fx = Fixture::new();
    fx.put(".git/config", "[core]\n");
    fx.put(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    fx.put(".env", "API_KEY=1\n");
    fx.put("reagent.toml", "model = \"x\"\n");
    fx.put(".reagent/state", "s\n");
    fx.put("sub/.env", "B=2\n");
    symlink(".git", fx.ws.join("g")).unwrap();
    let writes = [
        ".git/hooks/pre-commit",
        ".git/config",
        ".env",
        "reagent.toml",
        ".reagent/state",
        "sub/.env",
        "sub/../.git/config",
        "g/config",
        "g/hooks/post-checkout",
    ];
    for p in writes {
        assert_refused(
            &fx.call(
                "write_file",
                json!({"path": p, "content": "#!/bin/sh\nevil\n"}),
            ),
            "protected",
        );
    }
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": ".git/config", "old_string": "[core]", "new_string": "[x]"}),
        ),
        "protected",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "g/config", "old_string": "[core]", "new_string": "[x]"}),
        ),
        "protected",
    );
    assert_eq!(fx.get(".git/config"), "[core]\n");
    assert_eq!(fx.get(".env"), "API_KEY=1\n");
    assert!(!fx.ws.join(".git/hooks/pre-commit").exists());
    assert!(!fx.ws.join(".git/hooks/post-checkout").exists());
    // Reading them is allowed.
    assert_eq!(
        out(&fx.call("read_file", json!({"path": "reagent.toml"}))),
        "model = \"x\"\n"
    );
    fx.assert_outside_untouched();
}

#[test]
fn row19_empty_dot_and_directory_paths() {
    let fx = Fixture::new();
    fs::create_dir(fx.ws.join("src")).unwrap();
    assert_refused(
        &fx.call("write_file", json!({"path": "", "content": "x"})),
        "empty path",
    );
    assert_refused(&fx.call("read_file", json!({"path": ""})), "empty path");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "", "old_string": "a", "new_string": "b"}),
        ),
        "empty path",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": ".", "content": "x"})),
        "is a directory",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "src", "content": "x"})),
        "is a directory",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": "src/..", "content": "x"})),
        "is a directory",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "src"})),
        "is a directory",
    );
    assert_refused(
        &fx.call("read_file", json!({"path": "."})),
        "is a directory",
    );
    assert!(fx.ws.join("src").is_dir());
    fx.assert_outside_untouched();
}

#[test]
fn row20_redundant_separators() {
    let fx = Fixture::new();
    assert!(fx
        .call(
            "write_file",
            json!({"path": "a//b.txt", "content": "same\n"})
        )
        .is_ok());
    assert_eq!(fx.get("a/b.txt"), "same\n");
    for p in [
        "a/b.txt",
        "./././a/b.txt",
        "a//b.txt",
        "a/b.txt/",
        "./a/./b.txt",
    ] {
        assert_eq!(
            out(&fx.call("read_file", json!({"path": p}))),
            "same\n",
            "{p}"
        );
    }
    let clean = out(&fx.call("list_directory", json!({"path": "a"})));
    assert_eq!(
        out(&fx.call("list_directory", json!({"path": "./a/"}))),
        clean
    );
    assert_eq!(
        out(&fx.call("list_directory", json!({"path": "a//"}))),
        clean
    );
    fx.assert_outside_untouched();
}

#[test]
fn row21_overlong_paths_and_deep_trees() {
    let fx = Fixture::new();
    let long_path = "a/".repeat(2500);
    assert_refused(
        &fx.call("read_file", json!({"path": long_path})),
        "too long",
    );
    let long_name = "n".repeat(300);
    assert_refused(
        &fx.call("read_file", json!({"path": long_name.clone()})),
        "too long",
    );
    assert_refused(
        &fx.call("write_file", json!({"path": long_name, "content": "x"})),
        "too long",
    );
    let deep = "a/".repeat(100_000);
    assert_refused(
        &fx.call(
            "write_file",
            json!({"path": format!("{deep}f"), "content": "x"}),
        ),
        "too long",
    );
    // A real 60-level tree: list and find stop at their depth limits and return in time.
    let rel = "d/".repeat(60);
    fx.put(&format!("{rel}deep.txt"), "deep");
    let listing = out(&fx.call("list_directory", json!({"recursive": true})));
    assert!(listing.contains("not listed"), "{listing}");
    assert!(!listing.contains("deep.txt"));
    let f = out(&fx.call("find_files", json!({"pattern": "deep.txt"})));
    assert!(f.starts_with("no files match"), "{f}");
    // Creating deep missing folders one write at a time is bounded too.
    let many = format!("{}f", "x/".repeat(100));
    assert_refused(
        &fx.call("write_file", json!({"path": many, "content": "x"})),
        "too long",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row22_nul_byte_in_path() {
    let fx = Fixture::new();
    let p = "a\u{0}/../../etc/passwd";
    assert_refused(&fx.call("read_file", json!({"path": p})), "NUL");
    assert_refused(
        &fx.call("write_file", json!({"path": p, "content": "x"})),
        "NUL",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": p, "old_string": "a", "new_string": "b"}),
        ),
        "NUL",
    );
    assert_refused(&fx.call("list_directory", json!({"path": p})), "NUL");
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "x", "path": p})),
        "NUL",
    );
    assert_refused(
        &fx.call("find_files", json!({"pattern": "*", "path": p})),
        "NUL",
    );
    fx.assert_outside_untouched();
}

#[test]
fn row23_odd_file_names_are_escaped() {
    let fx = Fixture::new();
    let names: [&[u8]; 3] = [b"bad\xFFname.txt", b"new\nline.txt", b"ansi\x1b[31mred.txt"];
    for n in names {
        fs::write(fx.ws.join(std::ffi::OsStr::from_bytes(n)), "needle\n").unwrap();
    }
    let listing = out(&fx.call("list_directory", json!({})));
    let found = out(&fx.call("find_files", json!({"pattern": "*.txt"})));
    let grep = out(&fx.call("grep_search", json!({"pattern": "needle"})));
    for text in [&listing, &found, &grep] {
        assert!(text.contains("bad\\xFFname.txt"), "{text}");
        assert!(text.contains("new\\nline.txt"), "{text}");
        assert!(text.contains("ansi\\u{001B}[31mred.txt"), "{text}");
        assert!(!text.contains('\u{1b}'));
        assert!(!text.contains('\u{FFFD}'));
    }
    assert_eq!(listing.lines().count(), 3);
    fx.assert_outside_untouched();
}
