//! `list_directory`, `find_files` and `grep_search`: listings, depth limits, `.gitignore`,
//! caps and errors.

use std::time::Duration;

use reagent_tools::{FileLimits, ToolsConfig};
use serde_json::json;

use crate::suite::common::{assert_refused, out, Fixture};

fn tree(fx: &Fixture) {
    fx.put("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    fx.put("src/util/mod.rs", "pub fn helper() {}\n");
    fx.put("README.md", "# Demo\nhelper docs\n");
    fx.put("target/debug/out.rs", "fn main() {}\n");
    fx.put(".gitignore", "target/\n*.log\n");
    fx.put("run.log", "fn main in a log\n");
}

#[test]
fn list_flat_and_recursive() {
    let fx = Fixture::new();
    tree(&fx);
    std::os::unix::fs::symlink("src/main.rs", fx.ws.join("link")).unwrap();
    assert_eq!(
        out(&fx.call("list_directory", json!({}))),
        ".gitignore (14 bytes)\nREADME.md (19 bytes)\nlink -> src/main.rs\nrun.log (17 bytes)\nsrc/\ntarget/"
    );
    assert_eq!(
        out(&fx.call("list_directory", json!({"path": "src", "recursive": true}))),
        "main.rs (34 bytes)\nutil/\nutil/mod.rs (19 bytes)"
    );
    let all = out(&fx.call("list_directory", json!({"recursive": "true"})));
    assert!(all.contains("src/util/mod.rs (19 bytes)"), "{all}");
    assert!(all.contains("target/ [not expanded]"), "{all}");
    assert!(!all.contains("out.rs"));
}

#[test]
fn list_depth_and_entry_limits() {
    let config = ToolsConfig {
        limits: FileLimits {
            list_max_depth: 2,
            list_max_entries: 3,
            ..FileLimits::default()
        },
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    fx.put("a/b/c/d.txt", "x");
    let r = out(&fx.call("list_directory", json!({"recursive": true})));
    assert_eq!(
        r,
        "a/\na/b/\n[folders deeper than 2 levels not listed; list them by path]"
    );
    for i in 0..5 {
        fx.put(&format!("many/f{i}"), "");
    }
    let r = out(&fx.call("list_directory", json!({"path": "many"})));
    assert_eq!(
        r,
        "f0 (0 bytes)\nf1 (0 bytes)\nf2 (0 bytes)\n[listing cut at 3 entries]"
    );
}

#[test]
fn list_errors() {
    let fx = Fixture::new();
    fx.put("f.txt", "x");
    std::fs::create_dir(fx.ws.join("empty")).unwrap();
    assert_eq!(
        out(&fx.call("list_directory", json!({"path": "empty"}))),
        "(empty directory)"
    );
    assert_refused(
        &fx.call("list_directory", json!({"path": "f.txt"})),
        "not a directory: f.txt",
    );
    assert_refused(
        &fx.call("list_directory", json!({"path": "nope"})),
        "no such file or directory",
    );
}

#[test]
fn find_respects_gitignore_and_glob_forms() {
    let fx = Fixture::new();
    tree(&fx);
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.rs"}))),
        "src/main.rs\nsrc/util/mod.rs"
    );
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "src/*.rs"}))),
        "src/main.rs"
    );
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "**/mod.rs"}))),
        "src/util/mod.rs"
    );
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.{md,log}"}))),
        "README.md"
    );
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.rs", "path": "src/util"}))),
        "src/util/mod.rs"
    );
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.py"}))),
        "no files match *.py"
    );
    assert_refused(
        &fx.call("find_files", json!({"pattern": "["})),
        "invalid glob",
    );
    assert_refused(
        &fx.call("find_files", json!({"pattern": " "})),
        "pattern is empty",
    );
    assert_refused(
        &fx.call("find_files", json!({"pattern": "*", "path": "README.md"})),
        "not a directory",
    );
}

#[test]
fn gitignore_of_parent_folders_applies_and_explicit_paths_win() {
    let fx = Fixture::new();
    tree(&fx);
    fx.put("src/debug.log", "fn main in a log\n");
    fx.put("src/util/.gitignore", "/generated.rs\n");
    fx.put("src/util/generated.rs", "fn main() {}\n");
    fx.put("src/util/deeper/generated.rs", "fn main() {}\n");
    // Root rule `*.log` and the anchored rule of src/util apply when searching inside src.
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*", "path": "src"}))),
        "src/main.rs\nsrc/util/.gitignore\nsrc/util/deeper/generated.rs\nsrc/util/mod.rs"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "fn main", "path": "src/util"})
        )),
        "src/util/deeper/generated.rs:1: fn main() {}"
    );
    // An ignored folder named explicitly is searched.
    assert_eq!(
        out(&fx.call("find_files", json!({"pattern": "*.rs", "path": "target"}))),
        "target/debug/out.rs"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "fn main", "path": "target/debug"})
        )),
        "target/debug/out.rs:1: fn main() {}"
    );
}

#[test]
fn grep_respects_gitignore_include_and_path() {
    let fx = Fixture::new();
    tree(&fx);
    assert_eq!(
        out(&fx.call("grep_search", json!({"pattern": "fn main"}))),
        "src/main.rs:1: fn main() {"
    );
    assert_eq!(
        out(&fx.call("grep_search", json!({"pattern": "helper"}))),
        "README.md:2: helper docs\nsrc/util/mod.rs:1: pub fn helper() {}"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "helper", "include": "*.rs"})
        )),
        "src/util/mod.rs:1: pub fn helper() {}"
    );
    // Smart case: an uppercase letter makes the search exact, a lowercase pattern matches any
    // case.
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "HELPER", "path": "README.md"})
        )),
        "no matches for HELPER"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "demo", "path": "README.md"})
        )),
        "README.md:1: # Demo"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "Demo", "path": "README.md"})
        )),
        "README.md:1: # Demo"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "(?i)HELPER", "path": "README.md"})
        )),
        "README.md:2: helper docs"
    );
    // Whole words only: `help` is no word of the files, `helper` is.
    assert_eq!(
        out(&fx.call("grep_search", json!({"pattern": "help", "word": true}))),
        "no matches for help"
    );
    assert_eq!(
        out(&fx.call(
            "grep_search",
            json!({"pattern": "helper", "word": true, "include": "*.md"})
        )),
        "README.md:2: helper docs"
    );
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "x", "word": "yes"})),
        "word",
    );
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "("})),
        "invalid regex",
    );
    assert_refused(
        &fx.call("grep_search", json!({"pattern": "x", "include": "["})),
        "invalid include glob",
    );
}

#[test]
fn grep_caps_matches_and_long_lines() {
    let config = ToolsConfig {
        limits: FileLimits {
            search_max_results: 5,
            grep_max_line_bytes: 12,
            ..FileLimits::default()
        },
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    fx.put("a.txt", "hit\n".repeat(20));
    fx.put("long.txt", format!("hit {}\n", "y".repeat(100)));
    let r = out(&fx.call("grep_search", json!({"pattern": "hit", "path": "a.txt"})));
    assert_eq!(r.lines().count(), 20, "a single file is searched whole");
    let r = out(&fx.call("grep_search", json!({"pattern": "hit"})));
    assert_eq!(r.lines().count(), 6, "{r}");
    assert!(
        r.ends_with("[matches capped at 5; narrow the pattern, path or include]"),
        "{r}"
    );
    let r = out(&fx.call("grep_search", json!({"pattern": "hit y"})));
    assert_eq!(r, "long.txt:1: hit yyyyyyyy [...]");
}

#[test]
fn search_deadline_is_reported() {
    let config = ToolsConfig {
        limits: FileLimits {
            search_timeout: Duration::ZERO,
            ..FileLimits::default()
        },
        ..ToolsConfig::default()
    };
    let fx = Fixture::with_config(&config);
    fx.put("a.txt", "x\n");
    let r = out(&fx.call("find_files", json!({"pattern": "*.txt"})));
    assert!(
        r.contains("[search stopped after 0 s; results are incomplete]"),
        "{r}"
    );
}
