//! `reagent cycles`: task-free multi-cycle experiments (reagent-cycles) — run, resume, list,
//! report, rate, compare. Flags → library calls; the terminal operator and progress lines are
//! the only things done here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use reagent_cycles::config::{self as cfg, ExperimentConfig, OperatorMode};
use reagent_cycles::log::{LogEvent, Watcher, CYCLE_END, CYCLE_START, TOOL_CALL};
use reagent_cycles::operator::{self, Operator};
use reagent_cycles::{charts, compare, rate, report, runner, CyclesError, Experiment, Status};
use reagent_protocol::{CancellationToken, Provider};
use reagent_providers::Embedder;
use reagent_store::{Location, Store};
use serde_json::json;

use crate::exit::ExitCode;
use crate::setup;

mod hub;

/// Flags of `reagent cycles` (the experiment file is the global `--config FILE`).
#[derive(Debug, Args)]
pub(crate) struct CyclesArgs {
    /// The store: a SQLite file or postgres://… (default: $REAGENT_STORE, else
    /// $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: CyclesCommand,
}

/// `reagent cycles …`.
#[derive(Debug, Subcommand)]
pub(crate) enum CyclesCommand {
    /// Start an experiment from `--config FILE` (TOML or YAML, or a ContReAct-Ollama YAML).
    Run(CyclesRunArgs),
    /// Continue a stopped or crashed experiment at its first unfinished cycle.
    Resume(CyclesResumeArgs),
    /// The experiments in the store.
    List,
    /// A run's cycles, similarity, tool use, tokens and memory: a table, `--html`, `--png`.
    Report(CyclesReportArgs),
    /// Have evaluator models rate runs from 1 to 10.
    Rate(CyclesRateArgs),
    /// Several runs' metrics side by side.
    Compare(CyclesCompareArgs),
}

/// Flags of `reagent cycles run`; the experiment's file is the global `--config FILE`. Here
/// `--log FILE` is the experiment's JSONL log (the command line), so the global
/// `--log LEVEL` is spelled `--log-level LEVEL` after `run` (before `cycles` it keeps its
/// name): an argument with the global one's id stops clap from adding it here.
#[derive(Debug, Args)]
#[command(arg(
    clap::Arg::new("log")
        .long("log-level")
        .value_name("LEVEL")
        .help("Log level for diagnostics on stderr (the global --log LEVEL)")
))]
pub(crate) struct CyclesRunArgs {
    /// The experiment's JSONL log, appended to (default: logs/RUN_ID.jsonl).
    #[arg(long = "log", id = "log_file", value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    /// Queue each run as a hub task in this store (a SQLite file or postgres://…, the hub's),
    /// for the workers (`reagent worker`) to run, instead of running them here.
    #[arg(long, value_name = "URL")]
    pub(crate) hub: Option<String>,
    /// A batch: one run per seed (ids derived from run_id).
    #[arg(long, value_delimiter = ',', value_name = "SEEDS")]
    pub(crate) seeds: Vec<i64>,
    /// A batch: one run per model (ids derived from run_id), times each seed.
    #[arg(long, value_delimiter = ',', value_name = "MODELS")]
    pub(crate) models: Vec<String>,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Flags of `reagent cycles resume`.
#[derive(Debug, Args)]
pub(crate) struct CyclesResumeArgs {
    /// The experiment's run_id.
    pub(crate) run_id: String,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Flags of `reagent cycles report`.
#[derive(Debug, Args)]
pub(crate) struct CyclesReportArgs {
    /// The experiment's run_id.
    pub(crate) run_id: String,
    /// Write the report as an HTML page with its charts.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Write the charts as PNG images into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) png: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Flags of `reagent cycles rate`.
#[derive(Debug, Args)]
pub(crate) struct CyclesRateArgs {
    /// The runs to rate.
    #[arg(required = true)]
    pub(crate) runs: Vec<String>,
    /// Evaluator models (repeat the flag or separate with commas).
    #[arg(long, required = true, value_delimiter = ',')]
    pub(crate) evaluator: Vec<String>,
    /// The evaluators' server: ollama (default) or openai.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// Ollama's address.
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// The server's base URL.
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// The rating prompt (`{history}` is replaced by the run's history).
    #[arg(long, value_name = "FILE")]
    pub(crate) prompt_file: Option<PathBuf>,
    /// One JSON object per rating: {"run_id", "evaluator", "rating", "justification"}.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Flags of `reagent cycles compare`.
#[derive(Debug, Args)]
pub(crate) struct CyclesCompareArgs {
    /// The runs.
    #[arg(required = true, num_args = 1..)]
    pub(crate) runs: Vec<String>,
    /// Also write an HTML page.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
}

/// `reagent cycles`; `config` is the global `--config`.
pub(crate) async fn run(args: &CyclesArgs, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    let url = match &args.command {
        CyclesCommand::Run(a) => hub::store_url(args.store.as_deref(), a.hub.as_deref())?,
        _ => args.store.as_deref(),
    };
    let location = Location::resolve(url, None).map_err(|e| crate::usage(e.into()))?;
    let store = Store::open(&location).await?;
    match &args.command {
        CyclesCommand::Run(a) => start(&store, a, config).await,
        CyclesCommand::Resume(a) => resume(&store, a).await,
        CyclesCommand::List => list(&store).await,
        CyclesCommand::Report(a) => show_report(&store, a).await,
        CyclesCommand::Rate(a) => rate_runs(&store, a).await,
        CyclesCommand::Compare(a) => compare_runs(&store, a).await,
    }
}

fn usage_of(e: CyclesError) -> anyhow::Error {
    match e {
        CyclesError::Config(_)
        | CyclesError::Exists(_)
        | CyclesError::NotFound(_)
        | CyclesError::Busy(_) => crate::usage(e.into()),
        other => other.into(),
    }
}

async fn start(
    store: &Store,
    args: &CyclesRunArgs,
    config: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let log = args.log.clone();
    let path = config
        .context("give the experiment's file: reagent cycles run --config FILE")
        .map_err(crate::usage)?;
    let loaded = cfg::load(path).map_err(usage_of)?;
    for note in &loaded.unsupported {
        eprintln!("reagent cycles: {note}");
    }
    if loaded.config.operator.mode == OperatorMode::Dashboard {
        bail!(crate::usage(anyhow::anyhow!(DASHBOARD_REFUSED)));
    }
    let seeds: Vec<Option<i64>> = match args.seeds.as_slice() {
        [] => vec![None],
        s => s.iter().copied().map(Some).collect(),
    };
    let models: Vec<Option<&str>> = match args.models.as_slice() {
        [] => vec![None],
        m => m.iter().map(|m| Some(m.as_str())).collect(),
    };
    let batch = seeds.len() * models.len() > 1 || !args.seeds.is_empty() || !args.models.is_empty();
    if batch && log.is_some() {
        bail!(crate::usage(anyhow::anyhow!(
            "--log names one file: a batch writes logs/RUN_ID.jsonl per run"
        )));
    }
    let configs: Vec<ExperimentConfig> = models
        .iter()
        .flat_map(|m| seeds.iter().map(move |s| (*s, *m)))
        .map(|(s, m)| {
            if batch {
                loaded.config.variant(s, m)
            } else {
                loaded.config.clone()
            }
        })
        .collect();
    // Every id is checked before the first run starts.
    for c in &configs {
        if store.experiment(&c.run_id).await?.is_some() {
            return Err(usage_of(CyclesError::Exists(c.run_id.clone())));
        }
    }
    if args.hub.is_some() {
        return hub::queue(store, configs).await;
    }
    let mut code = ExitCode::Completed;
    for c in configs {
        let log = log
            .clone()
            .unwrap_or_else(|| reagent_cycles::log::default_path(&c.run_id));
        runner::create(store, &c, Some(log.clone()))
            .await
            .map_err(usage_of)?;
        let done = execute(store, c, Some(log), args.quiet).await?;
        if done != ExitCode::Completed {
            code = done;
            break;
        }
    }
    Ok(code)
}

async fn resume(store: &Store, args: &CyclesResumeArgs) -> anyhow::Result<ExitCode> {
    let (record, config, log) = runner::stored(store, &args.run_id)
        .await
        .map_err(usage_of)?;
    if record.status == Status::Completed.as_str() {
        eprintln!(
            "reagent cycles: experiment {} is complete ({} cycles): nothing to resume",
            record.id, record.cycles_done
        );
        return Ok(ExitCode::Completed);
    }
    execute(store, config, log, args.quiet).await
}

/// Run (the rest of) an experiment that exists in the store.
async fn execute(
    store: &Store,
    config: ExperimentConfig,
    log: Option<PathBuf>,
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let (provider, _warm, provider_cfg) = provider(&config, quiet).await?;
    let embed_model = config
        .model
        .embedding_model
        .clone()
        .unwrap_or_else(|| config.model.name.clone());
    let embedder = Embedder::new(&provider_cfg, &embed_model).ok();
    let done = store.cycles(&config.run_id).await?;
    let operator = operator_for(&config, runner::operator_messages(&done))?;
    let cancel = CancellationToken::new();
    crate::signals::cancel_on_stop(cancel.clone(), "reagent cycles");
    let experiment = Experiment {
        store: store.clone(),
        workspace: std::env::temp_dir()
            .join("reagent-cycles")
            .join(&config.run_id),
        watcher: (!quiet).then(progress),
        log_file: log.clone(),
        embedder,
        operator,
        provider,
        config,
    };
    if !quiet {
        eprintln!(
            "reagent cycles: experiment {} ({} cycles, {} done) on {}",
            experiment.config.run_id,
            experiment.config.cycles,
            done.len(),
            experiment.config.model.name
        );
    }
    let summary = experiment.run(&cancel).await.map_err(usage_of)?;
    store.flush().await;
    if let Some(e) = &summary.log_error {
        eprintln!("reagent cycles: the log was not fully written: {e}");
    }
    let where_log = log.map_or(String::new(), |l| format!(", log {}", l.display()));
    match summary.status {
        Status::Completed => {
            eprintln!(
                "reagent cycles: experiment {} completed: {} cycles{where_log}",
                summary.run_id, summary.cycles_done
            );
            Ok(ExitCode::Completed)
        }
        Status::Stopped | Status::Running => {
            eprintln!(
                "reagent cycles: experiment {} stopped after {} of {} cycles; continue with `reagent cycles resume {}`",
                summary.run_id, summary.cycles_done, summary.cycles, summary.run_id
            );
            Ok(ExitCode::Cancelled)
        }
        Status::Failed => {
            eprintln!(
                "reagent cycles: experiment {} failed: {}; continue with `reagent cycles resume {}`",
                summary.run_id,
                summary.error.as_deref().unwrap_or("unknown error"),
                summary.run_id
            );
            Ok(ExitCode::ProviderError)
        }
    }
}

/// The provider of an experiment (starting the embedded server for `local`), and its config.
async fn provider(
    config: &ExperimentConfig,
    quiet: bool,
) -> anyhow::Result<(
    Arc<dyn Provider>,
    Option<reagent_local::WarmServer>,
    reagent_providers::ProviderConfig,
)> {
    let m = &config.model;
    if m.provider == "local" {
        let plan = setup::LocalPlan {
            model_file: None,
            ctx_size: m.options.num_ctx.unwrap_or(8192),
        };
        let server = setup::start_local(&plan, &m.name, quiet).await?;
        let cfg = setup::local_provider(
            &setup::provider_config(Some("openai"), None, &[], None, None, None)?,
            &server,
        );
        let provider = reagent_providers::build_provider(&cfg)?;
        return Ok((provider, Some(server), cfg));
    }
    let urls: Vec<String> = m.base_url.iter().cloned().collect();
    let cfg = setup::provider_config(Some(&m.provider), None, &urls, None, None, None)
        .map_err(crate::usage)?;
    Ok((reagent_providers::build_provider(&cfg)?, None, cfg))
}

const DASHBOARD_REFUSED: &str = "operator.mode `dashboard` is answered in the dashboard of \
`reagent serve`: start the experiment there (its Experiments view, or POST /v1/experiments with \
the config), or use terminal, script or none here";

fn operator_for(config: &ExperimentConfig, used: usize) -> anyhow::Result<Arc<dyn Operator>> {
    let o = &config.operator;
    Ok(match o.mode {
        OperatorMode::None => Arc::new(operator::Absent),
        OperatorMode::Script => {
            let path = o
                .replies
                .as_ref()
                .context("operator.mode is script but operator.replies is not set")?;
            Arc::new(operator::Scripted::from_file(path, used).map_err(usage_of)?)
        }
        OperatorMode::Terminal => Arc::new(operator::Lines::new(
            std::io::BufReader::new(std::io::stdin()),
            |message: &str| {
                eprintln!(
                    "\n[message to the operator] {message}\n[type your reply and press Enter]"
                );
            },
            Duration::from_secs_f64(o.timeout_secs),
        )),
        OperatorMode::Dashboard => bail!(crate::usage(anyhow::anyhow!(DASHBOARD_REFUSED))),
    })
}

/// Progress lines on stderr.
fn progress() -> Watcher {
    Arc::new(|e: &LogEvent| match e.event_type.as_str() {
        CYCLE_START => eprintln!("cycle {} starts", e.cycle_number),
        TOOL_CALL => eprintln!(
            "  {} {}",
            e.payload["tool_name"].as_str().unwrap_or("?"),
            short(&e.payload["parameters"].to_string(), 100)
        ),
        CYCLE_END => {
            let m = &e.payload["metrics"];
            eprintln!(
                "cycle {} ends{}: {} tool calls, {} tokens, similarity {} — {}",
                e.cycle_number,
                if e.payload["cut_short"].as_bool() == Some(true) {
                    " (cut short)"
                } else {
                    ""
                },
                m["tool_calls_total"],
                m["total_tokens"],
                m["similarity_max"]
                    .as_f64()
                    .map_or("-".to_owned(), |s| format!("{s:.2}")),
                short(e.payload["final_reflection"].as_str().unwrap_or(""), 160)
            );
        }
        _ => {}
    })
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    }
}

async fn list(store: &Store) -> anyhow::Result<ExitCode> {
    let all = store.list_experiments().await?;
    if all.is_empty() {
        eprintln!("reagent cycles: no experiments in the store");
    }
    for e in all {
        println!(
            "{:<30} {:<10} {:>4}/{:<4} {:<24} {}",
            e.id, e.status, e.cycles_done, e.cycles, e.model, e.created
        );
    }
    Ok(ExitCode::Completed)
}

async fn show_report(store: &Store, args: &CyclesReportArgs) -> anyhow::Result<ExitCode> {
    let r = report::Report::load(store, &args.run_id)
        .await
        .map_err(usage_of)?;
    if let Some(path) = &args.html {
        std::fs::write(path, charts::html(&r)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("reagent cycles: report written to {}", path.display());
    }
    if let Some(dir) = &args.png {
        let written = charts::write_pngs(&r, dir)?;
        eprintln!(
            "reagent cycles: {} charts written to {}",
            written.len(),
            dir.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if args.html.is_none() && args.png.is_none() {
        print!("{}", r.table());
    }
    Ok(ExitCode::Completed)
}

async fn rate_runs(store: &Store, args: &CyclesRateArgs) -> anyhow::Result<ExitCode> {
    if args.host.is_some() && args.base_url.is_some() {
        bail!(crate::usage(anyhow::anyhow!(
            "give --host or --base-url, not both"
        )));
    }
    let urls: Vec<String> = args.base_url.iter().cloned().collect();
    let cfg = setup::provider_config(
        args.provider.as_deref(),
        args.host.as_deref(),
        &urls,
        None,
        None,
        None,
    )
    .map_err(crate::usage)?;
    let provider = reagent_providers::build_provider(&cfg)?;
    let prompt = match &args.prompt_file {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("--prompt-file: cannot read {}", p.display()))
            .map_err(crate::usage)?,
        None => reagent_cycles::prompts::RATING_PROMPT.to_owned(),
    };
    let mut matrix: Vec<(String, Vec<Option<i64>>)> = Vec::new();
    for evaluator in &args.evaluator {
        let mut row = Vec::new();
        for run in &args.runs {
            let r = rate::rate(store, provider.as_ref(), evaluator, run, &prompt)
                .await
                .map_err(usage_of)?;
            if args.json {
                println!(
                    "{}",
                    json!({"run_id": r.experiment_id, "evaluator": r.evaluator,
                           "rating": r.rating, "justification": r.justification})
                );
            } else {
                match r.rating {
                    Some(n) => println!(
                        "{run}  {evaluator}  {n}/10  {}",
                        short(&r.justification, 200)
                    ),
                    None => println!(
                        "{run}  {evaluator}  no rating ({})  reply: {}",
                        r.error.as_deref().unwrap_or(""),
                        short(&r.reply, 200)
                    ),
                }
            }
            row.push(r.rating);
        }
        matrix.push((evaluator.clone(), row));
    }
    if !args.json && (args.evaluator.len() > 1 || args.runs.len() > 1) {
        print!("{}", rating_matrix(&args.runs, &matrix));
    }
    Ok(ExitCode::Completed)
}

/// The evaluator × subject matrix and Krippendorff's alpha.
fn rating_matrix(runs: &[String], matrix: &[(String, Vec<Option<i64>>)]) -> String {
    let mut out = format!("\n{:<24}", "evaluator \\ run");
    for r in runs {
        out.push_str(&format!(" {:>14}", short(r, 14)));
    }
    out.push('\n');
    for (evaluator, row) in matrix {
        out.push_str(&format!("{:<24}", short(evaluator, 24)));
        for v in row {
            out.push_str(&format!(
                " {:>14}",
                v.map_or("-".to_owned(), |n| n.to_string())
            ));
        }
        out.push('\n');
    }
    let units: Vec<Vec<f64>> = (0..runs.len())
        .map(|j| {
            matrix
                .iter()
                .filter_map(|(_, row)| row.get(j).copied().flatten())
                .map(|n| n as f64)
                .collect()
        })
        .collect();
    match rate::krippendorff_alpha(&units) {
        Some(a) => out.push_str(&format!("Krippendorff's alpha (interval): {a:.3}\n")),
        None => out
            .push_str("Krippendorff's alpha: undefined (too few paired ratings or no variation)\n"),
    }
    out
}

async fn compare_runs(store: &Store, args: &CyclesCompareArgs) -> anyhow::Result<ExitCode> {
    let runs = compare::compare(store, &args.runs)
        .await
        .map_err(usage_of)?;
    print!("{}", compare::table(&runs));
    if let Some(path) = &args.html {
        std::fs::write(path, compare::html(&runs))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("reagent cycles: comparison written to {}", path.display());
    }
    Ok(ExitCode::Completed)
}
