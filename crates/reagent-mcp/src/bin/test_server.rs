//! An MCP server for reagent's tests, over stdio. `reagent-mcp-test-server [MODE]`:
//! - `ok` (default): tools `echo{text}`, `add{a,b}` (read-only), `slow{ms}`, `crash` (the
//!   process exits mid-call), `hang` (never answers), `image` (an image and a resource);
//! - `garbage`: answers every line it reads with bytes that are not JSON-RPC;
//! - `silent`: reads its input and never answers;
//! - `exit`: exits at once with status 3.
//!
//! Every start appends a line to the file named by `REAGENT_MCP_TEST_STARTS`, if set, so tests
//! can count restarts.
#![allow(clippy::print_stderr)]

use std::io::Write;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct TestServer;

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Tool {
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let Value::Object(schema) = schema else {
        unreachable!()
    };
    Tool::new(name.to_owned(), description.to_owned(), schema)
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut add = tool(
            "add",
            "Add two integers.",
            json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
            &["a", "b"],
        );
        add.annotations = Some(ToolAnnotations::new().read_only(true));
        Ok(ListToolsResult::with_all_items(vec![
            tool(
                "echo",
                "Echo the text back.",
                json!({"text": {"type": "string"}}),
                &["text"],
            ),
            add,
            tool(
                "slow",
                "Answer after ms milliseconds.",
                json!({"ms": {"type": "integer"}}),
                &["ms"],
            ),
            tool(
                "crash",
                "The server process exits mid-call.",
                json!({}),
                &[],
            ),
            tool("hang", "Never answers.", json!({}), &[]),
            tool("image", "An image and a resource.", json!({}), &[]),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let text = |s: String| Ok(CallToolResult::success(vec![ContentBlock::text(s)]).into());
        match request.name.as_ref() {
            "echo" => text(args["text"].as_str().unwrap_or_default().to_owned()),
            "add" => {
                let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
                match a.zip(b) {
                    Some((a, b)) => text((a + b).to_string()),
                    None => Ok(CallToolResult::error(vec![ContentBlock::text(
                        "a and b must be integers",
                    )])
                    .into()),
                }
            }
            "slow" => {
                let ms = args["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text(format!("slept {ms} ms"))
            }
            "crash" => {
                eprintln!("test server: crashing on purpose");
                std::process::exit(101);
            }
            "hang" => std::future::pending().await,
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
                ContentBlock::text("an image"),
            ])
            .into()),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    if let Ok(path) = std::env::var("REAGENT_MCP_TEST_STARTS") {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(f, "{}", std::process::id())?;
    }
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ok".into());
    eprintln!("test server: starting in mode {mode}");
    match mode.as_str() {
        "ok" => TestServer
            .serve(rmcp::transport::stdio())
            .await?
            .waiting()
            .await
            .map(|_| ())?,
        "garbage" | "silent" => {
            let mut lines = BufReader::new(tokio::io::stdin()).lines();
            let mut out = tokio::io::stdout();
            while let Some(_line) = lines.next_line().await? {
                if mode == "garbage" {
                    out.write_all(b"}{ \x01not json-rpc\n{\"jsonrpc\": 7}\n")
                        .await?;
                    out.flush().await?;
                }
            }
        }
        "exit" => std::process::exit(3),
        other => anyhow::bail!("unknown mode {other}"),
    }
    Ok(())
}
