//! `reagent hub --manage-local`: the embedded llama-server as a model server the hub manages.
//! It listens on one port for its whole life, so a restart keeps its URL (and the hub's
//! endpoint record and planner keep working).

use std::path::PathBuf;

use anyhow::Context;
use reagent_local::{LocalServer, ServerConfig};
use tokio::sync::Mutex;

use crate::setup::{local_files, local_model_name, SMOLLM2};

/// The embedded llama-server, started by the hub and restarted when it is down.
pub(crate) struct ManagedLocal {
    config: ServerConfig,
    server: Mutex<Option<LocalServer>>,
}

impl ManagedLocal {
    /// Install it if needed (minutes, progress on stderr) and start it on `port` (else a free
    /// one), serving `model_file` (else the embedded SmolLM2).
    pub(crate) async fn start(
        model_file: Option<&PathBuf>,
        port: Option<u16>,
    ) -> anyhow::Result<Self> {
        let (_, files) = local_files(model_file, "reagent hub", false).await?;
        let port = match port {
            Some(p) => p,
            None => free_port()?,
        };
        let config = ServerConfig {
            alias: local_model_name(model_file.map(PathBuf::as_path), SMOLLM2),
            port: Some(port),
            ..ServerConfig::new(files)
        };
        let server = LocalServer::start(&config)
            .await
            .context("cannot start the embedded model server")?;
        Ok(ManagedLocal {
            config,
            server: Mutex::new(Some(server)),
        })
    }

    /// The model name it serves.
    pub(crate) fn model(&self) -> &str {
        &self.config.alias
    }
}

#[async_trait::async_trait]
impl reagent_hub::ManagedServer for ManagedLocal {
    fn url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/v1",
            self.config.port.unwrap_or_default()
        )
    }

    async fn restart(&self) -> Result<(), String> {
        let mut server = self.server.lock().await;
        // Dropping the old one kills and reaps whatever is left of it, freeing the port.
        drop(server.take());
        let fresh = LocalServer::start(&self.config)
            .await
            .map_err(|e| e.to_string())?;
        *server = Some(fresh);
        Ok(())
    }
}

/// A port nobody listens on right now.
fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(listener.local_addr()?.port())
}
