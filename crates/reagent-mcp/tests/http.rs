//! Streamable HTTP both ways: reagent's workspace tools served at `/mcp` behind a bearer
//! token, reached by reagent's client with the token in its configured headers; a wrong
//! token and a closed port leave the server down with a clear error. Over `https://`: a TLS
//! proxy with a self-signed certificate made in the test, trusted through `ca_file`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reagent_mcp::{McpClients, ServerSpec, Transport, WorkspaceServer};
use reagent_protocol::CancellationToken;
use reagent_tools::{ToolContext, ToolRegistry, ToolResult, ToolSource, ToolsConfig, Workspace};
use serde_json::json;

fn http(name: &str, url: &str, token: &str) -> ServerSpec {
    https(name, url, token, None)
}

fn https(name: &str, url: &str, token: &str, ca_file: Option<&Path>) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: Transport::Http {
            url: url.into(),
            headers: vec![("Authorization".into(), format!("Bearer {token}"))],
            ca_file: ca_file.map(Path::to_path_buf),
        },
        call_timeout: Duration::from_secs(5),
        startup_timeout: Duration::from_secs(5),
        approval: Default::default(),
    }
}

/// A workspace with `a.txt` served over plain HTTP at the returned URL, until the token fires.
async fn served_workspace(
    dir: &Path,
) -> (
    String,
    CancellationToken,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    std::fs::write(dir.join("a.txt"), "alpha\n").unwrap();
    let tools = ToolRegistry::workspace_tools(&ToolsConfig {
        disabled: vec!["task_complete".into()],
        ..ToolsConfig::default()
    });
    let ctx = ToolContext::new(Arc::new(Workspace::open(dir).unwrap()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let served = tokio::spawn(WorkspaceServer::new(tools, ctx).serve_http(
        listener,
        "s3cret".into(),
        shutdown.clone(),
    ));
    (url, shutdown, served)
}

#[tokio::test]
async fn workspace_tools_over_streamable_http_behind_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let (url, shutdown, served) = served_workspace(dir.path()).await;

    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", l.local_addr().unwrap())
    };
    let clients = McpClients::start(
        vec![
            http("good", &url, "s3cret"),
            http("wrong", &url, "guess"),
            http("closed", &closed, "s3cret"),
        ],
        None,
    );
    clients.started().await;
    let statuses = clients.statuses();
    assert_eq!(statuses[0].status, "up", "{:?}", statuses[0]);
    assert_eq!(statuses[0].transport, "http");
    assert!(statuses[0]
        .tools
        .iter()
        .any(|t| t.name == "good__read_file"));
    for s in &statuses[1..] {
        assert_eq!(s.status, "down", "{s:?}");
        let e = s.error.as_deref().unwrap();
        assert!(
            e.contains("the MCP handshake with http://127.0.0.1:"),
            "{e}"
        );
    }
    assert!(
        statuses[1].error.as_deref().unwrap().contains("401"),
        "{:?}",
        statuses[1]
    );
    let r = clients
        .call(
            "good",
            "read_file",
            json!({"path": "a.txt"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(r, ToolResult::ok("alpha\n"));
    let names: Vec<String> = clients.tools().iter().map(|t| t.spec().name).collect();
    assert!(names.iter().all(|n| n.starts_with("good__")), "{names:?}");

    shutdown.cancel();
    served.await.unwrap().unwrap();
}

/// A TLS proxy on 127.0.0.1 in front of `backend` (host:port), with a self-signed certificate
/// for 127.0.0.1; its address and the certificate (PEM).
async fn tls_proxy(backend: String) -> (std::net::SocketAddr, String) {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let pem = cert.cert.pem();
    let key =
        tokio_rustls::rustls::pki_types::PrivateKeyDer::try_from(cert.key_pair.serialize_der())
            .unwrap();
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.cert.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, backend) = (acceptor.clone(), backend.clone());
            tokio::spawn(async move {
                // A client that rejects the certificate ends the handshake: nothing to proxy.
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let mut plain = tokio::net::TcpStream::connect(backend).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    (addr, pem)
}

#[tokio::test]
async fn an_https_server_is_reached_with_its_ca_file_and_refused_without() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let (url, shutdown, served) = served_workspace(&ws).await;
    let backend = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let (addr, pem) = tls_proxy(backend).await;
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, pem).unwrap();
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let secure = format!("https://{addr}/mcp");

    let clients = McpClients::start(
        vec![
            https("trusted", &secure, "s3cret", Some(&ca)),
            https("untrusted", &secure, "s3cret", None),
            https(
                "missing",
                &secure,
                "s3cret",
                Some(&dir.path().join("no.pem")),
            ),
            https("garbled", &secure, "s3cret", Some(&not_pem)),
        ],
        None,
    );
    clients.started().await;
    let statuses = clients.statuses();
    assert_eq!(statuses[0].status, "up", "{:?}", statuses[0]);
    let r = clients
        .call(
            "trusted",
            "read_file",
            json!({"path": "a.txt"}),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(r, ToolResult::ok("alpha\n"));

    let error = |i: usize| {
        assert_eq!(statuses[i].status, "down", "{:?}", statuses[i]);
        statuses[i].error.clone().unwrap()
    };
    let e = error(1);
    assert!(
        e.contains(&format!("the MCP handshake with {secure}")),
        "{e}"
    );
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    let e = error(2);
    assert!(
        e.contains("cannot read ca_file") && e.contains("no.pem"),
        "{e}"
    );
    let e = error(3);
    assert!(e.contains("not.pem"), "{e}");

    drop(clients);
    shutdown.cancel();
    served.await.unwrap().unwrap();
}
