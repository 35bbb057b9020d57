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
