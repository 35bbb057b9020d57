//! `reagent eval SUITE`, `reagent eval compare A B` and `reagent eval list`: thin over
//! `reagent-eval` and `reagent-store`. The model and provider flags go through `run_cmd::plan`,
//! and the store is found and opened as `reagent run` finds it (`store::RunStore`), so a suite
//! runs with exactly the settings `reagent run` would use, and each task run is recorded as one.

use std::path::Path;

use anyhow::Context;
use reagent_eval::{EvalResult, Harness, HarnessConfig, Suite};
use reagent_protocol::CancellationToken;
use reagent_store::{EvalRecord, NewEvalResult, Store, StoreError};

use crate::cli::{EvalArgs, EvalCommand, RunArgs};
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::runs_cmd::clip;
use crate::store::RunStore;
use crate::usage;

/// `reagent eval`.
pub(crate) async fn run(args: &EvalArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let store_flag = args.store.as_deref();
    match &args.compare {
        Some(EvalCommand::Compare { a, b, json }) => {
            return compare([a, b], *json, store_flag, file).await
        }
        Some(EvalCommand::List { json, limit }) => {
            return list(*json, *limit, store_flag, file).await
        }
        None => {}
    }
    let suite_path = args
        .suite
        .as_ref()
        .or(args.suite_flag.as_ref())
        .context("no suite given: reagent eval SUITE.toml (e.g. evals/small-tasks.toml)")
        .map_err(usage)?;
    if let Some(name @ ("list" | "compare")) = suite_path.to_str().filter(|_| !suite_path.exists())
    {
        // `reagent eval --store URL list`: a flag before the subcommand makes it a suite name.
        return Err(usage(anyhow::anyhow!(
            "no suite file '{name}': to run `reagent eval {name}`, give its flags after it \
             (reagent eval {name} --store URL …)"
        )));
    }
    let mut suite = Suite::load(suite_path).map_err(|e| usage(e.into()))?;
    suite.select(&args.tasks).map_err(|e| usage(e.into()))?;
    let modes = reagent_eval::parse_modes(&args.tool_mode)
        .map_err(|e| usage(anyhow::anyhow!("--tool-mode: {e}")))?;
    if args.seeds == 0 {
        return Err(usage(anyhow::anyhow!("--seeds must be at least 1")));
    }
    let run_args = run_args(args);
    let plan = crate::run_cmd::plan(&run_args, file).map_err(usage)?;
    if args.seeds > 1 && plan.agent.options.temperature == Some(0.0) {
        eprintln!(
            "reagent: warning: {} samples per task at temperature 0 differ only by seed; \
             give --temperature above 0 for a spread that means something",
            args.seeds
        );
    }
    // `--provider local`: the embedded server, kept until the suite ends.
    let (provider, _warm) = crate::run_cmd::provider_for(&plan).await?;
    let store = RunStore::open(&run_args, file).await?;
    let mut config = HarnessConfig::new(plan.agent);
    config.tools = plan.tools;
    config.modes = modes;
    config.seeds = args.seeds;
    config.record_dir = args.record.clone();
    config.attempts = plan.attempts;
    config.event_handler = store
        .as_ref()
        .and_then(RunStore::recorder)
        .map(|r| r.handler());

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
    // Ctrl-C or SIGTERM stops the suite after the runs that finished: they are saved and
    // stored as an interrupted result.
    let cancel = CancellationToken::new();
    crate::signals::cancel_on_stop(cancel.clone(), "reagent eval");
    let result = Harness::new(provider, config)
        .run(&suite, &on_run, &cancel)
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
    if let Some(store) = &store {
        save_in_store(store, &result, &out, quiet).await;
    }
    if !result.runs.is_empty() && result.runs.iter().all(|r| r.outcome == "provider_error") {
        let why = result.runs[0].error.as_deref().unwrap_or("");
        eprintln!("reagent: every run failed to reach the model server: {why}");
        return Ok(ExitCode::ProviderError);
    }
    if result.interrupted {
        return Ok(ExitCode::Cancelled);
    }
    Ok(ExitCode::Completed)
}

/// The `reagent run` flags an eval shares, for `run_cmd::plan`.
fn run_args(args: &EvalArgs) -> RunArgs {
    RunArgs {
        // `plan` wants a task; each suite task brings its own prompt.
        task: "(suite task)".to_owned(),
        model: args.model.clone(),
        model_file: args.model_file.clone(),
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
        // Also the embedded server's setup progress (`--provider local`).
        quiet: args.quiet,
        store: args.store.clone(),
        no_store: args.no_store,
        verify: args.verify.clone(),
        verify_retries: args.verify_retries,
        attempts: args.attempts,
        ..RunArgs::default()
    }
}

/// Keep `result` in the store its runs were recorded in, and say so (or why not: a warning, the
/// file at `out` has the result either way).
async fn save_in_store(store: &RunStore, result: &EvalResult, out: &Path, quiet: bool) {
    let location = store.location();
    let events_error = store.flushed_error().await;
    let saved = match (store.store(), serde_json::to_string(result)) {
        (Some(s), Ok(document)) => {
            let (passed, total) = result.passed_of_total();
            let new = NewEvalResult {
                suite: result.suite.clone(),
                model: result.model.clone(),
                provider: result.provider.clone(),
                passed,
                total,
                document,
            };
            s.save_eval_result(&new).await.map_err(|e| e.to_string())
        }
        (Some(_), Err(e)) => Err(e.to_string()),
        (None, _) => Err(events_error.clone().unwrap_or_default()),
    };
    match saved {
        Ok(id) => {
            if !quiet {
                eprintln!("reagent: result {id} saved in {location}");
            }
            if let Some(e) = events_error {
                eprintln!("reagent: the task runs were not all recorded in {location}: {e}");
            }
        }
        Err(e) => eprintln!(
            "reagent: warning: result not saved in the store {location}: {e} (it is in {})",
            out.display()
        ),
    }
}

/// `reagent eval compare A B`: each a result file, or else a stored result's id or prefix.
async fn compare(
    names: [&Path; 2],
    json: bool,
    store_flag: Option<&str>,
    file: &FileConfig,
) -> anyhow::Result<ExitCode> {
    // Opened only when a name is not a file, and then once.
    let mut store: Option<Store> = None;
    let a = load_result(names[0], &mut store, store_flag, file).await?;
    let b = load_result(names[1], &mut store, store_flag, file).await?;
    let comparison = reagent_eval::compare(&a, &b);
    if json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", reagent_eval::render_comparison(&comparison));
    }
    Ok(ExitCode::Completed)
}

/// The result file `name`, or else the stored result whose id is (or starts with) `name`. A
/// name that is neither is a usage error saying so.
async fn load_result(
    name: &Path,
    store: &mut Option<Store>,
    store_flag: Option<&str>,
    file: &FileConfig,
) -> anyhow::Result<EvalResult> {
    if name.exists() {
        return EvalResult::load(name).map_err(|e| usage(e.into()));
    }
    let shown = name.display();
    let neither = |why: String| usage(anyhow::anyhow!("'{shown}' is no result file, {why}"));
    let id = name
        .to_str()
        .ok_or_else(|| neither("nor an id of a stored result".to_owned()))?;
    let store = match store {
        Some(s) => s,
        None => store.insert(
            crate::store::open(store_flag, file)
                .await
                .map_err(|e| neither(format!("and looking it up in the store failed: {e:#}")))?,
        ),
    };
    let stored = match store.load_eval_result(id).await {
        Ok(stored) => stored,
        Err(StoreError::NotFound(why)) => return Err(neither(format!("and {why}"))),
        Err(e) => return Err(e.into()),
    };
    EvalResult::from_json(&stored.document).map_err(|why| {
        usage(anyhow::anyhow!(
            "stored result {} in {}: not an eval result: {why}",
            stored.record.id,
            store.location()
        ))
    })
}

/// `reagent eval list`.
async fn list(
    json: bool,
    limit: u32,
    store_flag: Option<&str>,
    file: &FileConfig,
) -> anyhow::Result<ExitCode> {
    let store = crate::store::open(store_flag, file).await?;
    let results = store.list_eval_results(limit).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!("{}", table(&results));
    }
    Ok(ExitCode::Completed)
}

/// `eval list` as a table.
fn table(results: &[EvalRecord]) -> String {
    let row = |id: &str, created: &str, suite: &str, model: &str, passed: &str| {
        format!("{id:<12}  {created:<19}  {suite:<20}  {model:<20}  {passed:>9}\n")
    };
    let mut s = row("ID", "CREATED", "SUITE", "MODEL", "PASSED");
    for r in results {
        s.push_str(&row(
            &clip(&r.id, 12),
            &clip(&r.created.replace('T', " "), 19),
            &clip(&r.suite, 20),
            &clip(&r.model, 20),
            &format!("{}/{}", r.passed, r.total),
        ));
    }
    s
}
