//! Starting llama-server on a free local port, waiting until it is healthy, and stopping it when
//! the [`LocalServer`] guard is dropped.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::LocalError;
use crate::locations::ServerFiles;
use crate::tail::Tail;

/// Server output lines kept for error messages.
const TAIL_LINES: usize = 40;
/// How many free ports are tried when another process takes the one picked first.
const PORT_ATTEMPTS: u32 = 3;
/// How often `/health` is polled while the server starts.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// How to run llama-server. Build with [`ServerConfig::new`] and change fields as needed.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// The binary and the model.
    pub files: ServerFiles,
    /// Context size in tokens (`-c`), shared by all slots. Default 4096.
    pub ctx_size: u32,
    /// Sampling seed (`--seed`), so runs are reproducible. Default 1.
    pub seed: i64,
    /// CPU threads (`--threads`); `None` leaves llama-server's choice (all cores).
    pub threads: Option<u32>,
    /// Parallel request slots (`--parallel`). Default 1: one agent, the whole context.
    pub parallel: u32,
    /// The model name the API reports and accepts (`--alias`). Default `SmolLM2-135M-Instruct`.
    pub alias: String,
    /// How long to wait for `/health` to say ok. Default 120 s (a loaded machine is slow).
    pub startup_timeout: Duration,
    /// Minimum run of tokens llama-server reuses from its cache after a change in the prompt,
    /// by shifting it (`--cache-reuse`); 0 turns it off. Default 256: when reagent compacts a
    /// long history (removing old rounds), the rounds it keeps are served from the cache
    /// instead of being evaluated again.
    pub cache_reuse: u32,
    /// More command-line arguments, appended last.
    pub extra_args: Vec<String>,
    /// Listen on this port (so a restarted server keeps its URL); `None` picks a free one.
    pub port: Option<u16>,
}

impl ServerConfig {
    /// Defaults for serving `files`.
    pub fn new(files: ServerFiles) -> Self {
        ServerConfig {
            files,
            ctx_size: 4096,
            seed: 1,
            threads: None,
            parallel: 1,
            alias: "SmolLM2-135M-Instruct".to_owned(),
            startup_timeout: Duration::from_secs(120),
            cache_reuse: 256,
            extra_args: Vec::new(),
            port: None,
        }
    }

    pub(crate) fn args(&self, port: u16) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "-m".into(),
            self.files.model.display().to_string(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--jinja".into(),
            "--seed".into(),
            self.seed.to_string(),
            "-c".into(),
            self.ctx_size.to_string(),
            "--parallel".into(),
            self.parallel.to_string(),
            "--alias".into(),
            self.alias.clone(),
            "--no-webui".into(),
            "--cache-reuse".into(),
            self.cache_reuse.to_string(),
        ];
        if let Some(t) = self.threads {
            args.extend(["--threads".to_owned(), t.to_string()]);
        }
        args.extend(self.extra_args.iter().cloned());
        args
    }
}

/// A running llama-server on `127.0.0.1`. Dropping the guard kills the process (and the process
/// also dies if the thread that started it goes away, so a crashed caller leaves no server).
#[derive(Debug)]
pub struct LocalServer {
    child: Child,
    port: u16,
    alias: String,
    output: Tail,
}

impl LocalServer {
    /// Start llama-server as `config` says on its port (else a free one) and wait until
    /// `/health` reports ok.
    ///
    /// Errors carry the server's last output lines: a bad model file, a missing library or a
    /// port taken by a racing process (retried on another port unless the port was given) all
    /// show up there.
    pub async fn start(config: &ServerConfig) -> Result<Self, LocalError> {
        let mut attempt = if config.port.is_some() {
            PORT_ATTEMPTS
        } else {
            1
        };
        loop {
            let port = match config.port {
                Some(port) => port,
                None => free_port()?,
            };
            let mut server = Self::spawn(config, port)?;
            match server.wait_ready(config.startup_timeout).await {
                Ok(()) => return Ok(server),
                Err(LocalError::Exited { .. })
                    if attempt < PORT_ATTEMPTS && server.output.contains("couldn't bind") =>
                {
                    tracing::debug!(port, "port taken before llama-server bound it; retrying");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn spawn(config: &ServerConfig, port: u16) -> Result<Self, LocalError> {
        let server = &config.files.server;
        let mut cmd = Command::new(server);
        cmd.args(config.args(port))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and only changes a flag of the
        // child process between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        tracing::debug!(server = %server.display(), port, "starting llama-server");
        let mut child = cmd.spawn().map_err(|source| LocalError::Spawn {
            server: server.clone(),
            source,
        })?;
        let output = Tail::new(TAIL_LINES);
        let pipes = [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ];
        for pipe in pipes.into_iter().flatten() {
            let tail = output.clone();
            // Ends by itself at EOF, when the process exits.
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    tracing::trace!(target: "llama_server", "{line}");
                    tail.push(&line);
                }
            });
        }
        Ok(LocalServer {
            child,
            port,
            alias: config.alias.clone(),
            output,
        })
    }

    async fn wait_ready(&mut self, timeout: Duration) -> Result<(), LocalError> {
        let client = health_client()?;
        let url = format!("{}/health", self.base_url());
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exit_status() {
                // Let the reader threads collect the last lines before reporting them.
                tokio::time::sleep(Duration::from_millis(200)).await;
                return Err(LocalError::Exited {
                    status,
                    tail: self.output.text(),
                });
            }
            if is_healthy(&client, &url).await {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(LocalError::StartTimeout {
                    after: timeout,
                    tail: self.output.text(),
                });
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    fn exit_status(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot query the process: {e}")),
        }
    }

    /// `http://127.0.0.1:PORT`: the server root (`/health`, `/props`, Anthropic-style
    /// `/v1/messages` is under it as `base_url() + "/v1/messages"`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL an OpenAI SDK takes.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The model name to send in requests (the `--alias`).
    pub fn model(&self) -> &str {
        &self.alias
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.exit_status().is_none()
    }

    /// The server's last output lines (for diagnostics).
    pub fn output_tail(&self) -> String {
        self.output.text()
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        // Errors mean it is already gone; either way reap it so no zombie is left.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP client for `/health` polls (2 s per request).
pub(crate) fn health_client() -> Result<reqwest::Client, LocalError> {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .map_err(|e| LocalError::Io {
            context: "cannot build an HTTP client",
            detail: e.to_string(),
        })
}

/// Whether llama-server's `/health` at `url` says `{"status": "ok"}`.
pub(crate) async fn is_healthy(client: &reqwest::Client, url: &str) -> bool {
    let Ok(resp) = client.get(url).send().await else {
        return false;
    };
    if !resp.status().is_success() {
        return false;
    }
    let body: serde_json::Value = resp.json().await.unwrap_or_default();
    body.get("status").and_then(|s| s.as_str()) == Some("ok")
}

/// A port nobody listens on right now (the OS picks it).
pub(crate) fn free_port() -> Result<u16, LocalError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| LocalError::Io {
            context: "cannot find a free local port",
            detail: e.to_string(),
        })
}
