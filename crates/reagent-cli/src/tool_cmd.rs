//! `reagent tool NAME --workspace DIR --args JSON`: run one tool, under exactly the
//! confinement and argument checks it has inside a run, and print its JSON result.

use std::sync::Arc;

use anyhow::Context;
use reagent_core::ArgumentChecker;
use reagent_tools::{ToolContext, ToolRegistry, Workspace};
use serde_json::Value;

use crate::cli::ToolArgs;
use crate::config::FileConfig;
use crate::exit::ExitCode;
use crate::{setup, usage};

/// Run the command. Exit code 0 when the tool succeeded, 1 when it returned an error.
pub(crate) async fn run(args: &ToolArgs, file: &FileConfig) -> anyhow::Result<ExitCode> {
    let arguments: Value = serde_json::from_str(&args.args)
        .with_context(|| format!("--args is not valid JSON: {}", args.args))
        .map_err(usage)?;
    let workspace = Workspace::open(&args.workspace).map_err(|e| {
        usage(anyhow::anyhow!(
            "cannot open workspace {}: {e}",
            args.workspace.display()
        ))
    })?;
    let config = setup::tools_config(
        args.read_only,
        Vec::new(),
        args.sandbox.as_deref(),
        args.allow_network,
        file,
    )
    .map_err(usage)?;
    let registry = ToolRegistry::workspace_tools(&config);
    let result = match ArgumentChecker::new(&registry.specs()).check(&args.name, &arguments) {
        Err(message) => reagent_tools::ToolResult::err(message),
        Ok(checked) => {
            let mut ctx = ToolContext::new(Arc::new(workspace));
            ctx.approver = crate::approve::TerminalApprover::if_interactive();
            let name = args.name.clone();
            tokio::task::spawn_blocking(move || registry.call(&name, &checked, &ctx)).await?
        }
    };
    println!("{}", result.to_json());
    Ok(if result.is_ok() {
        ExitCode::Completed
    } else {
        ExitCode::Internal
    })
}
