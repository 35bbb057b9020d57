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
