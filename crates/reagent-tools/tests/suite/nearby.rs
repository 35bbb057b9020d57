//! A wrong path's error names the nearest existing paths; the workspace file list is bounded
//! and respects `.gitignore`.

use std::sync::Arc;

use reagent_tools::{workspace_files, Workspace};
use serde_json::json;

use super::common::{err, Fixture};

fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.put("notes.txt", "orchid\n");
    fx.put("big.log", "INFO start\nERROR code=E42\n");
    fx.put("src/config.toml", "port = 8080\n");
    fx.put("docs/guide.md", "# Guide\n");
    fx
}

#[test]
fn read_file_names_the_same_file_name_elsewhere_first() {
    let fx = fixture();
    let e = err(&fx.call("read_file", json!({"path": "config.toml"})));
    assert!(
        e.starts_with("no such file or directory: config.toml"),
        "{e}"
    );
    let named = e.split("nearest existing paths are: ").nth(1).unwrap();
    assert_eq!(named.split(", ").next(), Some("src/config.toml"), "{e}");
}

#[test]
fn a_misspelt_name_suggests_the_closest_spelling() {
    let fx = fixture();
    let e = err(&fx.call("read_file", json!({"path": "note.txt"})));
    let named = e.split("nearest existing paths are: ").nth(1).unwrap();
    assert_eq!(named.split(", ").next(), Some("notes.txt"), "{e}");
    assert_eq!(named.split(", ").count(), 3, "three suggestions: {e}");
}

#[test]
fn the_copied_example_path_gets_real_paths_back() {
    // SmolLM2-135M copied the constrained prompt's `"..."` example path three times.
    let fx = fixture();
    let e = err(&fx.call("read_file", json!({"path": "..."})));
    assert!(e.contains("no such file or directory: ..."), "{e}");
    assert!(e.contains("big.log"), "{e}");
}

#[test]
fn edit_and_list_name_nearest_paths_too() {
    let fx = fixture();
    let e = err(&fx.call(
        "edit_file",
        json!({"path": "src/confg.toml", "old_string": "8080", "new_string": "9090"}),
    ));
    assert!(
        e.contains("nearest existing paths are: src/config.toml"),
        "{e}"
    );
    let e = err(&fx.call("list_directory", json!({"path": "doc"})));
    assert!(e.contains("no such file or directory: doc;"), "{e}");
    assert!(e.contains("docs/guide.md"), "{e}");
}

#[test]
fn other_errors_and_an_empty_workspace_say_so_plainly() {
    let fx = Fixture::new();
    let e = err(&fx.call("read_file", json!({"path": "missing.txt"})));
    assert_eq!(
        e,
        "no such file or directory: missing.txt; the workspace has no files"
    );
    fx.put("dir/a.txt", "a");
    let e = err(&fx.call("read_file", json!({"path": "dir"})));
    assert!(!e.contains("nearest"), "not a missing path: {e}");
}

#[test]
fn ignored_files_are_not_suggested() {
    let fx = fixture();
    fx.put(".gitignore", "secret.txt\n");
    fx.put("secret.txt", "x");
    let e = err(&fx.call("read_file", json!({"path": "secret.tx"})));
    assert!(!e.contains("secret.txt"), "{e}");
}

#[test]
fn workspace_files_lists_in_name_order_up_to_the_cap() {
    let fx = fixture();
    fx.put(".gitignore", "*.log\n");
    let ws = Arc::new(Workspace::open(&fx.ws).unwrap());
    let all = workspace_files(&ws, 50);
    assert_eq!(
        all.paths,
        vec![
            ".gitignore",
            "docs/guide.md",
            "notes.txt",
            "src/config.toml"
        ]
    );
    assert!(!all.more);
    let two = workspace_files(&ws, 2);
    assert_eq!(two.paths.len(), 2);
    assert!(two.more);
}
