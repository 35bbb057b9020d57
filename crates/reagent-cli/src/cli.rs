//! Command-line definitions (clap). Flags named in the issues are a contract: keep them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// reagent: make local models do real work, safely.
#[derive(Debug, Parser)]
#[command(name = "reagent", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Config file (TOML). Default: ./reagent.toml, then ~/.config/reagent/config.toml.
    #[arg(long, global = true)]
    pub(crate) config: Option<PathBuf>,
    /// Log level for diagnostics on stderr (error, warn, info, debug, trace).
    #[arg(long, global = true, default_value = "warn")]
    pub(crate) log: String,
    /// Export OpenTelemetry traces (a span per run, model call and tool call) over OTLP/HTTP to
    /// this collector: a base URL (`/v1/traces` is appended) or the full traces URL.
    #[arg(
        long,
        global = true,
        env = "OTEL_EXPORTER_OTLP_ENDPOINT",
        value_name = "URL"
    )]
    pub(crate) otlp_endpoint: Option<String>,
    /// With --otlp-endpoint: also export prompts, completions, tool arguments and tool results
    /// (left out by default).
    #[arg(
        long,
        global = true,
        env = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
    )]
    pub(crate) otlp_capture_content: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Parsed once per process, so the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Hand a task to a model and let it act on a workspace.
    Run(RunArgs),
    /// Talk with the model in a terminal console while it reads, edits, searches and runs
    /// things in the workspace (a stored session; without a terminal: line mode on stdin).
    #[command(mut_arg("task", |a| a.required(false).hide(true).default_value("")))]
    Chat(crate::chat_cmd::ChatArgs),
    /// Run one tool under exactly the confinement it has inside a run; print its JSON result.
    Tool(ToolArgs),
    /// Parse a raw model output from stdin and show the tool calls found.
    Parse(ParseArgs),
    /// Report what this machine supports (sandbox layers, model server).
    Doctor(DoctorArgs),
    /// Run a demo task: on Ollama if it runs, else on an embedded llama-server + SmolLM2.
    Demo(crate::demo::DemoArgs),
    /// Measure a model on a suite of small tasks (`reagent eval SUITE`), compare two results
    /// (`reagent eval compare A B`), or list the stored ones (`reagent eval list`).
    Eval(EvalArgs),
    /// List, show, follow, export and delete recorded runs.
    Runs(RunsArgs),
    /// Run the hub (one leads, others stand by), or see and steer it: status, history,
    /// pause, resume.
    Hub(crate::hub_cmd::HubArgs),
    /// Goals the hub decomposes into tasks: add, list, show.
    Goal(crate::goal_cmd::GoalArgs),
    /// Run queued tasks from the store with the model flags of `reagent run` (beside a model
    /// server), until SIGTERM.
    #[command(mut_arg("task", |a| a.required(false).hide(true).default_value("")))]
    Worker(crate::worker_cmd::WorkerArgs),
    /// Queue tasks for the workers, and list, show, cancel or retry them.
    Task(crate::task_cmd::TaskArgs),
    /// Serve the HTTP API, live event streams, approvals, metrics and the dashboard.
    Serve(crate::serve_cmd::ServeArgs),
    /// Task-free multi-cycle experiments: run, resume, list, report, rate, compare.
    Cycles(crate::cycles_cmd::CyclesArgs),
    /// MCP: list and call the configured servers' tools; serve reagent's tools over MCP.
    Mcp(crate::mcp_cmd::McpArgs),
}

/// Flags of `reagent run`.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct RunArgs {
    /// The task, in plain words.
    pub(crate) task: String,
    /// Model name as the server knows it (e.g. qwen3:8b); with --provider local, a catalog
    /// model (default qwen2.5-coder:1.5b; also qwen2.5-coder:0.5b, smollm2:135m).
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// Model server: ollama, openai, anthropic, gemini, or local (the embedded llama-server,
    /// installed and started on demand and kept warm between runs for a few minutes).
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// With --provider local: serve this GGUF model file instead of a catalog model.
    #[arg(long, value_name = "FILE")]
    pub(crate) model_file: Option<PathBuf>,
    /// Ollama host (default: $OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Server base URL, the way the provider's SDK takes it (OpenAI-style ends in /v1).
    /// Repeat for an endpoint pool.
    #[arg(long = "base-url")]
    pub(crate) base_url: Vec<String>,
    /// Directory the agent works in (default: current directory).
    #[arg(long)]
    pub(crate) workspace: Option<PathBuf>,
    /// Stop after this many model calls (default 20).
    #[arg(long)]
    pub(crate) max_iterations: Option<u32>,
    /// Write every event as a JSON line to FILE.
    #[arg(long)]
    pub(crate) events: Option<PathBuf>,
    /// Print one JSON object with the result instead of the answer.
    #[arg(long)]
    pub(crate) json: bool,
    /// Disable every tool that writes files or runs commands.
    #[arg(long)]
    pub(crate) read_only: bool,
    /// Leave a tool out (repeatable).
    #[arg(long = "disable-tool")]
    pub(crate) disable_tool: Vec<String>,
    /// Budget: total tokens (prompt + completion).
    #[arg(long)]
    pub(crate) max_tokens: Option<u64>,
    /// Budget: wall-clock seconds.
    #[arg(long)]
    pub(crate) max_time: Option<f64>,
    /// Budget: tool calls.
    #[arg(long)]
    pub(crate) max_tool_calls: Option<u32>,
    /// Context window (default: the smaller of the model's and 16384).
    #[arg(long)]
    pub(crate) num_ctx: Option<u32>,
    /// Maximum tokens per reply (default 2048).
    #[arg(long)]
    pub(crate) num_predict: Option<u32>,
    /// Sampling temperature.
    #[arg(long)]
    pub(crate) temperature: Option<f32>,
    /// Sampling seed.
    #[arg(long)]
    pub(crate) seed: Option<i64>,
    /// How long Ollama keeps the model loaded (e.g. 5m).
    #[arg(long)]
    pub(crate) keep_alive: Option<String>,
    /// Turn the model's thinking on or off (true/false).
    #[arg(long)]
    pub(crate) think: Option<bool>,
    /// Per-call timeout in seconds (default 120).
    #[arg(long)]
    pub(crate) timeout: Option<f64>,
    /// How tools are offered: auto, native, constrained or prompt.
    #[arg(long)]
    pub(crate) tool_mode: Option<String>,
    /// Do not stream the reply (streaming is on by default in a terminal).
    #[arg(long)]
    pub(crate) no_stream: bool,
    /// Force a parser format family (e.g. hermes, mistral).
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// Command sandbox: read-only, workspace-write or full.
    #[arg(long)]
    pub(crate) sandbox: Option<String>,
    /// Let commands use the network.
    #[arg(long)]
    pub(crate) allow_network: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Where to record the run: a SQLite file or postgres://… (default: $REAGENT_STORE, the
    /// config file's `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// Do not record the run.
    #[arg(long, conflicts_with = "store")]
    pub(crate) no_store: bool,
    /// Continue the stored session of run ID (or a unique prefix, or the session's own id) with
    /// its history; the task is the follow-up message. Model and workspace default to the
    /// stored run's (the session's newest).
    #[arg(long, value_name = "ID", conflicts_with = "no_store")]
    pub(crate) resume: Option<String>,
    /// Check the work when the model ends the run (repeatable; replaces `[verify] checks`):
    /// file_exists:PATH, file_contains:PATH:TEXT, command:CMD, tests:CMD, git_clean, or auto
    /// (the command the task says must pass). Failing checks go back to the model.
    #[arg(long = "verify", value_name = "CHECK")]
    pub(crate) verify: Vec<String>,
    /// How many times failing checks go back to the model before the run ends (default 2).
    #[arg(long, value_name = "N")]
    pub(crate) verify_retries: Option<u32>,
    /// When verification still fails, restore the workspace and try again with a new seed, up
    /// to N attempts in all (each a run of its own); the best attempt's files are kept.
    #[arg(long, value_name = "N")]
    pub(crate) attempts: Option<u32>,
    /// Do not record the workspace before the run's first change (`reagent runs undo` then
    /// cannot restore it).
    #[arg(long)]
    pub(crate) no_checkpoint: bool,
}

/// Flags of `reagent tool`.
#[derive(Debug, Args)]
pub(crate) struct ToolArgs {
    /// Tool name (read_file, write_file, edit_file, list_directory, find_files, grep_search,
    /// run_command, task_complete).
    pub(crate) name: String,
    /// Workspace directory.
    #[arg(long)]
    pub(crate) workspace: PathBuf,
    /// Arguments as a JSON object.
    #[arg(long, default_value = "{}")]
    pub(crate) args: String,
    /// Disable every tool that writes files or runs commands.
    #[arg(long)]
    pub(crate) read_only: bool,
    /// Command sandbox: read-only, workspace-write or full.
    #[arg(long)]
    pub(crate) sandbox: Option<String>,
    /// Let commands use the network.
    #[arg(long)]
    pub(crate) allow_network: bool,
}

/// Flags of `reagent parse`.
#[derive(Debug, Args)]
pub(crate) struct ParseArgs {
    /// Print JSON: {"content", "reasoning", "calls", "format", "truncated"}.
    #[arg(long)]
    pub(crate) json: bool,
    /// Force a format family (the corpus family names, e.g. hermes, qwen3_coder_xml).
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// Tool schemas (a JSON array of {name, parameters} or OpenAI function objects) used to
    /// type argument values.
    #[arg(long)]
    pub(crate) tools: Option<PathBuf>,
}

/// Flags of `reagent doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Ollama host to check.
    #[arg(long)]
    pub(crate) host: Option<String>,
}

/// Flags of `reagent eval`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    pub(crate) compare: Option<EvalCommand>,
    /// The suite file (TOML), e.g. evals/small-tasks.toml.
    pub(crate) suite: Option<PathBuf>,
    /// The suite file, as a flag (the same as giving it as the argument).
    #[arg(long = "suite", value_name = "FILE", conflicts_with = "suite")]
    pub(crate) suite_flag: Option<PathBuf>,
    /// Model name as the server knows it; with --provider local, a catalog model
    /// (qwen2.5-coder:0.5b, qwen2.5-coder:1.5b, smollm2:135m), served by the embedded
    /// llama-server as `reagent run --provider local` serves it.
    #[arg(long)]
    pub(crate) model: Option<String>,
    #[command(flatten)]
    pub(crate) server: ServerFlags,
    /// With --provider local: serve this GGUF model file.
    #[arg(long, value_name = "FILE")]
    pub(crate) model_file: Option<PathBuf>,
    /// Tool modes to run side by side, comma-separated: auto, native, constrained, prompt, and
    /// seed (the seed-style baseline loop). Default: auto.
    #[arg(long, default_value = "auto")]
    pub(crate) tool_mode: String,
    /// Samples per task: run each task with seeds 1..=N (at a temperature above 0, so the
    /// report's spread across samples says what is noise).
    #[arg(long, visible_alias = "samples", default_value_t = 1)]
    pub(crate) seeds: u32,
    /// Write each task run's events (the model's raw replies and the tool results) as JSON
    /// lines into DIR, one file per run (`<task>.<mode>.seed<N>.jsonl`): fixtures that
    /// `reagent_core::replay` feeds through the loop again.
    #[arg(long, value_name = "DIR")]
    pub(crate) record: Option<PathBuf>,
    /// Print the result as one JSON document instead of the tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// Save the result here (default: .reagent/evals/<timestamp>.json in the current directory).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Run only the task with this id (repeatable).
    #[arg(long = "task")]
    pub(crate) tasks: Vec<String>,
    /// Checks run when the model ends a task run, as `reagent run --verify` (repeatable):
    /// `auto` (the commands a task says must pass), `tests:CMD`, `command:CMD`,
    /// `file_exists:PATH`, `file_contains:PATH:TEXT`, `git_clean`. A failing check goes back to
    /// the model, up to --verify-retries times; the suite's own checks judge the run after.
    #[arg(long = "verify", value_name = "CHECK")]
    pub(crate) verify: Vec<String>,
    /// Rounds of failing checks given back to the model (default 2).
    #[arg(long, value_name = "N")]
    pub(crate) verify_retries: Option<u32>,
    /// Best of N, as `reagent run --attempts`: a task run whose --verify checks still fail
    /// after their retries is undone and tried again with another seed, up to N attempts in
    /// all; the suite's checks judge the best attempt. Costs count every attempt.
    #[arg(long, value_name = "N")]
    pub(crate) attempts: Option<u32>,
    /// Stop each run after this many model calls (default 10).
    #[arg(long, default_value_t = 10)]
    pub(crate) max_iterations: u32,
    /// Budget per run: wall-clock seconds (default 300).
    #[arg(long, default_value_t = 300.0)]
    pub(crate) max_time: f64,
    /// Context window.
    #[arg(long)]
    pub(crate) num_ctx: Option<u32>,
    /// Maximum tokens per reply.
    #[arg(long)]
    pub(crate) num_predict: Option<u32>,
    /// Sampling temperature.
    #[arg(long)]
    pub(crate) temperature: Option<f32>,
    /// Per-call timeout in seconds (default 120).
    #[arg(long)]
    pub(crate) timeout: Option<f64>,
    /// No progress on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// The store that records each task run and keeps the result: a SQLite file or
    /// postgres://… (default: $REAGENT_STORE, the config file's `store`, else
    /// $XDG_DATA_HOME/reagent/reagent.db). `compare` and `list` read stored results from it.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// Record nothing in the store (the result file is still written).
    #[arg(long)]
    pub(crate) no_store: bool,
}

/// Subcommands of `reagent eval`.
#[derive(Debug, Subcommand)]
pub(crate) enum EvalCommand {
    /// Compare two results per mode and category (B against A). Each is a result file, or
    /// else a stored result's id (or a unique prefix of one).
    Compare {
        /// The earlier result (JSON, as saved by `reagent eval`, or a stored result's id).
        a: PathBuf,
        /// The later result.
        b: PathBuf,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stored results, newest first: id, created, suite, model, passed/total.
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// At most N results.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

/// Flags of `reagent runs`.
#[derive(Debug, Args)]
pub(crate) struct RunsArgs {
    /// The store: a SQLite file or postgres://… (default: $REAGENT_STORE, the config file's
    /// `store`, else $XDG_DATA_HOME/reagent/reagent.db).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) store: Option<String>,
    #[command(subcommand)]
    pub(crate) command: RunsCommand,
}

/// `reagent runs …`. ID may be any unique prefix of a run id.
#[derive(Debug, Subcommand)]
pub(crate) enum RunsCommand {
    /// Recorded runs, newest first.
    List {
        /// One JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// At most N runs.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Only runs with this outcome (running, completed, interrupted, max_iterations...).
        #[arg(long)]
        outcome: Option<String>,
    },
    /// A run's transcript as a person reads it.
    Show {
        /// Run id (or a unique prefix).
        id: String,
    },
    /// A run's events as JSON lines.
    Events {
        /// Run id (or a unique prefix).
        id: String,
        /// Keep printing events while another process runs it; end when it finishes.
        #[arg(long)]
        follow: bool,
    },
    /// Write a run as one self-contained HTML page.
    Export {
        /// Run id (or a unique prefix).
        id: String,
        /// The HTML file to write.
        #[arg(long, value_name = "FILE")]
        html: PathBuf,
    },
    /// Feed a run's recorded model replies and tool results through today's loop and report
    /// the first step where it acts differently (exit 0 when it matches, 9 when it differs).
    Replay {
        /// Run id (or a unique prefix).
        id: String,
    },
    /// Delete a run and its events.
    Delete {
        /// Run id (or a unique prefix).
        id: String,
    },
    /// Put the workspace back as it was before the run's first change (files it changed are
    /// written back, files it created deleted); prints what it restores. Refused when a file it
    /// would touch changed after the run ended, unless --force.
    Undo {
        /// Run id (or a unique prefix).
        id: String,
        /// Only print what would be restored and deleted.
        #[arg(long)]
        dry_run: bool,
        /// Restore even files that changed after the run ended (otherwise refused).
        #[arg(long)]
        force: bool,
    },
}

/// Which model server to talk to: the flags `reagent eval` and `reagent hub` share (`reagent
/// run`'s own also take `--provider local`).
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ServerFlags {
    /// Model server: ollama, openai, anthropic or gemini.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// Ollama host (default: $OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Server base URL, the way the provider's SDK takes it (OpenAI-style ends in /v1). Repeat
    /// for an endpoint pool.
    #[arg(long = "base-url")]
    pub(crate) base_url: Vec<String>,
}
