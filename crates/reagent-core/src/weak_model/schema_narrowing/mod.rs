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
//!   the workspace (when the task names none, the path stays free); its `content`, the texts
//!   the task gives;
//! - `edit_file`: one branch per small text file, whose `old_string` is one of the texts the
//!   task names that the file holds, and `new_string` one the task names that it does not
//!   hold; when the task names none, `old_string` is one of the file's lines or words (text
//!   that exists, so the edit can apply) and `new_string` stays free;
//! - `grep_search`'s `pattern`: one of the task's distinctive words;
//! - `run_command`'s `command`: one the task gives, when it gives one.

use std::collections::BTreeSet;
use std::io::Read;

use reagent_tools::{Workspace, WorkspaceFiles};
use serde::{Deserialize, Serialize};

use crate::weak_model::answer_focus;
use crate::weak_model::tool_retrieval;

mod schema;
mod task_text;

pub(crate) use schema::narrow;
use task_text::{is_path_like, named_paths, task_words};

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
    /// The only contents `write_file` may write: the task's own texts
    /// ([`task_text::write_texts`]) but those the run wrote already.
    #[serde(default)]
    pub write_contents: Vec<String>,
    /// Per path the task names, the texts it gives for that file
    /// ([`task_text::given_per_path`], but a folder's name and what the run wrote): a
    /// `write_file` of that path may write only those (when there are any).
    #[serde(default)]
    pub write_given: Vec<GivenTexts>,
    /// Per small text file, the texts `edit_file` may replace in it.
    pub edit_texts: Vec<EditTexts>,
    /// Files too large (or not text) to offer their texts: `edit_file` may name them with a
    /// free `old_string`.
    #[serde(default)]
    pub free_edit_paths: Vec<String>,
    /// The only patterns `grep_search` may search for.
    pub search_words: Vec<String>,
    /// The only files `read_file` may read ([`pointed_files`]). Empty: any file.
    #[serde(default)]
    pub read_paths: Vec<String>,
    /// The only commands `run_command` may run ([`task_text::commands`]). Empty: free.
    #[serde(default)]
    pub commands: Vec<String>,
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
                replacements: Vec::new(),
            }),
        }
    }
}

/// The texts a task gives for one path it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GivenTexts {
    /// The path as the task names it.
    pub path: String,
    /// The texts given for it.
    pub texts: Vec<String>,
}

/// The texts of one file that `edit_file` may replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditTexts {
    /// The file's workspace-relative path.
    pub path: String,
    /// The texts the task names that the file holds; when it names none, the file's
    /// non-empty lines, then its words; each once.
    pub texts: Vec<String>,
    /// Those of `texts` found more than once in the file: offered only with `replace_all`
    /// (the tool refuses to replace a text that is not unique without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeated: Vec<String>,
    /// The only texts to put instead, when the task names texts to change: those it names
    /// that the file does not hold. Empty: the replacement is free.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replacements: Vec<String>,
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
    // A search looks for text in files; a path the task names is where to look, not what,
    // and the words that ask for the search or name a tool are not what either (measured:
    // "name" searched for "Where is the volcano mentioned? I need the file name.").
    let searched = |w: &String| {
        !is_path_like(w) && !task_text::is_instruction(w) && !tool_retrieval::is_cue_word(w)
    };
    for word in task_words(task).filter(searched) {
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
            // The texts the task names to change, with what it gives to put instead; else
            // (an edit that adds text) any line or word, with a free replacement.
            let named = task_text::texts_to_change(task, &text);
            let (mut texts, replacements) = if named.is_empty() {
                (edit_texts(&text), Vec::new())
            } else {
                (named, task_text::texts_to_put(task, &text))
            };
            texts.retain(|t| !mine.iter().any(|w| t.contains(w.as_str())));
            let (repeated, texts): (Vec<String>, Vec<String>) = texts
                .into_iter()
                .partition(|t| text.matches(t.as_str()).count() > 1);
            let some = !texts.is_empty() || !repeated.is_empty();
            some.then(|| EditTexts {
                path: path.clone(),
                texts,
                repeated,
                replacements,
            })
        })
        .collect();
    // A file the run changed already is not offered again while others are: a weak model
    // edits the file it just edited once more instead of the next one.
    let unwritten = |path: &String| !written.iter().any(|w| &w.path == path);
    if editable.iter().any(|e| unwritten(&e.path)) {
        editable.retain(|e| unwritten(&e.path));
    }
    // Likewise a new file it wrote, and the text it wrote there.
    let mut write_paths = write_paths(task, &files.paths);
    if write_paths.iter().any(unwritten) {
        write_paths.retain(unwritten);
    }
    let was_written = |t: &String| written.iter().any(|w| w.texts.contains(t));
    let mut write_contents = task_text::write_texts(task);
    write_contents.retain(|t| !was_written(t));
    let folder_names = folders(&files.paths);
    let write_given = task_text::given_per_path(task)
        .into_iter()
        .map(|(path, mut texts)| {
            texts.retain(|t| !was_written(t) && !folder_names.contains(t.as_str()));
            GivenTexts { path, texts }
        })
        .collect();
    Narrowing {
        write_paths,
        write_contents,
        write_given,
        edit_texts: editable,
        free_edit_paths,
        search_words,
        read_paths: pointed_files(task, workspace, &files.paths),
        commands: task_text::commands(
            task,
            tool_retrieval::points_to(task, "run_command"),
            &files.paths,
        ),
        folders: std::iter::once(".")
            .chain(folders(&files.paths))
            .map(str::to_owned)
            .collect(),
        named_paths: named_paths(task),
        written,
    }
}

/// The files of the workspace the task names (whole, or by file name), and those their texts
/// name in turn, and so on, in the workspace's order; empty when the task names none. Measured
/// with SmolLM2-135M on held-out tasks (BENCHMARKS.md): offered every file, it read
/// `shopping.txt` for "How many lines are there in steps.txt?" and `public.md` for "start.md
/// tells you which file has the secret ingredient".
fn pointed_files(task: &str, workspace: &Workspace, paths: &[String]) -> Vec<String> {
    let mut pointed: Vec<&String> = paths
        .iter()
        .filter(|p| answer_focus::names_path(task, p))
        .collect();
    let mut next = 0;
    while next < pointed.len() {
        if let Some(text) = small_text(workspace, pointed[next]) {
            for path in paths {
                if !pointed.contains(&path) && answer_focus::names_path(&text, path) {
                    pointed.push(path);
                }
            }
        }
        next += 1;
    }
    paths
        .iter()
        .filter(|p| pointed.contains(p))
        .cloned()
        .collect()
}

/// The paths the task names, and each bare name inside each folder of the workspace.
fn write_paths(task: &str, workspace_paths: &[String]) -> Vec<String> {
    let named = named_paths(task);
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

/// The texts of a file that may be replaced when the task names none of them (an edit that
/// adds text): the file's non-empty lines, then its words (as written, and without the
/// punctuation around them: `red,` gives `red,` and `red`), each once, at most
/// [`EDIT_TEXTS_MAX`].
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

#[cfg(test)]
mod tests {
    use reagent_tools::workspace_files;
    use serde_json::json;

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
    fn the_texts_the_task_names_are_changed_and_what_it_gives_put_instead() {
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
        assert!(story.texts.is_empty(), "{:?}", story.texts);
        assert_eq!(story.repeated, ["fox"], "found twice: replaced everywhere");
        assert_eq!(story.replacements, ["wolf", "Search"]);
        // The task's distinctive words, with their case; not the path it names, nor the
        // words asking for an edit or a search.
        assert_eq!(n.search_words, ["fox", "wolf", "FOX"]);
        let n = narrowed(
            "In calc.py, replace 'a - b' with 'a + b'",
            &[("calc.py", "def add(a, b):\n    return a - b\n")],
            Vec::new(),
        );
        let calc = &n.edit_texts[0];
        assert_eq!(calc.texts, ["a - b"]);
        assert_eq!(calc.repeated, ["b"]);
        assert_eq!(calc.replacements, ["a + b"]);
    }

    #[test]
    fn a_task_naming_no_text_of_the_file_may_change_any_line_or_word_freely() {
        let n = narrowed(
            "Add the line 'checked' at the end of story.txt",
            &[("story.txt", "The fox ran, the fox hid.\nEnd\n")],
            Vec::new(),
        );
        let story = &n.edit_texts[0];
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
        assert!(story.replacements.is_empty(), "the new text is free");
    }

    #[test]
    fn a_new_file_written_and_its_text_give_way_to_the_others() {
        let task = "Make two files: red.txt with the word cherry and blue.txt with ocean.";
        let before = narrowed(task, &[], Vec::new());
        assert_eq!(before.write_paths, ["red.txt", "blue.txt"]);
        assert_eq!(before.write_contents[..2], ["cherry", "ocean"]);
        let mut n = Narrowing::default();
        n.record_written("red.txt", "cherry");
        let after = narrowed(task, &[("red.txt", "cherry")], n.written);
        assert_eq!(after.write_paths, ["blue.txt"]);
        assert_eq!(after.write_contents[0], "ocean");
        assert!(!after.write_contents.contains(&"cherry".to_owned()));
        let given: Vec<(&str, &[String])> = after
            .write_given
            .iter()
            .map(|g| (g.path.as_str(), g.texts.as_slice()))
            .collect();
        assert_eq!(
            given,
            [
                ("red.txt", &[][..]),
                ("blue.txt", &["ocean".to_owned()][..])
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
    fn the_files_to_read_are_those_the_task_names_and_those_they_name() {
        let files = [
            ("clue.txt", "Look in box/hint2.txt for the answer.\n"),
            ("box/hint2.txt", "The capital is in capital.txt.\n"),
            ("capital.txt", "Oslo\n"),
            ("old.txt", "The capital is Lima.\n"),
        ];
        let n = narrowed(
            "Start with clue.txt. Which capital is it?",
            &files,
            Vec::new(),
        );
        assert_eq!(n.read_paths, ["box/hint2.txt", "capital.txt", "clue.txt"]);
        let n = narrowed("Which file names a capital?", &files, Vec::new());
        assert!(n.read_paths.is_empty(), "no file named: any may be read");
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
}
