//! The shipped suites' answer checks can fail: an answer that restates the prompt and every
//! workspace file (names and contents) must fail each task that is checked by its answer, and
//! the answer made of the expected texts alone must pass it.

use std::path::Path;

use reagent_eval::{answer_contains, Check, Suite, Task};

/// Tasks whose right answer is the whole workspace listing, so a dump is a right answer.
const DUMP_IS_THE_ANSWER: [&str; 2] = ["list-root", "h-list-top"];

fn answer_passes(task: &Task, answer: &str) -> bool {
    task.checks.iter().all(|check| match check {
        Check::AnswerContains(text) => answer_contains(answer, text),
        Check::AnswerLacks(text) => !answer_contains(answer, text),
        _ => true,
    })
}

fn dump(task: &Task) -> String {
    let mut text = format!(
        "{}\nThe workspace holds {} files:",
        task.prompt,
        task.files.len()
    );
    for (path, content) in &task.files {
        let lines = content.lines().count();
        text.push_str(&format!("\nThe file {path} has {lines} lines:\n{content}"));
    }
    text
}

#[test]
fn a_dump_of_the_workspace_fails_every_task_checked_by_its_answer() {
    assert_dumps_fail("small-tasks.toml", 28);
}

#[test]
fn a_dump_of_the_workspace_fails_every_held_out_task_checked_by_its_answer() {
    assert_dumps_fail("small-tasks-heldout.toml", 20);
}

#[test]
fn a_dump_of_the_workspace_fails_every_task_of_the_second_held_out_set_checked_by_its_answer() {
    assert_dumps_fail("small-tasks-heldout-b.toml", 14);
}

#[test]
fn a_dump_of_the_workspace_fails_every_coding_task_checked_by_its_answer() {
    assert_dumps_fail("coding-tasks.toml", 8);
    assert_dumps_fail("coding-tasks-heldout.toml", 4);
}

/// Every task of `evals/<file>` checked by its answer fails a dump and passes its expected
/// texts; at least `min_answer_tasks` of them are checked by their answer.
fn assert_dumps_fail(file: &str, min_answer_tasks: usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../evals")
        .join(file);
    let suite = Suite::load(&path).unwrap();
    let mut answer_tasks = 0;
    for task in &suite.tasks {
        let expected: Vec<&str> = task
            .checks
            .iter()
            .filter_map(|c| match c {
                Check::AnswerContains(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        if expected.is_empty() {
            continue;
        }
        answer_tasks += 1;
        let right = expected.join(", ");
        assert!(answer_passes(task, &right), "{}: {right:?} fails", task.id);
        let dumped = dump(task);
        if DUMP_IS_THE_ANSWER.contains(&task.id.as_str()) {
            assert!(answer_passes(task, &dumped), "{}", task.id);
        } else {
            assert!(
                !answer_passes(task, &dumped),
                "{}: a dump passes:\n{dumped}",
                task.id
            );
        }
    }
    assert!(
        answer_tasks >= min_answer_tasks,
        "{file}: {answer_tasks} tasks checked by answer"
    );
}
