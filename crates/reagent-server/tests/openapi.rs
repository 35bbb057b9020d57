//! The OpenAPI document: generated from the handlers' types, committed as
//! `schema/openapi.json` (`REAGENT_BLESS=1` rewrites it), and served as is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::Value;
use support::TestServer;

fn committed_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/openapi.json")
}

#[test]
fn the_committed_document_is_the_generated_one() {
    let generated = reagent_server::openapi().to_pretty_json().unwrap() + "\n";
    let path = committed_path();
    if std::env::var_os("REAGENT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path)
        .expect("schema/openapi.json is missing: run REAGENT_BLESS=1 cargo test -p reagent-server --test openapi");
    assert!(
        committed == generated,
        "schema/openapi.json is stale: run REAGENT_BLESS=1 cargo test -p reagent-server --test openapi"
    );
}

#[tokio::test]
async fn the_served_document_names_every_route_and_its_schemas() {
    let server = TestServer::start().await;
    let doc: Value = server.get_json("/v1/openapi.json").await;
    assert_eq!(
        doc,
        serde_json::to_value(reagent_server::openapi()).unwrap()
    );
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/v1/health", "get"),
        ("/v1/runs", "get"),
        ("/v1/runs", "post"),
        ("/v1/runs/{id}", "get"),
        ("/v1/runs/{id}/cancel", "post"),
        ("/v1/runs/{id}/messages", "post"),
        ("/v1/runs/{id}/events", "get"),
        ("/v1/runs/{id}/ws", "get"),
        ("/v1/approvals", "get"),
        ("/v1/approvals/{id}", "post"),
        ("/v1/openapi.json", "get"),
        ("/metrics", "get"),
        ("/v1/experiments", "get"),
        ("/v1/experiments", "post"),
        ("/v1/experiments/{id}", "get"),
        ("/v1/experiments/{id}/events", "get"),
        ("/v1/experiments/{id}/stop", "post"),
        ("/v1/experiments/{id}/resume", "post"),
        ("/v1/experiments/{id}/operator", "get"),
        ("/v1/experiments/{id}/operator/{message}", "post"),
    ] {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path}"
        );
    }
    assert_eq!(paths.len(), 18);
    // Health is open; the rest need the bearer token.
    assert_eq!(
        doc["paths"]["/v1/health"]["get"]["security"],
        serde_json::json!([{}])
    );
    assert_eq!(doc["security"], serde_json::json!([{"bearer": []}]));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let create = &doc["components"]["schemas"]["CreateRun"];
    assert_eq!(create["additionalProperties"], false, "{create}");
    for field in ["task", "model", "workspace"] {
        assert!(create["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from(field)));
    }
    for schema in [
        "RunSummary",
        "RunList",
        "RunDetail",
        "Approval",
        "ErrorBody",
        "Health",
    ] {
        assert!(
            doc["components"]["schemas"].get(schema).is_some(),
            "{schema}"
        );
    }
}
