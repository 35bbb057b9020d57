mod evals;
mod experiments;
mod faults;
mod harness;
mod kv;
mod page;
mod runs;
