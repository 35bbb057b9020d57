//! Test modules; `harness` holds the shared helpers.

mod basics;
mod harness;
mod redteam_c;
