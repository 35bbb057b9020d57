//! `reagent eval SUITE` and `reagent eval compare A B`: thin over `reagent-eval`. The model and
//! provider flags go through `run_cmd::plan`, so a suite runs with exactly the settings
//! `reagent run` would use.

use std::path::Path;

use anyhow::Context;
use reagent_eval::{EvalResult, Harness, HarnessConfig, Suite};
use reagent_protocol::CancellationToken;

use crate::cli::{EvalArgs, EvalCommand, RunArgs};
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::usage;

/// `reagent eval`.
pub(crate) async fn run(args: &EvalArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    if let Some(EvalCommand::Compare { a, b, json }) = &args.compare {
        return compare(a, b, *json);
    }
    let suite_path = args
        .suite
        .as_ref()
        .context("no suite given: reagent eval SUITE.toml (e.g. evals/small-tasks.toml)")
        .map_err(usage)?;
    let mut suite = Suite::load(suite_path).map_err(|e| usage(e.into()))?;
    suite.select(&args.tasks).map_err(|e| usage(e.into()))?;
    let modes = reagent_eval::parse_modes(&args.tool_mode)
        .map_err(|e| usage(anyhow::anyhow!("--tool-mode: {e}")))?;
    if args.seeds == 0 {
        return Err(usage(anyhow::anyhow!("--seeds must be at least 1")));
    }
    let plan = crate::run_cmd::plan(&run_args(args), file).map_err(usage)?;
    let provider = reagent_providers::build_provider(&plan.provider)?;
    let mut config = HarnessConfig::new(plan.agent);
    config.tools = plan.tools;
    config.modes = modes;
    config.seeds = args.seeds;

    let out = match &args.out {
        Some(path) => path.clone(),
        None => reagent_eval::default_result_path(
            &std::env::current_dir()?,
            &reagent_eval::timestamp(std::time::SystemTime::now()),
        ),
    };
    let total = suite.tasks.len() * config.modes.len() * args.seeds as usize;
    let quiet = args.quiet;
    // After each run: one progress line, and the result so far saved, so a long benchmark
    // that is stopped keeps what it measured.
    let on_run = |so_far: &EvalResult| {
        if let Err(e) = so_far.save(&out) {
            eprintln!("reagent: {e}");
        }
        let Some(run) = so_far.runs.last() else {
            return;
        };
        if !quiet {
            eprintln!(
                "[{}/{total}] {:<11} {:<22} seed {}: {} ({}, {} it, {} tok, {:.1}s)",
                so_far.runs.len(),
                run.mode,
                run.task,
                run.seed,
                if run.passed { "pass" } else { "FAIL" },
                run.outcome,
                run.iterations,
                run.tokens(),
                run.wall_ms as f64 / 1000.0
            );
        }
    };
    let result = Harness::new(provider, config)
        .run(&suite, &on_run, &CancellationToken::new())
        .await;
    result.save(&out)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", reagent_eval::render_summary(&result));
    }
    if !quiet {
        eprintln!("reagent: result saved to {}", out.display());
    }
    if !result.runs.is_empty() && result.runs.iter().all(|r| r.outcome == "provider_error") {
        let why = result.runs[0].error.as_deref().unwrap_or("");
        eprintln!("reagent: every run failed to reach the model server: {why}");
        return Ok(ExitCode::ProviderError);
    }
    Ok(ExitCode::Completed)
}

/// The `reagent run` flags an eval shares, for `run_cmd::plan`.
fn run_args(args: &EvalArgs) -> RunArgs {
    RunArgs {
        // `plan` wants a task; each suite task brings its own prompt.
        task: "(suite task)".to_owned(),
        model: args.model.clone(),
        provider: args.server.provider.clone(),
        host: args.server.host.clone(),
        base_url: args.server.base_url.clone(),
        max_iterations: Some(args.max_iterations),
        max_time: Some(args.max_time),
        num_ctx: args.num_ctx,
        num_predict: args.num_predict,
        temperature: args.temperature,
        timeout: args.timeout,
        no_stream: true,
        quiet: true,
        ..RunArgs::default()
    }
}

/// `reagent eval compare A B`.
fn compare(a: &Path, b: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let a = EvalResult::load(a).map_err(|e| usage(e.into()))?;
    let b = EvalResult::load(b).map_err(|e| usage(e.into()))?;
    let comparison = reagent_eval::compare(&a, &b);
    if json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", reagent_eval::render_comparison(&comparison));
    }
    Ok(ExitCode::Completed)
}
