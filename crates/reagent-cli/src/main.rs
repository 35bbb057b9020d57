//! The `reagent` binary: parses arguments, sets up logging, and calls the library. Thin on
//! purpose: everything it does is available to library users too.

// The binary is where output to the terminal belongs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod approve;
mod chat_cmd;
mod cli;
mod config;
mod cycles_cmd;
mod demo;
mod doctor_cmd;
mod eval_cmd;
mod exit;
mod goal_cmd;
mod hub_cmd;
mod hub_local;
mod mcp_cmd;
mod parse_cmd;
mod progress;
mod run_cmd;
mod runs_cmd;
mod runs_html;
mod serve_cmd;
mod setup;
mod signals;
mod store;
mod task_cmd;
mod tool_cmd;
mod worker_cmd;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::ExitCode;

/// An error caused by how reagent was called (exit code 2), not by the run.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) anyhow::Error);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for UsageError {}

/// Mark an error as a usage error.
pub(crate) fn usage(e: anyhow::Error) -> anyhow::Error {
    anyhow::Error::new(UsageError(e))
}

fn main() {
    let cli = Cli::parse();
    let otlp = cli
        .otlp_endpoint
        .as_ref()
        .filter(|endpoint| !endpoint.trim().is_empty())
        .map(|endpoint| reagent_telemetry::OtlpOptions {
            endpoint: endpoint.clone(),
            capture_content: cli.otlp_capture_content,
        });
    let telemetry = match reagent_telemetry::init(&cli.log, otlp.as_ref()) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("reagent: {e}");
            std::process::exit(ExitCode::Usage as i32);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("reagent: cannot start the async runtime: {e}");
            std::process::exit(ExitCode::Internal as i32);
        }
    };
    let code = match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("reagent: {e:#}");
            if e.downcast_ref::<UsageError>().is_some() {
                ExitCode::Usage
            } else {
                ExitCode::Internal
            }
        }
    };
    // Runs are over: send the last spans (bounded wait) before exiting.
    telemetry.shutdown();
    std::process::exit(code as i32);
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = cli.config.as_deref();
    // Read by the commands that take the config file, when they start.
    let file = || config::FileConfig::load(config).map_err(usage);
    match cli.command {
        Command::Run(args) => run_cmd::run(&args, &file()?).await,
        Command::Chat(args) => chat_cmd::run(&args, &file()?).await,
        Command::Tool(args) => tool_cmd::run(&args, &file()?).await,
        Command::Parse(args) => parse_cmd::run(&args),
        Command::Doctor(args) => doctor_cmd::run(&args).await,
        Command::Demo(args) => demo::run(&args).await,
        Command::Eval(args) => eval_cmd::run(&args, &file()?).await,
        Command::Runs(args) => runs_cmd::run(&args, &file()?).await,
        Command::Hub(args) => hub_cmd::run(&args, &file()?).await,
        Command::Goal(args) => goal_cmd::run(&args, &file()?).await,
        Command::Worker(args) => worker_cmd::run(&args, &file()?).await,
        Command::Task(args) => task_cmd::run(&args, &file()?).await,
        Command::Serve(args) => serve_cmd::run(&args, &file()?).await,
        // The global --config is the experiment's file here.
        Command::Cycles(args) => cycles_cmd::run(&args, config).await,
        Command::Mcp(args) => mcp_cmd::run(&args, &file()?).await,
    }
}
