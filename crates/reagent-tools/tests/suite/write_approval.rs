//! Writes while `approve_writes` is set: the approver sees the whole unified diff and its
//! answer decides; a denial's note reaches the model; without an approver nothing is written.

use std::sync::{Arc, Mutex};

use reagent_tools::{Approval, Approver, ToolsConfig, Verdict};
use serde_json::json;

use super::common::{err, Fixture};

/// Answers with `verdict` and keeps every request.
struct Recording {
    verdict: Verdict,
    seen: Mutex<Vec<Approval>>,
}

impl Approver for Recording {
    fn approve(&self, request: &Approval) -> Verdict {
        self.seen.lock().unwrap().push(request.clone());
        self.verdict.clone()
    }
}

fn fixture(verdict: Option<Verdict>) -> (Fixture, Option<Arc<Recording>>) {
    let config = ToolsConfig {
        approve_writes: true,
        ..ToolsConfig::default()
    };
    let mut fx = Fixture::with_config(&config);
    let approver = verdict.map(|verdict| {
        Arc::new(Recording {
            verdict,
            seen: Mutex::new(Vec::new()),
        })
    });
    fx.ctx.approver = approver.clone().map(|a| a as Arc<dyn Approver>);
    (fx, approver)
}

#[test]
fn an_allowed_write_shows_the_whole_diff_then_writes() {
    let (fx, approver) = fixture(Some(Verdict::Allow));
    fx.put("notes.txt", "one\ntwo\nthree\n");
    let r = fx.call(
        "write_file",
        json!({"path": "./notes.txt", "content": "one\nTWO\nthree\n"}),
    );
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fx.get("notes.txt"), "one\nTWO\nthree\n");
    let seen = approver.unwrap().seen.lock().unwrap().clone();
    let [Approval::Write { path, diff }] = seen.as_slice() else {
        panic!("one write asked about, got {seen:?}");
    };
    assert_eq!(path, "notes.txt");
    assert!(
        diff.contains("--- a/notes.txt\n+++ b/notes.txt\n"),
        "{diff}"
    );
    assert!(diff.contains("-two\n+TWO\n"), "{diff}");

    // A new file: the diff adds every line, from an empty file.
    let r = fx.call(
        "write_file",
        json!({"path": "new.txt", "content": "a\nb\n"}),
    );
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn a_denied_edit_writes_nothing_and_the_note_reaches_the_model() {
    let (fx, approver) = fixture(Some(Verdict::Deny {
        note: Some("keep the old name".into()),
    }));
    let approver = approver.unwrap();
    fx.put("lib.rs", "fn old() {}\n");
    let r = fx.call(
        "edit_file",
        json!({"path": "lib.rs", "old_string": "old", "new_string": "new"}),
    );
    let e = err(&r);
    assert!(e.contains("writing lib.rs"), "{e}");
    assert!(
        e.contains("the user denied it and says: keep the old name"),
        "{e}"
    );
    assert_eq!(fx.get("lib.rs"), "fn old() {}\n");
    let seen = approver.seen.lock().unwrap().clone();
    assert!(
        matches!(seen.as_slice(), [Approval::Write { diff, .. }] if diff.contains("-fn old() {}\n+fn new() {}\n")),
        "{seen:?}"
    );
    let r = fx.call("write_file", json!({"path": "other.txt", "content": "x"}));
    assert!(err(&r).contains("the user denied it"));
    assert!(!fx.ws.join("other.txt").exists());

    // A protected path is refused by the write policy without a question.
    let asked = approver.seen.lock().unwrap().len();
    assert_eq!(asked, 2);
    let r = fx.call("write_file", json!({"path": ".env", "content": "X=1"}));
    assert!(err(&r).contains("protected"), "{r:?}");
    assert_eq!(
        approver.seen.lock().unwrap().len(),
        asked,
        "not asked about"
    );
}

#[test]
fn without_an_approver_writes_are_refused_and_without_the_setting_not_asked() {
    let (fx, _) = fixture(None);
    let r = fx.call("write_file", json!({"path": "a.txt", "content": "x"}));
    assert!(err(&r).contains("needs approval"), "{r:?}");
    assert!(!fx.ws.join("a.txt").exists());

    let mut fx = Fixture::new();
    let approver = Arc::new(Recording {
        verdict: Verdict::DENY,
        seen: Mutex::new(Vec::new()),
    });
    fx.ctx.approver = Some(approver.clone());
    let r = fx.call("write_file", json!({"path": "a.txt", "content": "x"}));
    assert!(r.is_ok(), "{r:?}");
    assert!(approver.seen.lock().unwrap().is_empty());
}
