//! Test modules: the red-team rows (one test per row of sections A and B), then each tool.

mod common;
mod edit;
mod fuzz_paths;
mod list_find_grep;
mod nearby;
mod read_write;
mod redteam_files;
mod redteam_table;
mod registry;
mod run_command;
mod tidy;
mod write_approval;
