//! `reagent mcp list|call|serve` and runs offered MCP tools, with real servers over stdio:
//! reagent's own `reagent mcp serve` (sandboxed by the client's policy), driven by reagent's
//! client and by the official Python SDK; the npm reference filesystem server, confined by
//! the sandbox to the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};
use serde_json::{json, Value};

const REAGENT: &str = env!("CARGO_BIN_EXE_reagent");

fn reagent(args: &[&str], cwd: &Path) -> Output {
    Command::new(REAGENT)
        .args(args)
        .current_dir(cwd)
        .env_remove("OLLAMA_HOST")
        .env("HOME", cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A directory with a workspace `ws` holding `served/note.txt`, and a config naming
/// `reagent mcp serve --workspace ws/served` as the server `ws` (sandboxed: the default).
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let served = ws.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::write(served.join("note.txt"), "hello from mcp\n").unwrap();
    let config = dir.path().join("reagent-test.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp.servers.ws]\ncommand = {:?}\nargs = [\"mcp\", \"serve\", \"--workspace\", {:?}]\n",
            REAGENT,
            served.display().to_string()
        ),
    )
    .unwrap();
    (dir, ws, config)
}

#[test]
fn mcp_list_and_call_reach_reagents_own_server() {
    let (dir, ws, config) = setup();
    let (cfg, w) = (config.display().to_string(), ws.display().to_string());
    let out = reagent(
        &["--config", &cfg, "mcp", "list", "--json", "--workspace", &w],
        dir.path(),
    );
    assert!(out.status.success(), "{out:?}");
    let listed = stdout_json(&out);
    assert_eq!(listed[0]["name"], "ws");
    assert_eq!(listed[0]["transport"], "stdio");
    assert_eq!(listed[0]["status"], "up", "{listed}");
    let names: Vec<&str> = listed[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "ws__edit_file",
            "ws__find_files",
            "ws__grep_search",
            "ws__list_directory",
            "ws__read_file",
            "ws__run_command",
            "ws__write_file"
        ]
    );

    let out = reagent(
        &[
            "--config",
            &cfg,
            "mcp",
            "call",
            "ws",
            "read_file",
            "--args",
            r#"{"path": "note.txt"}"#,
            "--workspace",
            &w,
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stdout_json(&out),
        json!({"ok": true, "output": "hello from mcp\n"})
    );
    // The served workspace confines the tools: no way out of it.
    let out = reagent(
        &[
            "--config",
            &cfg,
            "mcp",
            "call",
            "ws",
            "read_file",
            "--args",
            r#"{"path": "../../reagent-test.toml"}"#,
            "--workspace",
            &w,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout_json(&out)["ok"], false);

    let out = reagent(
        &[
            "--config",
            &cfg,
            "mcp",
            "call",
            "nope",
            "read_file",
            "--workspace",
            &w,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_json(&out)["error"],
        "no MCP server `nope` is configured; configured: ws"
    );
}

#[test]
fn a_config_mistake_names_the_server_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    std::fs::write(
        &config,
        "[mcp.servers.t]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = { Authorization = \"Bearer ${REAGENT_TEST_UNSET_TOKEN}\" }\n",
    )
    .unwrap();
    let out = reagent(
        &["--config", &config.display().to_string(), "mcp", "list"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[mcp.servers.t] headers.Authorization: the environment variable REAGENT_TEST_UNSET_TOKEN is not set"),
        "{err}"
    );
}

/// `reagent run --json` over `ws` with the servers of `config`, against a model playing
/// `script`; the model server (for its requests), reagent's output and the run's events.
async fn scripted_run(
    dir: &Path,
    config: &Path,
    ws: &Path,
    script: ScriptBuilder,
) -> (ScriptedOllama, Output, Vec<Value>) {
    let server = ScriptedOllama::start(script).await.unwrap();
    let events = dir.join("events.jsonl");
    let args: Vec<String> = [
        "--config",
        &config.display().to_string(),
        "run",
        "--model",
        "m",
        "--host",
        &server.base_url(),
        "--workspace",
        &ws.display().to_string(),
        "--events",
        &events.display().to_string(),
        "--json",
        "--no-stream",
        "what does the note say?",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cwd = dir.to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        reagent(&args, &cwd)
    })
    .await
    .unwrap();
    let events = std::fs::read_to_string(&events)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (server, out, events)
}

/// The events of `kind` for the tool `name`, in order.
fn events_of<'a>(events: &'a [Value], kind: &str, name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["type"] == kind && e["name"] == name)
        .collect()
}

#[tokio::test]
async fn a_run_is_offered_and_calls_the_servers_tools() {
    let (dir, ws, config) = setup();
    let script = ScriptBuilder::new()
        .turn(Turn::tool_call(
            "ws__read_file",
            json!({"path": "note.txt"}),
        ))
        .turn(Turn::text("The note says hello from mcp."));
    let (server, out, events) = scripted_run(dir.path(), &config, &ws, script).await;
    assert!(out.status.success(), "{out:?}");
    let requests = server.requests();
    let offered = requests[0]["tools"].to_string();
    assert!(offered.contains("\"ws__read_file\""), "{offered}");
    assert!(offered.contains("\"read_file\""), "{offered}");
    let result = events_of(&events, "tool_result", "ws__read_file")[0];
    assert_eq!(result["ok"], true);
    assert!(
        result["output"]
            .as_str()
            .unwrap()
            .contains("hello from mcp"),
        "{result}"
    );
    assert!(requests[1]["messages"]
        .to_string()
        .contains("hello from mcp"));
}

/// MCP calls go through the loop's argument coercion and validation (the errors name the
/// namespaced tool, so they are the client's, not the server's) and, with `approval =
/// "writes"`, a mutating tool asks the run's approver: none in a run without a terminal, so
/// the call is refused and nothing is written.
#[tokio::test]
async fn mcp_calls_are_coerced_validated_and_need_approval_like_built_ins() {
    let (dir, ws, config) = setup();
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("approval = \"writes\"\n");
    std::fs::write(&config, text).unwrap();
    let script = ScriptBuilder::new()
        .turn(Turn::tool_call(
            "ws__read_file",
            json!({"path": "note.txt", "start_line": "1"}),
        ))
        .turn(Turn::tool_call("ws__read_file", json!({"start_line": 1})))
        .turn(Turn::tool_call(
            "ws__write_file",
            json!({"path": "new.txt", "content": "x"}),
        ))
        .turn(Turn::text("done"));
    let (_server, out, events) = scripted_run(dir.path(), &config, &ws, script).await;
    assert!(out.status.success(), "{out:?}");

    let started = events_of(&events, "tool_call_started", "ws__read_file");
    assert_eq!(started[0]["arguments"]["start_line"], json!(1), "coerced");
    let results = events_of(&events, "tool_result", "ws__read_file");
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    assert_eq!(results[1]["ok"], false);
    let invalid = results[1]["output"].to_string();
    assert!(
        invalid.contains("invalid arguments for `ws__read_file`"),
        "{invalid}"
    );

    let write = events_of(&events, "tool_result", "ws__write_file")[0];
    assert_eq!(write["ok"], false);
    let refused = write["output"].to_string();
    assert!(refused.contains("no one can approve it"), "{refused}");
    assert!(!ws.join("served/new.txt").exists());
}

/// The venv holding the Python SDK, made by scripts/install-test-deps.sh.
fn python_sdk() -> PathBuf {
    let cache = std::env::var_os("REAGENT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/reagent"));
    let python = cache.join("mcp-python/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs the Python `mcp` SDK)",
        python.display()
    );
    python
}

#[test]
fn the_python_sdk_drives_reagent_mcp_serve() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../reagent-mcp/tests/python/drive_server.py");
    let command = json!([REAGENT, "mcp", "serve", "--workspace", dir.path()]);
    let calls = json!([
        ["read_file", {"path": "a.txt"}],
        ["write_file", {"path": "b.txt", "content": "beta\n"}],
        ["read_file", {"path": "/etc/passwd"}],
        ["run_command", {"command": "cat a.txt b.txt"}]
    ]);
    let out = Command::new(python_sdk())
        .arg(script)
        .arg(command.to_string())
        .arg(calls.to_string())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let got = stdout_json(&out);
    assert_eq!(
        got["tools"],
        json!([
            "edit_file",
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "run_command",
            "write_file"
        ])
    );
    assert_eq!(
        got["calls"][0],
        json!({"is_error": false, "text": "alpha\n"})
    );
    assert_eq!(got["calls"][1]["is_error"], false);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta\n"
    );
    assert_eq!(got["calls"][2]["is_error"], true, "{got}");
    let command = got["calls"][3]["text"].as_str().unwrap();
    assert!(
        command.contains("alpha") && command.contains("beta"),
        "{got}"
    );
}

/// The npm reference filesystem server, installed by scripts/install-test-deps.sh.
fn filesystem_server() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../reagent-mcp/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-test-deps.sh (it installs the npm reference server)",
        path.display()
    );
    path.canonicalize().unwrap()
}

#[test]
fn the_reference_filesystem_server_is_confined_to_the_workspace() {
    let server = filesystem_server();
    let modules = server.ancestors().nth(4).unwrap().to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("doc.txt"), "inside\n").unwrap();
    // The server itself is told both directories; the sandbox grants only the workspace.
    let config = dir.path().join("reagent-test.toml");
    let server_entry = |name: &str, sandbox: bool| {
        format!(
            "[mcp.servers.{name}]\ncommand = \"node\"\nargs = [{:?}, {:?}, {:?}]\nsandbox = {sandbox}\n",
            server.display().to_string(),
            ws.display().to_string(),
            outside.display().to_string()
        )
    };
    std::fs::write(
        &config,
        format!(
            // Node reads OpenSSL's config, in /etc/ssl, which the sandbox withholds.
            "[sandbox]\nreadable_roots = [{:?}, \"/etc/ssl/openssl.cnf\"]\n\n{}\n{}",
            modules.display().to_string(),
            server_entry("files", true),
            server_entry("open", false)
        ),
    )
    .unwrap();
    let (cfg, w) = (config.display().to_string(), ws.display().to_string());
    let call = |server: &str, tool: &str, args: Value| {
        let out = reagent(
            &[
                "--config",
                &cfg,
                "mcp",
                "call",
                server,
                tool,
                "--args",
                &args.to_string(),
                "--workspace",
                &w,
            ],
            dir.path(),
        );
        stdout_json(&out)
    };
    let listed = stdout_json(&reagent(
        &["--config", &cfg, "mcp", "list", "--json", "--workspace", &w],
        dir.path(),
    ));
    for server in listed.as_array().unwrap() {
        assert_eq!(server["status"], "up", "{server}");
        let tools = server["tools"].to_string();
        assert!(tools.contains("__read_text_file"), "{tools}");
    }
    let read = call(
        "files",
        "read_text_file",
        json!({"path": ws.join("doc.txt")}),
    );
    assert_eq!(read, json!({"ok": true, "output": "inside\n"}));
    let wrote = call(
        "files",
        "write_file",
        json!({"path": ws.join("new.txt"), "content": "made\n"}),
    );
    assert_eq!(wrote["ok"], true, "{wrote}");
    assert_eq!(
        std::fs::read_to_string(ws.join("new.txt")).unwrap(),
        "made\n"
    );
    // Outside the workspace, the sandboxed server is refused by the kernel...
    let refused = call(
        "files",
        "write_file",
        json!({"path": outside.join("x.txt"), "content": "no\n"}),
    );
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(!outside.join("x.txt").exists());
    // ...while the one that opted out (`sandbox = false`) may write there.
    let allowed = call(
        "open",
        "write_file",
        json!({"path": outside.join("y.txt"), "content": "yes\n"}),
    );
    assert_eq!(allowed["ok"], true, "{allowed}");
    assert!(outside.join("y.txt").exists());
}

#[tokio::test]
async fn mcp_serve_over_http_with_a_token_reached_by_mcp_list_and_call() {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir(&served).unwrap();
    std::fs::write(served.join("note.txt"), "over http\n").unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "0123456789abcdef0123\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut server = tokio::process::Command::new(REAGENT)
        .args(["mcp", "serve", "--bind", "127.0.0.1:0", "--token-file"])
        .arg(&token_file)
        .arg("--workspace")
        .arg(&served)
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = line
        .strip_prefix("reagent mcp serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_owned();
    let config = dir.path().join("reagent-test.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp.servers.remote]\nurl = {url:?}\nheaders = {{ Authorization = \"Bearer ${{REAGENT_TEST_MCP_TOKEN}}\" }}\n"
        ),
    )
    .unwrap();
    let cfg = config.display().to_string();
    let cwd = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        let run = |args: &[&str]| {
            Command::new(REAGENT)
                .args(args)
                .current_dir(&cwd)
                .env("HOME", &cwd)
                .env("REAGENT_TEST_MCP_TOKEN", "0123456789abcdef0123")
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        let listed = run(&["--config", &cfg, "mcp", "list", "--json"]);
        let called = run(&[
            "--config",
            &cfg,
            "mcp",
            "call",
            "remote",
            "read_file",
            "--args",
            r#"{"path": "note.txt"}"#,
        ]);
        (listed, called)
    })
    .await
    .unwrap();
    let listed = stdout_json(&out.0);
    assert_eq!(listed[0]["status"], "up", "{listed}");
    assert_eq!(listed[0]["transport"], "http");
    assert_eq!(
        stdout_json(&out.1),
        json!({"ok": true, "output": "over http\n"})
    );
    server.start_kill().unwrap();
}

/// At a terminal, a call that needs approval is put to the person like a command: allowed
/// with `y`, it runs, and the request and the answer are the run's events.
#[tokio::test]
async fn an_mcp_call_allowed_at_the_terminal_runs_and_is_recorded() {
    let (dir, ws, config) = setup();
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("approval = \"writes\"\n");
    std::fs::write(&config, text).unwrap();
    let server = ScriptedOllama::start(
        ScriptBuilder::new()
            .turn(Turn::tool_call(
                "ws__write_file",
                json!({"path": "made.txt", "content": "yes\n"}),
            ))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let events = dir.path().join("events.jsonl");
    let command = format!(
        "{REAGENT} --config {} run --model m --host {} --workspace {} --events {} 'make a file'",
        config.display(),
        server.base_url(),
        ws.display(),
        events.display()
    );
    let cwd = dir.path().to_path_buf();
    let status = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = Command::new("script")
            .args(["-q", "-e", "-c", &command, "/dev/null"])
            .current_dir(&cwd)
            .env("HOME", &cwd)
            .env_remove("OLLAMA_HOST")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("util-linux `script` is needed to give reagent a terminal");
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"y\n").unwrap();
        let status = child.wait().unwrap();
        drop(stdin);
        status
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(0), "reagent exited with {status}");
    let events: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| {
        events
            .iter()
            .find(|e| e["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} event: {events:?}"))
    };
    let asked = of("approval_requested")["command"].as_str().unwrap();
    assert!(asked.starts_with("ws__write_file {"), "{asked}");
    assert!(asked.contains("made.txt"), "{asked}");
    assert_eq!(of("approval_decided")["approved"], true);
    assert_eq!(
        events_of(&events, "tool_result", "ws__write_file")[0]["ok"],
        true
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("served/made.txt")).unwrap(),
        "yes\n"
    );
}
