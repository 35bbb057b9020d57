//! One test per row of `crates/reagent-sandbox/tests/data/redteam.md` sections A (path confinement, rows
//! 1–23) and B (file contents and special files, rows 24–33). Each asserts the outcome: the
//! sentinel outside the workspace is unread and unchanged, nothing is created outside, the
//! error says why, and the call returns in time.

mod contents;
mod links;
mod names;
mod paths;
mod races;
