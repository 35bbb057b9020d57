mod evals;
mod experiments;
mod faults;
mod harness;
mod kv;
mod outages;
mod page;
mod runs;
