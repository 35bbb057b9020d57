//! The run store through the `reagent` binary: every run recorded, and `reagent runs …`
//! (list, show, events, export, replay) and `reagent run --resume`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod store_support;

use std::path::Path;
use std::process::{Command, Stdio};

use reagent_protocol::{Event, EventKind, Guardrail, GuardrailAction, Outcome, ToolCall};
use reagent_store::{Location, Store};
use reagent_testkit::{ScriptedOllama, Turn};
use serde_json::{json, Value};

use store_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_run_is_recorded_and_the_runs_commands_read_it() {
    let s = setup();
    let store = s.db.display().to_string();
    let server = ScriptedOllama::start(two_turns()).await.unwrap();
    let events_file = s.dir.path().join("events.jsonl");
    let mut cmd = reagent();
    cmd.args(run_args(&server, &s.ws, &store, "what <is> here?"))
        .arg("--events")
        .arg(&events_file);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json_out(&out);
    let id = r["run_id"].as_str().unwrap().to_owned();
    assert_eq!(r["store_error"], Value::Null);
    let err = stderr(&out);
    assert_eq!(
        err.matches(&format!("reagent: run {id} saved in {store}"))
            .count(),
        1,
        "{err}"
    );

    let list = json_out(&runs(&store, &["list", "--json"]));
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], id.as_str());
    assert_eq!(rows[0]["outcome"], "completed");
    assert_eq!(rows[0]["iterations"], 2);
    assert_eq!(rows[0]["tool_calls"], 1);
    assert_eq!(rows[0]["task"], "what <is> here?");
    let none = json_out(&runs(
        &store,
        &["list", "--json", "--outcome", "interrupted"],
    ));
    assert_eq!(none, json!([]));

    let table = String::from_utf8(runs(&store, &["list"]).stdout).unwrap();
    let header = table.lines().next().unwrap();
    for col in [
        "ID", "STARTED", "MODEL", "OUTCOME", "ITER", "TOKENS", "TASK",
    ] {
        assert!(header.contains(col), "{table}");
    }
    assert!(
        table.lines().nth(1).unwrap().starts_with(&id[..11]),
        "{table}"
    );

    // Events by a prefix: the stored JSONL, the same events as the run's events file
    // (streamed deltas take seq numbers but are stored in neither).
    let stdout = runs(&store, &["events", &id[..8]]).stdout;
    let events: Vec<Value> = String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let written: Vec<Value> = std::fs::read_to_string(&events_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events, written);
    assert_eq!(events.first().unwrap()["type"], "run_started");
    assert_eq!(events.last().unwrap()["type"], "run_finished");

    let show = String::from_utf8(runs(&store, &["show", &id[..8]]).stdout).unwrap();
    assert!(show.contains("what <is> here?"), "{show}");
    assert!(show.contains("→ list_directory"), "{show}");
    assert!(show.contains("There is <b>one</b> file"), "{show}");

    let html = s.dir.path().join("run.html");
    runs(&store, &["export", &id, "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("what &lt;is&gt; here?"), "{page}");
    assert!(page.contains("There is &lt;b&gt;one&lt;/b&gt; file &amp; a &quot;quote&quot;."));
    assert!(!page.contains("<b>one</b>"));
    assert!(page.contains("list_directory") && page.contains(" ms</b>"));
    for external in ["src=", "href=", "<script", "@import", "url("] {
        assert!(
            !page.contains(external),
            "the page must be self-contained: {external}"
        );
    }

    runs(&store, &["delete", &id[..10]]);
    assert_eq!(json_out(&runs(&store, &["list", "--json"])), json!([]));
    let gone = reagent()
        .args(["runs", "show", &id, "--store", &store])
        .output()
        .unwrap();
    assert_ne!(gone.status.code(), Some(0));
    assert!(
        stderr(&gone).contains(&format!("no run with id '{id}'")),
        "{}",
        stderr(&gone)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_store_records_nothing_and_the_default_store_is_in_xdg_data_home() {
    let s = setup();
    let data = s.dir.path().join("data");
    let server = ScriptedOllama::start(two_turns().turn(Turn::text("again")))
        .await
        .unwrap();
    let mut args = run_args(&server, &s.ws, "unused", "one");
    args.retain(|a| a != "--store" && a != "unused");
    let mut cmd = reagent();
    cmd.args(&args)
        .arg("--no-store")
        .env("XDG_DATA_HOME", &data);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("saved in"));
    assert!(!data.exists(), "--no-store must not create a store");

    let mut cmd = reagent();
    cmd.args(&args).env("XDG_DATA_HOME", &data);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let default = data.join("reagent/reagent.db");
    assert!(
        stderr(&out).contains(&format!("saved in {}", default.display())),
        "{}",
        stderr(&out)
    );
    let store = Store::open(&Location::Sqlite(default)).await.unwrap();
    assert_eq!(store.list_runs(&Default::default()).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_renders_steps_calls_results_guardrails_and_the_answer() {
    let s = setup();
    let location = Location::Sqlite(s.db.clone());
    let store = Store::open(&location).await.unwrap();
    let run = "feedfacecafe";
    let call = ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "a.txt"}),
    };
    let kinds = vec![
        EventKind::RunStarted {
            task: "read a.txt".into(),
            model: "m".into(),
            provider: "ollama".into(),
            tool_mode: "native".into(),
            workspace: "/ws".into(),
            num_ctx: 4096,
            tools: vec!["read_file".into()],
            session_id: "s".into(),
            system_prompt: "sys".into(),
            follow_up: false,
        },
        EventKind::LlmResponse {
            iteration: 1,
            latency_ms: 250,
            prompt_tokens: 90,
            completion_tokens: 12,
            cached_prompt_tokens: None,
            parse_layer: Some("native".into()),
            finish_reason: "tool_calls".into(),
            tool_calls: 1,
            endpoint: "e".into(),
        },
        EventKind::AssistantMessage {
            iteration: 1,
            content: "Let me look at the file.".into(),
            reasoning: Some("the user wants a.txt".into()),
            calls: vec![call.clone()],
            tool_calls: vec![call],
            parse_layer: Some("native".into()),
            raw: None,
        },
        EventKind::ToolResult {
            iteration: 1,
            call_id: "c1".into(),
            name: "read_file".into(),
            ok: true,
            output: "{\"ok\":\"line one\"}".into(),
            truncated: false,
        },
        EventKind::Guardrail {
            guardrail: Guardrail::Repetition,
            action: GuardrailAction::Hint,
            detail: "same call twice".into(),
        },
        EventKind::RunFinished {
            outcome: Outcome::Completed,
            iterations: 2,
            tool_calls: 1,
            prompt_tokens: 90,
            completion_tokens: 12,
            wall_ms: 300,
            model_ms: 250,
            files_changed: vec![],
            error: None,
            error_kind: None,
            answer: "It says line one.".into(),
        },
    ];
    let rec = store.recorder();
    for (i, k) in kinds.into_iter().enumerate() {
        rec.record(Event::new(run, i as u64 + 1, k));
    }
    store.flush().await;
    let show =
        String::from_utf8(runs(&s.db.display().to_string(), &["show", "feed"]).stdout).unwrap();
    let expected_in_order = [
        "task:",
        "read a.txt",
        "— step 1 (250 ms, 90 prompt + 12 completion tokens)",
        "(thinking)",
        "the user wants a.txt",
        "Let me look at the file.",
        "← read_file",
        "{\"ok\":\"line one\"}",
        "! guardrail repetition → hint: same call twice",
        "outcome: completed",
        "answer:",
        "It says line one.",
    ];
    let mut at = 0;
    for want in expected_in_order {
        let found = show[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} not after byte {at} in:\n{show}"));
        at += found + want.len();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_export_renders_in_headless_chromium() {
    let chromium = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium not found: install Debian's chromium (scripts/install-test-deps.sh)");
    let s = setup();
    let store = s.db.display().to_string();
    let server = ScriptedOllama::start(two_turns()).await.unwrap();
    let mut cmd = reagent();
    cmd.args(run_args(&server, &s.ws, &store, "what is here?"));
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json_out(&out)["run_id"].as_str().unwrap().to_owned();
    let html = s.dir.path().join("run.html");
    runs(&store, &["export", &id, "--html", html.to_str().unwrap()]);

    let artefacts = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(artefacts).unwrap();
    let png = artefacts.join("runs-export.png");
    let _ = std::fs::remove_file(&png);
    let profile = s.dir.path().join("chromium-profile");
    let shot = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1280,800")
        .arg(format!("file://{}", html.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(shot.status.success(), "chromium failed: {}", stderr(&shot));
    let bytes =
        std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", png.display()));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 800));
    // A blank 1280x800 page compresses to a few kilobytes; a rendered timeline is far larger.
    assert!(
        bytes.len() > 20_000,
        "screenshot looks blank: {} bytes",
        bytes.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_replays_and_its_session_resumes_with_a_follow_up() {
    let s = setup();
    let store = s.db.display().to_string();
    let server = ScriptedOllama::start(
        two_turns()
            .turn(Turn::text("It is called a.txt."))
            .turn(Turn::text("Still a.txt."))
            .turn(Turn::text("Yes."))
            .turn(Turn::text("Same session.")),
    )
    .await
    .unwrap();
    let first = output({
        let mut c = reagent();
        c.args(run_args(&server, &s.ws, &store, "what is here?"));
        c
    })
    .await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let id = json_out(&first)["run_id"].as_str().unwrap().to_owned();

    // Today's loop on the recorded replies and results decides the same.
    let replay = runs(&store, &["replay", &id[..8]]);
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(said.contains("the same 3 decisions"), "{said}");

    // --resume continues the session: model and workspace come from the stored run.
    let resume = |id: &str, message: &str| {
        reagent()
            .args(["run", "--host", &server.base_url(), "--store", &store])
            .args(["--json", "--resume", id, message])
            .output()
            .unwrap()
    };
    let resumed = resume(&id[..8], "and what is it called?");
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let r = json_out(&resumed);
    assert_eq!(r["answer"], "It is called a.txt.");
    assert_ne!(r["run_id"], id.as_str());
    let chats = server.requests();
    let last = chats.last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    let contents: Vec<&str> = last
        .iter()
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        contents[1], "what is here?",
        "the first task is still there"
    );
    assert!(
        contents.iter().any(|c| c.contains("one</b> file")),
        "{contents:?}"
    );
    assert_eq!(*contents.last().unwrap(), "and what is it called?");
    assert_eq!(last[0]["role"], "system");

    // The saved session leaves its messages to the events (the conversation is stored once);
    // a second follow-up rebuilds them from both runs' events, in order.
    let opened = Store::open(&Location::Sqlite(s.db.clone())).await.unwrap();
    let session_id = opened.run(&id).await.unwrap().unwrap().session_id.unwrap();
    let saved = opened
        .load_session(&session_id)
        .await
        .unwrap()
        .unwrap()
        .snapshot
        .unwrap();
    assert!(
        !saved.contains("what is here?") && saved.contains("messages_in_events"),
        "{saved}"
    );
    drop(opened);
    let again = resume(r["run_id"].as_str().unwrap(), "sure?");
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(json_out(&again)["answer"], "Still a.txt.");
    let users: Vec<String> = server.requests().last().unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        users,
        ["what is here?", "and what is it called?", "sure?"],
        "every run's messages, in order"
    );
    // Deleting the first run first puts the session's messages back into its snapshot, so
    // the session still resumes whole.
    let last_id = json_out(&again)["run_id"].as_str().unwrap().to_owned();
    let deleted = runs(&store, &["delete", &id[..8]]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    let after_delete = resume(&last_id, "really?");
    assert_eq!(
        after_delete.status.code(),
        Some(0),
        "{}",
        stderr(&after_delete)
    );
    let sent = serde_json::to_string(server.requests().last().unwrap()).unwrap();
    assert!(
        sent.contains("what is here?") && sent.contains("really?"),
        "{sent}"
    );
    // The session's own id resumes it too, from its newest run.
    let by_session = resume(&session_id, "one more?");
    assert_eq!(by_session.status.code(), Some(0), "{}", stderr(&by_session));
    assert_eq!(json_out(&by_session)["answer"], "Same session.");
    let sent = serde_json::to_string(server.requests().last().unwrap()).unwrap();
    assert!(
        sent.contains("really?") && sent.contains("one more?"),
        "{sent}"
    );

    // Both runs are listed; the follow-up's events say it continues the session.
    let events = runs(&store, &["events", r["run_id"].as_str().unwrap()]);
    let first_event: Value = serde_json::from_str(
        String::from_utf8_lossy(&events.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first_event["type"], "run_started");
    assert_eq!(first_event["follow_up"], true);

    // A run id that is not there is a clear error.
    let missing = reagent()
        .args(["run", "--host", &server.base_url(), "--store", &store])
        .args(["--resume", "ffffffff", "again"])
        .output()
        .unwrap();
    assert_ne!(missing.status.code(), Some(0));
    assert!(
        stderr(&missing).contains("no run with id 'ffffffff'")
            && stderr(&missing).contains("nor a session with that id"),
        "{}",
        stderr(&missing)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_prints_every_event_of_a_long_run_not_only_the_first_page() {
    let s = setup();
    let store = Store::open(&Location::Sqlite(s.db.clone())).await.unwrap();
    let run = "10ng10ng10ng";
    let rec = store.recorder();
    rec.record(Event::new(
        run,
        1,
        EventKind::RunStarted {
            task: "a long run".into(),
            model: "m".into(),
            provider: "ollama".into(),
            tool_mode: "native".into(),
            workspace: "/ws".into(),
            num_ctx: 4096,
            tools: vec![],
            session_id: "s".into(),
            system_prompt: "sys".into(),
            follow_up: false,
        },
    ));
    // 2,500 events: more than two pages of the store's reads.
    for seq in 2..=2_500u64 {
        rec.record(Event::new(
            run,
            seq,
            EventKind::LlmRequest {
                iteration: seq as u32,
                messages: 2,
                estimated_tokens: seq,
            },
        ));
    }
    store.flush().await;
    let out = runs(&s.db.display().to_string(), &["events", run]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seqs: Vec<u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (1..=2_500).collect::<Vec<_>>());
}
