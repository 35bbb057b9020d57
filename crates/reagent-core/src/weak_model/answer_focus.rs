//! Helping a weak model answer rather than echo, in the plain question that ends a constrained
//! run: the task's own words put the restated material that matters first, and an answer that
//! mostly copies that material is noticed so the question can be asked once more, narrowly.
//!
//! Measured with SmolLM2-135M (BENCHMARKS.md): shown a small workspace whole, it often restates
//! it ("The workspace holds 3 files: …") instead of answering.

use std::collections::HashSet;

/// Words too common to tell one file from another.
const COMMON: &[&str] = &[
    "the", "and", "are", "but", "can", "does", "for", "from", "give", "has", "have", "how", "its",
    "into", "look", "many", "say", "says", "tell", "that", "then", "there", "this", "what", "when",
    "where", "which", "who", "why", "with", "you", "your", "file", "files", "read", "find", "open",
    "answer", "please", "contains", "inside", "written",
];

/// Words of the restated material's own labels ("The file a.txt has 2 lines:", "The folder src
/// holds 3 files:"), which would otherwise make every file share them with the task.
const LABEL_WORDS: &[&str] = &["line", "lines", "folder", "folders", "holds", "workspace"];

/// Shortest answer, in words, that can count as a copy of the material.
const ECHO_MIN_WORDS: usize = 8;

/// Share of an answer's three-word runs found in the material from which it counts as a copy.
const ECHO_MIN_SHARE: f64 = 0.6;

/// The lowercase words of `text`: letters and digits, with `.`, `_`, `-` and `/` kept inside
/// a word (`notes.txt`, `eu-north-7`, `docs/guide.md`).
pub(crate) fn words(text: &str) -> Vec<String> {
    let inner = |c: char| c.is_alphanumeric() || "._-/".contains(c);
    text.split(|c: char| !inner(c))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `text` names the workspace file `path`: whole, or by its file name ("The key is in
/// vault.txt" names `secrets/vault.txt`).
pub(crate) fn names_path(text: &str, path: &str) -> bool {
    let path = path.to_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    words(text).iter().any(|w| *w == path || w == name)
}

/// The words of `text` and, for a path, each of its parts (`docs/guide.md` gives `guide.md`).
fn word_set(text: &str) -> HashSet<String> {
    let mut set = HashSet::new();
    for word in words(text) {
        if word.contains('/') {
            set.extend(word.split('/').filter(|p| !p.is_empty()).map(str::to_owned));
        }
        set.insert(word);
    }
    set
}

/// The task's distinctive words: at least three characters, not a common or a label word.
pub(crate) fn keywords(task: &str) -> HashSet<String> {
    word_set(task)
        .into_iter()
        .filter(|w| w.chars().count() >= 3)
        .filter(|w| !COMMON.contains(&w.as_str()) && !LABEL_WORDS.contains(&w.as_str()))
        .collect()
}

/// How many of the task's keywords a restated section (a labelled file or result) holds.
pub(crate) fn relevance(keywords: &HashSet<String>, section: &str) -> usize {
    let here = word_set(section);
    keywords.iter().filter(|k| here.contains(*k)).count()
}

/// `sections` with those sharing more of the task's keywords first; ties keep their order.
pub(crate) fn most_relevant_first(task: &str, sections: &mut [&str]) {
    let keywords = keywords(task);
    sections.sort_by_key(|s| std::cmp::Reverse(relevance(&keywords, s)));
}

/// Whether `answer` is mostly a copy of `material`: at least [`ECHO_MIN_WORDS`] words, and at
/// least [`ECHO_MIN_SHARE`] of its three-word runs appear in the material.
pub(crate) fn is_echo(answer: &str, material: &str) -> bool {
    let said = words(answer);
    if said.len() < ECHO_MIN_WORDS {
        return false;
    }
    let material = words(material);
    let shown: HashSet<&[String]> = material.windows(3).collect();
    let runs = said.windows(3).count();
    let copied = said.windows(3).filter(|run| shown.contains(run)).count();
    copied as f64 >= ECHO_MIN_SHARE * runs as f64
}

/// The answer inside a reply shaped as a question and its answer (weak models continue the
/// narrow question's pattern: `Question: …` then `Answer: 45`): the text after an `Answer:`
/// label on the line right below a `Question:` line that shares a keyword with the task (the
/// task echoed or in other words), up to the next blank line. `None` without such a pair, or
/// when the "answer" only repeats its question or the narrow question's instruction.
pub(crate) fn answer_below_question(reply: &str, task: &str) -> Option<String> {
    let keywords = keywords(task);
    let lines: Vec<&str> = reply.lines().collect();
    lines.iter().enumerate().find_map(|(i, line)| {
        let asked = line.trim().strip_prefix("Question:")?;
        if relevance(&keywords, asked) == 0 {
            return None;
        }
        let first = lines.get(i + 1)?.trim().strip_prefix("Answer:")?;
        let rest = lines[i + 2..].iter().take_while(|l| !l.trim().is_empty());
        let answer = std::iter::once(first)
            .chain(rest.copied())
            .collect::<Vec<_>>()
            .join("\n");
        let answer = answer.trim();
        let fresh = !answer.is_empty()
            && !asked.contains(answer)
            && !crate::weak_model::plain_question::NARROW_INSTRUCTION.contains(answer);
        fresh.then(|| answer.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_below_a_question_about_the_task_is_taken() {
        let task = "Look in settings.ini and tell me the value of timeout.";
        // What SmolLM2-135M answered about settings.ini: its own words for the question.
        let reply = "The file settings.ini has 4 lines:\n[network]\ntimeout = 45\n\n\
                     Question: What is the value of timeout in this file?\nAnswer: 45\n\n\
                     The file settings.ini has 4 lines:\n[network]";
        assert_eq!(answer_below_question(reply, task).as_deref(), Some("45"));
        let two_lines = "Question: the timeout?\nAnswer: It is 45\nseconds.\n\nMore.";
        assert_eq!(
            answer_below_question(two_lines, task).as_deref(),
            Some("It is 45\nseconds.")
        );
        // The instruction or the question echoed as the "answer" is no answer.
        let echoed = format!("Question: {task}\nAnswer: Do not repeat the files.");
        assert_eq!(answer_below_question(&echoed, task), None);
        let echoed = format!("Question: {task}\nAnswer: the value of timeout");
        assert_eq!(answer_below_question(&echoed, task), None);
        // A question about something else, no question, or no label right below it.
        let other = "Question: Who wrote the poem?\nAnswer: Ines";
        assert_eq!(answer_below_question(other, task), None);
        assert_eq!(answer_below_question("Answer: 45", task), None);
        let far = format!("Question: {task}\nThe file has 4 lines.\nAnswer: 45");
        assert_eq!(answer_below_question(&far, task), None);
    }

    #[test]
    fn keywords_skip_common_words_and_split_paths() {
        let k = keywords("Read docs/guide.md and tell me which tool it recommends.");
        for want in ["docs/guide.md", "guide.md", "docs", "tool", "recommends"] {
            assert!(k.contains(want), "{want} in {k:?}");
        }
        for common in ["read", "and", "tell", "which", "me", "it"] {
            assert!(!k.contains(common), "{common} in {k:?}");
        }
    }

    #[test]
    fn sections_naming_the_task_s_words_come_first() {
        let mut sections = vec![
            "The file a.txt has 1 line:\nThe cat sleeps.",
            "The file b.txt has 1 line:\nA penguin waddles by.",
            "The file c.txt has 1 line:\nThe dog barks.",
        ];
        most_relevant_first("Which file mentions a penguin?", &mut sections);
        assert!(sections[0].contains("penguin"), "{sections:?}");
        assert!(sections[1].contains("a.txt"), "ties keep their order");
        let mut labelled = vec![
            "The file todo.txt has 3 lines:\ncall Ada",
            "The file list.txt has 5 lines:\nmilk",
        ];
        most_relevant_first("How many lines does list.txt have?", &mut labelled);
        assert!(
            labelled[0].contains("list.txt"),
            "labels do not count: {labelled:?}"
        );
    }

    #[test]
    fn a_copy_of_the_material_is_an_echo_and_a_short_answer_is_not() {
        let material = "The workspace holds 3 files: green.txt, orange.txt, red.txt.\n\n\
                        The file green.txt has 1 line:\nlime\n\nThe file orange.txt has 1 line:\nbitter marmalade";
        assert!(is_echo(
            "The workspace holds 3 files: green.txt, orange.txt, red.txt. The file green.txt has 1 line: lime",
            material
        ));
        assert!(!is_echo("orange.txt holds the word marmalade.", material));
        assert!(!is_echo(
            "The word marmalade is in the file called orange.txt, not in the other two files.",
            material
        ));
    }
}
