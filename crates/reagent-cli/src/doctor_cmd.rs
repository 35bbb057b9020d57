//! `reagent doctor`: what this machine supports — sandbox layers, model servers.

use crate::cli::DoctorArgs;
use crate::exit::ExitCode;

/// Run the command.
pub(crate) async fn run(args: &DoctorArgs) -> anyhow::Result<ExitCode> {
    println!("reagent {}", env!("CARGO_PKG_VERSION"));
    println!();
    println!("Command sandbox layers on this machine:");
    println!("{}", reagent_sandbox::probe());
    println!();
    let host = args
        .host
        .as_deref()
        .map(reagent_providers::ollama::normalize_ollama_host)
        .unwrap_or_else(reagent_providers::ollama::default_ollama_host);
    let ollama = reagent_providers::ollama::OllamaProvider::new(&host, Default::default())?;
    match ollama.health().await {
        Ok(()) => println!("Ollama at {host}: answering"),
        Err(e) => println!("Ollama at {host}: {e}"),
    }
    match reagent_local::Locations::from_env() {
        Ok(locations) => {
            let files = locations.files();
            if files.is_complete() {
                println!(
                    "Embedded model server: installed ({}, {})",
                    files.server.display(),
                    files.model.display()
                );
            } else {
                let missing: Vec<String> = files
                    .missing()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                println!(
                    "Embedded model server: not installed (missing {}); `reagent demo` or \
                     scripts/install-model-server.sh installs it",
                    missing.join(", ")
                );
            }
        }
        Err(e) => println!("Embedded model server: {e}"),
    }
    Ok(ExitCode::Completed)
}
