//! The server keeps its secrets: every route behind the token (none in a query string), the
//! security headers on every response, bodies capped and checked, a client's `base_url` held to
//! the allowed list (no loopback service, no link-local address, the provider key only to its
//! own URL), workspaces that cannot leave the roots nor tell what lies outside them, and a cap
//! on concurrent runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use reagent_providers::{ProviderConfig, ProviderKind};
use reagent_testkit::{ScriptBuilder, ScriptedOpenAi, Turn};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use support::TestServer;
use tokio::net::TcpListener;

/// The provider key the server is configured with; it must reach only its own URL.
const KEY: &str = "sk-canary-0123456789";

/// Every route of the OpenAPI document that needs the token (all but those marked
/// `security: [{}]`), as (method, path) with `{id}` filled in: a route added later is covered
/// without touching this test.
async fn protected_routes(server: &TestServer) -> Vec<(reqwest::Method, String)> {
    let doc: Value = server.get_json("/v1/openapi.json").await;
    let mut routes = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            if op["security"] == json!([{}]) {
                continue;
            }
            routes.push((
                method.to_uppercase().parse().unwrap(),
                path.replace("{id}", "r1"),
            ));
        }
    }
    routes
}

/// The headers every response must carry.
fn assert_security_headers(what: &str, headers: &HeaderMap) {
    let get = |name: &str| {
        headers
            .get(name)
            .unwrap_or_else(|| panic!("{what}: no {name} header"))
            .to_str()
            .unwrap()
            .to_owned()
    };
    let csp = get("content-security-policy");
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(part), "{what}: CSP without {part}: {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{what}: {csp}");
    assert!(!csp.contains("unsafe-eval"), "{what}: {csp}");
    assert_eq!(get("x-content-type-options"), "nosniff", "{what}");
    assert_eq!(get("x-frame-options"), "DENY", "{what}");
    assert_eq!(get("referrer-policy"), "no-referrer", "{what}");
}

/// Send `req`; check the status, the JSON error code and the headers; the message.
async fn refused(what: &str, req: reqwest::RequestBuilder, status: u16, code: &str) -> String {
    let res = req.send().await.unwrap();
    assert_eq!(res.status().as_u16(), status, "{what}");
    assert_security_headers(what, res.headers());
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn every_route_needs_the_token_in_the_header_and_nowhere_else() {
    let server = TestServer::start().await;
    let token = server.token.clone();
    let routes = protected_routes(&server).await;
    assert!(
        routes.len() >= 11,
        "the document lists the routes: {routes:?}"
    );
    for (method, path) in routes {
        let url = server.url(&path);
        let what = format!("{method} {path}");
        let plain = || server.client.request(method.clone(), &url);
        let with_query = |name: &str| {
            server
                .client
                .request(method.clone(), format!("{url}?{name}={token}"))
        };
        for (how, req) in [
            ("no token", plain()),
            ("a wrong token", plain().bearer_auth("not-the-token-0000")),
            (
                "the token plus a byte",
                plain().bearer_auth(format!("{token}x")),
            ),
            (
                "a prefix of it",
                plain().bearer_auth(&token[..token.len() - 1]),
            ),
            ("basic auth", plain().basic_auth("reagent", Some(&token))),
            (
                "a cookie",
                plain().header("cookie", format!("token={token}")),
            ),
            ("?token=", with_query("token")),
            ("?access_token=", with_query("access_token")),
        ] {
            let message = refused(&format!("{what} with {how}"), req, 401, "unauthorized").await;
            assert!(!message.contains(&token), "the token is never echoed");
        }
    }
    // The WebSocket too: without the header the upgrade is refused.
    let ws = format!(
        "{}/v1/runs/r1/ws?token={token}",
        server.base.replace("http", "ws")
    );
    match tokio_tungstenite::connect_async(ws).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
            assert_eq!(res.status().as_u16(), 401);
        }
        other => panic!("a WebSocket without the header: {other:?}"),
    }
    // The open routes answer without it, with the same headers.
    for path in ["/", "/assets/app.js", "/assets/app.css", "/v1/health"] {
        let res = server.client.get(server.url(path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{path}");
        assert_security_headers(path, res.headers());
    }
    // And so do errors: no route, no method, no file.
    for (method, path, status) in [
        ("GET", "/v1/nope", 404),
        ("DELETE", "/v1/health", 405),
        ("GET", "/assets/../Cargo.toml", 404),
        ("GET", "/assets/%2e%2e/src/lib.rs", 404),
    ] {
        let res = server
            .client
            .request(method.parse().unwrap(), server.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), status, "{method} {path}");
        assert_security_headers(path, res.headers());
    }
}

#[tokio::test]
async fn oversized_and_malformed_bodies_are_refused_and_the_server_stays_up() {
    let cap = 4096;
    let server = TestServer::start_with(|c| c.max_body_bytes = cap).await;
    let nested = "[".repeat(3_000);
    for path in ["/v1/runs", "/v1/runs/r1/messages", "/v1/approvals/a1"] {
        let json = |body: Vec<u8>| {
            server
                .post(path)
                .header("content-type", "application/json")
                .body(body)
        };
        let big = format!("{{\"task\": \"{}\"}}", "x".repeat(cap));
        refused(path, json(big.into_bytes()), 413, "payload_too_large").await;
        // Without a Content-Length: a chunked body counted as it comes.
        let chunks =
            futures_util::stream::iter((0..64).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024])));
        refused(
            path,
            server
                .post(path)
                .header("content-type", "application/json")
                .body(reqwest::Body::wrap_stream(chunks)),
            413,
            "payload_too_large",
        )
        .await;
        for (what, body) in [
            ("empty", Vec::new()),
            ("cut", b"{\"task\": ".to_vec()),
            ("nested 3,000 deep", nested.clone().into_bytes()),
            ("not UTF-8", b"{\"task\": \"\xff\xfe\"}".to_vec()),
            ("an array", b"[1, 2, 3]".to_vec()),
            ("a NUL byte", b"{\"task\": \"a\0b\"}".to_vec()),
        ] {
            refused(&format!("{path}: {what}"), json(body), 400, "bad_request").await;
        }
        refused(
            path,
            server
                .post(path)
                .header("content-type", "text/plain")
                .body("{}"),
            415,
            "unsupported_media_type",
        )
        .await;
    }
    // Oversized headers are refused before any handler, and the server goes on.
    let res = server
        .get("/v1/runs")
        .header("x-filler", "y".repeat(1_000_000))
        .send()
        .await;
    if let Ok(res) = res {
        assert!(res.status().is_client_error(), "{}", res.status());
    }
    let health: Value = server.get_json("/v1/health").await;
    assert_eq!(health["status"], "ok");
}

/// A loopback service that counts the connections it gets (it must get none).
async fn canary() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((_conn, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (format!("127.0.0.1:{port}"), hits)
}

fn done_script() -> ScriptBuilder {
    ScriptBuilder::new().turn(Turn::text("done"))
}

#[tokio::test]
async fn base_urls_are_held_to_the_allowed_list_and_the_key_to_its_own_url() {
    let keyed = ScriptedOpenAi::start(done_script().turn(Turn::text("done")))
        .await
        .unwrap();
    let other = ScriptedOpenAi::start(done_script()).await.unwrap();
    let (canary_addr, canary_hits) = canary().await;
    let keyed_url = keyed.base_url();
    let other_url = other.base_url();
    let server = TestServer::start_with(|c| {
        let mut provider = ProviderConfig::new(ProviderKind::OpenAi);
        provider.base_urls = vec![keyed_url.clone()];
        provider.api_key = Some(KEY.into());
        provider.max_retries = 0;
        c.defaults.provider = provider;
        c.base_urls = vec![other_url.clone()];
    })
    .await;
    let ws = server.workspace.display().to_string();
    let run = |base_url: Option<&str>| {
        let mut body = json!({"task": "t", "model": "m", "tool_mode": "native",
            "workspace": ws, "approval": "deny"});
        if let Some(u) = base_url {
            body["base_url"] = json!(u);
        }
        server.post("/v1/runs").json(&body)
    };

    // Loopback services, the metadata address and other link-local ones, in every spelling:
    // refused before anything is sent, naming the setting.
    let port = canary_addr.rsplit(':').next().unwrap();
    for url in [
        format!("http://{canary_addr}"),
        format!("http://{canary_addr}/v1"),
        format!("http://localhost:{port}/v1"),
        format!("http://[::1]:{port}/v1"),
        format!("http://0x7f.0.0.1:{port}/v1"),
        format!("http://2130706433:{port}/v1"),
        format!("http://0.0.0.0:{port}/v1"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[fe80::1]/v1".to_owned(),
        "http://[::ffff:169.254.169.254]/".to_owned(),
        "https://attacker.example/v1".to_owned(),
        // The allowed URLs' neighbours: another port, another path, another scheme.
        keyed_url.replace("/v1", "/v2"),
        keyed_url.replace("http://", "https://"),
    ] {
        let m = refused(&url, run(Some(&url)), 403, "forbidden").await;
        assert!(m.contains("[serve] base_urls"), "{url}: {m}");
    }
    // Tricks that are not plain URLs: a user name that hides the real host, a query.
    for url in [
        format!("http://{}@{canary_addr}/v1", keyed.server().addr()),
        format!("{keyed_url}?x=1"),
        "gopher://127.0.0.1:70/".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        refused(&url, run(Some(&url)), 400, "bad_request").await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        canary_hits.load(Ordering::SeqCst),
        0,
        "nothing reached the canary"
    );

    // The configured URL (however spelled) gets the key; another allowed one does not.
    for (url, target, keyed_run) in [
        (None, &keyed, true),
        (Some(format!("{keyed_url}/")), &keyed, true),
        (Some(other_url.clone()), &other, false),
    ] {
        let res = run(url.as_deref()).send().await.unwrap();
        assert_eq!(res.status(), 201, "{url:?}: {}", res.text().await.unwrap());
        let created: Value = res.json().await.unwrap();
        let detail = server.wait_finished(created["id"].as_str().unwrap()).await;
        assert_eq!(detail["run"]["outcome"], "completed", "{url:?}: {detail}");
        let chat = target
            .server()
            .recorded()
            .into_iter()
            .rfind(|r| r.is_chat)
            .expect("the run reached its model server");
        let auth = chat.header("authorization");
        if keyed_run {
            assert_eq!(auth, Some(format!("Bearer {KEY}").as_str()), "{url:?}");
        } else {
            assert_eq!(auth, None, "{url:?}: the key went to another URL");
        }
    }
    for r in other.server().recorded() {
        assert!(
            r.headers.iter().all(|(_, v)| !v.contains(KEY)),
            "the key reached the other server: {r:?}"
        );
    }
}

#[tokio::test]
async fn workspace_tricks_stay_inside_and_tell_nothing_of_the_outside() {
    let server = TestServer::start().await;
    let base = server.dir.path();
    let root = base.join("root");
    let outside = base.join("outside");
    std::fs::create_dir_all(outside.join("secret")).unwrap();
    std::fs::write(outside.join("secret.txt"), "x").unwrap();
    std::fs::write(server.workspace.join("file.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc", server.workspace.join("etc")).unwrap();
    let p = |path: &std::path::Path| path.display().to_string();
    let attempt = |workspace: String| {
        server
            .post("/v1/runs")
            .json(&json!({"task": "t", "model": "m", "workspace": workspace}))
    };
    let mut answers = Vec::new();
    for workspace in [
        // Exist outside the roots…
        "/etc".to_owned(),
        "/etc/passwd".to_owned(),
        p(&outside),
        p(&outside.join("secret")),
        p(&outside.join("secret.txt")),
        p(&root.join("escape")),
        p(&root.join("escape/secret")),
        p(&server.workspace.join("etc")),
        format!("{}/../../outside", p(&server.workspace)),
        format!("{}/../outside/secret", p(&root)),
        // …and do not exist, outside or inside.
        "/no/such/dir".to_owned(),
        p(&outside.join("missing")),
        p(&root.join("escape/missing")),
        p(&server.workspace.join("etc/missing")),
        format!("{}/../../missing", p(&server.workspace)),
        p(&root.join("missing")),
        format!("{}/a\u{0}b", p(&root)),
    ] {
        let message = refused(&workspace, attempt(workspace.clone()), 403, "forbidden").await;
        // Every answer is the same once the client's own text is taken out.
        answers.push(message.replace(&workspace, "PATH"));
    }
    answers.dedup();
    assert_eq!(answers.len(), 1, "answers differ: {answers:#?}");
    for relative in ["project", "../outside", "./root/project", "~/project"] {
        let m = refused(relative, attempt(relative.into()), 400, "bad_request").await;
        assert!(m.contains("absolute"), "{m}");
    }
    let m = refused(
        "a file inside",
        attempt(p(&server.workspace.join("file.txt"))),
        400,
        "bad_request",
    )
    .await;
    assert!(m.contains("not a directory"), "{m}");
}

#[tokio::test]
async fn runs_past_the_cap_get_429_until_one_has_finished() {
    // A model server that accepts and never answers: the run stays in progress.
    let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = silent.accept().await {
            open.push(conn);
        }
    });
    let url = silent_url.clone();
    let server = TestServer::start_with(|c| {
        c.base_urls.push(url);
        c.max_concurrent_runs = 2;
    })
    .await;
    let first = server.start_run(&silent_url, json!({})).await;
    server.start_run(&silent_url, json!({})).await;
    let body = json!({"task": "t", "model": "m", "provider": "ollama", "base_url": silent_url,
        "workspace": server.workspace.display().to_string()});
    let m = refused(
        "a third run",
        server.post("/v1/runs").json(&body),
        429,
        "too_many_requests",
    )
    .await;
    assert!(m.contains("[serve] max_concurrent_runs"), "{m}");
    let id = first["id"].as_str().unwrap();
    let res = server.cancel(id).await;
    assert_eq!(res.status(), 202);
    server.wait_finished(id).await;
    // Its slot is given back once it is no longer live.
    let mut status = 0;
    for _ in 0..100 {
        let res = server.post("/v1/runs").json(&body).send().await.unwrap();
        status = res.status().as_u16();
        if status == 201 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, 201, "a slot was given back");
    held.abort();
}
