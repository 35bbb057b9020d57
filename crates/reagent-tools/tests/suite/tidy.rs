//! Tidy checks on this crate's own files: every Rust file opens with `//!` module docs and
//! stays under 600 lines.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_file_has_module_docs_and_stays_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if !text.trim_start().starts_with("//!") {
            problems.push(format!("{}: no //! module docs", f.display()));
        }
        let lines = text.lines().count();
        if lines > 600 {
            problems.push(format!("{}: {lines} lines (over 600)", f.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
