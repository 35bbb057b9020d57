//! Experiments end to end against a scripted Ollama: cycles, memory across cycles, the
//! operator, the monitor's thresholds, embeddings and their fallback, cut-short cycles,
//! resume after a failure, and the JSONL log.

use std::sync::Arc;

use reagent_cycles::log::{read_jsonl, CYCLE_END, CYCLE_START, LLM_INVOCATION, TOOL_CALL};
use reagent_cycles::operator::Scripted;
use reagent_cycles::prompts::{MODERATE_ADVISORY, STRONG_ADVISORY};
use reagent_cycles::{runner, CyclesError, Status};
use reagent_testkit::Turn;
use serde_json::json;

use super::harness::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_cycles_keep_memory_reach_the_operator_and_log_the_study_shape() {
    let f = fixture().await;
    let server = ollama(
        vec![
            // Cycle 1: a note, a message to the operator, a reflection.
            Turn::tool_call("write", json!({"key": "plan", "value": "study primes"})),
            Turn::tool_call(
                "send_message_to_operator",
                json!({"message": "Is anyone there?"}),
            ),
            Turn::text("<think>private musing</think>Cycle one: I wrote my plan down."),
            // Cycle 2: a look at the keys.
            Turn::tool_call("list", json!({})),
            Turn::text("Cycle two: I listed my memory."),
            // Cycle 3: the note of cycle 1, read back; a search.
            Turn::tool_call("read", json!({"key": "plan"})),
            Turn::tool_call("pattern_search", json!({"pattern": "PRIME"})),
            Turn::text("Cycle three: my plan was to study primes."),
        ],
        false,
    )
    .await;
    let config = config(f.dir.path(), "ember-1", 3, &server.base_url(), "");
    let log = f.dir.path().join("logs/ember-1.jsonl");
    let operator = Arc::new(Scripted::new(["Yes, I am here.".to_owned()]));
    let summary = run(&f, &config, operator, Some(log.clone()), false, true).await;
    assert_eq!(summary.status, Status::Completed, "{summary:?}");
    assert_eq!(summary.cycles_done, 3);
    assert_eq!(summary.log_error, None);
    assert!(
        server.invariant_violations().is_empty(),
        "{:?}",
        server.invariant_violations()
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    // The options of the config reach the server.
    let options = &requests[0]["options"];
    assert_eq!(options["top_p"], json!(0.9));
    assert_eq!(options["repeat_penalty"], json!(1.15));
    assert_eq!(options["seed"], json!(1));
    // The operator's scripted reply reaches the agent.
    assert!(texts(&requests[2]).contains("Yes, I am here."));
    // Cycle 2 starts fresh with cycle 1's reflection (thinking removed).
    let opening = texts(&requests[3]);
    assert!(opening.contains("Cycle 2 of 3 begins"), "{opening}");
    assert!(
        opening.contains("[Cycle 1]\nCycle one: I wrote my plan down."),
        "{opening}"
    );
    assert!(!opening.contains("private musing"));
    assert!(
        !opening.contains("Yes, I am here."),
        "a fresh session: {opening}"
    );
    // Memory written in cycle 1 is read in cycle 3, and found by a case-insensitive search.
    assert!(texts(&requests[6]).contains("study primes"));
    assert!(texts(&requests[7]).contains("\"matches\""));

    let cycles = f.store.cycles("ember-1").await.unwrap();
    assert_eq!(cycles.len(), 3);
    assert_eq!(cycles[0].reflection, "Cycle one: I wrote my plan down.");
    assert_eq!(cycles[0].thinking, "private musing");
    assert!(cycles
        .iter()
        .all(|c| !c.cut_short && c.outcome == "completed"));
    let m = metrics(&f.store, "ember-1").await;
    assert_eq!(m[0]["memory_ops_total"], 1);
    assert_eq!(m[0]["messages_to_operator"], 1);
    assert_eq!(m[0]["memory_write_chars"], "study primes".len());
    assert_eq!(m[0]["memory_keys_end"], 1);
    assert_eq!(m[2]["memory_ops_total"], 2);
    assert_eq!(m[1]["similarity_scores"].as_array().unwrap().len(), 1);
    assert_eq!(m[2]["similarity_scores"].as_array().unwrap().len(), 2);
    assert_eq!(m[0]["similarity_method"], "tfidf");
    assert!(m.iter().all(|x| x["response_chars"].as_u64().unwrap() > 0));
    assert!(m
        .iter()
        .all(|x| x["duration_ms"].is_u64() && x["total_tokens"].is_u64()));

    // The log validates and has the study's shape; the store holds the same events.
    let events = read_jsonl(&log).unwrap();
    let count = |t: &str| events.iter().filter(|e| e.event_type == t).count();
    assert_eq!((count(CYCLE_START), count(CYCLE_END)), (3, 3));
    assert_eq!(count(TOOL_CALL), 5);
    assert_eq!(count(LLM_INVOCATION), 8);
    assert!(events.iter().all(|e| e.run_id == "ember-1"));
    let first_call = events.iter().find(|e| e.event_type == TOOL_CALL).unwrap();
    assert_eq!(first_call.cycle_number, 1);
    assert_eq!(first_call.payload["tool_name"], "write");
    assert_eq!(first_call.payload["parameters"]["key"], "plan");
    assert_eq!(first_call.payload["output"]["ok"], true);
    let invocation = events
        .iter()
        .find(|e| e.event_type == LLM_INVOCATION)
        .unwrap();
    assert_eq!(invocation.payload["prompt_messages"][0]["role"], "system");
    assert_eq!(invocation.payload["model_options"]["top_p"], json!(0.9));
    let end = events.iter().find(|e| e.event_type == CYCLE_END).unwrap();
    assert_eq!(
        end.payload["final_reflection"],
        "Cycle one: I wrote my plan down."
    );
    let stored = f.store.cycle_events("ember-1").await.unwrap();
    assert_eq!(stored.len(), events.len());
    assert_eq!(stored[0].event_type, CYCLE_START);
    // The sessions' own events are in the store too (reagent runs show).
    f.store.flush().await;
    let run_id = m[0]["session_run_id"].as_str().unwrap();
    assert!(f.store.run(run_id).await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_monitor_advises_above_its_thresholds() {
    let f = fixture().await;
    let server = ollama(
        vec![
            Turn::text("I counted the stars in the night sky."),
            Turn::text("I counted the stars in the night sky."),
            Turn::text("I counted the stars and the planets of the sky."),
            Turn::text("Rivers, mountains and a recipe for bread."),
        ],
        false,
    )
    .await;
    let config = config(
        f.dir.path(),
        "thresholds",
        4,
        &server.base_url(),
        "[similarity]\nstrong = 0.95\nmoderate = 0.3\n",
    );
    let summary = run(&f, &config, absent(), None, false, true).await;
    assert_eq!(summary.status, Status::Completed);
    let m = metrics(&f.store, "thresholds").await;
    let levels: Vec<&str> = m
        .iter()
        .map(|x| x["similarity_level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["none", "strong", "moderate", "none"]);
    assert_eq!(m[1]["similarity_max"], 1.0);
    let requests = server.requests();
    assert!(!texts(&requests[1]).contains("Advisory"));
    assert!(texts(&requests[2]).contains(STRONG_ADVISORY));
    assert!(texts(&requests[3]).contains(MODERATE_ADVISORY));
    assert_eq!(m[1]["advisory"], STRONG_ADVISORY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_are_used_when_served_and_tfidf_when_not() {
    for served in [true, false] {
        let f = fixture().await;
        let server = ollama(
            vec![
                Turn::text("alpha beta gamma"),
                Turn::text("alpha beta delta"),
            ],
            served,
        )
        .await;
        let config = config(f.dir.path(), "embed", 2, &server.base_url(), "");
        run(&f, &config, absent(), None, true, true).await;
        let m = metrics(&f.store, "embed").await;
        let embed_calls = server
            .recorded()
            .iter()
            .filter(|r| r.path == "/api/embed")
            .count();
        if served {
            assert_eq!(m[1]["similarity_method"], "embeddings");
            assert_eq!(m[1]["similarity_fallback_reason"], serde_json::Value::Null);
            let s = m[1]["similarity_max"].as_f64().unwrap();
            assert!(s > 0.5 && s < 1.0, "{s}");
            // One request per new reflection: earlier vectors are kept.
            assert_eq!(embed_calls, 2);
        } else {
            assert_eq!(m[1]["similarity_method"], "tfidf");
            let reason = m[1]["similarity_fallback_reason"].as_str().unwrap();
            assert!(
                reason.contains("/api/embed") && reason.contains("404"),
                "{reason}"
            );
            // Once refused, embeddings are not asked for again.
            assert_eq!(embed_calls, 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_cut_short_by_a_guardrail_keeps_its_last_text_as_reflection() {
    let f = fixture().await;
    let server = ollama(
        vec![
            Turn::tool_call("list", json!({})).with_content("Thinking about lists."),
            Turn::tool_call("write", json!({"key": "a", "value": "b"}))
                .with_content("Still working on it."),
            Turn::text("Second cycle, calm."),
        ],
        false,
    )
    .await;
    let config = config(
        f.dir.path(),
        "cut",
        2,
        &server.base_url(),
        "[limits]\nmax_iterations = 2\nmax_time_secs = 60\n",
    );
    let summary = run(&f, &config, absent(), None, false, true).await;
    assert_eq!(summary.status, Status::Completed);
    let cycles = f.store.cycles("cut").await.unwrap();
    assert!(cycles[0].cut_short);
    assert_eq!(cycles[0].outcome, "max_iterations");
    assert_eq!(cycles[0].reflection, "Still working on it.");
    assert!(!cycles[1].cut_short);
    let m = metrics(&f.store, "cut").await;
    assert_eq!(m[0]["cut_short"], true);
    assert!(m[0]["guardrails"].to_string().contains("max_iterations"));
    assert!(texts(&server.requests()[2]).contains("[Cycle 1]\nStill working on it."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_experiment_resumes_at_its_first_unfinished_cycle() {
    let f = fixture().await;
    // Only cycle 1 is scripted: cycle 2's request finds the script used up (HTTP 410).
    let server = ollama(
        vec![
            Turn::tool_call(
                "write",
                json!({"key": "seed", "value": "kept across restarts"}),
            ),
            Turn::text("First reflection."),
        ],
        false,
    )
    .await;
    let config = config(f.dir.path(), "resumed", 3, &server.base_url(), "");
    let first = run(&f, &config, absent(), None, false, true).await;
    assert_eq!(first.status, Status::Failed);
    assert_eq!(first.cycles_done, 1);
    assert!(
        first.error.as_deref().unwrap().starts_with("cycle 2:"),
        "{first:?}"
    );
    assert_eq!(
        f.store.experiment("resumed").await.unwrap().unwrap().status,
        "failed"
    );

    // A second create is refused: resume or a new id.
    let again = runner::create(&f.store, &config, None).await.unwrap_err();
    assert!(matches!(again, CyclesError::Exists(_)));
    assert!(again.to_string().contains("reagent cycles resume resumed"));

    for turn in [
        Turn::text("Second reflection."),
        Turn::tool_call("read", json!({"key": "seed"})),
        Turn::text("Third reflection."),
    ] {
        server.push_turn(turn);
    }
    let (record, stored, _) = runner::stored(&f.store, "resumed").await.unwrap();
    assert_eq!(record.cycles_done, 1);
    assert_eq!(stored, config);
    let second = run(&f, &stored, absent(), None, false, false).await;
    assert_eq!(second.status, Status::Completed, "{second:?}");
    assert_eq!(second.cycles_done, 3);
    let cycles = f.store.cycles("resumed").await.unwrap();
    let numbers: Vec<i64> = cycles.iter().map(|c| c.cycle).collect();
    assert_eq!(numbers, [1, 2, 3]);
    let requests = server.requests();
    // The resumed cycle 2 sees cycle 1's reflection; cycle 3 reads cycle 1's note.
    let second_cycle: Vec<String> = requests
        .iter()
        .map(texts)
        .filter(|t| t.contains("Cycle 2 of 3 begins"))
        .collect();
    assert!(second_cycle
        .last()
        .unwrap()
        .contains("[Cycle 1]\nFirst reflection."));
    assert!(texts(requests.last().unwrap()).contains("kept across restarts"));
    assert_eq!(
        f.store.experiment("resumed").await.unwrap().unwrap().status,
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_history_experiment_keeps_one_conversation() {
    let f = fixture().await;
    let server = ollama(vec![Turn::text("One."), Turn::text("Two.")], false).await;
    let mut config = config(f.dir.path(), "full", 2, &server.base_url(), "");
    config.history = reagent_cycles::HistoryMode::Full;
    run(&f, &config, absent(), None, false, true).await;
    let second = texts(&server.requests()[1]);
    assert!(second.contains("One."), "{second}");
    assert!(second.contains("Cycle 2 of 2 begins. Your earlier cycles are above."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_compatible_embeddings_and_a_server_without_them() {
    use reagent_providers::{Embedder, ProviderConfig, ProviderKind};
    use reagent_testkit::{ScriptBuilder, ScriptedServer, Wire};
    for served in [true, false] {
        let mut script = ScriptBuilder::new();
        if served {
            script = script.embeddings();
        }
        let server = ScriptedServer::start(Wire::OpenAi, script).await.unwrap();
        let mut cfg = ProviderConfig::new(ProviderKind::OpenAi);
        cfg.base_urls = vec![server.base_url()];
        let embedder = Embedder::new(&cfg, "m").unwrap();
        assert!(
            embedder.url().ends_with("/v1/embeddings"),
            "{}",
            embedder.url()
        );
        let texts = [
            "the tide rises".to_owned(),
            "the tide falls".to_owned(),
            "bread".to_owned(),
        ];
        match embedder.embed(&texts).await {
            Ok(v) => {
                assert!(served);
                assert_eq!(v.len(), 3);
                let near = reagent_cycles::similarity::cosine(&v[0], &v[1]);
                let far = reagent_cycles::similarity::cosine(&v[0], &v[2]);
                assert!(near > far, "{near} vs {far}");
            }
            Err(e) => {
                assert!(!served);
                // llama-server without --embeddings.
                assert!(e.to_string().contains("501"), "{e}");
            }
        }
    }
    let mut anthropic = ProviderConfig::new(ProviderKind::Anthropic);
    anthropic.base_urls = vec!["http://127.0.0.1:1".to_owned()];
    assert!(Embedder::new(&anthropic, "m").is_err());
}
