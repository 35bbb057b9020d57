//! Smoke test against the real model: three tasks of the shipped suite through the harness
//! on the cached llama-server + SmolLM2-135M (installed by `scripts/install-model-server.sh`;
//! the test fails, never skips, when it is missing). It asserts that the harness runs them
//! and produces a well-formed result, not that the model succeeds. Kept small for a loaded
//! two-core machine: 4096-token context, 96-token replies, at most 4 model calls per task.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reagent_core::{AgentConfig, ToolMode};
use reagent_eval::{EvalResult, Harness, HarnessConfig, Mode, Suite};
use reagent_local::{LocalServer, Locations, ServerConfig};
use reagent_protocol::CancellationToken;
use reagent_providers::openai::OpenAiProvider;
use reagent_providers::{ClientOptions, RetryPolicy};

/// The tasks run (in the suite's order): a read, a file creation and a config lookup.
const TASKS: [&str; 3] = ["read-flower", "create-hello", "config-port"];

async fn start_server() -> LocalServer {
    let files = Locations::from_env()
        .expect("a cache directory (REAGENT_CACHE or HOME)")
        .files();
    assert!(
        files.is_complete(),
        "the local model server is not installed ({:?} missing): run scripts/install-model-server.sh",
        files.missing()
    );
    let config = ServerConfig {
        ctx_size: 4096,
        threads: Some(1),
        startup_timeout: Duration::from_secs(180),
        ..ServerConfig::new(files)
    };
    match LocalServer::start(&config).await {
        Ok(server) => server,
        Err(e) => panic!("the local llama-server did not start: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_tasks_run_on_the_real_model_and_give_a_well_formed_result() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/small-tasks.toml");
    let mut suite = Suite::load(&path).unwrap();
    assert!(
        suite.tasks.len() >= 40,
        "the shipped suite has {} tasks",
        suite.tasks.len()
    );
    suite.select(&TASKS.map(String::from)).unwrap();

    let server = start_server().await;
    let provider = OpenAiProvider::new(
        &server.openai_base_url(),
        None,
        ClientOptions {
            timeout: Duration::from_secs(240),
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        },
    )
    .unwrap();
    let mut agent = AgentConfig::new(server.model());
    agent.max_iterations = 4;
    agent.options.num_ctx = Some(4096);
    agent.options.num_predict = Some(96);
    agent.options.temperature = Some(0.0);
    agent.repetition_threshold = 2;
    let mut config = HarnessConfig::new(agent);
    config.modes = vec![Mode::Tool(ToolMode::Constrained)];
    let harness = Harness::new(Arc::new(provider), config);
    let cancel = CancellationToken::new();
    let run = harness.run(&suite, &|_| {}, &cancel);
    let result = tokio::time::timeout(Duration::from_secs(1500), run)
        .await
        .expect("three small tasks finish within 25 minutes");

    eprintln!("{}", reagent_eval::render_summary(&result));
    assert_eq!(result.model, "SmolLM2-135M-Instruct");
    assert_eq!(result.provider, "openai");
    assert_eq!(result.modes, ["constrained"]);
    let ran: Vec<&str> = result.runs.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(ran, TASKS);
    for (run, task) in result.runs.iter().zip(&suite.tasks) {
        let context = format!("{run:#?}");
        assert_eq!(run.tool_mode, "constrained", "{context}");
        assert_eq!(run.seed, 1);
        assert_ne!(run.outcome, "provider_error", "{context}");
        // At most max_iterations calls, plus the one plain question that asks for the answer.
        assert!((1..=5).contains(&run.iterations), "{context}");
        assert!(
            run.prompt_tokens > 0 && run.completion_tokens > 0,
            "{context}"
        );
        assert!(run.wall_ms > 0, "{context}");
        assert_eq!(run.checks.len(), task.checks.len(), "{context}");
        assert_eq!(run.passed, run.checks.iter().all(|c| c.passed), "{context}");
        // The schema forces valid calls: every reply with a call was read as constrained.
        assert!(
            run.parse_layers.iter().all(|l| l == "constrained"),
            "{context}"
        );
    }
    let summary = &result.summary[0];
    assert_eq!(summary.overall.runs, 3);
    let passed = result.runs.iter().filter(|r| r.passed).count() as u32;
    assert_eq!(summary.overall.passed, passed);
    assert_eq!(summary.categories.len(), 3);

    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("smoke.json");
    result.save(&saved).unwrap();
    assert_eq!(EvalResult::load(&saved).unwrap(), result);
    let table = reagent_eval::render_summary(&result);
    assert!(table.contains("SmolLM2-135M-Instruct"), "{table}");
}
