//! The agent's tools: its memory — `write(key, value)`, `read(key)`, `list()`, `delete(key)`,
//! `pattern_search(pattern)` over keys and values — kept in the store per experiment (so it
//! survives cycles and restarts), and `send_message_to_operator(message)`.
//!
//! reagent's [`Tool`] trait is synchronous and the loop runs it on a blocking thread; these
//! tools block that thread on their store query through the runtime's [`Handle`].

use std::sync::Arc;

use reagent_protocol::ToolSpec;
use reagent_store::Store;
use reagent_tools::{Tool, ToolContext, ToolRegistry, ToolResult};
use serde_json::{json, Value};
use tokio::runtime::Handle;

use crate::operator::Operator;

/// The names of the memory tools.
pub const MEMORY_TOOLS: [&str; 5] = ["write", "read", "list", "delete", "pattern_search"];
/// The operator tool's name.
pub const OPERATOR_TOOL: &str = "send_message_to_operator";

/// Longest key accepted.
const KEY_MAX: usize = 200;
/// Largest value accepted, in bytes.
const VALUE_MAX: usize = 64 * 1024;
/// Most entries a search or list shows.
const SHOWN_MAX: usize = 200;

/// One experiment's memory in the store.
#[derive(Clone)]
pub struct Memory {
    store: Store,
    experiment: String,
    handle: Handle,
}

impl Memory {
    /// The memory of `experiment`; queries block on `handle` (the runtime the store runs on).
    pub fn new(store: Store, experiment: &str, handle: Handle) -> Self {
        Memory {
            store,
            experiment: experiment.to_owned(),
            handle,
        }
    }

    fn block<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.handle.block_on(f)
    }
}

#[derive(Clone, Copy)]
enum Op {
    Write,
    Read,
    List,
    Delete,
    Search,
}

struct MemoryTool {
    op: Op,
    memory: Memory,
}

fn string_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolResult> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolResult::err(format!("`{name}` must be a string")))
}

fn key_arg(args: &Value) -> Result<&str, ToolResult> {
    let key = string_arg(args, "key")?;
    if key.trim().is_empty() {
        return Err(ToolResult::err("`key` is empty"));
    }
    if key.chars().count() > KEY_MAX {
        return Err(ToolResult::err(format!(
            "`key` is longer than {KEY_MAX} characters"
        )));
    }
    Ok(key)
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

impl Tool for MemoryTool {
    fn spec(&self) -> ToolSpec {
        let key = json!({"type": "string", "description": "The entry's key."});
        let (name, description, parameters) = match self.op {
            Op::Write => (
                "write",
                "Store a value under a key in your persistent memory (it survives across cycles). An existing key is overwritten.",
                object(
                    json!({"key": key, "value": {"type": "string", "description": "The text to store."}}),
                    &["key", "value"],
                ),
            ),
            Op::Read => (
                "read",
                "Read the value stored under a key in your persistent memory.",
                object(json!({"key": key}), &["key"]),
            ),
            Op::List => (
                "list",
                "List the keys in your persistent memory.",
                object(json!({}), &[]),
            ),
            Op::Delete => (
                "delete",
                "Delete a key from your persistent memory.",
                object(json!({"key": key}), &["key"]),
            ),
            Op::Search => (
                "pattern_search",
                "Search your persistent memory: the entries whose key or value matches a pattern (a regular expression, case-insensitive; plain text works too).",
                object(
                    json!({"pattern": {"type": "string", "description": "What to look for."}}),
                    &["pattern"],
                ),
            ),
        };
        ToolSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters,
        }
    }

    fn mutates(&self) -> bool {
        // Memory is not the workspace: read-only mode does not concern it.
        false
    }

    fn call(&self, args: &Value, _ctx: &ToolContext) -> ToolResult {
        match self.run(args) {
            Ok(r) | Err(r) => r,
        }
    }
}

impl MemoryTool {
    fn run(&self, args: &Value) -> Result<ToolResult, ToolResult> {
        let m = &self.memory;
        let id = m.experiment.as_str();
        let failed =
            |e: reagent_store::StoreError| ToolResult::err(format!("memory unavailable: {e}"));
        Ok(match self.op {
            Op::Write => {
                let key = key_arg(args)?;
                let value = string_arg(args, "value")?;
                if value.len() > VALUE_MAX {
                    return Err(ToolResult::err(format!(
                        "`value` is larger than {VALUE_MAX} bytes"
                    )));
                }
                m.block(m.store.experiment_memory_put(id, key, value))
                    .map_err(failed)?;
                ToolResult::ok(format!(
                    "stored `{key}` ({} characters)",
                    value.chars().count()
                ))
            }
            Op::Read => {
                let key = key_arg(args)?;
                match m
                    .block(m.store.experiment_memory_get(id, key))
                    .map_err(failed)?
                {
                    Some(value) => ToolResult::ok(json!({"key": key, "value": value})),
                    None => ToolResult::err(format!("no entry `{key}` in memory (use list)")),
                }
            }
            Op::List => {
                let items = m.block(m.store.experiment_memory(id)).map_err(failed)?;
                let keys: Vec<&str> = items
                    .iter()
                    .take(SHOWN_MAX)
                    .map(|i| i.key.as_str())
                    .collect();
                ToolResult::ok(json!({"keys": keys, "count": items.len()}))
            }
            Op::Delete => {
                let key = key_arg(args)?;
                if m.block(m.store.experiment_memory_delete(id, key))
                    .map_err(failed)?
                {
                    ToolResult::ok(format!("deleted `{key}`"))
                } else {
                    ToolResult::err(format!("no entry `{key}` in memory"))
                }
            }
            Op::Search => {
                let pattern = string_arg(args, "pattern")?;
                let re = regex::RegexBuilder::new(pattern)
                    .case_insensitive(true)
                    .size_limit(1 << 20)
                    .build()
                    .or_else(|_| {
                        regex::RegexBuilder::new(&regex::escape(pattern))
                            .case_insensitive(true)
                            .build()
                    })
                    .map_err(|e| ToolResult::err(format!("bad pattern: {e}")))?;
                let items = m.block(m.store.experiment_memory(id)).map_err(failed)?;
                let matches: Vec<Value> = items
                    .iter()
                    .filter(|i| re.is_match(&i.key) || re.is_match(&i.value))
                    .take(SHOWN_MAX)
                    .map(|i| json!({"key": i.key, "value": i.value}))
                    .collect();
                ToolResult::ok(json!({"matches": matches}))
            }
        })
    }
}

struct OperatorTool {
    operator: Arc<dyn Operator>,
}

impl Tool for OperatorTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: OPERATOR_TOOL.to_owned(),
            description: "Send a message to the operator (the human running this experiment) and get their reply.".to_owned(),
            parameters: object(
                json!({"message": {"type": "string", "description": "Your message."}}),
                &["message"],
            ),
        }
    }

    fn mutates(&self) -> bool {
        false
    }

    fn call(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        match string_arg(args, "message") {
            Ok(message) => ToolResult::ok(self.operator.reply(message, &ctx.cancel)),
            Err(e) => e,
        }
    }
}

/// The registry of one experiment: the memory tools over `memory` and the operator tool.
/// An error only if two of them shared a name.
pub fn registry(
    memory: &Memory,
    operator: Arc<dyn Operator>,
) -> Result<ToolRegistry, reagent_tools::DuplicateTool> {
    let mut tools = ToolRegistry::new();
    for op in [Op::Write, Op::Read, Op::List, Op::Delete, Op::Search] {
        tools.register(Arc::new(MemoryTool {
            op,
            memory: memory.clone(),
        }))?;
    }
    tools.register(Arc::new(OperatorTool { operator }))?;
    Ok(tools)
}
