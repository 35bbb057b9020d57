mod faults;
mod harness;
mod kv;
mod runs;
