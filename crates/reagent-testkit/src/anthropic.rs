//! anthropic wire format (not yet implemented: answers 404).

use crate::server::{Answer, RecordedRequest, Routed, State};

pub(crate) fn route(_state: &State, _req: &RecordedRequest) -> Routed {
    Routed::plain(Answer::json(
        404,
        &serde_json::json!({"error": "not implemented"}),
    ))
}
