//! Guardrails: invalid calls, repetition, nudges, truncation, budgets, compaction, iterations.

use std::time::Duration;

use reagent_protocol::Outcome;
use reagent_testkit::{ScriptBuilder, Turn};
use serde_json::{json, Value};

use super::harness::{files, run};

#[tokio::test]
async fn invalid_arguments_are_answered_to_the_model_precisely() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"start_line": 3})))
            .turn(Turn::text("sorry")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(
        o.result.outcome,
        Outcome::NoProgress,
        "the only call failed"
    );
    let msgs = o.messages(1);
    let err: serde_json::Value =
        serde_json::from_str(msgs.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(err["ok"], false);
    let text = err["error"].as_str().unwrap();
    assert!(text.contains("\"path\" is a required property"), "{text}");
    assert!(text.contains("path: string (required)"), "{text}");
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_the_valid_names() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("delete_everything", json!({})))
            .turn(Turn::text("ok")),
        |_| {},
        |_| {},
    )
    .await;
    let call = &o.events_of("tool_call")[0];
    assert_eq!(call["ok"], false);
    let msgs = o.messages(1);
    let content = msgs.last().unwrap()["content"].as_str().unwrap();
    assert!(
        content.contains("unknown tool `delete_everything`"),
        "{content}"
    );
    assert!(
        content.contains("read_file") && content.contains("run_command"),
        "{content}"
    );
}

#[tokio::test]
async fn repetition_gets_a_hint_then_a_stop() {
    let same = || Turn::tool_call("read_file", json!({"path": "a.txt"}));
    let o = run(
        ScriptBuilder::new().turns((0..8).map(|_| same())),
        |d| files(d, &[("a.txt", "A")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::GuardrailStop);
    let guard: Vec<String> = o
        .events_of("guardrail")
        .iter()
        .map(|g| {
            format!(
                "{}:{}",
                g["guardrail"].as_str().unwrap(),
                g["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(guard, ["repetition:hint", "repetition:stop"]);
    assert_eq!(o.result.iterations, 4);
    // The hint reached the model as a user message after the third call.
    let msgs = o.messages(3);
    let hint = msgs.last().unwrap();
    assert_eq!(hint["role"], "user");
    assert!(hint["content"].as_str().unwrap().contains("same arguments"));
    // Partial results are preserved.
    assert!(!o.result.transcript.is_empty());
}

#[tokio::test]
async fn an_abab_cycle_is_a_repetition() {
    let a = || Turn::tool_call("read_file", json!({"path": "a.txt"}));
    let b = || Turn::tool_call("list_directory", json!({}));
    let o = run(
        ScriptBuilder::new().turns([a(), b(), a(), b(), a(), b(), a(), b()]),
        |d| files(d, &[("a.txt", "A")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::GuardrailStop);
    assert_eq!(o.events_of("guardrail")[0]["action"], "hint");
}

/// A first reply that gets one nudge (of `reason`), then a read of a.txt and the answer:
/// the run completes with it, and the message the nudge sent is returned.
async fn nudged_once_then_the_model_acts(first: Turn, reason: &str) -> Value {
    let o = run(
        ScriptBuilder::new()
            .turn(first)
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
            .turn(Turn::text("It contains A.")),
        |d| files(d, &[("a.txt", "A")]),
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "It contains A.");
    let nudges = o.events_of("nudge");
    assert_eq!(nudges.len(), 1);
    assert_eq!(nudges[0]["reason"], reason);
    let msgs = o.messages(1);
    let told = msgs.last().unwrap().clone();
    assert_eq!(told["role"], "user");
    told
}

#[tokio::test]
async fn narration_gets_a_nudge_then_the_model_acts() {
    nudged_once_then_the_model_acts(Turn::text("Let me read the file first."), "narration").await;
}

#[tokio::test]
async fn a_call_that_cannot_be_read_is_answered_with_the_reason() {
    let told = nudged_once_then_the_model_acts(
        Turn::text("<tool_call>{\"name\": \"read_file\", \"arguments\": a.txt}</tool_call>"),
        "unread_call",
    )
    .await;
    let told = told["content"].as_str().unwrap();
    assert!(
        told.starts_with("Your tool call could not be read ("),
        "{told}"
    );
    assert!(told.contains("not valid JSON"), "{told}");
}

#[tokio::test]
async fn at_most_two_nudges_then_the_reply_is_the_answer() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text(""))
            .turn(Turn::text("I will look."))
            .turn(Turn::text("I'll check now.")),
        |_| {},
        |_| {},
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed);
    assert_eq!(o.result.answer, "I'll check now.");
    let reasons: Vec<String> = o
        .events_of("nudge")
        .iter()
        .map(|n| n["reason"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(reasons, ["empty_reply", "narration"]);
}

#[tokio::test]
async fn a_truncated_reply_is_retried_once_with_doubled_num_predict() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text("The answer is a long").with_finish("length"))
            .turn(Turn::text("The answer is a long story, complete.")),
        |_| {},
        |c| c.options.num_predict = Some(100),
    )
    .await;
    assert_eq!(o.result.answer, "The answer is a long story, complete.");
    assert_eq!(o.requests[0]["options"]["num_predict"], 100);
    assert_eq!(o.requests[1]["options"]["num_predict"], 200);
    let g = &o.events_of("guardrail")[0];
    assert_eq!(
        (g["guardrail"].as_str(), g["action"].as_str()),
        (Some("truncation"), Some("retry"))
    );
    // One iteration, two requests.
    assert_eq!(o.result.iterations, 1);
}

#[tokio::test]
async fn eval_count_at_num_predict_counts_as_truncated() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::text("cut").with_usage(10, 50))
            .turn(Turn::text("whole answer").with_usage(10, 20)),
        |_| {},
        |c| c.options.num_predict = Some(50),
    )
    .await;
    assert_eq!(o.result.answer, "whole answer");
    assert_eq!(o.requests.len(), 2);
}

#[tokio::test]
async fn an_exhausted_budget_asks_once_for_a_final_answer_without_tools() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})))
            .turn(Turn::tool_call("list_directory", json!({})))
            .turn(Turn::text("Final: a.txt holds A.")),
        |d| files(d, &[("a.txt", "A")]),
        |c| c.budgets.max_tool_calls = Some(2),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::BudgetExhausted);
    assert_eq!(o.result.answer, "Final: a.txt holds A.");
    let last = o.requests.last().unwrap();
    assert!(
        last["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{last}"
    );
    let msgs = o.messages(2);
    assert!(msgs.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .contains("final answer"));
    let g = &o.events_of("guardrail")[0];
    assert_eq!(
        (g["guardrail"].as_str(), g["action"].as_str()),
        (Some("budget_tool_calls"), Some("final_answer"))
    );
}

#[tokio::test]
async fn a_token_budget_is_checked_every_iteration() {
    let o = run(
        ScriptBuilder::new()
            .turn(Turn::tool_call("read_file", json!({"path": "a.txt"})).with_usage(900, 200))
            .turn(Turn::text("Out of tokens, but: A.")),
        |d| files(d, &[("a.txt", "A")]),
        |c| c.budgets.max_total_tokens = Some(1000),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::BudgetExhausted);
    assert_eq!(o.result.answer, "Out of tokens, but: A.");
    assert_eq!(o.events_of("guardrail")[0]["guardrail"], "budget_tokens");
}

#[tokio::test]
async fn max_iterations_stops_the_run_with_partial_results() {
    let o = run(
        ScriptBuilder::new()
            .turn(
                Turn::tool_call("read_file", json!({"path": "a.txt"}))
                    .with_content("Looking at a."),
            )
            .turn(Turn::tool_call("read_file", json!({"path": "b.txt"})))
            .turn(Turn::text("never reached")),
        |d| files(d, &[("a.txt", "A"), ("b.txt", "B")]),
        |c| c.max_iterations = 2,
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::MaxIterations);
    assert_eq!(o.result.iterations, 2);
    assert_eq!(o.result.last_assistant_text, "Looking at a.");
    assert_eq!(o.events_of("guardrail")[0]["guardrail"], "max_iterations");
}

/// Runs `iterations` reads of distinct 4 KB files in a 16k window, then an answer; checks every
/// request fits the window and the pinned messages stay verbatim; returns the run and the
/// iterations before which a compaction happened.
async fn long_run_with_4kb_results(iterations: usize) -> (super::harness::Outcome, Vec<u64>) {
    let num_ctx: u32 = 16_384;
    let mut script = ScriptBuilder::new();
    for i in 0..iterations {
        script = script.turn(Turn::tool_call(
            "read_file",
            json!({"path": format!("f{i}.txt")}),
        ));
    }
    script = script.turn(Turn::text("Read them all."));
    let o = run(
        script,
        |d| {
            for i in 0..iterations {
                let body: String = format!("{i:03} {}\n", "x".repeat(59)).repeat(64); // 4 KB
                std::fs::write(d.join(format!("f{i}.txt")), body).unwrap();
            }
        },
        |c| {
            c.options.num_ctx = Some(num_ctx);
            c.max_iterations = iterations as u32 + 5;
        },
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.tool_calls as usize, iterations);
    for (i, req) in o.requests.iter().enumerate() {
        let bytes: usize = req["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").len())
            .sum();
        // ~4 bytes per token: every request fits the window.
        assert!(
            bytes / 4 < num_ctx as usize,
            "request {i} has {bytes} bytes of messages"
        );
    }
    let last = o.messages(o.requests.len() - 1);
    assert_eq!(
        last[1]["content"], "do the task",
        "the task is kept verbatim"
    );
    // The compaction guardrail comes right before the llm_request of the iteration it precedes.
    let mut iteration = 0;
    let mut compacted_before = Vec::new();
    for e in &o.events {
        let v = serde_json::to_value(e).unwrap();
        if v["type"] == "llm_request" {
            iteration = v["iteration"].as_u64().unwrap();
        }
        if v["type"] == "guardrail" && v["action"] == "compact" {
            compacted_before.push(iteration + 1);
        }
        assert!(
            v["guardrail"] != "context_overflow",
            "the history overflowed: {v}"
        );
    }
    (o, compacted_before)
}

/// Minimum distance between two compactions, in iterations.
fn min_gap(compacted_before: &[u64]) -> u64 {
    compacted_before
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(u64::MAX)
}

/// 30 iterations of 4 KB results stay under the context budget thanks to compaction, which
/// happens in large steps (rarely), not a little every turn, so the server's prompt cache holds.
#[tokio::test]
async fn compaction_keeps_thirty_iterations_of_4kb_results_under_budget() {
    let (o, compacted_before) = long_run_with_4kb_results(30).await;
    assert!(!compacted_before.is_empty(), "compaction never fired");
    assert!(
        min_gap(&compacted_before) >= 4,
        "compactions before iterations {compacted_before:?}"
    );
    let last = o.messages(o.requests.len() - 1);
    assert!(last.iter().any(|m| m["content"]
        .as_str()
        .unwrap_or("")
        .starts_with(reagent_core::DIGEST_PREFIX)));
}

/// A long run does not creep back over the trigger one round at a time: old rounds are folded
/// into one digest, and compactions stay rare all the way.
#[tokio::test]
async fn a_150_iteration_run_still_compacts_in_large_steps() {
    let (o, compacted_before) = long_run_with_4kb_results(150).await;
    assert!(
        compacted_before.len() <= 150 / 4,
        "{} compactions in 150 iterations: {compacted_before:?}",
        compacted_before.len()
    );
    assert!(
        min_gap(&compacted_before) >= 4,
        "compactions before iterations {compacted_before:?}"
    );
    let last = o.messages(o.requests.len() - 1);
    let digest = last
        .iter()
        .find(|m| {
            m["content"]
                .as_str()
                .unwrap_or("")
                .starts_with("[Earlier steps")
        })
        .expect("a digest");
    assert!(
        digest["content"]
            .as_str()
            .unwrap()
            .contains("called read_file"),
        "{digest}"
    );
}

#[tokio::test]
async fn a_wall_clock_budget_ends_the_run() {
    let o = run(
        ScriptBuilder::new()
            .turn(
                Turn::tool_call("read_file", json!({"path": "a.txt"}))
                    .with_delay(Duration::from_millis(300)),
            )
            .turn(Turn::text("Time is up; a.txt holds A.")),
        |d| files(d, &[("a.txt", "A")]),
        |c| c.budgets.max_wall_time = Some(Duration::from_millis(200)),
    )
    .await;
    assert_eq!(o.result.outcome, Outcome::BudgetExhausted);
    assert_eq!(o.events_of("guardrail")[0]["guardrail"], "budget_time");
}

/// `n` reads of distinct 4 KB files, then `last`; the files are written into the workspace.
async fn reads_then(n: usize, last: Turn, num_ctx: u32) -> super::harness::Outcome {
    let mut script = ScriptBuilder::new();
    for i in 0..n {
        script = script.turn(Turn::tool_call(
            "read_file",
            json!({"path": format!("f{i}.txt")}),
        ));
    }
    run(
        script.turn(last).turn(Turn::text("All read.")),
        |d| {
            for i in 0..n {
                let body = format!("{i:03} {}\n", "x".repeat(59)).repeat(64);
                std::fs::write(d.join(format!("f{i}.txt")), body).unwrap();
            }
        },
        |c| c.options.num_ctx = Some(num_ctx),
    )
    .await
}

#[tokio::test]
async fn a_prompt_the_server_finds_too_long_is_compacted_and_retried() {
    // llama-server's own words when the prompt passes its `-c`, far below our 64k window.
    let refusal = "request (9000 tokens) exceeds the available context size (8192 tokens), \
                   try increasing it";
    let o = reads_then(8, Turn::error(400, refusal), 65_536).await;
    assert_eq!(o.result.outcome, Outcome::Completed, "{:?}", o.result.error);
    assert_eq!(o.result.answer, "All read.");
    assert_eq!(o.result.tool_calls, 8);
    let actions: Vec<(String, String)> = o
        .events_of("guardrail")
        .iter()
        .map(|g| (g["guardrail"].to_string(), g["action"].to_string()))
        .collect();
    assert!(
        actions.contains(&("\"context_overflow\"".into(), "\"retry\"".into())),
        "{actions:?}"
    );
    assert!(
        actions.contains(&("\"context_window\"".into(), "\"compact\"".into())),
        "{actions:?}"
    );
    // The refused request and its retry: the retry drops old rounds and is much smaller.
    let n = o.requests.len();
    let size = |r: &serde_json::Value| r["messages"].to_string().len();
    assert!(size(&o.requests[n - 1]) * 10 < size(&o.requests[n - 2]) * 7);
    assert_eq!(
        o.result.iterations, 9,
        "the refused request is not an iteration"
    );
}

#[tokio::test]
async fn an_overflow_with_nothing_to_remove_ends_the_run_with_the_servers_words() {
    let refusal = "the request exceeds the available context size, try increasing it";
    let o = reads_then(1, Turn::error(400, refusal), 65_536).await;
    assert_eq!(o.result.outcome, Outcome::ProviderError);
    assert!(o
        .result
        .error
        .as_ref()
        .is_some_and(|e| e.message.contains(refusal)));
    // Another refusal is not retried at all.
    let o = reads_then(8, Turn::error(400, "invalid `tools` field"), 65_536).await;
    assert_eq!(o.result.outcome, Outcome::ProviderError);
    assert!(o.events_of("guardrail").is_empty());
}
