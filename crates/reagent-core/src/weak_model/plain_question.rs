//! The plain question that ends a constrained run for a weak model: the task, the workspace's
//! folders and the run's own findings restated in plain text, asked without tools or schema;
//! once more, narrowly, when the answer only copied them (see `answer_focus`).

use std::sync::Arc;

use reagent_protocol::{Message, Role};

use crate::prompts::ERROR_LABEL;
use crate::weak_model::answer_focus;
use crate::weak_model::tool_retrieval;
use crate::weak_model::workspace_view::WorkspaceView;

/// Results restated for the plain-text final question stay under this size.
const RESTATED_RESULTS_MAX_BYTES: usize = 6_000;

/// A fresh, plain question for a weak model: the task, the workspace's folders, each distinct
/// tool result once, in plain text under its label (only the successful ones, when there are
/// any), then — when those found nothing to answer from (no file read, search match or command
/// output) — the workspace's other small files (`view`). Measured with SmolLM2-135M: given
/// the JSON envelope, repeated once per identical call, it answers nonsense; given the task and
/// then the plain results, it answers from them (3 of 3 small tasks, where the results followed
/// by a short question got 1 of 3; BENCHMARKS.md). Everything restated stays within
/// [`RESTATED_RESULTS_MAX_BYTES`], the tool results first.
pub(crate) fn restated_question(
    task: &str,
    history: &[Arc<Message>],
    view: &WorkspaceView,
) -> Vec<Message> {
    let shown = restated_material(task, history, view);
    let mut sections: Vec<&str> = vec![task.trim()];
    if !view.overview.is_empty() && !answers_from_findings(task, history) {
        sections.push(&view.overview);
    }
    sections.extend(shown);
    vec![
        Message::system("You are a helpful assistant. Answer briefly."),
        Message::user(sections.join("\n\n")),
    ]
}

/// What [`narrow_question`] asks under the task.
pub(crate) const NARROW_INSTRUCTION: &str = "Answer in a few words. Do not repeat the files.";

/// The question asked once more when the answer to [`restated_question`] was mostly a copy of
/// it: only the restated files and results that share a word with the task (all of them when
/// none does), no folder overview, and the task last, with the answer asked for in a few words.
pub(crate) fn narrow_question(
    task: &str,
    history: &[Arc<Message>],
    view: &WorkspaceView,
) -> Vec<Message> {
    let shown = restated_material(task, history, view);
    let keywords = answer_focus::keywords(task);
    let relevant: Vec<&str> = shown
        .iter()
        .copied()
        .filter(|s| answer_focus::relevance(&keywords, s) > 0)
        .collect();
    let mut sections = if relevant.is_empty() { shown } else { relevant };
    let question = format!("Question: {}\n{NARROW_INSTRUCTION}", task.trim());
    sections.push(&question);
    vec![
        Message::system("You are a helpful assistant. Answer the question in a few words."),
        Message::user(sections.join("\n\n")),
    ]
}

/// The distinct tool results (only the successful ones, when there are any), then the
/// workspace's other small files: those the files it read name, or all of them when nothing was
/// found ([`is_informative`]; measured with SmolLM2-135M on held-out tasks, BENCHMARKS.md:
/// having read "The key is in vault.txt" it listed the folder instead of reading it), within
/// [`RESTATED_RESULTS_MAX_BYTES`] (the results first), those sharing more words with the task
/// first. Measured with SmolLM2-135M (BENCHMARKS.md, third round): once it picks the fitting
/// tool, the other files only offer it distractors (`100` from `a/value.txt` for the number in
/// `a/b/c/value.txt`, which it had read).
fn restated_material<'a>(
    task: &str,
    history: &'a [Arc<Message>],
    view: &'a WorkspaceView,
) -> Vec<&'a str> {
    let mut results: Vec<&str> = Vec::new();
    let mut errors: Vec<&str> = Vec::new();
    let mut budget = RESTATED_RESULTS_MAX_BYTES.saturating_sub(view.overview.len());
    let findings_only = answers_from_findings(task, history);
    for m in history.iter().rev() {
        let is_result = m.role == Role::Tool || (m.role == Role::User && m.tool_name.is_some());
        let text = m.content.as_str();
        let known = results.contains(&text) || errors.contains(&text);
        let aside = findings_only && !is_informative(m);
        if !is_result || known || aside || text.len() > budget {
            continue;
        }
        budget -= text.len();
        if text.starts_with(ERROR_LABEL) {
            errors.push(text);
        } else {
            results.push(text);
        }
    }
    let found = history.iter().any(|m| is_informative(m));
    let reads: Vec<&str> = history
        .iter()
        .filter(|m| is_informative(m) && m.tool_name.as_deref() == Some("read_file"))
        .map(|m| m.content.as_str())
        .collect();
    let mut shown = if results.is_empty() { errors } else { results };
    shown.reverse();
    // The model's own findings answer the question, with the files those it read name (a
    // pointer to another file); the rest of the workspace, with its distractors, is shown
    // only when it found nothing.
    for file in &view.files {
        let wanted = !found
            || reads
                .iter()
                .any(|r| answer_focus::names_path(r, &file.path));
        let already = shown.iter().any(|r| r.trim_end() == file.text.trim_end());
        if wanted && !already && file.text.len() <= budget {
            budget -= file.text.len();
            shown.push(&file.text);
        }
    }
    answer_focus::most_relevant_first(task, &mut shown);
    shown
}

/// Whether the answer rests on the run's findings alone: it found something
/// ([`is_informative`]) and the task does not ask for a listing (a listing cue, or "files").
/// Then the listings, writes and the workspace's overview are left out of the plain question:
/// measured with SmolLM2-135M on held-out tasks (BENCHMARKS.md), having read `pets.txt` and
/// then listed the workspace, it answered "what is the name of the dog?" with the overview
/// line "The workspace holds 2 files: pets.txt, vet.txt.".
fn answers_from_findings(task: &str, history: &[Arc<Message>]) -> bool {
    let about_files = answer_focus::words(task).iter().any(|w| w == "files");
    let listing = about_files || tool_retrieval::points_to(task, "list_directory");
    !listing && history.iter().any(|m| is_informative(m))
}

/// Whether `m` is a successful result that found something: a file read, search matches or a
/// command's output (a listing, a write or an empty search finds nothing to answer from).
fn is_informative(m: &Message) -> bool {
    let finds = matches!(
        m.tool_name.as_deref(),
        Some("read_file" | "grep_search" | "find_files" | "run_command")
    );
    let text = m.content.as_str();
    finds
        && !text.starts_with(ERROR_LABEL)
        && !text.ends_with("(nothing)")
        && !text.contains("\nno matches for ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weak_model::workspace_view::ShownFile;

    fn result(text: &str) -> Arc<Message> {
        let mut m = Message::user(text);
        m.tool_name = Some("read_file".into());
        Arc::new(m)
    }

    #[test]
    fn restated_results_appear_once_and_successes_win_over_errors() {
        let history = vec![
            Arc::new(Message::system("s")),
            Arc::new(Message::user(
                "Read the file a.txt and tell me its first line.",
            )),
            result("Error from read_file: no such file or directory: ..."),
            result("The file a.txt contains:\nfirst"),
            result("The file a.txt contains:\nfirst"),
            result("The file b.txt contains:\nsecond"),
        ];
        let task = "Read the file a.txt and tell me its first line.";
        let q = restated_question(task, &history, &WorkspaceView::default());
        assert_eq!(q.len(), 2);
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             The file a.txt contains:\nfirst\n\nThe file b.txt contains:\nsecond"
        );
        let q = restated_question(task, &history[..3], &WorkspaceView::default());
        assert_eq!(
            q[1].content,
            "Read the file a.txt and tell me its first line.\n\n\
             Error from read_file: no such file or directory: ..."
        );
    }

    fn shown(path: &str, text: &str) -> ShownFile {
        ShownFile {
            path: path.into(),
            text: text.into(),
        }
    }

    fn result_of(tool: &str, text: &str) -> Arc<Message> {
        let mut m = Message::user(text);
        m.tool_name = Some(tool.into());
        Arc::new(m)
    }

    #[test]
    fn the_workspace_s_files_follow_only_when_the_model_found_nothing_itself() {
        let view = WorkspaceView {
            overview: "The workspace holds 2 files: a.txt, b.txt.".into(),
            files: vec![
                shown("a.txt", "The file a.txt contains:\nfirst"),
                shown("b.txt", "The file b.txt contains:\nsecond"),
                shown("big.txt", &"x".repeat(RESTATED_RESULTS_MAX_BYTES)),
            ],
        };
        let ask = |result: Arc<Message>| {
            let history = vec![Arc::new(Message::user("How many files?")), result];
            restated_question("How many files?", &history, &view)[1]
                .content
                .clone()
        };
        // A listing, an empty search or an error found nothing to answer from: the files
        // follow (those that fit).
        assert_eq!(
            ask(result_of(
                "list_directory",
                "The folder . holds 2 files:\na.txt\nb.txt"
            )),
            "How many files?\n\nThe workspace holds 2 files: a.txt, b.txt.\n\n\
             The folder . holds 2 files:\na.txt\nb.txt\n\n\
             The file a.txt contains:\nfirst\n\nThe file b.txt contains:\nsecond"
        );
        for nothing in [
            result_of("grep_search", "Lines matching z:\nno matches for z"),
            result_of("grep_search", "Lines matching z: (nothing)"),
            result_of("read_file", "Error from read_file: no such file"),
        ] {
            assert!(ask(nothing).ends_with("The file b.txt contains:\nsecond"));
        }
        // A file read (or search matches, or a command's output) is what the answer rests on:
        // the other files, with their distractors, are left out.
        assert_eq!(
            ask(result_of("read_file", "The file b.txt contains:\nsecond")),
            "How many files?\n\nThe workspace holds 2 files: a.txt, b.txt.\n\n\
             The file b.txt contains:\nsecond"
        );
        for found in [
            result_of("grep_search", "Lines matching s:\nb.txt:1: second"),
            result_of("run_command", "The command `ls` printed:\na.txt"),
        ] {
            assert!(!ask(found).contains("The file a.txt"));
        }
    }

    #[test]
    fn files_sharing_the_task_s_words_come_first_and_the_narrow_question_keeps_only_them() {
        let view = WorkspaceView {
            overview: "The workspace holds 3 files: a.txt, b.txt, c.txt.".into(),
            files: vec![
                shown("a.txt", "The file a.txt has 1 line:\nThe cat sleeps."),
                shown("b.txt", "The file b.txt has 1 line:\nA penguin waddles by."),
                shown("c.txt", "The file c.txt has 1 line:\nThe dog barks."),
            ],
        };
        let task = "Which file mentions a penguin?";
        let q = restated_question(task, &[], &view);
        assert_eq!(
            q[1].content,
            "Which file mentions a penguin?\n\nThe workspace holds 3 files: a.txt, b.txt, c.txt.\n\n\
             The file b.txt has 1 line:\nA penguin waddles by.\n\n\
             The file a.txt has 1 line:\nThe cat sleeps.\n\nThe file c.txt has 1 line:\nThe dog barks."
        );
        let narrow = narrow_question(task, &[], &view);
        assert_eq!(
            narrow[1].content,
            "The file b.txt has 1 line:\nA penguin waddles by.\n\n\
             Question: Which file mentions a penguin?\nAnswer in a few words. Do not repeat the files."
        );
    }

    #[test]
    fn having_found_something_the_listings_and_overview_are_left_out_unless_asked_for() {
        let view = WorkspaceView {
            overview: "The workspace holds 2 files: pets.txt, vet.txt.".into(),
            files: Vec::new(),
        };
        let task = "what is the name of the dog? it's written in pets.txt";
        let history = vec![
            Arc::new(Message::user(task)),
            result_of(
                "read_file",
                "The file pets.txt has 1 line:\nOur dog is Biscuit.",
            ),
            result_of(
                "list_directory",
                "The folder . holds 2 files:\npets.txt\nvet.txt",
            ),
        ];
        assert_eq!(
            restated_question(task, &history, &view)[1].content,
            format!("{task}\n\nThe file pets.txt has 1 line:\nOur dog is Biscuit.")
        );
        // Nothing found: the listing and the overview are what there is.
        let asked = restated_question(task, &[history[0].clone(), history[2].clone()], &view);
        assert!(asked[1].content.contains("The workspace holds 2 files"));
        assert!(asked[1].content.contains("The folder . holds 2 files"));
        // A task about the listing keeps them beside what was read.
        for listing in ["List the folder and read pets.txt", "Which files are here?"] {
            let mut h = history.clone();
            h[0] = Arc::new(Message::user(listing));
            let asked = restated_question(listing, &h, &view)[1].content.clone();
            assert!(asked.contains("The workspace holds 2 files"), "{asked}");
            assert!(asked.contains("The folder . holds 2 files"), "{asked}");
        }
    }

    #[test]
    fn a_file_the_findings_name_is_shown_beside_them() {
        let view = WorkspaceView {
            overview: "The workspace holds 3 files: decoy.txt, index.txt, vault.txt.".into(),
            files: vec![
                shown("decoy.txt", "The file decoy.txt has 1 line:\nkey: slate-12"),
                shown(
                    "index.txt",
                    "The file index.txt has 1 line:\nThe key is in vault.txt",
                ),
                shown(
                    "people/vault.txt",
                    "The file people/vault.txt has 1 line:\nkey: amber-77",
                ),
            ],
        };
        let task = "index.txt says where the key is kept. Go there and tell me the key.";
        let history = vec![
            Arc::new(Message::user(task)),
            result_of(
                "read_file",
                "The file index.txt has 1 line:\nThe key is in vault.txt",
            ),
        ];
        let asked = restated_question(task, &history, &view)[1].content.clone();
        assert!(asked.contains("key: amber-77"), "{asked}");
        assert!(!asked.contains("slate-12"), "{asked}");
        assert_eq!(
            asked.matches("The key is in vault.txt").count(),
            1,
            "{asked}"
        );
    }
}
