//! Tool retrieval: the tools ordered by how well a task's words point to them, for the
//! constrained mode's tool list and its example call.
//!
//! Measured with SmolLM2-135M (BENCHMARKS.md): a very small model does not choose a tool from a
//! task's meaning; it takes the one the prompt's example shows, or the first in the list
//! (`read_file` in 40 of 44 runs, also for tasks that ask to create, edit or run). Ranking the
//! tools by the task's own words — lexical overlap with a few cue words per tool, the way large
//! tool sets are narrowed before a model sees them — puts the fitting tool where such a model
//! looks. The model still chooses and fills the call; only the order and the example change.

use reagent_protocol::ToolSpec;

use crate::weak_model::answer_focus::{names_path, words};

/// A cue: a word of a task that points to a tool, and how strongly (an action verb 2, a noun or
/// a weaker verb 1).
type Cue<'a> = (&'a str, u32);

/// The cue words of the built-in tools, by tool name. A tool not listed here is cued by the
/// parts of its own name (`fetch_url` by "fetch" and "url").
const CUES: &[(&str, &[Cue<'static>])] = &[
    (
        "read_file",
        &[("read", 2), ("open", 2), ("show", 1), ("view", 1)],
    ),
    (
        "list_directory",
        &[("list", 2), ("folder", 1), ("directory", 1)],
    ),
    (
        "grep_search",
        &[
            ("search", 2),
            ("grep", 2),
            ("find", 1),
            ("mention", 1),
            ("contain", 1),
        ],
    ),
    ("find_files", &[("glob", 2), ("locate", 1)]),
    (
        "write_file",
        &[
            ("create", 2),
            ("write", 2),
            ("save", 2),
            ("make", 2),
            ("new", 1),
        ],
    ),
    (
        "edit_file",
        &[
            ("edit", 2),
            ("replace", 2),
            ("change", 2),
            ("rename", 2),
            ("update", 2),
            ("swap", 2),
            ("set", 2),
            ("fix", 2),
            ("add", 2),
            ("append", 2),
            ("instead", 1),
            ("become", 1),
        ],
    ),
    (
        "run_command",
        &[
            ("run", 2),
            ("execute", 2),
            ("command", 1),
            ("output", 1),
            ("print", 1),
        ],
    ),
    ("task_complete", &[("done", 1), ("finish", 1)]),
];

/// Most tools from outside the built-ins (MCP servers' tools, say) that a weak model's list
/// keeps although the task's words do not point to them: thirty such tools would bury the
/// built-ins of a small model's prompt; the ones the task points to are always kept.
pub(crate) const UNPOINTED_EXTRA_TOOLS_MAX: usize = 3;

/// Name parts that say nothing about what a tool does.
const GENERIC_NAME_PARTS: &[&str] = &["file", "files", "tool"];

/// Endings a task word may add to a cue ("creates", "changed", "listing").
const ENDINGS: &[&str] = &["", "s", "es", "d", "ed", "ing", "ion", "ions"];

/// Whether task word `word` is `cue`, or `cue` with one of the [`ENDINGS`] (a cue ending in `e`
/// may drop it: "change" → "changing").
fn is_cue(word: &str, cue: &str) -> bool {
    let stems = [Some(cue), cue.strip_suffix('e')];
    stems.into_iter().flatten().any(|stem| {
        word.strip_prefix(stem)
            .is_some_and(|ending| ENDINGS.contains(&ending))
    })
}

/// The cues of the tool `name`: its row of [`CUES`], or the parts of its own name.
fn cues(name: &str) -> Vec<Cue<'_>> {
    match CUES.iter().find(|(tool, _)| *tool == name) {
        Some((_, cues)) => cues.to_vec(),
        None => name
            .split(['_', '-'])
            .filter(|p| p.len() >= 3 && !GENERIC_NAME_PARTS.contains(p))
            .map(|p| (p, 2))
            .collect(),
    }
}

/// How strongly `task_words` point to the tool `name`: the weights of its cues found in them.
fn score(name: &str, task_words: &[String]) -> u32 {
    cues(name)
        .iter()
        .filter(|(cue, _)| task_words.iter().any(|w| is_cue(w, cue)))
        .map(|(_, weight)| weight)
        .sum()
}

/// Whether `word` is a cue of any built-in tool ("searched", "mentions", "create").
pub(crate) fn is_cue_word(word: &str) -> bool {
    let word = word.to_lowercase();
    CUES.iter()
        .flat_map(|(_, cues)| cues.iter())
        .any(|(cue, _)| is_cue(&word, cue))
}

/// Whether the task's words point to the tool `name` at all.
pub(crate) fn points_to(task: &str, name: &str) -> bool {
    score(name, &words(task)) > 0
}

/// `specs` with the tools the task's words point to most first; ties (and tools it does not
/// point to) keep their order. A task that names a file of the workspace (`workspace_paths`)
/// points to `read_file` as a weak cue, first among equals: measured with SmolLM2-135M on
/// held-out tasks (BENCHMARKS.md), "Please check agenda.txt and tell me on which weekday the
/// meeting takes place" (no cue) got `find_files` with an invented pattern, and "Count how many
/// lines todo.txt contains" (`contain`, a search cue) a search for "Count". Code the task
/// quotes in backticks points to `run_command` as strongly as a verb. Of the tools that are not
/// built-ins, those the task does not point to are kept up to [`UNPOINTED_EXTRA_TOOLS_MAX`] (in
/// their given order) when built-ins are offered too. Returns the ranked specs and whether any tool was pointed to.
pub(crate) fn rank_tools(
    task: &str,
    specs: &[ToolSpec],
    workspace_paths: &[String],
) -> (Vec<ToolSpec>, bool) {
    let task_words = words(task);
    let names_a_file = workspace_paths.iter().any(|p| names_path(task, p));
    let read_named = |name: &str| names_a_file && name == "read_file";
    // Code quoted in a task (`` `sort names.txt` ``) is a command to run, a strong cue.
    let code_quoted = task.split('`').count() >= 3;
    let mut scored: Vec<(u32, &ToolSpec)> = specs
        .iter()
        .map(|s| {
            let mut bonus = u32::from(read_named(&s.name));
            if code_quoted && s.name == "run_command" {
                bonus += 2;
            }
            (score(&s.name, &task_words) + bonus, s)
        })
        .collect();
    let any = scored.iter().any(|(score, _)| *score > 0);
    scored.sort_by_key(|(score, s)| (std::cmp::Reverse(*score), !read_named(&s.name)));
    let builtin = |name: &str| CUES.iter().any(|(tool, _)| *tool == name);
    // The cap keeps extra tools from burying the built-ins; with no built-in offered (an agent
    // of its own tools only, such as `reagent cycles`'), there is nothing to bury.
    let offers_builtins = specs.iter().any(|s| builtin(&s.name));
    let mut unpointed_extras = 0;
    scored.retain(|(score, s)| {
        if !offers_builtins || builtin(&s.name) || *score > 0 {
            return true;
        }
        unpointed_extras += 1;
        unpointed_extras <= UNPOINTED_EXTRA_TOOLS_MAX
    });
    (scored.into_iter().map(|(_, s)| s.clone()).collect(), any)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn specs(names: &[&str]) -> Vec<ToolSpec> {
        names
            .iter()
            .map(|n| ToolSpec {
                name: (*n).into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .collect()
    }

    fn order(task: &str, names: &[&str]) -> (Vec<String>, bool) {
        let (ranked, pointed) = rank_tools(task, &specs(names), &[]);
        (ranked.into_iter().map(|s| s.name).collect(), pointed)
    }

    const TOOLS: &[&str] = &[
        "find_files",
        "grep_search",
        "list_directory",
        "read_file",
        "task_complete",
        "edit_file",
        "run_command",
        "write_file",
    ];

    #[test]
    fn the_tool_a_task_s_verb_names_comes_first() {
        for (task, first) in [
            ("Create a file named out.txt with the text hi", "write_file"),
            ("Please save the summary as summary.md", "write_file"),
            ("In main.rs, replace foo with bar", "edit_file"),
            ("Rename the variable x to count in lib.rs", "edit_file"),
            ("Run cargo test and tell me what fails", "run_command"),
            ("Execute the build script", "run_command"),
            ("List everything in the src directory", "list_directory"),
            ("Search the code for TODO comments", "grep_search"),
            ("Open the changelog and summarise it", "read_file"),
        ] {
            assert_eq!(order(task, TOOLS).0[0], first, "{task}");
        }
    }

    #[test]
    fn a_strong_cue_outweighs_a_weak_one_and_file_names_are_not_cues() {
        // "read" (a verb) over "folder" (a noun) and "find" (a weak verb).
        let (o, _) = order("In the folder docs, read guide.md", TOOLS);
        assert_eq!(o[0], "read_file");
        let (o, _) = order("Read start.txt and follow it to find the code", TOOLS);
        assert_eq!(o[0], "read_file");
        // `list.txt` is a file name, not the verb "list".
        let (o, pointed) = order("How many lines does list.txt have?", TOOLS);
        assert!(!pointed);
        assert_eq!(o, TOOLS, "nothing pointed to: the order is kept");
    }

    #[test]
    fn inflected_cues_count_and_ties_keep_the_given_order() {
        assert!(is_cue("creates", "create"));
        assert!(is_cue("changing", "change"));
        assert!(is_cue("listed", "list"));
        assert!(!is_cue("listen", "list"));
        assert!(!is_cue("runner", "run"));
        // "change" (edit) and "create" (write) both weigh 2: the edit tool is listed first.
        let (o, _) = order(
            "create or change it",
            &["read_file", "edit_file", "write_file"],
        );
        assert_eq!(o, ["edit_file", "write_file", "read_file"]);
    }

    #[test]
    fn a_task_naming_a_workspace_file_points_to_reading_it_first_among_equals() {
        let paths = ["agenda.txt".to_owned(), "notes/todo.txt".to_owned()];
        let first = |task: &str| rank_tools(task, &specs(TOOLS), &paths).0[0].name.clone();
        assert_eq!(
            first("Please check agenda.txt for the weekday"),
            "read_file"
        );
        // A weak cue of another tool ties: reading the named file comes first.
        assert_eq!(first("Count how many lines todo.txt contains"), "read_file");
        // A verb outweighs it; a file the workspace does not hold is no cue.
        assert_eq!(first("In agenda.txt, swap Monday for Friday"), "edit_file");
        assert_eq!(first("Which file contains the word Friday?"), "grep_search");
        let (_, pointed) = rank_tools("Check missing.txt", &specs(TOOLS), &paths);
        assert!(!pointed);
        // Quoted code is a command, over the named file.
        assert_eq!(
            first("Use the command `sort agenda.txt | head -n 1`"),
            "run_command"
        );
    }

    #[test]
    fn many_extra_tools_do_not_bury_the_built_ins() {
        let mut names: Vec<String> = CUES.iter().map(|(n, _)| n.to_string()).collect();
        names.extend((0..30).map(|i| format!("srv__thing{i}")));
        names.push("tracker__create_issue".into());
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (o, _) = order("Create an issue about the crash in the tracker", &names);
        assert_eq!(o[0], "tracker__create_issue");
        assert_eq!(o.len(), CUES.len() + 1 + UNPOINTED_EXTRA_TOOLS_MAX);
        for (builtin, _) in CUES {
            assert!(o.iter().any(|n| n == builtin), "{builtin} left out");
        }
        assert!(o.contains(&"srv__thing0".to_owned()));
        assert!(!o.contains(&"srv__thing3".to_owned()));
    }

    #[test]
    fn without_built_ins_every_extra_tool_is_kept() {
        let names = [
            "write",
            "read",
            "list",
            "delete",
            "pattern_search",
            "send_message",
        ];
        let (ranked, _) = rank_tools("Cycle 1 begins.", &specs(&names), &[]);
        let got: Vec<&str> = ranked.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got, names);
    }

    #[test]
    fn a_tool_without_cues_is_cued_by_its_own_name() {
        let (o, pointed) = order("Fetch the page at this url", &["read_file", "fetch_url"]);
        assert!(pointed);
        assert_eq!(o[0], "fetch_url");
    }
}
