mod evals;
mod faults;
mod harness;
mod kv;
mod page;
mod runs;
