//! A small workspace shown whole in the plain question a weak model is asked at the end of a
//! constrained run: which files each folder holds (with their number), then the files
//! themselves, each under the same one-line label a `read_file` result gets.
//!
//! Measured with SmolLM2-135M (BENCHMARKS.md): it cannot choose between tools from a task's
//! meaning (asked to pick one, it picks by position), so it reads some file and the answer
//! rests on that one file; shown the workspace's listing and its few small files in plain text,
//! it answers listing, counting and "which file" questions from them. The files are shown
//! only when the run's own results found nothing to answer from (`plain_question::restated_material`).

use std::collections::BTreeMap;

use reagent_tools::{workspace_files, ToolContext, ToolRegistry};
use serde_json::json;

use crate::prompts::plain_tool_result;

/// Most files a workspace may hold to be shown whole.
const SHOWN_FILES_MAX: usize = 12;

/// Most bytes of one file's text shown.
const SHOWN_FILE_MAX_BYTES: usize = 1_500;

/// What of the workspace the plain question shows.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct WorkspaceView {
    /// One line per folder that holds files: "The folder photos holds 4 files: a.jpg, …".
    pub overview: String,
    /// Each small text file, as a labelled plain result.
    pub files: Vec<ShownFile>,
}

/// One file of a [`WorkspaceView`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ShownFile {
    /// Its workspace-relative path.
    pub path: String,
    /// Its text under the label a `read_file` result gets ("The file a.txt has 2 lines:\n…").
    pub text: String,
}

/// The view of a workspace of at most [`SHOWN_FILES_MAX`] files (empty for a larger one, or an
/// empty one). Files are read through the registry's own `read_file`, so confinement, binary
/// detection and limits are the tool's; a file that fails to read or is large is left out.
pub(crate) fn workspace_view(tools: &ToolRegistry, ctx: &ToolContext) -> WorkspaceView {
    let listed = workspace_files(&ctx.workspace, SHOWN_FILES_MAX);
    if listed.more || listed.paths.is_empty() {
        return WorkspaceView::default();
    }
    let overview = overview(&listed.paths);
    if tools.get("read_file").is_none() {
        return WorkspaceView {
            overview,
            files: Vec::new(),
        };
    }
    let files = listed
        .paths
        .iter()
        .filter_map(|path| {
            let args = json!({ "path": path });
            let result = tools.call("read_file", &args, ctx);
            let text = plain_tool_result("read_file", &args, &result);
            (result.is_ok() && text.len() <= SHOWN_FILE_MAX_BYTES).then(|| ShownFile {
                path: path.clone(),
                text,
            })
        })
        .collect();
    WorkspaceView { overview, files }
}

/// One line per folder holding files, the workspace itself first: "The workspace holds 2
/// files: a.txt, b.txt." / "The folder src holds 1 file: main.c."
fn overview(paths: &[String]) -> String {
    let mut folders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for path in paths {
        let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
        folders.entry(folder).or_default().push(name);
    }
    let lines: Vec<String> = folders
        .iter()
        .map(|(folder, names)| {
            let place = if folder.is_empty() {
                "The workspace".to_owned()
            } else {
                format!("The folder {folder}")
            };
            let plural = if names.len() == 1 { "" } else { "s" };
            format!(
                "{place} holds {} file{plural}: {}.",
                names.len(),
                names.join(", ")
            )
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use reagent_tools::{ToolsConfig, Workspace};

    use super::*;

    fn view_of(files: &[(&str, &str)]) -> WorkspaceView {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let ws = Arc::new(Workspace::open(dir.path()).unwrap());
        let tools = ToolRegistry::workspace_tools(&ToolsConfig::default());
        workspace_view(&tools, &ToolContext::new(ws))
    }

    #[test]
    fn a_small_workspace_is_listed_per_folder_and_shown_file_by_file() {
        let view = view_of(&[
            ("b.txt", "one\ntwo\n"),
            ("a.txt", "x"),
            ("photos/one.jpg", "1"),
            ("photos/two.jpg", "2"),
            ("big.log", &"line\n".repeat(400)),
        ]);
        assert_eq!(
            view.overview,
            "The workspace holds 3 files: a.txt, b.txt, big.log.\n\
             The folder photos holds 2 files: one.jpg, two.jpg."
        );
        let texts: Vec<&str> = view.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(view.files[3].path, "photos/two.jpg");
        assert_eq!(
            texts,
            [
                "The file a.txt has 1 line:\nx",
                "The file b.txt has 2 lines:\none\ntwo",
                "The file photos/one.jpg has 1 line:\n1",
                "The file photos/two.jpg has 1 line:\n2",
            ]
        );
    }

    #[test]
    fn a_larger_or_empty_workspace_is_not_shown() {
        let many: Vec<(String, &str)> = (0..=SHOWN_FILES_MAX)
            .map(|i| (format!("f{i}.txt"), "x"))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        assert_eq!(view_of(&many), WorkspaceView::default());
        assert_eq!(view_of(&[]), WorkspaceView::default());
    }
}
