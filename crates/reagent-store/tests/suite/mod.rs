mod evals;
mod faults;
mod harness;
mod kv;
mod outages;
mod page;
mod runs;
