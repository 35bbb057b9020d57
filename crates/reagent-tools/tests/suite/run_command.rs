//! `run_command` through the real `reagent-sandbox`: exit codes, timeout, stdin, output
//! cap, cancellation, confinement of writes, and argument refusals.

use std::time::{Duration, Instant};

use reagent_tools::ToolsConfig;
use serde_json::json;

use crate::suite::common::{assert_refused, err, out, Fixture};

#[test]
fn runs_in_the_workspace() {
    let fx = Fixture::new();
    fx.put("hello.txt", "from the workspace\n");
    let r = out(&fx.call(
        "run_command",
        json!({"command": "cat hello.txt && echo made > made.txt"}),
    ));
    assert_eq!(r, "exit code 0\n--- stdout ---\nfrom the workspace\n");
    assert_eq!(fx.get("made.txt"), "made\n");
    assert_eq!(
        out(&fx.call("run_command", json!({"command": "true"}))),
        "exit code 0\n(no output)"
    );
    fx.assert_outside_untouched();
}

#[test]
fn failure_carries_exit_code_and_output() {
    let fx = Fixture::new();
    let e = err(&fx.call(
        "run_command",
        json!({"command": "echo partial; echo oops >&2; exit 3"}),
    ));
    assert_eq!(
        e,
        "exit code 3\n--- stdout ---\npartial\n--- stderr ---\noops\n"
    );
}

#[test]
fn a_workspace_script_run_by_its_bare_name_gets_a_hint_how_to_run_it() {
    let fx = Fixture::new();
    fx.put("hello.sh", "echo hi \"$1\"\n");
    fx.put("tool.py", "print(1)\n");
    let e = err(&fx.call("run_command", json!({"command": "hello.sh there"})));
    assert!(e.starts_with("exit code 127"), "{e}");
    assert!(
        e.ends_with("\nhint: hello.sh is a file in the workspace; run it with `sh hello.sh there`"),
        "{e}"
    );
    // Not executable: 126, the same hint; Python files go to python3.
    let e = err(&fx.call("run_command", json!({"command": "./tool.py"})));
    assert!(e.starts_with("exit code 126"), "{e}");
    assert!(e.ends_with("run it with `python3 tool.py`"), "{e}");
    // What the hint says works.
    assert_eq!(
        out(&fx.call("run_command", json!({"command": "sh hello.sh there"}))),
        "exit code 0\n--- stdout ---\nhi there\n"
    );
    // A command that is no workspace file gets none.
    let e = err(&fx.call("run_command", json!({"command": "no-such-tool"})));
    assert!(!e.contains("hint:"), "{e}");
}

#[test]
fn timeout_kills_the_command_and_its_children() {
    let fx = Fixture::new();
    let t = Instant::now();
    let e = err(&fx.call(
        "run_command",
        json!({"command": "sleep 30 & sleep 30; echo never", "timeout_ms": 300}),
    ));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    assert!(e.starts_with("timed out after 300 ms"), "{e}");
    assert!(!e.contains("never"));
}

#[test]
fn default_timeout_comes_from_config() {
    let mut config = ToolsConfig::default();
    config.command.default_timeout = Duration::from_millis(200);
    let fx = Fixture::with_config(&config);
    let t = Instant::now();
    let e = err(&fx.call("run_command", json!({"command": "sleep 20"})));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(e.starts_with("timed out after 200 ms"), "{e}");
    // The spec tells the model the default.
    let spec = fx.registry.get("run_command").unwrap().spec();
    assert!(
        spec.description.contains("stopped after 0 s"),
        "{}",
        spec.description
    );
}

#[test]
fn stdin_is_closed() {
    let fx = Fixture::new();
    let t = Instant::now();
    let r = out(&fx.call(
        "run_command",
        json!({"command": "cat; read x || echo no-input", "timeout_ms": 10_000}),
    ));
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(r, "exit code 0\n--- stdout ---\nno-input\n");
}

#[test]
fn output_is_capped_keeping_head_and_tail() {
    let mut config = ToolsConfig::default();
    config.command.output_cap = 1000;
    let fx = Fixture::with_config(&config);
    let r = out(&fx.call("run_command", json!({"command": "seq 1 100000"})));
    assert!(r.len() < 2000, "{} bytes", r.len());
    assert!(r.contains("output cut:"), "{r}");
    assert!(r.contains("\n1\n2\n3\n"), "head kept: {r}");
    assert!(r.trim_end().ends_with("100000"), "tail kept: {r}");
    assert!(r.contains("truncated"), "{r}");
}

#[test]
fn cancellation_stops_the_command() {
    let fx = Fixture::new();
    let token = fx.ctx.cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        token.cancel();
    });
    let t = Instant::now();
    let r = fx.call("run_command", json!({"command": "sleep 30"}));
    canceller.join().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    assert!(!r.is_ok());
}

#[test]
fn writes_outside_and_to_protected_paths_fail() {
    let fx = Fixture::new();
    fx.put(".git/config", "[core]\n");
    let outside = fx.outside.join("pwn");
    let cmd = format!(
        "echo evil > .git/config; echo evil > {}; echo evil >> {}; echo done",
        outside.display(),
        fx.sentinel.display()
    );
    let r = fx.call("run_command", json!({"command": cmd}));
    let text = match &r {
        reagent_tools::ToolResult::Ok { output, .. } => output.as_str().unwrap().to_string(),
        reagent_tools::ToolResult::Err { error } => error.clone(),
    };
    assert!(text.contains("done"), "{text}");
    assert_eq!(fx.get(".git/config"), "[core]\n");
    fx.assert_outside_untouched();
}

#[test]
fn bad_commands_are_refused_before_running() {
    let fx = Fixture::new();
    assert_refused(
        &fx.call("run_command", json!({"command": "  "})),
        "command is empty",
    );
    assert_refused(
        &fx.call("run_command", json!({"command": "echo a\u{0} > made"})),
        "NUL byte",
    );
    let long = format!("echo {}", "a".repeat(70_000));
    assert_refused(
        &fx.call("run_command", json!({"command": long})),
        "over the limit of 65536 bytes",
    );
    assert_refused(
        &fx.call("run_command", json!({"command": "true", "timeout_ms": 0})),
        "at least 1",
    );
    assert_refused(
        &fx.call(
            "run_command",
            json!({"command": "true", "timeout_ms": "soon"}),
        ),
        "non-negative integer",
    );
    assert_refused(
        &fx.call("run_command", json!({})),
        "missing required argument `command`",
    );
    assert!(!fx.ws.join("made").exists());
}

mod rules {
    //! Command rules: forbid refuses, ask needs the approver's yes; refusals run nothing.

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use reagent_sandbox::CommandRules;
    use reagent_tools::{
        Approval, Approver, ToolContext, ToolRegistry, ToolsConfig, Verdict, Workspace,
    };
    use serde_json::json;

    struct Fixed(bool, AtomicUsize);

    impl Approver for Fixed {
        fn approve(&self, request: &Approval) -> Verdict {
            assert!(matches!(request, Approval::Command { .. }));
            self.1.fetch_add(1, Ordering::SeqCst);
            if self.0 {
                Verdict::Allow
            } else {
                Verdict::Deny {
                    note: Some("use make instead".into()),
                }
            }
        }
    }

    fn setup(
        rules: CommandRules,
        approver: Option<Arc<Fixed>>,
    ) -> (tempfile::TempDir, ToolRegistry, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ToolsConfig::default();
        config.command.rules = rules;
        let mut ctx = ToolContext::new(Arc::new(Workspace::open(dir.path()).unwrap()));
        ctx.approver = approver.map(|a| a as Arc<dyn Approver>);
        (dir, ToolRegistry::workspace_tools(&config), ctx)
    }

    #[test]
    fn a_forbidden_command_is_refused_and_does_not_run() {
        let (dir, tools, ctx) = setup(CommandRules::default().forbid("touch"), None);
        let r = tools.call(
            "run_command",
            &json!({"command": "touch made && echo hi"}),
            &ctx,
        );
        assert!(!r.is_ok());
        assert!(r.to_json()["error"].as_str().unwrap().contains("forbid"));
        assert!(!dir.path().join("made").exists());
        let r = tools.call("run_command", &json!({"command": "echo fine"}), &ctx);
        assert!(r.is_ok(), "{:?}", r);
    }

    #[test]
    fn an_ask_command_runs_only_with_approval() {
        let (dir, tools, ctx) = setup(CommandRules::default().ask("touch"), None);
        let r = tools.call("run_command", &json!({"command": "touch made"}), &ctx);
        assert!(r.to_json()["error"].as_str().unwrap().contains("approval"));
        assert!(!dir.path().join("made").exists());

        let deny = Arc::new(Fixed(false, AtomicUsize::new(0)));
        let (dir, tools, ctx) = setup(CommandRules::default().ask("touch"), Some(deny.clone()));
        let r = tools.call("run_command", &json!({"command": "touch made"}), &ctx);
        let error = r.to_json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains("denied"), "{error}");
        assert!(
            error.contains("says: use make instead"),
            "the note reaches the model: {error}"
        );
        assert!(!dir.path().join("made").exists());
        assert_eq!(deny.1.load(Ordering::SeqCst), 1);

        let allow = Arc::new(Fixed(true, AtomicUsize::new(0)));
        let (dir, tools, ctx) = setup(CommandRules::default().ask("touch"), Some(allow.clone()));
        let r = tools.call("run_command", &json!({"command": "touch made"}), &ctx);
        assert!(r.is_ok(), "{:?}", r);
        assert!(dir.path().join("made").exists());
        // Commands no rule asks about never reach the approver.
        let r = tools.call("run_command", &json!({"command": "echo hi"}), &ctx);
        assert!(r.is_ok());
        assert_eq!(allow.1.load(Ordering::SeqCst), 1);
    }
}
