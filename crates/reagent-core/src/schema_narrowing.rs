//! Narrowing the constrained schema to what the task and a small workspace name, for models
//! too weak to fill free-text arguments (a profile's `narrow_schema`; SmolLM2's has it).
//!
//! The constrained mode already allows only the workspace's real paths for the tools that read
//! or edit an existing file. Measured with SmolLM2-135M (BENCHMARKS.md), once the fitting tool
//! is listed first it picks `write_file`, `edit_file` and `grep_search`, but fills them with
//! what it sees nearby: the listed file `src/main.c` as the path of a new file, the file name
//! `greeting.txt` as the text to replace, the example's placeholder as the search pattern. So,
//! like the path `enum`, the schema offers the values the task and the workspace hold and the
//! model chooses among them:
//!
//! - `write_file`'s `path`: the paths the task names, and each of them inside each folder of
//!   the workspace (when the task names none, the path stays free);
//! - `edit_file`: one branch per small text file, whose `old_string` is one of that file's
//!   lines or words (text that exists, so the edit can apply); `new_string` stays free;
//! - `grep_search`'s `pattern`: one of the task's distinctive words.

use std::collections::BTreeSet;
use std::io::Read;

use reagent_tools::{Workspace, WorkspaceFiles};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::answer_focus;

/// Most bytes a file may have for its lines and words to be offered as `old_string`.
const EDITABLE_FILE_MAX_BYTES: u64 = 2_000;

/// Most files a workspace may hold for their texts to be offered as `old_string` (the schema
/// stays small; a larger workspace's edits keep a free `old_string`).
const EDITABLE_FILES_MAX: usize = 12;

/// Most texts offered as one file's `old_string`.
const EDIT_TEXTS_MAX: usize = 200;

/// What the schema offers beyond the workspace's paths (see the module docs). An empty list
/// leaves that argument free.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Narrowing {
    /// The only paths `write_file` may write.
    pub write_paths: Vec<String>,
    /// The only contents `write_file` may write: the task's own texts (see [`task_texts`]).
    #[serde(default)]
    pub write_contents: Vec<String>,
    /// Per small text file, the texts `edit_file` may replace in it.
    pub edit_texts: Vec<EditTexts>,
    /// Files too large (or not text) to offer their texts: `edit_file` may name them with a
    /// free `old_string`.
    #[serde(default)]
    pub free_edit_paths: Vec<String>,
    /// The only patterns `grep_search` may search for.
    pub search_words: Vec<String>,
    /// The workspace (`.`) and its folders: the only paths `list_directory` may list.
    #[serde(default)]
    pub folders: Vec<String>,
    /// The paths the task names (see [`Narrowing::all_named_changed`]).
    #[serde(default)]
    pub named_paths: Vec<String>,
    /// Text the run wrote, per file: never offered for replacing again, so a weak model does
    /// not undo its own change (measured: `mode=live` edited back to `mode=test`).
    #[serde(default)]
    pub written: Vec<EditTexts>,
}

impl Narrowing {
    /// Whether every path the task names (at least one) is among `changed` (a bare name also
    /// counts inside a folder): the change asked for is made, and the run can ask for the
    /// answer rather than let a weak model go on changing files.
    pub fn all_named_changed<'a>(&self, changed: impl Iterator<Item = &'a String> + Clone) -> bool {
        !self.named_paths.is_empty()
            && self.named_paths.iter().all(|named| {
                changed
                    .clone()
                    .any(|c| c == named || c.ends_with(&format!("/{named}")))
            })
    }

    /// Remember that the run wrote `text` into `path`.
    pub(crate) fn record_written(&mut self, path: &str, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        match self.written.iter_mut().find(|w| w.path == path) {
            Some(w) => w.texts.push(text.to_owned()),
            None => self.written.push(EditTexts {
                path: path.to_owned(),
                texts: vec![text.to_owned()],
                repeated: Vec::new(),
            }),
        }
    }
}

/// The texts of one file that `edit_file` may replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditTexts {
    /// The file's workspace-relative path.
    pub path: String,
    /// Its non-empty lines, then its words, each once.
    pub texts: Vec<String>,
    /// Those of `texts` found more than once in the file: offered only with `replace_all`
    /// (the tool refuses to replace a text that is not unique without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeated: Vec<String>,
}

/// The narrowing for `task` over a workspace whose complete file list is `files` (nothing is
/// narrowed for a workspace larger than the list), after the run wrote `written`.
pub(crate) fn narrowing(
    task: &str,
    workspace: &Workspace,
    files: &WorkspaceFiles,
    written: Vec<EditTexts>,
) -> Narrowing {
    if files.more {
        return Narrowing::default();
    }
    let keywords = answer_focus::keywords(task);
    let mut search_words: Vec<String> = Vec::new();
    for word in task_words(task) {
        if keywords.contains(&word.to_lowercase()) && !search_words.contains(&word) {
            search_words.push(word);
        }
    }
    let mut free_edit_paths = Vec::new();
    let offered = if files.paths.len() <= EDITABLE_FILES_MAX {
        files.paths.as_slice()
    } else {
        &[]
    };
    let mut editable: Vec<EditTexts> = offered
        .iter()
        .filter_map(|path| {
            let Some(text) = small_text(workspace, path) else {
                free_edit_paths.push(path.clone());
                return None;
            };
            let mine = written.iter().filter(|w| &w.path == path);
            let mine: Vec<&String> = mine.flat_map(|w| &w.texts).collect();
            let mut texts = edit_texts(&text);
            texts.retain(|t| !mine.iter().any(|w| t.contains(w.as_str())));
            let (repeated, texts): (Vec<String>, Vec<String>) = texts
                .into_iter()
                .partition(|t| text.matches(t.as_str()).count() > 1);
            let some = !texts.is_empty() || !repeated.is_empty();
            some.then(|| EditTexts {
                path: path.clone(),
                texts,
                repeated,
            })
        })
        .collect();
    // A file the run changed already is not offered again while others are: a weak model
    // edits the file it just edited once more instead of the next one.
    if editable
        .iter()
        .any(|e| !written.iter().any(|w| w.path == e.path))
    {
        editable.retain(|e| !written.iter().any(|w| w.path == e.path));
    }
    Narrowing {
        write_paths: write_paths(task, &files.paths),
        write_contents: task_texts(task),
        edit_texts: editable,
        free_edit_paths,
        search_words,
        folders: std::iter::once(".")
            .chain(folders(&files.paths))
            .map(str::to_owned)
            .collect(),
        named_paths: task_words(task).filter(|w| is_path_like(w)).collect(),
        written,
    }
}

/// The words of `task` with their case kept: letters, digits and `._-/` inside a word.
fn task_words(task: &str) -> impl Iterator<Item = String> + '_ {
    let inner = |c: char| c.is_alphanumeric() || "._-/".contains(c);
    task.split(move |c: char| !inner(c))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|w| !w.is_empty())
}

/// Whether `word` reads as a file path: a `/`, or a name with an extension that has a letter
/// (`notes.txt`, `src/main.c`; not `2.0`).
fn is_path_like(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    let extension = name
        .rsplit_once('.')
        .filter(|(stem, ext)| !stem.is_empty() && !ext.is_empty())
        .map(|(_, ext)| ext);
    word.contains('/') || extension.is_some_and(|e| e.chars().any(char::is_alphabetic))
}

/// The texts a task gives to be written: what follows its first colon, what it quotes (`'…'`,
/// `"…"`, `` `…` ``), and each of its words, each once. A small task states its content in
/// one of these forms ("with the text: Hello, world", "the number 42").
fn task_texts(task: &str) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    let mut add = |text: &str| {
        let text = text.trim();
        if !text.is_empty() && !texts.iter().any(|t| t == text) {
            texts.push(text.to_owned());
        }
    };
    if let Some((_, after)) = task.split_once(": ") {
        add(after.trim().trim_end_matches('.'));
    }
    for quote in ['\'', '"', '`'] {
        let parts: Vec<&str> = task.split(quote).collect();
        // Odd-numbered parts lie between a pair of quotes; a lone quote (an apostrophe) opens
        // nothing.
        if parts.len() >= 3 {
            let pairs = (parts.len() - 1) / 2;
            for inside in parts.iter().skip(1).step_by(2).take(pairs) {
                add(inside);
            }
        }
    }
    for word in task_words(task) {
        add(&word);
    }
    texts
}

/// The paths the task names, and each bare name inside each folder of the workspace.
fn write_paths(task: &str, workspace_paths: &[String]) -> Vec<String> {
    let named: Vec<String> = task_words(task).filter(|w| is_path_like(w)).collect();
    let folders = folders(workspace_paths);
    let mut paths: Vec<String> = Vec::new();
    let mut add = |path: String| {
        if !paths.contains(&path) {
            paths.push(path);
        }
    };
    for name in &named {
        add(name.clone());
        if !name.contains('/') {
            for folder in &folders {
                add(format!("{folder}/{name}"));
            }
        }
    }
    paths
}

/// The folders holding the workspace's files (and their parents), in name order.
fn folders(workspace_paths: &[String]) -> BTreeSet<&str> {
    workspace_paths
        .iter()
        .flat_map(|p| p.match_indices('/').map(move |(i, _)| &p[..i]))
        .collect()
}

/// The text of a small UTF-8 file, read through the workspace's confinement; `None` for a
/// large, binary or unreadable one.
fn small_text(workspace: &Workspace, path: &str) -> Option<String> {
    let opened = workspace.open_file(path).ok()?;
    if opened.size > EDITABLE_FILE_MAX_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    opened
        .file
        .take(EDITABLE_FILE_MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// A file's non-empty lines, then its words (as written, and without the punctuation around
/// them: `red,` gives `red,` and `red`), each once, at most [`EDIT_TEXTS_MAX`].
fn edit_texts(text: &str) -> Vec<String> {
    let lines = text.lines().map(str::trim_end).filter(|l| !l.is_empty());
    let words = text.split_whitespace().flat_map(|w| {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
        [w, bare]
    });
    let mut texts: Vec<String> = Vec::new();
    for t in lines.chain(words).filter(|t| !t.is_empty()) {
        if texts.len() == EDIT_TEXTS_MAX {
            break;
        }
        if !texts.iter().any(|k| k == t) {
            texts.push(t.to_owned());
        }
    }
    texts
}

/// `parameters` (a tool's argument schema) narrowed for the tool `name`, or `None` when
/// nothing is narrowed for it. Optional arguments are left out (but `list_directory`'s path,
/// which is narrowed to real folders): a weak model fills them with junk (measured:
/// `read_file` with `start_line` 1234567890, `end_line` 10^12; `grep_search` with `include`
/// set to a file name).
pub(crate) fn narrow(name: &str, parameters: &Value, narrowing: &Narrowing) -> Option<Value> {
    let keep: &[&str] = if name == "list_directory" {
        &["path"]
    } else {
        &[]
    };
    let essential = required_only(parameters, keep);
    let narrowed = narrow_values(name, &essential, parameters, narrowing).unwrap_or(essential);
    (narrowed != *parameters).then_some(narrowed)
}

/// `parameters` with only its required properties (and those in `keep`).
fn required_only(parameters: &Value, keep: &[&str]) -> Value {
    let mut p = parameters.clone();
    let required: Vec<String> = p
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(properties) = p.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|key, _| required.contains(key) || keep.contains(&key.as_str()));
    }
    p
}

/// The values narrowed in `essential` (the required arguments of `original`) for the tool
/// `name`; `None` when the narrowing holds nothing for it.
fn narrow_values(
    name: &str,
    essential: &Value,
    original: &Value,
    narrowing: &Narrowing,
) -> Option<Value> {
    let with = |key: &str, values: &[String]| {
        let mut p = essential.clone();
        set(&mut p, key, json!({ "enum": values }))?;
        Some(p)
    };
    match name {
        "write_file" if !narrowing.write_paths.is_empty() => {
            let mut p = with("path", &narrowing.write_paths)?;
            if !narrowing.write_contents.is_empty() {
                set(
                    &mut p,
                    "content",
                    json!({ "enum": narrowing.write_contents }),
                )?;
            }
            Some(p)
        }
        "list_directory" if !narrowing.folders.is_empty() => with("path", &narrowing.folders),
        "grep_search" if !narrowing.search_words.is_empty() => {
            with("pattern", &narrowing.search_words)
        }
        "edit_file" if !narrowing.edit_texts.is_empty() => {
            let mut branches: Vec<Value> = Vec::new();
            for file in &narrowing.edit_texts {
                if !file.texts.is_empty() {
                    let mut p = with("old_string", &file.texts)?;
                    set(&mut p, "path", json!({"enum": [file.path]}))?;
                    branches.push(p);
                }
                if !file.repeated.is_empty() {
                    let mut p = with("old_string", &file.repeated)?;
                    set(&mut p, "path", json!({"enum": [file.path]}))?;
                    // A repeated text is replaced everywhere or not at all.
                    let mut all = original.pointer("/properties/replace_all")?.clone();
                    all.as_object_mut()?.insert("const".to_owned(), json!(true));
                    p.get_mut("properties")?
                        .as_object_mut()?
                        .insert("replace_all".to_owned(), all);
                    p.get_mut("required")?
                        .as_array_mut()?
                        .push(json!("replace_all"));
                    branches.push(p);
                }
            }
            if !narrowing.free_edit_paths.is_empty() {
                let mut p = essential.clone();
                set(&mut p, "path", json!({"enum": narrowing.free_edit_paths}))?;
                branches.push(p);
            }
            Some(json!({ "oneOf": branches }))
        }
        _ => None,
    }
}

/// Add `extra` (an object of schema keywords) to the property `key` of `parameters`.
fn set(parameters: &mut Value, key: &str, extra: Value) -> Option<()> {
    let prop = parameters
        .pointer_mut(&format!("/properties/{key}"))?
        .as_object_mut()?;
    for (k, v) in extra.as_object()? {
        prop.insert(k.clone(), v.clone());
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use reagent_tools::workspace_files;

    use super::*;

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        let ws = Workspace::open(dir.path()).unwrap();
        (dir, ws)
    }

    fn narrowed(task: &str, files: &[(&str, &str)], written: Vec<EditTexts>) -> Narrowing {
        let (_dir, ws) = workspace(files);
        let listed = workspace_files(&ws, 50);
        narrowing(task, &ws, &listed, written)
    }

    #[test]
    fn paths_the_task_names_are_the_write_paths_also_inside_each_folder() {
        assert!(is_path_like("notes.txt") && is_path_like("src/main.c"));
        assert!(is_path_like(".env.example") && is_path_like("Makefile/x"));
        assert!(!is_path_like("2.0") && !is_path_like("end.") && !is_path_like("hello"));
        let n = narrowed(
            "Create notes.txt inside the src folder, then README.md.",
            &[("src/lib/a.rs", "x\n")],
            Vec::new(),
        );
        assert_eq!(
            n.write_paths,
            [
                "notes.txt",
                "src/notes.txt",
                "src/lib/notes.txt",
                "README.md",
                "src/README.md",
                "src/lib/README.md"
            ]
        );
        assert_eq!(n.named_paths, ["notes.txt", "README.md"]);
        assert_eq!(n.folders, [".", "src", "src/lib"]);
        assert!(narrowed("Write a haiku", &[], Vec::new())
            .write_paths
            .is_empty());
    }

    #[test]
    fn the_texts_to_write_are_what_the_task_states_after_a_colon_quotes_or_as_a_word() {
        assert_eq!(
            task_texts("Create hello.txt with the text: Hello, world"),
            [
                "Hello, world",
                "Create",
                "hello.txt",
                "with",
                "the",
                "text",
                "Hello",
                "world"
            ]
        );
        assert_eq!(
            task_texts("Create settings.json containing exactly this JSON: {\"debug\": true}")[0],
            "{\"debug\": true}"
        );
        let quoted = task_texts("Add the line 'reviewed' to a.md, don't wait; run `make all`.");
        assert!(quoted.contains(&"reviewed".to_owned()), "{quoted:?}");
        assert!(
            !quoted.iter().any(|t| t.starts_with("t wait")),
            "an apostrophe opens nothing: {quoted:?}"
        );
        assert!(quoted.contains(&"make all".to_owned()), "{quoted:?}");
        assert!(task_texts("Make answer.txt hold the number 42.").contains(&"42".to_owned()));
        assert!(task_texts("").is_empty());
    }

    #[test]
    fn edit_texts_are_lines_then_words_and_repeated_ones_stand_apart() {
        let n = narrowed(
            "Edit story.txt: fox becomes wolf. Search for FOX.",
            &[
                ("story.txt", "The fox ran, the fox hid.\nEnd\n"),
                ("big.bin", &"x".repeat(3000)),
            ],
            Vec::new(),
        );
        assert_eq!(
            n.edit_texts.len(),
            1,
            "the large file's texts are not offered"
        );
        assert_eq!(n.free_edit_paths, ["big.bin"]);
        let story = &n.edit_texts[0];
        assert_eq!(story.path, "story.txt");
        assert_eq!(
            story.texts,
            [
                "The fox ran, the fox hid.",
                "End",
                "The",
                "ran,",
                "ran",
                "the",
                "hid.",
                "hid"
            ]
        );
        assert_eq!(story.repeated, ["fox"]);
        // The task's distinctive words, with their case.
        assert_eq!(
            n.search_words,
            [
                "Edit",
                "story.txt",
                "fox",
                "becomes",
                "wolf",
                "Search",
                "FOX"
            ]
        );
    }

    #[test]
    fn a_larger_workspace_s_texts_are_not_offered() {
        let many: Vec<(String, &str)> = (0..=EDITABLE_FILES_MAX)
            .map(|i| (format!("f{i:02}.txt"), "x\n"))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        let n = narrowed("Replace x with y in f00.txt", &many, Vec::new());
        assert!(n.edit_texts.is_empty() && n.free_edit_paths.is_empty());
        let params = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "old_string": {"type": "string"}},
            "required": ["path", "old_string"]
        });
        assert_eq!(
            narrow("edit_file", &params, &n),
            None,
            "edit_file stays as it was"
        );
    }

    #[test]
    fn the_run_s_own_text_and_files_it_changed_are_not_offered_again() {
        let files = [("a.txt", "status: final\n"), ("b.txt", "a draft\n")];
        let mut n = Narrowing::default();
        n.record_written("a.txt", "final");
        let after = narrowed(
            "Replace draft with final in a.txt and b.txt",
            &files,
            n.written,
        );
        let paths: Vec<&str> = after.edit_texts.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["b.txt"], "a.txt was changed; b.txt is left to do");
        // With no other file left, the changed file is offered without the text written.
        let mut n = Narrowing::default();
        n.record_written("a.txt", "final");
        let only = narrowed("Fix a.txt", &files[..1], n.written);
        assert_eq!(only.edit_texts[0].texts, ["status:", "status"]);
    }

    #[test]
    fn the_change_is_made_when_every_named_path_changed() {
        let n = Narrowing {
            named_paths: vec!["one.txt".into(), "two.txt".into()],
            ..Narrowing::default()
        };
        let changed = |paths: &[&str]| paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert!(!n.all_named_changed(changed(&["one.txt"]).iter()));
        assert!(n.all_named_changed(changed(&["one.txt", "sub/two.txt"]).iter()));
        assert!(!Narrowing::default().all_named_changed(changed(&["one.txt"]).iter()));
    }

    #[test]
    fn the_schema_offers_only_the_narrowed_values() {
        let params = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            },
            "required": ["path", "old_string", "new_string"]
        });
        let n = Narrowing {
            write_paths: vec!["out.txt".into()],
            edit_texts: vec![EditTexts {
                path: "a.txt".into(),
                texts: vec!["red".into()],
                repeated: vec!["the".into()],
            }],
            search_words: vec!["penguin".into()],
            free_edit_paths: vec!["big.log".into()],
            ..Narrowing::default()
        };
        let edit = narrow("edit_file", &params, &n).unwrap();
        let branches = edit["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), 3);
        assert_eq!(
            branches[0]["properties"]["old_string"]["enum"],
            json!(["red"])
        );
        assert_eq!(branches[0]["properties"]["path"]["enum"], json!(["a.txt"]));
        assert_eq!(
            branches[1]["properties"]["old_string"]["enum"],
            json!(["the"])
        );
        assert_eq!(
            branches[1]["properties"]["replace_all"]["const"],
            json!(true)
        );
        assert!(branches[1]["required"]
            .as_array()
            .unwrap()
            .contains(&json!("replace_all")));
        assert_eq!(
            branches[2]["properties"]["path"]["enum"],
            json!(["big.log"])
        );
        assert_eq!(
            branches[2]["properties"]["old_string"],
            json!({"type": "string"})
        );
        let write_params = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]
        });
        let write = narrow("write_file", &write_params, &n).unwrap();
        assert_eq!(write["properties"]["path"]["enum"], json!(["out.txt"]));
        assert!(
            write["properties"]["content"].get("enum").is_none(),
            "no texts: free"
        );
        let with_texts = Narrowing {
            write_contents: vec!["hi".into()],
            ..n.clone()
        };
        let write = narrow("write_file", &write_params, &with_texts).unwrap();
        assert_eq!(write["properties"]["content"]["enum"], json!(["hi"]));
        let n = Narrowing {
            folders: vec![".".into(), "src".into()],
            ..n
        };
        let list = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}},
            "required": []
        });
        let list = narrow("list_directory", &list, &n).unwrap();
        assert_eq!(list["properties"]["path"]["enum"], json!([".", "src"]));
        assert!(list["properties"].get("recursive").is_none());
        let grep = json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "include": {"type": "string"}},
            "required": ["pattern"]
        });
        let grep = narrow("grep_search", &grep, &n).unwrap();
        assert_eq!(grep["properties"]["pattern"]["enum"], json!(["penguin"]));
        // Optional arguments are left out; a tool with nothing else to narrow keeps the rest.
        let read = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "end_line": {"type": "integer"}},
            "required": ["path"]
        });
        assert_eq!(
            narrow("read_file", &read, &n),
            Some(
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
            )
        );
        let all_required = json!({"type": "object", "properties": {"a": {}}, "required": ["a"]});
        assert_eq!(narrow("other", &all_required, &n), None);
        assert!(branches[0]["properties"].get("replace_all").is_none());
        assert_eq!(
            narrow("write_file", &write_params, &Narrowing::default()),
            None
        );
    }
}
