//! Rows 1–9: `..`, absolute paths, encodings, expansions and `/proc`.

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
    // RESOLVE_NO_MAGICLINKS on its own: a workspace whose tree holds /proc magic links.
    let proc_ws = reagent_tools::Workspace::open(std::path::Path::new("/proc/self")).unwrap();
    for p in ["root/etc/hostname", "cwd/x", "fd/0", "exe", "root"] {
        let e = proc_ws.open_file(p).unwrap_err().to_string();
        assert!(e.contains("magic link"), "{p}: {e}");
    }
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
