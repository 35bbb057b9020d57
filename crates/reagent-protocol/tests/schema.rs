//! The published event schema (`schema/events.schema.json`) is the one generated from the types.
//! After changing an event type, regenerate it with `REAGENT_BLESS=1 cargo test -p reagent-protocol`.

use std::path::PathBuf;

#[test]
fn the_published_event_schema_is_generated_from_the_types() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/events.schema.json");
    let generated = serde_json::to_string_pretty(&reagent_protocol::event_schema()).unwrap() + "\n";
    if std::env::var_os("REAGENT_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let published = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        published == generated,
        "{} is out of date: regenerate it with REAGENT_BLESS=1 cargo test -p reagent-protocol",
        path.display()
    );
}

#[test]
fn the_schema_accepts_real_events_and_rejects_broken_ones() {
    use reagent_protocol::{Event, EventKind, Outcome};
    let validator = jsonschema::validator_for(&reagent_protocol::event_schema()).unwrap();
    let finished = Event::new(
        "r",
        3,
        EventKind::RunFinished {
            outcome: Outcome::Completed,
            iterations: 1,
            tool_calls: 0,
            prompt_tokens: 5,
            completion_tokens: 2,
            wall_ms: 10,
            model_ms: 8,
            files_changed: vec![],
            error: None,
            error_kind: None,
            answer: "42".into(),
        },
    );
    let good = serde_json::to_value(&finished).unwrap();
    assert!(validator.is_valid(&good), "{good}");
    let mut unknown_outcome = good.clone();
    unknown_outcome["outcome"] = "exploded".into();
    assert!(!validator.is_valid(&unknown_outcome));
    let mut no_seq_type = good.clone();
    no_seq_type["type"] = "no_such_kind".into();
    assert!(!validator.is_valid(&no_seq_type));
    let mut negative = good;
    negative["iterations"] = (-1).into();
    assert!(!validator.is_valid(&negative));
}
