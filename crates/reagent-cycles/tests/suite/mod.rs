mod config;
mod harness;
mod report;
mod runs;
