//! The registry: stable order, disabling, read-only mode, unknown names, result JSON.

use reagent_tools::{call_tool, ToolRegistry, ToolResult, ToolsConfig};
use serde_json::json;

use crate::suite::common::{assert_refused, Fixture};

const ALL: [&str; 8] = [
    "edit_file",
    "find_files",
    "grep_search",
    "list_directory",
    "read_file",
    "run_command",
    "task_complete",
    "write_file",
];

#[test]
fn all_tools_sorted_with_object_schemas() {
    let r = ToolRegistry::workspace_tools(&ToolsConfig::default());
    assert_eq!(r.names(), ALL);
    let specs = r.specs();
    assert_eq!(
        specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ALL
    );
    for s in &specs {
        assert_eq!(s.parameters["type"], "object", "{}", s.name);
        assert!(
            s.description.len() < 300,
            "{} description too long for small models",
            s.name
        );
        for req in s.parameters["required"].as_array().unwrap() {
            assert!(s.parameters["properties"]
                .get(req.as_str().unwrap())
                .is_some());
        }
    }
    let edit = specs.iter().find(|s| s.name == "edit_file").unwrap();
    assert_eq!(
        edit.parameters["required"],
        json!(["path", "old_string", "new_string"])
    );
    // The schema is identical on every call (prompt caches stay valid).
    assert_eq!(
        specs,
        ToolRegistry::workspace_tools(&ToolsConfig::default()).specs()
    );
}

#[test]
fn read_only_and_disabled() {
    let ro = ToolRegistry::workspace_tools(&ToolsConfig {
        read_only: true,
        ..ToolsConfig::default()
    });
    assert_eq!(
        ro.names(),
        [
            "find_files",
            "grep_search",
            "list_directory",
            "read_file",
            "task_complete"
        ]
    );
    let some = ToolRegistry::workspace_tools(&ToolsConfig {
        disabled: vec!["run_command".into(), "grep_search".into()],
        ..ToolsConfig::default()
    });
    assert!(!some.names().contains(&"run_command".to_string()));
    assert!(!some.names().contains(&"grep_search".to_string()));
    assert_eq!(some.names().len(), 6);
}

#[test]
fn read_only_registry_refuses_writes_by_name() {
    let fx = Fixture::with_config(&ToolsConfig {
        read_only: true,
        ..ToolsConfig::default()
    });
    assert_refused(&fx.call("write_file", json!({"path": "a", "content": "x"})), "unknown tool `write_file`; valid tools: find_files, grep_search, list_directory, read_file, task_complete");
    assert!(!fx.ws.join("a").exists());
}

#[test]
fn unknown_tool_lists_valid_names() {
    let fx = Fixture::new();
    let r = call_tool(&fx.registry, "cat\u{1b}[2J", &json!({}), &fx.ctx);
    assert_eq!(
        r.to_json(),
        json!({"ok": false, "error": format!("unknown tool `cat\\u{{001B}}[2J`; valid tools: {}", ALL.join(", "))})
    );
}

#[test]
fn task_complete_echoes_summary() {
    let fx = Fixture::new();
    let r = fx.call("task_complete", json!({"summary": "fixed the bug"}));
    assert_eq!(r.to_json(), json!({"ok": true, "output": "fixed the bug"}));
    assert_eq!(r, ToolResult::ends_run("fixed the bug"));
    assert_eq!(r.run_answer(), Some("fixed the bug"));
    assert_refused(
        &fx.call("task_complete", json!({})),
        "missing required argument `summary`",
    );
}

#[test]
fn non_object_arguments_are_answered() {
    let fx = Fixture::new();
    for args in [json!(null), json!("read a.txt"), json!([1, 2]), json!(42)] {
        for name in ALL {
            if name == "task_complete" || name == "list_directory" {
                continue;
            }
            let r = fx.call(name, args.clone());
            assert!(!r.is_ok(), "{name} accepted {args}");
        }
    }
    // list_directory has no required argument: non-object args list the root.
    assert!(fx.call("list_directory", json!(null)).is_ok());
}

/// A tool that panics, to prove the registry answers instead of unwinding.
struct Panics;

impl reagent_tools::Tool for Panics {
    fn spec(&self) -> reagent_protocol::ToolSpec {
        reagent_protocol::ToolSpec {
            name: "boom".into(),
            description: "panics".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn mutates(&self) -> bool {
        false
    }
    fn call(&self, _args: &serde_json::Value, _ctx: &reagent_tools::ToolContext) -> ToolResult {
        panic!("deliberate")
    }
}

#[test]
fn a_panicking_tool_becomes_an_error_and_registry_edits_work() {
    let fx = Fixture::new();
    let mut reg = ToolRegistry::workspace_tools(&ToolsConfig::default());
    reg.register(std::sync::Arc::new(Panics)).unwrap();
    assert_eq!(reg.names()[0], "boom");
    let r = reg.call("boom", &json!({}), &fx.ctx);
    assert_eq!(
        r,
        ToolResult::err("the tool `boom` failed internally (it panicked)")
    );
    assert!(reg.remove("boom"));
    assert!(!reg.remove("boom"));
    assert_eq!(reg.names(), ALL);
}

/// A tool for the registry's own rules.
struct Named(&'static str, bool);

impl reagent_tools::Tool for Named {
    fn spec(&self) -> reagent_protocol::ToolSpec {
        reagent_protocol::ToolSpec {
            name: self.0.into(),
            description: "A test tool.".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn mutates(&self) -> bool {
        false
    }
    fn call(&self, _args: &serde_json::Value, _ctx: &reagent_tools::ToolContext) -> ToolResult {
        if self.1 {
            panic!("broken");
        }
        ToolResult::ok(self.0)
    }
}

#[test]
fn two_tools_of_one_name_are_an_error() {
    use std::sync::Arc;
    let mut r = ToolRegistry::new();
    r.register(Arc::new(Named("x", false))).unwrap();
    let e = r.register(Arc::new(Named("x", false))).unwrap_err();
    assert_eq!(e, reagent_tools::DuplicateTool("x".into()));
    assert_eq!(
        e.to_string(),
        "two tools are named `x`; tool names must be unique"
    );
    assert_eq!(r.names(), ["x"]);
}

#[tokio::test]
async fn blocking_tools_are_called_asynchronously_through_the_adapter() {
    use std::sync::Arc;
    let fx = Fixture::new();
    let mut r = ToolRegistry::new();
    r.register(Arc::new(Named("fine", false))).unwrap();
    r.register(Arc::new(Named("boom", true))).unwrap();
    assert_eq!(
        r.call_async("fine", json!({}), fx.ctx.clone()).await,
        ToolResult::ok("fine")
    );
    let e = r.call_async("boom", json!({}), fx.ctx.clone()).await;
    assert_eq!(
        e,
        ToolResult::err("the tool `boom` failed internally (it panicked)")
    );
    let e = r.call_async("nope", json!({}), fx.ctx.clone()).await;
    assert_eq!(
        e,
        ToolResult::err("unknown tool `nope`; valid tools: boom, fine")
    );
    let blocking = fx
        .registry
        .call_async("read_file", json!({"path": "missing.txt"}), fx.ctx.clone())
        .await;
    assert!(!blocking.is_ok());
}
