//! `[mcp.servers.NAME]`: the MCP servers named in the config file. Unknown keys are errors.
//!
//! ```toml
//! [mcp.servers.files]                  # stdio
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//! env = { LOG_LEVEL = "warn" }
//! sandbox = true                       # default: the run's sandbox policy applies
//! [mcp.servers.tracker]                # streamable HTTP
//! url = "http://127.0.0.1:8931/mcp"
//! headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }   # taken from the environment
//! ca_file = "/etc/reagent/tracker-ca.pem"   # optional: trusted besides the system's roots
//! approval = "writes"                  # ask before calls of tools not marked read-only
//! ask_tools = ["delete_issue"]         # always ask for these (the server's own names)
//! auto_tools = ["comment"]             # never ask for these
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// The `[mcp]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Servers by name; the name prefixes their tools (`files__read_text_file`).
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One `[mcp.servers.NAME]` table: a stdio server (`command`) or a streamable HTTP one (`url`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it; `${VAR}` is taken from reagent's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Whether the run's sandbox policy confines the server process (default true).
    #[serde(default = "default_true")]
    pub sandbox: bool,
    /// The endpoint of a streamable HTTP server.
    pub url: Option<String>,
    /// HTTP headers; `${VAR}` is taken from reagent's environment.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// PEM file of certificate authorities trusted for an `https://` server besides the
    /// system's (for a private CA or a self-signed certificate).
    pub ca_file: Option<PathBuf>,
    /// Longest wait for one call's answer before it fails and the server is restarted
    /// (default 60 s).
    pub timeout_secs: Option<f64>,
    /// Longest wait for the server to start and list its tools (default 30 s).
    pub startup_timeout_secs: Option<f64>,
    /// Which calls need the run's approver: `auto` (none, the default), `writes` (tools the
    /// server does not mark `readOnlyHint`) or `ask` (all).
    #[serde(default)]
    pub approval: ApprovalMode,
    /// Tools (the server's own names) whose calls always need approval.
    #[serde(default)]
    pub ask_tools: Vec<String>,
    /// Tools (the server's own names) whose calls never need approval.
    #[serde(default)]
    pub auto_tools: Vec<String>,
}

/// `approval = "auto" | "writes" | "ask"`: which of a server's tool calls need approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    /// No call needs approval.
    #[default]
    Auto,
    /// Calls of tools the server does not mark read-only (`readOnlyHint`) need approval.
    Writes,
    /// Every call needs approval.
    Ask,
}

/// Which calls of one server need approval: its `approval` mode with the `ask_tools` and
/// `auto_tools` exceptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalRule {
    /// The server's mode.
    pub mode: ApprovalMode,
    /// Tools that always ask.
    pub ask: Vec<String>,
    /// Tools that never ask.
    pub auto: Vec<String>,
}

impl ApprovalRule {
    /// Whether a call of `tool` (the server's own name; `read_only` as the server marks it)
    /// needs approval.
    pub fn asks(&self, tool: &str, read_only: bool) -> bool {
        if self.ask.iter().any(|t| t == tool) {
            return true;
        }
        if self.auto.iter().any(|t| t == tool) {
            return false;
        }
        match self.mode {
            ApprovalMode::Auto => false,
            ApprovalMode::Writes => !read_only,
            ApprovalMode::Ask => true,
        }
    }
}

fn default_true() -> bool {
    true
}

/// How a server is reached, checked and with `${VAR}`s expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables added to reagent's.
        env: Vec<(String, String)>,
        /// Confined by the sandbox policy.
        sandbox: bool,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
        /// Extra trusted certificate authorities (PEM), for `https://`.
        ca_file: Option<PathBuf>,
    },
}

/// One server, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its name (the tool prefix).
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// Longest wait for one call.
    pub call_timeout: Duration,
    /// Longest wait for start-up.
    pub startup_timeout: Duration,
    /// Which calls need approval.
    pub approval: ApprovalRule,
}

/// A config error, naming the server and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[mcp.servers.{server}] {detail}")]
pub struct ConfigError {
    /// The server's name.
    pub server: String,
    /// What is wrong.
    pub detail: String,
}

impl McpConfig {
    /// Every server checked, with `${VAR}`s taken from `env` (reagent's environment).
    pub fn specs(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Vec<ServerSpec>, ConfigError> {
        self.servers
            .iter()
            .map(|(name, server)| server.spec(name, env))
            .collect()
    }
}

impl ServerConfig {
    fn spec(
        &self,
        name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerSpec, ConfigError> {
        let fail = |detail: String| ConfigError {
            server: name.to_owned(),
            detail,
        };
        if name.is_empty()
            || name.contains("__")
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(fail(
                "a server name is letters, digits, `-` and single `_`s (it prefixes the tool names)"
                    .into(),
            ));
        }
        let expand_all = |key: &str, map: &BTreeMap<String, String>| {
            map.iter()
                .map(|(k, v)| {
                    expand(v, env)
                        .map(|v| (k.clone(), v))
                        .map_err(|e| fail(format!("{key}.{k}: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        let transport = match (&self.command, &self.url) {
            (Some(command), None) => {
                if !self.headers.is_empty() || self.ca_file.is_some() {
                    return Err(fail(
                        "`headers` and `ca_file` belong to a `url` server".into(),
                    ));
                }
                Transport::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: expand_all("env", &self.env)?,
                    sandbox: self.sandbox,
                }
            }
            (None, Some(url)) => {
                if !self.args.is_empty() || !self.env.is_empty() {
                    return Err(fail("`args` and `env` belong to a `command` server".into()));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(fail(format!("url `{url}` is not http:// or https://")));
                }
                Transport::Http {
                    url: url.clone(),
                    headers: expand_all("headers", &self.headers)?,
                    ca_file: self.ca_file.clone(),
                }
            }
            _ => {
                return Err(fail(
                    "set exactly one of `command` (stdio) or `url` (HTTP)".into(),
                ))
            }
        };
        let secs = |key: &str, value: Option<f64>, default: f64| match value {
            None => Ok(Duration::from_secs_f64(default)),
            Some(v) if v.is_finite() && v > 0.0 && v < 86_400.0 => Ok(Duration::from_secs_f64(v)),
            Some(v) => Err(fail(format!(
                "{key} = {v} is not a number of seconds above 0"
            ))),
        };
        if let Some(tool) = self.ask_tools.iter().find(|t| self.auto_tools.contains(t)) {
            return Err(fail(format!(
                "`{tool}` is in both `ask_tools` and `auto_tools`"
            )));
        }
        Ok(ServerSpec {
            name: name.to_owned(),
            approval: ApprovalRule {
                mode: self.approval,
                ask: self.ask_tools.clone(),
                auto: self.auto_tools.clone(),
            },
            transport,
            call_timeout: secs("timeout_secs", self.timeout_secs, 60.0)?,
            startup_timeout: secs("startup_timeout_secs", self.startup_timeout_secs, 30.0)?,
        })
    }
}

/// `value` with every `${VAR}` replaced by the variable's value; an unset variable is an error
/// naming it.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err("an unclosed `${`".into());
        };
        let var = &after[..end];
        match env(var) {
            Some(v) => out.push_str(&v),
            None => return Err(format!("the environment variable {var} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ServerSpec>, ConfigError> {
        #[derive(Deserialize)]
        struct File {
            mcp: McpConfig,
        }
        let file: File = toml::from_str(text).unwrap();
        file.mcp
            .specs(&|v| (v == "TRACKER_TOKEN").then(|| "s3cret".to_owned()))
    }

    #[test]
    fn the_contract_keys_parse() {
        let specs = parse(
            r#"
            [mcp.servers.files]
            command = "npx"
            args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
            env = { LOG_LEVEL = "warn" }
            sandbox = true
            [mcp.servers.tracker]
            url = "http://127.0.0.1:8931/mcp"
            headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }
            "#,
        )
        .unwrap();
        assert_eq!(
            specs[0].transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec![
                    "-y".into(),
                    "@modelcontextprotocol/server-filesystem".into(),
                    "/srv/docs".into()
                ],
                env: vec![("LOG_LEVEL".into(), "warn".into())],
                sandbox: true,
            }
        );
        assert_eq!(
            specs[1].transport,
            Transport::Http {
                url: "http://127.0.0.1:8931/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer s3cret".into())],
                ca_file: None,
            }
        );
        assert_eq!(specs[1].call_timeout, Duration::from_secs(60));
    }

    #[test]
    fn mistakes_name_the_server_and_key() {
        let e = parse("[mcp.servers.t]\nurl = \"http://x/mcp\"\nheaders = { A = \"${NOPE}\" }")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "[mcp.servers.t] headers.A: the environment variable NOPE is not set"
        );
        let e = parse("[mcp.servers.t]\ncommand = \"a\"\nurl = \"http://x\"").unwrap_err();
        assert!(e.to_string().contains("exactly one of"), "{e}");
        let e = parse("[mcp.servers.a__b]\ncommand = \"a\"").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("[mcp.servers.a__b] a server name"),
            "{e}"
        );
        let e = parse("[mcp.servers.t]\ncommand = \"a\"\ntimeout_secs = -1").unwrap_err();
        assert!(e.to_string().contains("timeout_secs = -1"), "{e}");
        let typo: Result<McpConfig, _> = toml::from_str("[servers.t]\ncomand = \"a\"");
        assert!(typo.unwrap_err().to_string().contains("comand"));
    }

    #[test]
    fn approval_modes_and_exceptions() {
        let specs = parse(
            r#"
            [mcp.servers.a]
            command = "a"
            [mcp.servers.w]
            command = "w"
            approval = "writes"
            ask_tools = ["peek"]
            [mcp.servers.x]
            command = "x"
            approval = "ask"
            auto_tools = ["echo"]
            "#,
        )
        .unwrap();
        let (a, w, x) = (&specs[0].approval, &specs[1].approval, &specs[2].approval);
        assert_eq!(a.mode, ApprovalMode::Auto);
        assert!(!a.asks("write", false));
        assert!(w.asks("write", false));
        assert!(!w.asks("read", true));
        assert!(w.asks("peek", true));
        assert!(x.asks("read", true));
        assert!(!x.asks("echo", false));
        let bad: Result<McpConfig, _> =
            toml::from_str("[servers.t]\ncommand = \"a\"\napproval = \"sometimes\"");
        assert!(bad.unwrap_err().to_string().contains("sometimes"));
        let e =
            parse("[mcp.servers.t]\ncommand = \"a\"\nask_tools = [\"x\"]\nauto_tools = [\"x\"]")
                .unwrap_err();
        assert_eq!(
            e.to_string(),
            "[mcp.servers.t] `x` is in both `ask_tools` and `auto_tools`"
        );
    }
}
