//! The red-team table (`tests/data/redteam.md`, kept in the repository) against this suite:
//! every row of sections C, D and E (the `run_command` rows) has a test named `rowNN_…`
//! in `redteam_{c,d,e}.rs`, and no test names a row the table does not have.

use std::collections::BTreeSet;

/// Row numbers of the table's sections whose heading starts with one of `sections`.
fn table_rows(table: &str, sections: &[&str]) -> BTreeSet<u32> {
    let mut inside = false;
    let mut rows = BTreeSet::new();
    for line in table.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = sections.iter().any(|s| heading.starts_with(s));
        } else if inside {
            let cell = line.trim_start_matches('|').split('|').next().unwrap_or("");
            if let Ok(n) = cell.trim().parse() {
                rows.insert(n);
            }
        }
    }
    rows
}

/// Row numbers named by `fn rowNN_` in the given sources.
fn tested_rows(sources: &[&str]) -> BTreeSet<u32> {
    sources
        .iter()
        .flat_map(|s| s.split("fn row").skip(1))
        .filter_map(|rest| rest.split('_').next()?.parse().ok())
        .collect()
}

#[test]
fn every_run_command_row_of_the_table_has_a_test() {
    let table = include_str!("../data/redteam.md");
    let want = table_rows(table, &["C.", "D.", "E."]);
    assert_eq!(
        want,
        (34..=62).collect::<BTreeSet<u32>>(),
        "sections C-E of the table should hold rows 34-62"
    );
    let got = tested_rows(&[
        include_str!("redteam_c.rs"),
        include_str!("redteam_d.rs"),
        include_str!("redteam_e.rs"),
    ]);
    let missing: Vec<_> = want.difference(&got).collect();
    let unknown: Vec<_> = got.difference(&want).collect();
    assert!(missing.is_empty(), "table rows without a test: {missing:?}");
    assert!(
        unknown.is_empty(),
        "tests naming rows not in C-E: {unknown:?}"
    );
}
