//! Rows 17–23: lookalike, protected, empty, redundant, overlong, NUL and odd names.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;

use serde_json::json;

use crate::suite::common::{assert_refused, out, Fixture};

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
