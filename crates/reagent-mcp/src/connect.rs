//! Connecting to one server: spawn a stdio server (its stderr to the log) or dial a streamable
//! HTTP one, and complete the MCP handshake and the tool listing within the start-up timeout.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

use rmcp::model::Tool as McpToolInfo;
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::config::{ServerSpec, Transport};
use crate::confine::Confinement;

/// A live connection.
pub(crate) struct Connection {
    /// The MCP session.
    pub(crate) service: RunningService<RoleClient, ()>,
    /// The tools the server listed.
    pub(crate) tools: Vec<McpToolInfo>,
    /// The server process (stdio servers).
    pub(crate) process: Option<Child>,
}

/// Connect to `spec` and list its tools, within its start-up timeout.
pub(crate) async fn connect(
    spec: &ServerSpec,
    confinement: Option<&Confinement>,
) -> Result<Connection, String> {
    let timeout = spec.startup_timeout;
    match tokio::time::timeout(timeout, connect_unbounded(spec, confinement)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "it did not complete the MCP handshake and list its tools within {:.1} s",
            timeout.as_secs_f64()
        )),
    }
}

async fn connect_unbounded(
    spec: &ServerSpec,
    confinement: Option<&Confinement>,
) -> Result<Connection, String> {
    match &spec.transport {
        Transport::Stdio {
            command,
            args,
            env,
            sandbox,
        } => {
            let confinement = confinement.filter(|_| *sandbox);
            let mut child = spawn(&spec.name, command, args, env, confinement)?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err("the server process has no stdin/stdout pipes".into());
            };
            let service = ()
                .serve((stdout, stdin))
                .await
                .map_err(|e| format!("the MCP handshake with `{command}` failed: {e}"))?;
            let tools = list_tools(&service).await?;
            Ok(Connection {
                service,
                tools,
                process: Some(child),
            })
        }
        Transport::Http {
            url,
            headers,
            ca_file,
        } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|e| format!("header name `{name}`: {e}"))?;
                let value =
                    HeaderValue::from_str(value).map_err(|e| format!("header `{name}`: {e}"))?;
                custom.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::with_client(
                http_client(ca_file.as_deref())?,
                config,
            );
            let service = ()
                .serve(transport)
                .await
                .map_err(|e| format!("the MCP handshake with {url} failed: {}", http_cause(&e)))?;
            let tools = list_tools(&service).await?;
            Ok(Connection {
                service,
                tools,
                process: None,
            })
        }
    }
}

/// A failed HTTP handshake's error with the HTTP client's causes (rmcp's error does not chain
/// them: without them a certificate or connection failure reads "error sending request").
fn http_cause(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    if let rmcp::service::ClientInitializeError::TransportError { error: inner, .. } = error {
        if let Some(StreamableHttpError::Client(client)) = inner
            .error
            .downcast_ref::<StreamableHttpError<reqwest_mcp::Error>>()
        {
            return format!("{error}: {}", with_causes(client));
        }
    }
    error.to_string()
}

/// `error` and its causes (`a: b: c`), so a TLS or connection failure says what failed.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The HTTP client of a streamable HTTP server: rustls (ring) with the system's roots, plus
/// the certificate authorities of `ca_file`; no idle connection pool (as rmcp's own client: it
/// avoids delayed-ACK stalls) and no redirects (a redirect would replay the headers elsewhere).
fn http_client(ca_file: Option<&Path>) -> Result<reqwest_mcp::Client, String> {
    // The first caller installs the process's provider; later calls find it installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest_mcp::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest_mcp::redirect::Policy::none());
    if let Some(path) = ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| format!("cannot read ca_file {}: {e}", path.display()))?;
        let certs = reqwest_mcp::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("ca_file {}: {e}", path.display()))?;
        if certs.is_empty() {
            return Err(format!(
                "ca_file {} holds no PEM certificate",
                path.display()
            ));
        }
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

async fn list_tools(service: &RunningService<RoleClient, ()>) -> Result<Vec<McpToolInfo>, String> {
    service
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("listing its tools failed: {e}"))
}

/// Spawn a stdio server with piped stdin/stdout, its stderr read line by line into the log,
/// killed when dropped.
fn spawn(
    name: &str,
    command: &str,
    args: &[String],
    env: &[(String, String)],
    confinement: Option<&Confinement>,
) -> Result<Child, String> {
    // A relative path names a program from reagent's directory, wherever the server starts.
    let program = if Path::new(command).components().count() > 1 {
        std::path::absolute(command).map_err(|e| format!("cannot resolve `{command}`: {e}"))?
    } else {
        command.into()
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    crate::confine::apply(&mut cmd, command, confinement)?;
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    if let Some(stderr) = child.stderr.take() {
        let name = name.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "reagent_mcp::server_stderr", server = %name, "{line}");
            }
        });
    }
    Ok(child)
}
