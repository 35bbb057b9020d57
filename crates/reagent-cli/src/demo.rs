//! `reagent demo`: the README's first command, made to work on a fresh machine.
//!
//! If an Ollama server answers, the demo uses it (its first installed model, or `--model`).
//! Otherwise it sets up the embedded model server (`reagent-local`: llama.cpp's llama-server and
//! the catalog's default model, [`reagent_local::DEFAULT_MODEL`], installed and cached on first
//! use, with progress on stderr), writes the demo's small Python project (`evals/demo.toml`,
//! compiled in) to a temporary directory, and asks the model to fix the bug that makes its test
//! fail. The task's checks (the test passes, the function is right, the test file unchanged) are
//! the run's verification: when the model ends the run they run, and a failure goes back to the
//! model. The run goes through the same machinery as `reagent run` (progress, events, JSON, exit
//! codes). Every wait is bounded: setup, server start, each model call and the whole run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use reagent_eval::{Check, Suite, Task};
use reagent_local::{
    catalog_model, catalog_names, ensure_model, probe_ollama, CatalogModel, LocalServer, Locations,
    ServerConfig, DEFAULT_MODEL,
};
use reagent_protocol::{CancellationToken, Outcome};

use crate::cli::RunArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::run_cmd;
use crate::setup;

/// The demo's task and its files, a one-task suite compiled in so an installed binary needs no
/// checkout.
const DEMO_SUITE: &str = include_str!("../../../evals/demo.toml");

/// The demo's task: a failing test to fix.
fn demo_task() -> anyhow::Result<Task> {
    let suite = Suite::parse(DEMO_SUITE, Path::new("evals/demo.toml"))
        .context("the compiled-in demo task cannot be read")?;
    suite
        .tasks
        .into_iter()
        .next()
        .context("the compiled-in demo suite has no task")
}

/// The demo task's command checks, as `reagent run --verify` takes them.
fn verify_checks(task: &Task) -> Vec<String> {
    task.checks
        .iter()
        .filter_map(|c| match c {
            Check::Command(cmd) => Some(format!("command:{cmd}")),
            _ => None,
        })
        .collect()
}

/// Flags of `reagent demo`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct DemoArgs {
    /// Ollama model to use (default: the first one installed). Needs a running Ollama.
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Ollama host (default: $OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Use the embedded llama-server even when Ollama is running.
    #[arg(long, conflicts_with = "model")]
    pub(crate) local: bool,
    /// The embedded server's model, by catalog name (default: qwen2.5-coder:1.5b; also
    /// qwen2.5-coder:0.5b, smollm2:135m).
    #[arg(long, value_name = "NAME", conflicts_with = "model")]
    pub(crate) local_model: Option<String>,
    /// Work in this directory instead of a temporary copy of the demo's project.
    #[arg(long)]
    pub(crate) workspace: Option<PathBuf>,
    /// The task (default: fix the bug that makes test_cart.py fail, checked by running it).
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
    /// The embedded server serving a catalog model, stopped when this is dropped.
    Local(LocalServer, &'static CatalogModel),
}

/// `reagent demo`.
pub(crate) async fn run(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let say = |text: &str| {
        if !args.quiet {
            eprintln!("reagent demo: {text}");
        }
    };
    let demo = demo_task()?;
    let backend = choose_backend(args, &say).await?;
    let (workspace, _cleanup) = match &args.workspace {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("--workspace {}: no such directory", dir.display());
            }
            (dir.clone(), None)
        }
        None => {
            let dir = TempWorkspace::create(&demo)?;
            say(&format!("demo project written to {}", dir.0.display()));
            (dir.0.clone(), Some(dir))
        }
    };
    let task = args.task.clone().unwrap_or_else(|| demo.prompt.clone());
    say(&format!("task: {task}"));
    let verify = match args.task {
        None => verify_checks(&demo),
        Some(_) => Vec::new(),
    };
    let run_args = run_args_for(args, &backend, &workspace, &task, verify);
    let plan = run_cmd::plan(&run_args, &FileConfig::default())?;
    let cancel = CancellationToken::new();
    let signal = crate::signals::cancel_on_stop(cancel.clone(), "reagent demo");
    let executed = run_cmd::execute(&plan, &cancel).await;
    signal.abort();
    let (result, progress, _) = executed?;
    run_cmd::report(&result, &progress, plan.json);
    if args.task.is_none() && !args.json {
        if result.outcome == Outcome::Verified {
            say("fixed: `python3 -m unittest test_cart` passes now, and the checks hold");
        } else {
            say(&format!(
                "not fixed ({}): the test still fails or a check does not hold (small models \
                 slip; try again, or a bigger one with Ollama: reagent demo --model qwen3:8b)",
                result.outcome.as_str()
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
    if !args.local && args.local_model.is_none() {
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
    let name = args.local_model.as_deref().unwrap_or(DEFAULT_MODEL);
    let model = catalog_model(name).with_context(|| {
        format!(
            "--local-model {name}: not a model of the catalog ({})",
            catalog_names().join(", ")
        )
    })?;
    let locations = Locations::from_env()?;
    if !model.is_installed(&model.files(&locations)) || !locations.files().is_complete() {
        say(&format!(
            "first-time setup: installing llama-server and {} into {} (minutes; cached \
             afterwards)",
            model.summary,
            locations.cache_dir.display()
        ));
    }
    let setup_timeout = secs(args.setup_timeout.unwrap_or(3600.0), "--setup-timeout")?;
    let progress = setup::setup_progress("reagent demo", args.quiet);
    let files = ensure_model(&locations, model.name, setup_timeout, &progress)
        .await
        .context(
            "cannot set up the embedded model server (see DEVELOPERS.md, \"Troubleshooting\")",
        )?;
    say(&format!("starting llama-server with {}", model.name));
    let config = ServerConfig {
        ctx_size: model.ctx_size,
        alias: model.name.to_owned(),
        ..ServerConfig::new(files)
    };
    let server = LocalServer::start(&config)
        .await
        .context("cannot start the embedded model server")?;
    say(&format!("llama-server ready at {}", server.base_url()));
    Ok(Backend::Local(server, model))
}

/// The `reagent run` flags the demo amounts to: `verify` the checks the run ends with.
fn run_args_for(
    args: &DemoArgs,
    backend: &Backend,
    workspace: &Path,
    task: &str,
    verify: Vec<String>,
) -> RunArgs {
    let common = RunArgs {
        task: task.to_owned(),
        workspace: Some(workspace.to_path_buf()),
        events: args.events.clone(),
        json: args.json,
        quiet: args.quiet,
        timeout: Some(args.timeout.unwrap_or(300.0)),
        max_time: Some(args.max_time.unwrap_or(900.0)),
        max_iterations: Some(10),
        seed: Some(1),
        verify,
        // A temporary copy: nothing to undo afterwards.
        no_checkpoint: args.workspace.is_none(),
        ..RunArgs::default()
    };
    match backend {
        Backend::Ollama { host, model } => RunArgs {
            provider: Some("ollama".into()),
            host: Some(host.clone()),
            model: Some(model.clone()),
            ..common
        },
        // The model's own profile picks the tool mode and temperature: native calls for a
        // model whose template declares tools, constrained JSON for one without (SmolLM2,
        // with short replies). No streaming: the streamed text would be the raw calls.
        Backend::Local(server, model) => RunArgs {
            provider: Some("openai".into()),
            base_url: vec![server.openai_base_url()],
            model: Some(server.model().to_owned()),
            tool_mode: (!model.native_tools).then(|| "constrained".to_owned()),
            num_ctx: Some(model.ctx_size),
            num_predict: Some(if model.native_tools { 1024 } else { 128 }),
            no_stream: true,
            ..common
        },
    }
}

fn secs(v: f64, flag: &str) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| anyhow::anyhow!("{flag}: {v} is not a valid number of seconds"))
}

/// A temporary directory holding the demo task's files, removed on drop.
struct TempWorkspace(PathBuf);

impl TempWorkspace {
    fn create(task: &Task) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("reagent-demo-{}", reagent_core::new_run_id()));
        let guard = TempWorkspace(dir);
        write_files(task, &guard.0)?;
        Ok(guard)
    }
}

impl Drop for TempWorkspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Write `task`'s starting files into `dir` (created if needed).
fn write_files(task: &Task, dir: &Path) -> anyhow::Result<()> {
    for (rel, text) in &task.files {
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

    fn files_under(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(root).unwrap();
                    out.push(rel.to_string_lossy().into_owned());
                }
            }
        }
        out.sort();
        out
    }

    /// The demo's checks fail on its starting files and pass with the reference fix
    /// (evals/demo.solutions.toml): a run that does nothing is not "fixed", a right fix is.
    #[test]
    fn the_demo_task_fails_untouched_and_passes_with_the_reference_fix() {
        let task = demo_task().unwrap();
        assert_eq!(task.category, "fix_test");
        let suite = Suite::parse(DEMO_SUITE, Path::new("evals/demo.toml")).unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/demo.solutions.toml");
        let solutions = reagent_eval::Solutions::load(&path, &suite).unwrap();
        let untouched = reagent_eval::check_solution(&task, None).unwrap();
        assert!(
            !untouched[0].passed && !untouched[1].passed,
            "the test and the behaviour check must fail untouched: {untouched:?}"
        );
        assert!(
            untouched[2].passed,
            "the test file is intact: {untouched:?}"
        );
        let fixed = reagent_eval::check_solution(&task, solutions.by_task.get(&task.id)).unwrap();
        assert!(fixed.iter().all(|c| c.passed), "{fixed:?}");
        // A fix that edits the test instead of the code fails the test-unchanged check.
        let cheat = reagent_eval::Solution {
            files: [(
                "test_cart.py".to_owned(),
                "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n        pass\n"
                    .to_owned(),
            )]
            .into(),
            ..Default::default()
        };
        let cheated = reagent_eval::check_solution(&task, Some(&cheat)).unwrap();
        assert!(cheated[0].passed && !cheated[2].passed, "{cheated:?}");
    }

    #[test]
    fn the_demo_verifies_every_command_check_of_its_task() {
        let task = demo_task().unwrap();
        let verify = verify_checks(&task);
        assert_eq!(verify.len(), task.checks.len());
        assert_eq!(verify[0], "command:python3 -m unittest -q test_cart");
        assert!(task.prompt.contains("`python3 -m unittest test_cart`"));
        for check in &verify {
            check.parse::<reagent_core::verify::Check>().unwrap();
        }
    }

    #[test]
    fn temp_workspaces_hold_the_task_files_and_are_removed_on_drop() {
        let task = demo_task().unwrap();
        let ws = TempWorkspace::create(&task).unwrap();
        let path = ws.0.clone();
        assert_eq!(files_under(&path), ["README.md", "cart.py", "test_cart.py"]);
        assert_eq!(
            std::fs::read_to_string(path.join("cart.py")).unwrap(),
            task.files["cart.py"]
        );
        drop(ws);
        assert!(!path.exists());
    }

    #[test]
    fn the_default_local_model_is_in_the_catalog_with_tools() {
        let model = catalog_model(DEFAULT_MODEL).unwrap();
        assert!(model.native_tools, "{model:?}");
    }

    #[test]
    fn the_ollama_backend_writes_verifies_and_is_bounded() {
        let args = DemoArgs::default();
        let backend = Backend::Ollama {
            host: "http://h:1".into(),
            model: "m".into(),
        };
        let verify = vec!["command:true".to_owned()];
        let r = run_args_for(&args, &backend, Path::new("/w"), "t", verify.clone());
        assert_eq!(r.provider.as_deref(), Some("ollama"));
        assert_eq!(r.host.as_deref(), Some("http://h:1"));
        assert_eq!(r.tool_mode, None);
        assert!(!r.read_only, "the demo's task edits a file");
        assert_eq!(r.verify, verify);
        assert!(r.no_checkpoint, "a temporary copy needs no checkpoint");
        assert_eq!(r.timeout, Some(300.0));
        assert_eq!(r.max_time, Some(900.0));
        assert_eq!(r.workspace.as_deref(), Some(Path::new("/w")));
        let own = DemoArgs {
            workspace: Some("/w".into()),
            ..DemoArgs::default()
        };
        let r = run_args_for(&own, &backend, Path::new("/w"), "t", Vec::new());
        assert!(
            !r.no_checkpoint,
            "the user's own directory gets a checkpoint"
        );
    }
}
