//! Models by name: the catalog's files in a cache, unknown names, and the real Qwen2.5-Coder
//! 0.5B served by name returning a native tool call.

use std::sync::Mutex;
use std::time::Duration;

use reagent_local::{
    catalog_model, ensure_model, LocalError, LocalServer, Locations, ServerConfig,
};
use serde_json::{json, Value};

use super::script;

#[tokio::test]
async fn an_unknown_name_is_refused_with_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let err = ensure_model(
        &Locations::in_cache(dir.path()),
        "qwen2.5-coder:70b",
        Duration::from_secs(5),
        &|_| {},
    )
    .await
    .unwrap_err();
    assert!(matches!(err, LocalError::UnknownModel { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("`qwen2.5-coder:70b`"), "{msg}");
    assert!(
        msg.contains("smollm2:135m, qwen2.5-coder:0.5b, qwen2.5-coder:1.5b"),
        "{msg}"
    );
    assert!(!dir.path().join("models").exists(), "nothing was installed");
}

#[tokio::test]
async fn an_installed_model_is_served_from_the_cache_without_running_an_installer() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("bin")).unwrap();
    std::fs::create_dir_all(cache.join("models")).unwrap();
    script(&cache.join("bin"), "llama-server", "exit 0");
    let model = catalog_model("qwen2.5-coder:1.5b").unwrap();
    // A sparse file of the exact size stands for the 1.1 GB download.
    let file = std::fs::File::create(cache.join("models").join(model.file)).unwrap();
    file.set_len(model.bytes.unwrap()).unwrap();

    let lines = Mutex::new(Vec::<String>::new());
    let files = ensure_model(
        &Locations::in_cache(&cache),
        "Qwen2.5-Coder:1.5B",
        Duration::from_secs(5),
        &|l| lines.lock().unwrap().push(l.to_owned()),
    )
    .await
    .unwrap();
    assert_eq!(files.model, cache.join("models").join(model.file));
    assert_eq!(files.server, cache.join("bin/llama-server"));
    assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock());
    // The server installer was not run: it would have made its source directory.
    assert!(!cache.join("src").exists());
}

/// The real Qwen2.5-Coder-0.5B (installed by `scripts/install-models.sh`; installed here by
/// name when missing, a 491 MB download) under llama-server `--jinja`, with its own chat
/// template (which declares the tools): one request with a `read_file` tool comes back as that
/// call. llama.cpp returns it in `tool_calls` when the model writes the template's
/// `<tool_call>` tags; Qwen2.5-Coder (0.5B and 1.5B alike) writes the same call object in a
/// JSON code fence instead, which the server leaves in the content and reagent's parser reads
/// (the text layer of the native mode), so either place is accepted and the call must be
/// exact. Slow (loading 491 MB and a ~180-token prompt: about a minute on two loaded cores),
/// so it is one request of at most 48 tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_coder_by_name_calls_the_offered_tool() {
    let locations = Locations::from_env().expect("a cache directory (REAGENT_CACHE or HOME)");
    let model = catalog_model("qwen2.5-coder:0.5b").unwrap();
    assert!(model.native_tools);
    let files = ensure_model(&locations, model.name, Duration::from_secs(3600), &|_| {})
        .await
        .unwrap_or_else(|e| panic!("cannot install {}: {e}", model.name));
    let config = ServerConfig {
        ctx_size: 2048,
        alias: model.name.to_owned(),
        startup_timeout: Duration::from_secs(300),
        ..ServerConfig::new(files)
    };
    let server = LocalServer::start(&config)
        .await
        .unwrap_or_else(|e| panic!("llama-server did not start with {}: {e}", model.name));
    let reply: Value = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .json(&json!({
            "model": model.name,
            "messages": [{"role": "user", "content": "Show me what is in the file notes.txt."}],
            "tools": [{
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file of the workspace.",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string", "description": "The file path."}},
                        "required": ["path"]
                    }
                }
            }],
            "max_tokens": 48,
            "temperature": 0,
        }))
        .timeout(Duration::from_secs(300))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["model"], model.name, "served under its catalog name");
    let message = &reply["choices"][0]["message"];
    let (name, args) = match message["tool_calls"][0]["function"].as_object() {
        Some(call) => (
            call["name"].clone(),
            serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap(),
        ),
        None => {
            let content = message["content"].as_str().unwrap_or_default();
            let parsed = reagent_parse::parse(content, &reagent_parse::ParseOptions::default());
            let call = parsed
                .calls
                .first()
                .unwrap_or_else(|| panic!("no tool call in {reply}"));
            (json!(call.name), call.arguments.clone())
        }
    };
    assert_eq!(name, "read_file", "{reply}");
    assert_eq!(args["path"], "notes.txt", "{reply}");
}
