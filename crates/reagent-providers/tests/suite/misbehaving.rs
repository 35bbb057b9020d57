//! A server that sends far more than any real reply: the call ends at the default cap on a
//! reply's size with an error naming it, instead of reading everything into memory.

use reagent_protocol::{CancellationToken, Provider, ProviderError};
use reagent_providers::ollama::OllamaProvider;
use reagent_providers::DEFAULT_MAX_REPLY_BYTES;
use reagent_testkit::{ScriptBuilder, ScriptedOllama, Turn};

use super::common::{fast_opts, request, Signals};

/// One NDJSON chunk of Ollama's stream carrying `content`.
fn chunk(content: &str) -> String {
    format!(
        "{{\"model\":\"m\",\"created_at\":\"2026-01-01T00:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{content}\"}},\"done\":false}}\n"
    )
}

#[tokio::test]
async fn a_fifty_megabyte_reply_stops_at_the_default_cap() {
    const TOTAL: usize = 50 << 20;
    let piece = "y".repeat(64 << 10);
    let line = chunk(&piece);
    let lines = vec![line; TOTAL / piece.len()];
    let body = format!(
        "{{\"model\":\"m\",\"created_at\":\"2026-01-01T00:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}},\"done\":true}}",
        "z".repeat(TOTAL)
    );
    let server = ScriptedOllama::start(ScriptBuilder::new().turns([
        Turn::raw_stream(lines),
        Turn::raw(200, "application/json; charset=utf-8", body),
    ]))
    .await
    .unwrap();
    let p = OllamaProvider::new(&server.base_url(), fast_opts()).unwrap();
    let cancel = CancellationToken::new();
    for stream in [true, false] {
        let signals = Signals::default();
        let err = p
            .chat(&request("m", stream), &signals.sink(), &cancel)
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::ReplyTooLarge { limit, .. } if limit == DEFAULT_MAX_REPLY_BYTES),
            "stream={stream}: {err:?}"
        );
        assert!(err.to_string().contains("cap of 8388608 bytes"), "{err}");
        // What reached the caller stayed under the cap.
        assert!(signals.text().0.len() <= DEFAULT_MAX_REPLY_BYTES);
        assert!(signals.retries().is_empty());
    }
}
