//! The `reagent` binary.
fn main() {}
