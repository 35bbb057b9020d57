//! The weak-model policy: everything the loop does only for very small models, behind one
//! boundary.
//!
//! A model as small as SmolLM2-135M (no tool template; forced by a JSON Schema it emits valid
//! calls but cannot choose between tools from a task's meaning, and writes nonsense into a
//! JSON string) got through one-line lookups with a set of English-word heuristics, measured
//! in BENCHMARKS.md: the tool list ranked by the task's words ([`tool_retrieval`]), the schema's
//! free-text arguments narrowed to what the task and a small workspace hold
//! ([`schema_narrowing`]), the run ended with a plain question restating its results
//! ([`plain_question`], [`workspace_view`], [`answer_focus`]), the plain question at the first
//! identical repeat, and the run ended once every file the task names changed.
//!
//! None of that helps a model that can call tools, and some of it hurts one (a capable model's
//! own answer replaced, its arguments narrowed). So it is chosen by the model's profile, not by
//! the tool mode: [`Policy::choose`] gives [`Policy::VerySmall`] only to a model whose profile
//! asks for a weak-model measure ([`ModelProfile::is_very_small`]: SmolLM2's built-in one, or a
//! user's profile) and that runs in the constrained mode. `--tool-mode auto` on a server that
//! offers a JSON Schema but no tools still picks the constrained mode for any model, but a
//! capable model keeps the standard loop there. The loop calls the policy through the hooks
//! below and nothing else of this module's children.

use std::sync::Arc;

use reagent_protocol::{Message, ToolSpec};
use reagent_tools::{ToolContext, ToolRegistry, Workspace, WorkspaceFiles};
use serde::{Deserialize, Serialize};

use crate::config::ToolMode;
use crate::guardrails::RepetitionDetector;
use crate::profiles::ModelProfile;

pub(crate) mod answer_focus;
pub(crate) mod lookup;
pub(crate) mod plain_question;
pub mod schema_narrowing;
pub(crate) mod tool_retrieval;
pub(crate) mod workspace_view;

use schema_narrowing::Narrowing;

/// Words of a task that ask for a change of the workspace (see [`Policy::work_not_done`]).
const CHANGE_WORDS: [&str; 22] = [
    "fix",
    "repair",
    "correct",
    "implement",
    "fill",
    "rename",
    "change",
    "update",
    "bump",
    "set",
    "raise",
    "move",
    "create",
    "make",
    "write",
    "put",
    "rewrite",
    "replace",
    "add",
    "remove",
    "delete",
    "prepare",
];

/// Words of a task that ask to run a command (see [`Policy::work_not_done`]).
const RUN_WORDS: [&str; 2] = ["run", "execute"];

/// Whether `task` asks to run a command ([`RUN_WORDS`] among its words).
pub(crate) fn asks_to_run(task: &str) -> bool {
    has_word(task, &RUN_WORDS)
}

/// Whether `task` asks for a change of the workspace ([`CHANGE_WORDS`] among its words).
fn asks_change(task: &str) -> bool {
    has_word(task, &CHANGE_WORDS)
}

/// Whether one of `list` (lower case) is a word of `text`, in any case (an identifier such as
/// `count_words` is one word).
fn has_word(text: &str, list: &[&str]) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| list.contains(&w.to_lowercase().as_str()))
}

/// Verbs that act on a file as a whole: a task that moves, renames, copies or deletes a file
/// needs commands, not only edits as text ([`Policy::moves_files`]).
const FILE_VERBS: [&str; 5] = ["move", "rename", "copy", "delete", "remove"];

/// Largest model, in billions of parameters by its name, that gets [`Policy::Small`]: the
/// sizes measured are 0.5B and 1.5B (Qwen2.5-Coder); 3B is the next size of these families.
const SMALL_MAX_BILLIONS: f32 = 3.0;

/// The measures the loop takes for a session's model, chosen once when the session settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Policy {
    /// The loop as any model that can call tools gets it.
    #[default]
    Standard,
    /// A small model that calls tools (at most [`SMALL_MAX_BILLIONS`] by its name, outside the
    /// constrained mode of a very small one): see [`Policy::helps_coding`].
    Small,
    /// The weak-model measures (a very small model in the constrained mode).
    VerySmall,
}

impl Policy {
    /// The policy for `model` with `profile` running in `mode`.
    pub(crate) fn choose(model: &str, profile: &ModelProfile, mode: ToolMode) -> Self {
        if profile.is_very_small() {
            // Outside the constrained mode such a model has no tool template to be helped
            // with: the standard loop.
            if mode == ToolMode::Constrained {
                Policy::VerySmall
            } else {
                Policy::Standard
            }
        } else if profile
            .small_model
            .unwrap_or_else(|| parameter_billions(model).is_some_and(|b| b <= SMALL_MAX_BILLIONS))
        {
            Policy::Small
        } else {
            Policy::Standard
        }
    }

    /// Whether the weak-model measures apply.
    pub(crate) fn is_very_small(self) -> bool {
        self == Policy::VerySmall
    }

    /// Hook (coding help): whether the loop helps a small model that calls tools with the
    /// measures of `session::edits` and `session::preload`: the files the task names read for
    /// it before its first turn, edits it writes as text (and content answered for the one new
    /// file the task names) applied as calls, and a call object naming no tool read as the one
    /// tool its arguments fit. For small models only: a capable model's code blocks are not
    /// meant as edits and it reads what it needs; a very small model's narrowed schema
    /// already offers only the workspace's real texts.
    pub(crate) fn helps_coding(self) -> bool {
        self == Policy::Small
    }

    /// Hook (ending): what to tell a small model that ends a run without doing what its task
    /// asks: no file changed (`changed` false) when the task asks for a change (one of
    /// [`CHANGE_WORDS`] among its words), no command run (`ran` false) when it asks to run one
    /// (`run` or `execute`), an answer without what the last command printed (`unsaid`)
    /// when it asks to run one, or an answer without anything the last search found beyond
    /// the task's own words (`unfound`, see [`lookup::leaves_out`]) when it asks no change;
    /// `None` when it may end. The 1.5B answered "I have successfully looked up `backup_host`
    /// in the `hosts.ini` file and found its value." with the value in the search's result. Qwen2.5-Coder-1.5B, shown the files
    /// its task names, answered "Fixed the largest function in pick.py." without an edit and
    /// "Executed `python3 calc.py`…" without running it, or after running it (held-out suite).
    pub(crate) fn work_not_done(
        self,
        task: &str,
        changed: bool,
        ran: bool,
        unsaid: bool,
        unfound: bool,
    ) -> Option<&'static str> {
        if self != Policy::Small {
            return None;
        }
        if asks_change(task) && !changed {
            Some(
                "No file has been changed yet, but the task asks for a change. Make it now \
                 with edit_file or write_file, then call task_complete.",
            )
        } else if asks_to_run(task) && !ran {
            Some(
                "No command has been run yet, but the task asks to run one. Call run_command \
                 now, then answer from its output.",
            )
        } else if asks_to_run(task) && unsaid {
            Some(
                "Your answer does not say what the command printed. Answer with what it \
                 printed.",
            )
        } else if unfound && !asks_change(task) {
            Some(
                "Your answer does not say what the search found. Answer the question with the \
                 value from the lines found.",
            )
        } else {
            None
        }
    }

    /// Hook (first turn): whether a run of `task` gets edit turns (`session::edit_turn`), the
    /// profile allowing (`edit_turns`, on by default for [`Policy::Small`]): the task asks for
    /// a change of the workspace ([`CHANGE_WORDS`]) and asks no question and no lookup (a
    /// count or a lookup needs the tools, `weak_model::lookup`). A task that moves files gets
    /// them with shell commands ([`Policy::moves_files`]).
    /// Shown the files and asked for each changed one whole as a `<file path>` element,
    /// without tools, Qwen2.5-Coder-1.5B made 25 and the 0.5B 15 of the coding suite's 28
    /// edit tasks in one reply; the tool loop made 1 and 0 of the held-out suite's 14
    /// (BENCHMARKS.md).
    pub(crate) fn edits_as_text(edit_turns: bool, task: &str) -> bool {
        edit_turns && !task.contains('?') && asks_change(task) && lookup::lookup(task).is_none()
    }

    /// Hook (edit turns): whether an edit turn of `task` may also answer with shell commands
    /// (`mkdir`, `mv`, `cp`, `rm` in a fenced `sh` block, run as `run_command`): the task moves,
    /// renames, copies or deletes a file ([`FILE_VERBS`] followed by a path or a kind of
    /// file, as in "move every .log file"). Asked for the files whole, the 1.5B wrote the
    /// moved files' content to their new paths and left the old ones (coding suite).
    pub(crate) fn moves_files(task: &str) -> bool {
        let words: Vec<String> = crate::session::edits::named_paths(task)
            .map(|(_, w)| w.to_lowercase())
            .collect();
        // The verb's object: a path (`notes.txt`) or a kind of file (`every .log file`).
        let file = |w: &str| {
            let ext = w.trim_start_matches('*').strip_prefix('.');
            crate::text_edits::looks_like_path(w)
                || ext.is_some_and(|e| !e.is_empty() && e.chars().all(char::is_alphanumeric))
        };
        words.iter().enumerate().any(|(i, verb)| {
            let mut object = words[i + 1..].iter().skip_while(|w| {
                matches!(
                    w.as_str(),
                    "the" | "file" | "files" | "every" | "all" | "each"
                )
            });
            FILE_VERBS.contains(&verb.as_str()) && object.next().is_some_and(|w| file(w))
        })
    }

    /// Hook (first turn): the search a small model's lookup task gets before its first turn
    /// (`weak_model::lookup`), or `None`.
    pub(crate) fn lookup(self, task: &str) -> Option<lookup::Lookup> {
        if self == Policy::Small {
            lookup::lookup(task)
        } else {
            None
        }
    }

    /// Hook (request): whether a native run's tool results reach the model as plain text
    /// under a one-line label (`prompts::plain_tool_messages`) instead of the JSON envelope.
    /// Qwen2.5-Coder 0.5B/1.5B copied the envelope into their answers ("The command printed
    /// `exit code 0\n--- stdout ---\n2024\n`", held-out suite) and echoed it as their
    /// reply; the history and the events keep the JSON.
    pub(crate) fn plain_tool_results(self) -> bool {
        self == Policy::Small
    }

    /// Hook (calls): whether only a reply's first calls of one tool run (the others are left
    /// out of the reply). Qwen2.5-Coder-0.5B often follows its one real call with a call of
    /// every offered tool in the order the prompt lists them, `task_complete` last, with
    /// arguments that fit none (`"path": "workspace"`): on the coding suite they failed or
    /// ended the run before the model saw its first call's result.
    pub(crate) fn runs_first_tool_only(self) -> bool {
        self == Policy::Small
    }

    /// Hook (turn): whether a reply cut off at the token cap is asked again with twice the cap.
    /// Not for a small model: on the coding suite its cut-off replies were one call or blank
    /// line repeated to the cap (Qwen2.5-Coder-0.5B: 60 `read_file` calls of two files), and
    /// the retry spent twice the time on more of the same; the calls it holds are run.
    pub(crate) fn retries_truncated_replies(self) -> bool {
        self != Policy::Small
    }

    /// Hook (system prompt): the tools in the order the prompt lists them, and the tool its
    /// example call shows (constrained mode). A very small model takes the tool listed first
    /// or shown in the example, so the list is ranked by the task's words (the read-only
    /// tools first among equals) and the example calls the tool the task points to; any other
    /// model gets the list as the schema offers it (the read-only tools first in the
    /// constrained mode) and a `read_file` example.
    pub(crate) fn tool_listing(
        self,
        task: &str,
        mode: ToolMode,
        specs: &[ToolSpec],
        read_first: &[ToolSpec],
        files: Option<&WorkspaceFiles>,
    ) -> (Vec<ToolSpec>, String) {
        const READ: &str = "read_file";
        match self {
            Policy::VerySmall => {
                let paths = files.map_or(&[][..], |f| f.paths.as_slice());
                let (ranked, pointed) = tool_retrieval::rank_tools(task, read_first, paths);
                let example = match ranked.first() {
                    Some(top) if pointed => top.name.clone(),
                    _ => READ.to_owned(),
                };
                (ranked, example)
            }
            _ if mode == ToolMode::Constrained => (read_first.to_vec(), READ.to_owned()),
            _ => (specs.to_vec(), READ.to_owned()),
        }
    }

    /// Hook (schema): what the constrained schema narrows to the task and the workspace, for a
    /// very small model whose profile asks for it (`narrow`).
    pub(crate) fn narrowing(
        self,
        narrow: bool,
        task: &str,
        workspace: &Workspace,
        files: Option<&WorkspaceFiles>,
    ) -> Option<Narrowing> {
        files
            .filter(|_| narrow && self.is_very_small())
            .map(|files| schema_narrowing::narrowing(task, workspace, files, Vec::new()))
    }

    /// Hook (repetition): the detector of a run. A very small model under a schema repeats a
    /// call whose result it already has and does not stop by itself, so it fires at the first
    /// identical repeat (threshold 2), and the run then asks for the answer
    /// ([`Policy::answers_at_repetition`]); others keep the configured threshold.
    pub(crate) fn repetition_detector(self, threshold: usize) -> RepetitionDetector {
        match self {
            Policy::VerySmall if threshold > 2 => RepetitionDetector::new(2),
            _ => RepetitionDetector::new(threshold),
        }
    }

    /// Hook (repetition): whether a repetition ends the run with the final answer (a very small
    /// model ignores hints) instead of a hint and then a stop.
    pub(crate) fn answers_at_repetition(self) -> bool {
        self.is_very_small()
    }

    /// Hook (ending): whether a run that would complete ends with the plain question instead
    /// of the model's own answer (`plain`: the profile's `plain_final_question`).
    pub(crate) fn ends_with_plain_question(self, plain: bool) -> bool {
        plain && self.is_very_small()
    }

    /// Hook (final answer): the plain question a very small model is asked for its answer
    /// (the task and the run's results restated, without tools); `None` for any other model,
    /// which is asked to continue the conversation.
    pub(crate) fn plain_question(
        self,
        task: &str,
        history: &[Arc<Message>],
        tools: &ToolRegistry,
        workspace: &Arc<Workspace>,
    ) -> Option<PlainQuestion> {
        if !self.is_very_small() {
            return None;
        }
        let view = workspace_view::workspace_view(tools, &ToolContext::new(workspace.clone()));
        Some(PlainQuestion {
            task: task.to_owned(),
            history: history.to_vec(),
            view,
        })
    }
}

/// The plain final question of a very small model, and what is done with its answer: asked
/// once more, narrowly, when the answer mostly copies what was restated; the text under an
/// `Answer:` label kept when the reply is shaped as a question and its answer.
pub(crate) struct PlainQuestion {
    task: String,
    history: Vec<Arc<Message>>,
    view: workspace_view::WorkspaceView,
}

impl PlainQuestion {
    /// The first question: the task and the run's results restated.
    pub(crate) fn first(&self) -> Vec<Arc<Message>> {
        shared(plain_question::restated_question(
            &self.task,
            &self.history,
            &self.view,
        ))
    }

    /// Whether `answer` to `question` (what [`PlainQuestion::first`] gave) only copied what
    /// it restated.
    pub(crate) fn is_echo(answer: &str, question: &[Arc<Message>]) -> bool {
        let material = question.last().map_or("", |m| m.content.as_str());
        answer_focus::is_echo(answer, material)
    }

    /// The narrow question asked after an echo.
    pub(crate) fn narrow(&self) -> Vec<Arc<Message>> {
        shared(plain_question::narrow_question(
            &self.task,
            &self.history,
            &self.view,
        ))
    }

    /// The answer as kept: the text below an `Answer:` label of a reply shaped as the question
    /// and its answer, else the reply.
    pub(crate) fn tidy(&self, answer: String) -> String {
        answer_focus::answer_below_question(&answer, &self.task).unwrap_or(answer)
    }
}

/// The parameter count a model's name gives, in billions: `qwen2.5-coder:0.5b` 0.5,
/// `Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf` 1.5, `smollm2:135m` 0.135; `None` without one.
pub(crate) fn parameter_billions(model: &str) -> Option<f32> {
    let lower = model.to_lowercase();
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .flat_map(|token| token.split(".q").take(1))
        .find_map(|token| {
            let (number, scale) = match token.as_bytes().last()? {
                b'b' => (&token[..token.len() - 1], 1.0),
                b'm' => (&token[..token.len() - 1], 0.001),
                _ => return None,
            };
            let n: f32 = number.parse().ok()?;
            (n > 0.0).then_some(n * scale)
        })
}

fn shared(messages: Vec<Message>) -> Vec<Arc<Message>> {
    messages.into_iter().map(Arc::new).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    #[test]
    fn only_a_very_small_profile_in_the_constrained_mode_gets_the_weak_model_policy() {
        let choose =
            |model: &str, mode| Policy::choose(model, &crate::profile_for(model, &[]), mode);
        assert_eq!(
            choose("SmolLM2-135M-Instruct", ToolMode::Constrained),
            Policy::VerySmall
        );
        for (model, mode, policy) in [
            ("SmolLM2-135M-Instruct", ToolMode::Native, Policy::Standard),
            ("qwen2.5-coder:0.5b", ToolMode::Constrained, Policy::Small),
            ("qwen2.5-coder:1.5b", ToolMode::Native, Policy::Small),
            (
                "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
                ToolMode::Native,
                Policy::Small,
            ),
            ("qwen3:8b", ToolMode::Native, Policy::Standard),
            ("qwen3:8b", ToolMode::Constrained, Policy::Standard),
            ("some-model", ToolMode::Constrained, Policy::Standard),
        ] {
            assert_eq!(choose(model, mode), policy, "{model} {mode:?}");
        }
        let asks_plainly = ModelProfile {
            plain_final_question: true,
            ..ModelProfile::default()
        };
        assert_eq!(
            Policy::choose("mine", &asks_plainly, ToolMode::Constrained),
            Policy::VerySmall
        );
        // The profile's `small_model` overrides the size in the name, both ways.
        let small = |on| ModelProfile {
            small_model: Some(on),
            ..crate::profile_for("qwen2.5-coder:1.5b", &[])
        };
        assert_eq!(
            Policy::choose("qwen2.5-coder:1.5b", &small(false), ToolMode::Native),
            Policy::Standard
        );
        assert_eq!(
            Policy::choose("qwen2.5-coder:7b", &small(true), ToolMode::Native),
            Policy::Small
        );
    }

    #[test]
    fn the_standard_policy_neither_ranks_tools_nor_asks_plainly_nor_narrows() {
        let specs = [spec("read_file"), spec("write_file"), spec("run_command")];
        let read_first = [spec("read_file"), spec("run_command"), spec("write_file")];
        let task = "Run `make` and write the result to out.txt";
        let names = |v: &[ToolSpec]| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        let (listed, example) =
            Policy::Standard.tool_listing(task, ToolMode::Constrained, &specs, &read_first, None);
        assert_eq!(
            (names(&listed), example.as_str()),
            (names(&read_first), "read_file")
        );
        let (listed, _) =
            Policy::Standard.tool_listing(task, ToolMode::Native, &specs, &read_first, None);
        assert_eq!(names(&listed), names(&specs));
        let (ranked, example) =
            Policy::VerySmall.tool_listing(task, ToolMode::Constrained, &specs, &read_first, None);
        assert_eq!(ranked[0].name, "run_command");
        assert_eq!(example, "run_command");
        assert!(!Policy::Standard.ends_with_plain_question(true));
        assert!(Policy::VerySmall.ends_with_plain_question(true));
        assert!(!Policy::VerySmall.ends_with_plain_question(false));
        assert!(!Policy::Standard.answers_at_repetition());
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::open(dir.path()).unwrap();
        let files = WorkspaceFiles {
            paths: vec![],
            more: false,
        };
        assert!(Policy::Standard
            .narrowing(true, task, &workspace, Some(&files))
            .is_none());
        assert!(Policy::VerySmall
            .narrowing(true, task, &workspace, Some(&files))
            .is_some());
    }

    #[test]
    fn edit_turns_are_for_tasks_that_change_files_in_place() {
        for task in [
            "`python3 -m unittest test_pick` fails. The bug is in pick.py; repair it.",
            "Rename the method calcArea of class Square to area, in geometry.py and draw.py.",
            "Make a file scores.json containing a JSON object.",
            "Remove the debug line from app.py.",
        ] {
            assert!(Policy::edits_as_text(true, task), "{task}");
            assert!(!Policy::edits_as_text(false, task), "{task}");
            assert!(!Policy::moves_files(task), "{task}");
        }
        for task in [
            // Files moved, renamed or deleted as a whole: with shell commands.
            "Move test_alpha.py and test_beta.py into a new tests directory.",
            "Rename conf/old_name.json to conf/settings.json, and update loader.py.",
            "Create a folder logs and move every .log file of the workspace root into it.",
            "Delete the file old.txt",
        ] {
            assert!(Policy::edits_as_text(true, task), "{task}");
            assert!(Policy::moves_files(task), "{task}");
        }
        for task in [
            // A question, or a count: a lookup needs the tools.
            "How many lines in build.log mention WARNING? Put only the count into warnings.txt.",
            "Count the lines of app.log that contain ERROR and write the number to n.txt.",
            // No change asked for.
            "Execute `sh summary.sh` and report the line it prints.",
        ] {
            assert!(!Policy::edits_as_text(true, task), "{task}");
        }
        // "Move" that moves no file: an edit.
        let task = "Move the service from image tag 0.14.0 to 0.15.0 in deploy/compose.yaml.";
        assert!(Policy::edits_as_text(true, task) && !Policy::moves_files(task));
    }

    #[test]
    fn a_very_small_model_s_repetition_fires_at_the_first_identical_repeat() {
        use serde_json::json;
        let mut d = Policy::VerySmall.repetition_detector(3);
        assert_eq!(d.record("read_file", &json!({"path": "a"}), "x"), None);
        assert!(d.record("read_file", &json!({"path": "a"}), "x").is_some());
        let mut d = Policy::Standard.repetition_detector(3);
        assert_eq!(d.record("read_file", &json!({"path": "a"}), "x"), None);
        assert_eq!(d.record("read_file", &json!({"path": "a"}), "x"), None);
        assert!(d.record("read_file", &json!({"path": "a"}), "x").is_some());
        let mut off = Policy::VerySmall.repetition_detector(0);
        assert_eq!(off.record("read_file", &json!({}), "x"), None);
        assert_eq!(off.record("read_file", &json!({}), "x"), None);
        assert!(Policy::VerySmall.answers_at_repetition());
    }

    #[test]
    fn the_parameter_count_is_read_from_the_model_s_name() {
        for (name, billions) in [
            ("qwen2.5-coder:0.5b", Some(0.5)),
            ("Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.gguf", Some(1.5)),
            ("smollm2:135m", Some(0.135)),
            ("SmolLM2-135M-Instruct.Q4_1.gguf", Some(0.135)),
            ("llama3.1:70b", Some(70.0)),
            ("gemma4:e2b", None),
            ("qwen3-coder", None),
            ("mistral", None),
        ] {
            assert_eq!(parameter_billions(name), billions, "{name}");
        }
    }
}
