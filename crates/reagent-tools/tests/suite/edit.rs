//! `edit_file`: exact replacement, uniqueness, `replace_all`, diff output.

use reagent_tools::ToolResult;
use serde_json::json;

use crate::suite::common::{assert_refused, out, Fixture};

#[test]
fn edit_unique_replacement_returns_a_diff() {
    let fx = Fixture::new();
    fx.put("src/lib.rs", "fn a() {}\nfn b() {\n    1\n}\n");
    let r = fx.call(
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n"}),
    );
    let ToolResult::Ok {
        output, changed, ..
    } = &r
    else {
        panic!("{r:?}")
    };
    assert_eq!(changed, &vec!["src/lib.rs".to_string()]);
    assert_eq!(
        output.as_str().unwrap(),
        "replaced 1 occurrence in src/lib.rs\n\
         --- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,4 +1,4 @@\n fn a() {}\n fn b() {\n-    1\n+    2\n }\n"
    );
    assert_eq!(fx.get("src/lib.rs"), "fn a() {}\nfn b() {\n    2\n}\n");
}

#[test]
fn edit_not_unique_then_replace_all() {
    let fx = Fixture::new();
    fx.put("c.txt", "foo bar foo baz foo\n");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "foo", "new_string": "qux"}),
        ),
        "occurs 3 times in c.txt",
    );
    assert_eq!(fx.get("c.txt"), "foo bar foo baz foo\n");
    let r = out(&fx.call(
        "edit_file",
        json!({"path": "c.txt", "old_string": "foo", "new_string": "qux", "replace_all": true}),
    ));
    assert!(r.starts_with("replaced 3 occurrences in c.txt\n"), "{r}");
    assert!(
        r.contains("-foo bar foo baz foo\n+qux bar qux baz qux\n"),
        "{r}"
    );
    assert_eq!(fx.get("c.txt"), "qux bar qux baz qux\n");
}

#[test]
fn edit_errors_are_actionable() {
    let fx = Fixture::new();
    fx.put("c.txt", "    indented\n");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "", "new_string": "x"}),
        ),
        "use write_file",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "indented\n  ", "new_string": "x"}),
        ),
        "not found in c.txt",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "indented", "new_string": "indented"}),
        ),
        "the same",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
        ),
        "no such file",
    );
    assert_refused(
        &fx.call("edit_file", json!({"path": "c.txt", "old_string": "a"})),
        "missing required argument `new_string`",
    );
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "x", "new_string": "y", "replace_all": "maybe"}),
        ),
        "true or false",
    );
    fx.put("bin", b"\xff\xfe");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "bin", "old_string": "a", "new_string": "b"}),
        ),
        "not UTF-8",
    );
    assert_eq!(fx.get("c.txt"), "    indented\n");
}

#[test]
fn edit_to_empty_and_multiline() {
    let fx = Fixture::new();
    fx.put("m.txt", "a\nb\nc\n");
    assert!(fx
        .call(
            "edit_file",
            json!({"path": "m.txt", "old_string": "a\nb\n", "new_string": ""})
        )
        .is_ok());
    assert_eq!(fx.get("m.txt"), "c\n");
}

#[test]
fn an_edit_whose_old_text_is_missing_or_not_unique_answers_with_the_current_text() {
    let fx = Fixture::new();
    fx.put("calc.py", "def add(a, b):\n    return a - b\n");
    let r = fx.call(
        "edit_file",
        json!({"path": "calc.py", "old_string": "return a-b", "new_string": "return a + b"}),
    );
    assert_refused(
        &r,
        "not found in calc.py; it must match exactly, including spaces and indentation. \
         The file's current text:\ndef add(a, b):\n    return a - b\n",
    );
    fx.put("c.txt", "foo\nfoo\n");
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "c.txt", "old_string": "foo", "new_string": "bar"}),
        ),
        "The file's current text:\nfoo\nfoo\n",
    );
}

/// Qwen2.5-Coder-1.5B, asked to "Turn debug off in config.json (set it to false)", called
/// edit_file with old_string `debug` and new_string `false` (coding suite, config-json-debug):
/// the key was renamed and the value left. Such an edit is refused, saying how to change the
/// value; an edit that names the key and its value goes through.
#[test]
fn an_edit_that_would_rename_a_json_key_is_refused_and_a_value_edit_is_made() {
    let fx = Fixture::new();
    let config = "{\n  \"name\": \"app\",\n  \"debug\": true,\n  \"port\": 8080\n}\n";
    fx.put("config.json", config);
    assert_refused(
        &fx.call(
            "edit_file",
            json!({"path": "config.json", "old_string": "debug", "new_string": "false"}),
        ),
        "this edit would rename the key \"debug\" of config.json",
    );
    assert_eq!(fx.get("config.json"), config);
    out(&fx.call(
        "edit_file",
        json!({"path": "config.json", "old_string": "\"debug\": true", "new_string": "\"debug\": false"}),
    ));
    assert!(fx.get("config.json").contains("\"debug\": false"));
    // A value without a colon in old_string is still a value edit.
    out(&fx.call(
        "edit_file",
        json!({"path": "config.json", "old_string": "8080", "new_string": "9090"}),
    ));
    assert!(fx.get("config.json").contains("\"port\": 9090"));
}
