//! The shipped coding suites are sound: every task's checks fail on its starting files (an
//! agent that does nothing fails) and pass on its reference solution (a right outcome passes),
//! and the suites cover the kinds they promise.

use std::collections::BTreeMap;
use std::path::Path;

use reagent_eval::{check_solution, Solutions, Suite};

fn load(name: &str) -> (Suite, Solutions) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals");
    let suite = Suite::load(&dir.join(format!("{name}.toml"))).unwrap();
    let solutions = Solutions::load(&dir.join(format!("{name}.solutions.toml")), &suite).unwrap();
    (suite, solutions)
}

/// The number of tasks per kind.
fn kinds(suite: &Suite) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for task in &suite.tasks {
        *kinds.entry(task.category.clone()).or_insert(0) += 1;
    }
    kinds
}

/// Every task fails untouched and passes solved; returns the number of tasks per kind.
fn assert_sound(name: &str) -> BTreeMap<String, usize> {
    let (suite, solutions) = load(name);
    for task in &suite.tasks {
        let untouched = check_solution(task, None).unwrap();
        assert!(
            untouched.iter().any(|o| !o.passed),
            "{name}/{}: every check passes on the starting files: {untouched:?}",
            task.id
        );
        let solved = check_solution(task, solutions.by_task.get(&task.id)).unwrap();
        let failed: Vec<_> = solved.iter().filter(|o| !o.passed).collect();
        assert!(
            failed.is_empty(),
            "{name}/{}: the reference solution fails {failed:?}",
            task.id
        );
    }
    kinds(&suite)
}

#[test]
fn every_coding_task_fails_untouched_and_passes_its_solution() {
    let kinds = assert_sound("coding-tasks");
    assert!(kinds.len() >= 10, "{kinds:?}");
    assert!(kinds.values().all(|n| *n >= 4), "{kinds:?}");
    assert!(kinds.values().sum::<usize>() >= 40, "{kinds:?}");
}

#[test]
fn every_held_out_coding_task_fails_untouched_and_passes_its_solution() {
    let held_out = assert_sound("coding-tasks-heldout");
    let kinds = kinds(&load("coding-tasks").0);
    assert_eq!(
        held_out.keys().collect::<Vec<_>>(),
        kinds.keys().collect::<Vec<_>>(),
        "the held-out set covers the same kinds"
    );
    assert!(held_out.values().sum::<usize>() >= 20, "{held_out:?}");
}

#[test]
fn the_held_out_set_shares_no_task_id_or_prompt_with_the_first() {
    let (first, _) = load("coding-tasks");
    let (held_out, _) = load("coding-tasks-heldout");
    for task in &held_out.tasks {
        assert!(
            first
                .tasks
                .iter()
                .all(|t| t.id != task.id && t.prompt != task.prompt),
            "{}",
            task.id
        );
    }
}
