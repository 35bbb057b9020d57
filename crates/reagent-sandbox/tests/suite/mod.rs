//! Test modules; `harness` holds the shared helpers.

mod basics;
mod harness;
mod redteam_c;
mod redteam_d;
mod redteam_e;
mod table;
mod tidy;
