//! The run store's faults through the `reagent` binary: kill -9 mid-run, a run followed from
//! another process, two writers at once, PostgreSQL down, a read-only store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod store_support;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use reagent_store::{Location, Store};
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

use store_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_run_leaves_a_clean_store_and_an_interrupted_run() {
    let s = setup();
    let store_arg = s.db.display().to_string();
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call("list_directory", json!({"path": "."})))
            .turn(Turn::text("never sent").with_delay(Duration::from_secs(60))),
    )
    .await
    .unwrap();
    let mut child = reagent()
        .args(run_args(&server, &s.ws, &store_arg, "list and wait"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let location = Location::Sqlite(s.db.clone());
    // Wait until the second model call is under way and its request event is committed.
    let committed = wait_for(30, || async {
        let store = Store::open(&location).await.ok()?;
        let run = store.list_runs(&Default::default()).await.ok()?.pop()?;
        let events = store.events_after(&run.id, 0, 0).await.ok()?;
        let requests = events.iter().filter(|e| e.kind == "llm_request").count();
        (requests == 2).then_some((run.id, events))
    })
    .await;
    let pid = child.id();
    // SAFETY: sending SIGKILL to our own child.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );

    let (id, before) = committed;
    let store = Store::open(&location).await.unwrap();
    let run = store.run(&id).await.unwrap().unwrap();
    assert_eq!(run.outcome, "interrupted");
    let after = store.events_after(&id, 0, 0).await.unwrap();
    assert!(after.len() >= before.len());
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "committed events must survive the kill"
    );
    let seqs: Vec<i64> = after.iter().map(|e| e.seq).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in order, no repeats: {seqs:?}"
    );
    assert!(after.iter().all(|e| e.kind != "run_finished"));
    // The store is clean: SQLite's own check passes.
    let db = sqlx::AnyPool::connect(&format!("sqlite://{}", s.db.display()))
        .await
        .unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    // And `runs list` shows it as interrupted.
    let list = json_out(&runs(
        &store_arg,
        &["list", "--json", "--outcome", "interrupted"],
    ));
    assert_eq!(list[0]["id"], id.as_str());

    // Nothing is lost: the killed run's conversation (its task and the listing the model got)
    // is rebuilt from its events and continued.
    let again = ScriptedOllama::start(ScriptBuilder::new().turn(Turn::text("Only a.txt.")))
        .await
        .unwrap();
    let resumed = reagent()
        .args([
            "run",
            "--host",
            &again.base_url(),
            "--store",
            &store_arg,
            "--json",
        ])
        .args(["--resume", &id, "what did you find?"])
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(json_out(&resumed)["answer"], "Only a.txt.");
    let sent = again.requests();
    let contents: Vec<String> = sent[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(contents[1], "list and wait");
    assert!(contents.iter().any(|c| c.contains("a.txt")), "{contents:?}");
    assert_eq!(contents.last().unwrap(), "what did you find?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_tails_a_run_another_process_executes_until_it_finishes() {
    let s = setup();
    let store_arg = s.db.display().to_string();
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(
                Turn::tool_call("list_directory", json!({"path": "."}))
                    .with_delay(Duration::from_millis(600)),
            )
            .turn(Turn::text("done").with_delay(Duration::from_millis(600))),
    )
    .await
    .unwrap();
    let mut run = reagent();
    run.args(run_args(&server, &s.ws, &store_arg, "slow"));
    let running = tokio::task::spawn_blocking(move || run.output().unwrap());
    let location = Location::Sqlite(s.db.clone());
    let id = wait_for(30, || async {
        if running.is_finished() {
            // The run ended before its row could be seen: show why.
            return Some(Err(()));
        }
        let store = Store::open(&location).await.ok()?;
        let run = store.list_runs(&Default::default()).await.ok()?.pop()?;
        Some(Ok(run.id))
    })
    .await;
    let Ok(id) = id else {
        let out = running.await.unwrap();
        panic!(
            "the run ended before it was seen in the store: {}",
            stderr(&out)
        );
    };
    let follow = reagent()
        .args(["runs", "events", &id, "--follow", "--store", &store_arg])
        .output()
        .unwrap();
    let out = running.await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(follow.status.code(), Some(0), "{}", stderr(&follow));
    let lines: Vec<Value> = String::from_utf8(follow.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "run_started");
    assert_eq!(lines.last().unwrap()["type"], "run_finished");
    assert_eq!(
        lines.iter().filter(|e| e["type"] == "llm_response").count(),
        2
    );
    let seqs: Vec<u64> = lines.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "in order, no repeats: {seqs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_write_the_same_sqlite_store_at_once() {
    let s = setup();
    let store_arg = s.db.display().to_string();
    let mut children = Vec::new();
    let mut servers = Vec::new();
    for i in 0..2 {
        let mut script = ScriptBuilder::new();
        for _ in 0..6 {
            script = script.turn(Turn::tool_call("list_directory", json!({"path": "."})));
        }
        let server = ScriptedOllama::start(script.turn(Turn::text("done")))
            .await
            .unwrap();
        let mut cmd = reagent();
        cmd.args(run_args(&server, &s.ws, &store_arg, &format!("writer {i}")))
            .args(["--max-iterations", "10"]);
        // Repetition would stop the loop early; the same call many times is the point here.
        let dir = s.dir.path().join(format!("cfg{i}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("reagent.toml"),
            "[guardrails]\nrepetition_threshold = 100\n",
        )
        .unwrap();
        cmd.arg("--config").arg(dir.join("reagent.toml"));
        children.push(tokio::task::spawn_blocking(move || cmd.output().unwrap()));
        servers.push(server);
    }
    for c in children {
        let out = c.await.unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("locked"), "{err}");
        assert_eq!(json_out(&out)["store_error"], Value::Null, "{err}");
    }
    let list = json_out(&runs(&store_arg, &["list", "--json"]));
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|r| r["outcome"] == "completed" && r["iterations"] == 7),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_that_is_down_never_stops_the_run() {
    let s = setup();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://reagent@127.0.0.1:{port}/runs");
    let server = ScriptedOllama::start(two_turns()).await.unwrap();
    let mut cmd = reagent();
    cmd.args(run_args(&server, &s.ws, &url, "go"));
    finished_despite_the_store(output(cmd).await, &url);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_store_never_stops_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup();
    let store_arg = s.db.display().to_string();
    // A real store with one run in it, then made read-only (file and directory).
    let first = ScriptedOllama::start(two_turns()).await.unwrap();
    let mut cmd = reagent();
    cmd.args(run_args(&first, &s.ws, &store_arg, "first"));
    assert_eq!(output(cmd).await.status.code(), Some(0));
    for p in [s.dir.path(), s.ws.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&s.db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(
        s.db.parent().unwrap(),
        std::fs::Permissions::from_mode(0o555),
    )
    .unwrap();

    let server = ScriptedOllama::start(two_turns()).await.unwrap();
    let mut cmd = reagent();
    cmd.args(run_args(&server, &s.ws, &store_arg, "second"))
        .env("HOME", s.dir.path());
    finished_despite_the_store(output(unprivileged(cmd)).await, &store_arg);
    // The store still holds exactly the first run.
    std::fs::set_permissions(
        s.db.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let list = json_out(&runs(&store_arg, &["list", "--json"]));
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["task"], "first");
}

/// The run completed, and the store's error (naming `store`) is in the result and once on stderr.
fn finished_despite_the_store(out: Output, store: &str) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json_out(&out);
    assert_eq!(r["outcome"], "completed");
    let e = r["store_error"]
        .as_str()
        .expect("store_error in the result");
    assert!(e.contains(store), "{e}");
    let err = stderr(&out);
    assert_eq!(err.matches(e).count(), 1, "reported once on stderr: {err}");
}

/// Run `cmd` as an unprivileged user when we are root (root writes read-only files anyway).
fn unprivileged(cmd: Command) -> Command {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return cmd;
    }
    let mut r = Command::new("runuser");
    r.args(["-u", "nobody", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => r.env(k, v),
            None => r.env_remove(k),
        };
    }
    r.stdin(Stdio::null());
    r
}
