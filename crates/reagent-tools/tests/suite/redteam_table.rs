//! The red-team table (`crates/reagent-sandbox/tests/data/redteam.md`, the one copy in the
//! repository) against the file-tool suite: rows 1–33 (sections A and B) each have a test
//! `rowNN_…` in `redteam_files/`, and every such test names a row of A or B.

use std::collections::BTreeSet;

const TABLE: &str = include_str!("../../../reagent-sandbox/tests/data/redteam.md");

const SUITE: [&str; 5] = [
    include_str!("redteam_files/contents.rs"),
    include_str!("redteam_files/links.rs"),
    include_str!("redteam_files/names.rs"),
    include_str!("redteam_files/paths.rs"),
    include_str!("redteam_files/races.rs"),
];

#[test]
fn every_file_tool_row_of_the_table_has_a_test() {
    // Rows are the table lines `| N | …` between `## A.` and `## C.`.
    let start = TABLE.find("\n## A.").expect("section A in the table");
    let end = TABLE.find("\n## C.").expect("section C in the table");
    let rows: BTreeSet<u32> = TABLE[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(
        rows,
        (1..=33).collect(),
        "sections A and B should hold rows 1-33"
    );
    let mut tested = BTreeSet::new();
    for src in SUITE {
        for (i, _) in src.match_indices("fn row") {
            let digits: String = src[i + 6..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            tested.insert(digits.parse::<u32>().expect("a row number after `fn row`"));
        }
    }
    let missing: Vec<_> = rows.difference(&tested).collect();
    let unknown: Vec<_> = tested.difference(&rows).collect();
    assert!(
        missing.is_empty(),
        "rows of A/B without a test: {missing:?}"
    );
    assert!(
        unknown.is_empty(),
        "tests naming rows outside A/B: {unknown:?}"
    );
}
