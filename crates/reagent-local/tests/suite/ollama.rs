//! The Ollama probe against a minimal HTTP responder on 127.0.0.1.

use reagent_local::probe_ollama;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Answers every connection with `status` and `body`; returns the base URL.
async fn responder(status: &'static str, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).to_string();
            let (status, body) = if request.starts_with("GET /api/tags ") {
                (status, body)
            } else {
                ("404 Not Found", "wrong path")
            };
            let reply = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn lists_installed_models_in_order() {
    let url = responder(
        "200 OK",
        r#"{"models":[{"name":"qwen3:8b","size":1},{"name":"llama3.2:1b"}]}"#,
    )
    .await;
    assert_eq!(
        probe_ollama(&url).await,
        Some(vec!["qwen3:8b".to_owned(), "llama3.2:1b".to_owned()])
    );
    // A bare host:port and a trailing slash work too.
    let bare = url.trim_start_matches("http://").to_owned() + "/";
    assert_eq!(probe_ollama(&bare).await.map(|m| m.len()), Some(2));
}

#[tokio::test]
async fn an_ollama_without_models_gives_an_empty_list() {
    let url = responder("200 OK", r#"{"models":[]}"#).await;
    assert_eq!(probe_ollama(&url).await, Some(vec![]));
}

#[tokio::test]
async fn something_else_on_the_port_is_not_ollama() {
    let url = responder("200 OK", "<html>hello</html>").await;
    assert_eq!(probe_ollama(&url).await, None);
    let url = responder("500 Internal Server Error", "{}").await;
    assert_eq!(probe_ollama(&url).await, None);
}

#[tokio::test]
async fn nothing_listening_gives_none_quickly() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let started = std::time::Instant::now();
    assert_eq!(
        probe_ollama(&format!("http://127.0.0.1:{port}")).await,
        None
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}
