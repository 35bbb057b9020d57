//! `reagent demo`: the README's first command, made to work on a fresh machine.
//!
//! If an Ollama server answers, the demo uses it (its first installed model, or `--model`).
//! Otherwise it sets up the embedded default model server (`reagent-local`: llama.cpp's
//! llama-server and SmolLM2-135M-Instruct, built and cached on first use, with progress on
//! stderr), copies the sample workspace (`examples/demo-workspace`, compiled in) to a temporary
//! directory, and runs a small task there that the model can only answer by reading a file. The
//! run goes through the same machinery as `reagent run` (progress, events, JSON, exit codes).
//! Every wait is bounded: setup, server start, each model call and the whole run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use reagent_local::{ensure_installed, probe_ollama, LocalServer, Locations, ServerConfig};
use reagent_protocol::CancellationToken;

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::run_cmd;
use crate::setup;

/// The sample workspace, compiled in so an installed binary needs no checkout.
const SAMPLE_WORKSPACE: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../../../examples/demo-workspace/README.md"),
    ),
    (
        "keeper.txt",
        include_str!("../../../examples/demo-workspace/keeper.txt"),
    ),
    (
        "logbook/2026-11.md",
        include_str!("../../../examples/demo-workspace/logbook/2026-11.md"),
    ),
];

/// The default task: answerable only by reading `keeper.txt`.
const DEMO_TASK: &str = "Read the file keeper.txt and tell me the name of the lighthouse keeper.";
/// What a right answer to [`DEMO_TASK`] contains.
const DEMO_EXPECTED: &str = "Ines Calloway";

/// Flags of `reagent demo`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct DemoArgs {
    /// Ollama model to use (default: the first one installed). Needs a running Ollama.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Ollama host (default: $OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Use the embedded llama-server and SmolLM2 even when Ollama is running.
    #[arg(long, conflicts_with = "model")]
    pub(crate) local: bool,
    /// Work in this directory instead of a temporary copy of the sample workspace.
    #[arg(long)]
    pub(crate) workspace: Option<PathBuf>,
    /// The task (default: find the lighthouse keeper's name in keeper.txt).
    #[arg(long)]
    pub(crate) task: Option<String>,
    /// Write every event as a JSON line to FILE.
    #[arg(long)]
    pub(crate) events: Option<PathBuf>,
    /// Print one JSON object with the result instead of the answer.
    #[arg(long)]
    pub(crate) json: bool,
    /// No progress on stderr (setup errors are still shown).
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Per model call timeout in seconds (default 300: small machines are slow).
    #[arg(long)]
    pub(crate) timeout: Option<f64>,
    /// Longest the whole run may take, in seconds (default 900).
    #[arg(long)]
    pub(crate) max_time: Option<f64>,
    /// Longest the first-time setup (download and build) may take, in seconds (default 3600).
    #[arg(long)]
    pub(crate) setup_timeout: Option<f64>,
}

/// Where the demo's model runs.
enum Backend {
    /// A running Ollama.
    Ollama { host: String, model: String },
    /// The embedded server, stopped when this is dropped.
    Local(LocalServer),
}

/// `reagent demo`.
pub(crate) async fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let say = |text: &str| {
        if !args.quiet {
            eprintln!("reagent demo: {text}");
        }
    };
    let backend = choose_backend(args, &say).await?;
    let (workspace, _cleanup) = match &args.workspace {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("--workspace {}: no such directory", dir.display());
            }
            (dir.clone(), None)
        }
        None => {
            let dir = TempWorkspace::create()?;
            say(&format!("sample workspace copied to {}", dir.0.display()));
            (dir.0.clone(), Some(dir))
        }
    };
    let task = args.task.clone().unwrap_or_else(|| DEMO_TASK.to_owned());
    say(&format!("task: {task}"));
    let run_args = run_args_for(args, &backend, &workspace, &task);
    let plan = run_cmd::plan(&run_args, &FileConfig::default())?;
    let cancel = CancellationToken::new();
    let signal = crate::signals::cancel_on_stop(cancel.clone(), "reagent demo");
    let executed = run_cmd::execute(&plan, &cancel).await;
    signal.abort();
    let (result, progress, _) = executed?;
    run_cmd::report(&result, &progress, plan.json);
    if args.task.is_none() && !args.json {
        if result.answer.contains(DEMO_EXPECTED) {
            say(&format!(
                "the answer is right: keeper.txt names {DEMO_EXPECTED}"
            ));
        } else {
            say(&format!(
                "the answer does not name {DEMO_EXPECTED}, as keeper.txt does (very small models \
                 slip; try a bigger model with Ollama: reagent demo --model qwen3:8b)"
            ));
        }
    }
    drop(backend);
    Ok(ExitCode::from_outcome(result.outcome))
}

/// Ollama when it answers (and has a model), else the embedded server, set up if needed.
async fn choose_backend(args: &DemoArgs, say: &dyn Fn(&str)) -> anyhow::Result<Backend> {
    let host = args
        .host
        .as_deref()
        .map(reagent_providers::ollama::normalize_ollama_host)
        .unwrap_or_else(reagent_providers::ollama::default_ollama_host);
    if !args.local {
        match (probe_ollama(&host).await, &args.model) {
            (Some(_), Some(model)) => {
                say(&format!("using Ollama at {host} with {model}"));
                return Ok(Backend::Ollama {
                    host,
                    model: model.clone(),
                });
            }
            (Some(models), None) => match models.first() {
                Some(model) => {
                    say(&format!(
                        "using Ollama at {host} with {model} (pick another with --model)"
                    ));
                    return Ok(Backend::Ollama {
                        host,
                        model: model.clone(),
                    });
                }
                None => say(&format!(
                    "Ollama at {host} has no models; using the embedded model server"
                )),
            },
            (None, Some(model)) => bail!(
                "--model {model} needs a running Ollama, but nothing answers at {host} \
                 (start it with `ollama serve`, or drop --model to use the embedded model server)"
            ),
            (None, None) => say(&format!(
                "no Ollama at {host}; using the embedded model server"
            )),
        }
    }
    let locations = Locations::from_env()?;
    let files = locations.files();
    if !files.is_complete() {
        say(&format!(
            "first-time setup: building llama-server and downloading SmolLM2-135M into {} \
             (about 10-15 minutes on two cores; cached afterwards)",
            locations.cache_dir.display()
        ));
    }
    let setup_timeout = secs(args.setup_timeout.unwrap_or(3600.0), "--setup-timeout")?;
    let progress = setup::setup_progress("reagent demo", args.quiet);
    let files = ensure_installed(&locations, setup_timeout, &progress)
        .await
        .context(
            "cannot set up the embedded model server (see DEVELOPERS.md, \"Troubleshooting\")",
        )?;
    say("starting llama-server with SmolLM2-135M-Instruct");
    let config = ServerConfig {
        ctx_size: 4096,
        ..ServerConfig::new(files)
    };
    let server = LocalServer::start(&config)
        .await
        .context("cannot start the embedded model server")?;
    say(&format!("llama-server ready at {}", server.base_url()));
    Ok(Backend::Local(server))
}

/// The `reagent run` flags the demo amounts to.
fn run_args_for(args: &DemoArgs, backend: &Backend, workspace: &Path, task: &str) -> RunArgs {
    let common = RunArgs {
        task: task.to_owned(),
        workspace: Some(workspace.to_path_buf()),
        events: args.events.clone(),
        json: args.json,
        quiet: args.quiet,
        read_only: true,
        timeout: Some(args.timeout.unwrap_or(300.0)),
        max_time: Some(args.max_time.unwrap_or(900.0)),
        temperature: Some(0.0),
        seed: Some(1),
        ..RunArgs::default()
    };
    match backend {
        Backend::Ollama { host, model } => RunArgs {
            provider: Some("ollama".into()),
            host: Some(host.clone()),
            model: Some(model.clone()),
            max_iterations: Some(10),
            ..common
        },
        // SmolLM2 has no tool template: constrained mode, small context, short replies, and
        // no streaming (the streamed text would be the raw JSON of each call).
        Backend::Local(server) => RunArgs {
            provider: Some("openai".into()),
            base_url: vec![server.openai_base_url()],
            model: Some(server.model().to_owned()),
            tool_mode: Some("constrained".into()),
            num_ctx: Some(4096),
            num_predict: Some(128),
            max_iterations: Some(6),
            no_stream: true,
            ..common
        },
    }
}

fn secs(v: f64, flag: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| anyhow::anyhow!("{flag}: {v} is not a valid number of seconds"))
}

/// A temporary copy of the sample workspace, removed on drop.
struct TempWorkspace(PathBuf);

impl TempWorkspace {
    fn create() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("reagent-demo-{}", reagent_core::new_run_id()));
        let guard = TempWorkspace(dir);
        write_sample(&guard.0)?;
        Ok(guard)
    }
}

impl Drop for TempWorkspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write the sample workspace into `dir` (created if needed).
fn write_sample(dir: &Path) -> anyhow::Result<()> {
    for (rel, text) in SAMPLE_WORKSPACE {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_under(root: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn the_compiled_in_sample_is_the_examples_directory() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-workspace");
        let mut compiled: Vec<(String, String)> = SAMPLE_WORKSPACE
            .iter()
            .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
            .collect();
        compiled.sort();
        assert_eq!(compiled, files_under(&examples));
    }

    #[test]
    fn the_sample_is_written_and_holds_the_expected_answer() {
        let dir =
            std::env::temp_dir().join(format!("reagent-demo-test-{}", reagent_core::new_run_id()));
        write_sample(&dir).unwrap();
        let written = files_under(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(written.len(), SAMPLE_WORKSPACE.len());
        let keeper = written.iter().find(|(p, _)| p == "keeper.txt").unwrap();
        assert!(keeper.1.contains(DEMO_EXPECTED));
        assert!(DEMO_TASK.contains("keeper.txt"));
    }

    #[test]
    fn temp_workspaces_are_removed_on_drop() {
        let ws = TempWorkspace::create().unwrap();
        let path = ws.0.clone();
        assert!(path.join("keeper.txt").is_file());
        drop(ws);
        assert!(!path.exists());
    }

    #[test]
    fn the_ollama_backend_runs_read_only_and_bounded() {
        let args = DemoArgs::default();
        let backend = Backend::Ollama {
            host: "http://h:1".into(),
            model: "m".into(),
        };
        let r = run_args_for(&args, &backend, Path::new("/w"), "t");
        assert_eq!(r.provider.as_deref(), Some("ollama"));
        assert_eq!(r.host.as_deref(), Some("http://h:1"));
        assert_eq!(r.tool_mode, None);
        assert!(r.read_only);
        assert_eq!(r.timeout, Some(300.0));
        assert_eq!(r.max_time, Some(900.0));
        assert_eq!(r.workspace.as_deref(), Some(Path::new("/w")));
    }
}
