//! `reagent-bench`: the benchmark binary. Subcommands: `serve` (the scripted Ollama server),
//! `prepare` (the workspace files), `run-once` (one measured reagent run), `many` (concurrent
//! runs in one process) and `cache` (prompt-cache share against a real llama-server). Results
//! are JSON on stdout; `benches/bench.py` reads them.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use reagent_bench::cache::{run_cache, CacheConfig};
use reagent_bench::many::{run_many, ManyConfig};
use reagent_bench::resume::{run_resume, ResumeConfig};
use reagent_bench::server::ScriptServer;
use reagent_bench::single::{run_single, SingleConfig};
use reagent_bench::{runner, usage, workload};

#[derive(Parser)]
#[command(name = "reagent-bench", about = "Benchmarks of reagent's runtime cost")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the scripted Ollama API on 127.0.0.1 until SIGTERM/SIGINT; prints the port.
    Serve {
        /// Port (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Write the workspace files f0000.txt.. into DIR.
    Prepare {
        /// Directory (created if missing).
        #[arg(long)]
        dir: PathBuf,
        /// Number of files.
        #[arg(long)]
        files: u32,
        /// Size of each file.
        #[arg(long, default_value_t = workload::FILE_BYTES)]
        bytes: usize,
    },
    /// One reagent run against the scripted server; prints its measurements as JSON.
    RunOnce {
        /// Scripted server base URL.
        #[arg(long)]
        url: String,
        /// Workspace directory.
        #[arg(long)]
        workspace: PathBuf,
        /// Files to read.
        #[arg(long)]
        iterations: u32,
        /// Context window (default: reagent's own, so long runs compact).
        #[arg(long)]
        num_ctx: Option<u32>,
        /// Runtime worker threads (1: a current-thread runtime).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Record the runs into this SQLite store (created when missing), as `reagent run`
        /// does; the measured run's CPU includes writing its events and saving its session.
        #[arg(long)]
        store: Option<PathBuf>,
    },
    /// A session of STEPS tool calls, snapshotted, then resumed REPEATS times with a follow-up;
    /// prints the time to the first request and reply as JSON.
    Resume {
        /// Scripted server base URL.
        #[arg(long)]
        url: String,
        /// Workspace directory (with at least STEPS files).
        #[arg(long)]
        workspace: PathBuf,
        /// Tool-call steps of the stored session.
        #[arg(long, default_value_t = 100)]
        steps: u32,
        /// Measured resumes.
        #[arg(long, default_value_t = 50)]
        repeats: u32,
        /// Context window (default: reagent's own, so the stored session has compacted).
        #[arg(long)]
        num_ctx: Option<u32>,
    },
    /// Concurrent runs in one process; prints idle RSS per run and throughput as JSON.
    Many {
        /// Scripted server base URL.
        #[arg(long)]
        url: String,
        /// Workspace directory.
        #[arg(long)]
        workspace: PathBuf,
        /// Concurrent runs.
        #[arg(long, default_value_t = 1000)]
        runs: usize,
        /// Tool calls per run in the throughput phase.
        #[arg(long, default_value_t = 10)]
        iterations: u32,
        /// How long the server holds the first reply in the idle phase.
        #[arg(long, default_value_t = 4000)]
        hold_ms: u64,
        /// Context window (default: reagent's own).
        #[arg(long)]
        num_ctx: Option<u32>,
    },
    /// Prompt-cache share of a reagent run against a real llama-server (started here).
    Cache {
        /// Workspace directory.
        #[arg(long)]
        workspace: PathBuf,
        /// Files to read.
        #[arg(long)]
        iterations: u32,
        /// llama-server context size (`-c`).
        #[arg(long, default_value_t = 8192)]
        ctx_size: u32,
        /// Context window reagent plans for (default: the server's).
        #[arg(long)]
        num_ctx: Option<u32>,
    },
}

/// SmolLM2-135M's trained context (`llama.context_length` in its GGUF).
const SMOLLM2_TRAINED_CTX: u32 = 8192;

fn current_thread() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

fn multi_thread(workers: Option<usize>) -> Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        b.worker_threads(n);
    }
    Ok(b.enable_all().build()?)
}

fn print_json(v: &serde_json::Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{v}")?;
    out.flush()?;
    Ok(())
}

async fn serve(port: u16) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .context("binding the scripted server")?;
    let server = ScriptServer::start(listener)?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", server.addr().port())?;
        out.flush()?;
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = term.recv() => {}
        r = tokio::signal::ctrl_c() => r?,
    }
    server.shutdown().await;
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { port } => {
            usage::raise_open_files_limit().context("raising the open files limit")?;
            current_thread()?.block_on(serve(port))
        }
        Command::Prepare { dir, files, bytes } => {
            workload::prepare_workspace(&dir, files, bytes)
                .with_context(|| format!("writing files into {}", dir.display()))?;
            Ok(())
        }
        Command::RunOnce {
            url,
            workspace,
            iterations,
            num_ctx,
            threads,
            store,
        } => {
            let rt = if threads <= 1 {
                current_thread()?
            } else {
                multi_thread(Some(threads))?
            };
            let config = SingleConfig {
                base_url: url,
                workspace,
                iterations,
                num_ctx,
                store,
            };
            let report = rt.block_on(run_single(&config))?;
            print_json(&report.to_json())?;
            if !report.is_complete(iterations) {
                bail!(
                    "the run ended {} after {} tool calls (expected {iterations})",
                    report.outcome.as_str(),
                    report.tool_calls
                );
            }
            Ok(())
        }
        Command::Resume {
            url,
            workspace,
            steps,
            repeats,
            num_ctx,
        } => {
            let config = ResumeConfig {
                base_url: url,
                workspace,
                steps,
                repeats,
                num_ctx,
            };
            let report = current_thread()?.block_on(run_resume(&config))?;
            print_json(&report.to_json())
        }
        Command::Many {
            url,
            workspace,
            runs,
            iterations,
            hold_ms,
            num_ctx,
        } => {
            usage::raise_open_files_limit().context("raising the open files limit")?;
            let config = ManyConfig {
                base_url: url,
                workspace,
                runs,
                iterations,
                hold: Duration::from_millis(hold_ms),
                num_ctx,
            };
            let report = multi_thread(None)?.block_on(run_many(&config))?;
            print_json(&report.to_json())?;
            if !report.all_completed() {
                bail!("not every concurrent run completed");
            }
            Ok(())
        }
        Command::Cache {
            workspace,
            iterations,
            ctx_size,
            num_ctx,
        } => multi_thread(None)?.block_on(async {
            let files = reagent_local::Locations::from_env()?.files();
            if !files.is_complete() {
                bail!(
                    "llama-server or the model is missing ({:?}); run scripts/install-model-server.sh",
                    files.missing()
                );
            }
            let mut server_config = reagent_local::ServerConfig::new(files);
            server_config.ctx_size = ctx_size;
            if ctx_size > SMOLLM2_TRAINED_CTX {
                // llama-server caps a slot at the model's trained context; the replies are
                // forced by a schema, so a longer window only has to hold the tokens.
                server_config.extra_args = vec![
                    "--override-kv".into(),
                    format!("llama.context_length=int:{ctx_size}"),
                ];
            }
            let server = reagent_local::LocalServer::start(&server_config).await?;
            let provider = reagent_providers::openai::OpenAiProvider::new(
                &server.openai_base_url(),
                None,
                runner::client_options(),
            )?;
            let config = CacheConfig {
                base_url: server.openai_base_url(),
                workspace,
                iterations,
                num_ctx,
            };
            let report = run_cache(std::sync::Arc::new(provider), &config).await?;
            print_json(&report.to_json())?;
            if report.tool_calls != iterations {
                bail!(
                    "the cache run made {} tool calls (expected {iterations})",
                    report.tool_calls
                );
            }
            Ok(())
        }),
    }
}
