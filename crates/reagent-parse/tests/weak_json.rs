//! What weak models write into JSON calls, read as a second look only where strict and
//! tolerant JSON fail and only when the result is a call (a string that lost its closing
//! quote, bare keys and words), langroid's `request` field, Python dicts, and the guards
//! that keep prose and examples from becoming calls (a name-only object must name a tool, an
//! open bare object followed by prose is no cut-off call, a label is no GLM name). Each case
//! is parsed whole and streamed one character at a time (`parse_both`).

use serde_json::json;

use crate::cases::{calls_of, parse_both};

#[test]
fn a_request_field_names_the_tool_beside_its_arguments() {
    // langroid's tool message, in prose, in JSON or in a Python dict.
    for input in [
        "Ok.\n{\"request\": \"file_exists\", \"filename\": \"a.txt\"}\nThanks.",
        "{'request': 'file_exists', 'filename': 'a.txt'}",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "file_exists", "arguments": {"filename": "a.txt"}}]),
            "{input}"
        );
    }
    // A request that is no tool name is data, and with tools offered the name must be one.
    let p = parse_both("{\"request\": \"tell me more\", \"n\": 1}", &[]);
    assert!(p.calls.is_empty());
    let other = ("read_file", json!({"type": "object"}));
    let p = parse_both(
        "{\"request\": \"file_exists\", \"filename\": \"a.txt\"}",
        &[other],
    );
    assert!(p.calls.is_empty());
}

#[test]
fn a_python_dict_string_may_hold_an_unbalanced_brace() {
    let p = parse_both(
        "{'request': 'note', 'value': 'first line\n{\nlast line'}\n{\"request\": \"next\", \"value\": \"ok\"}",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "note", "arguments": {"value": "first line\n{\nlast line"}},
            {"name": "next", "arguments": {"value": "ok"}}
        ])
    );
}

#[test]
fn a_string_that_lost_its_closing_quote_ends_at_its_line_break() {
    // The first call's value never closes before its line's end; the next call is intact.
    for input in [
        "{\"name\": \"note\", \"arguments\": {\"value\": \"oops\n}}\n{\"name\": \"next\", \"arguments\": {\"value\": \"ok\"}}",
        "{'request': 'note', 'value': 'oops\n} {\"request\": \"next\", \"value\": \"ok\"}",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(
            calls_of(&p),
            json!([
                {"name": "note", "arguments": {"value": "oops"}},
                {"name": "next", "arguments": {"value": "ok"}}
            ]),
            "{input}"
        );
    }
    // A string that spans lines and closes is read whole, braces and all.
    let p = parse_both(
        "{\"name\": \"write\", \"arguments\": {\"text\": \"fn f() {\n}\n\"}}",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write", "arguments": {"text": "fn f() {\n}\n"}}])
    );
    // At the end of the output an open string is a call cut off mid-value, not a lost
    // quote: no call is read from it.
    let p = parse_both(
        "{\"name\": \"write\", \"arguments\": {\"text\": \"fn f() {\n}}",
        &[],
    );
    assert!(p.calls.is_empty());
}

#[test]
fn bare_keys_and_bare_word_values_are_read_when_they_make_a_call() {
    let p = parse_both(
        "{\n  request: run_query,\n  query: SELECT * FROM t,\n  filters: {\"col\": x, \"op\": eq}\n}",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "run_query", "arguments": {
            "query": "SELECT * FROM t", "filters": {"col": "x", "op": "eq"}
        }}])
    );
    // Braces in prose stay text, and so does a call whose quoted keys meet a bare value.
    for input in [
        "Fill in {name: your name} and {city: where you live}.",
        "{\"name\": \"test\", \"arguments\": invalid}",
    ] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(input));
    }
}

#[test]
fn a_name_only_object_in_a_call_tag_must_name_a_tool() {
    let p = parse_both("<tool_call>\n{\"name\": \"now\"}\n</tool_call>", &[]);
    assert_eq!(calls_of(&p), json!([{"name": "now", "arguments": {}}]));
    // A shell command in the name field is no tool's name: no call.
    let p = parse_both(
        "<tool_call>\n{\"name\": \"wc -w words.txt\"}\n</tool_call>",
        &[],
    );
    assert!(p.calls.is_empty());
}

#[test]
fn an_open_bare_call_object_followed_by_prose_keeps_the_text() {
    // A wrapper the model left open, then a paragraph of prose: not a call cut off, so the
    // text after it is kept (the complete call object inside is read, as bare JSON is).
    let input = "Write it like this:\n{\n  \"tool_call\": {\n  \"name\": \"read_file\",\n  \"arguments\": {\"path\": \"a\"}\n}\n\nThat reads the file.";
    let p = parse_both(input, &[]);
    assert!(!p.truncated);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "a"}}])
    );
    let content = p.content.unwrap_or_default();
    assert!(content.starts_with("Write it like this:"), "{content}");
    assert!(content.ends_with("That reads the file."), "{content}");
    // At the end of the output the same object is a call cut off.
    let p = parse_both(
        "Reading.\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a",
        &[],
    );
    assert!(p.truncated);
    assert_eq!(p.content.as_deref().map(str::trim), Some("Reading."));
}

#[test]
fn a_label_after_a_lone_call_tag_is_no_glm_name() {
    let p = parse_both("<tool_call>\nFalse:\n</tool_call>", &[]);
    assert!(p.calls.is_empty(), "{p:?}");
    // A GLM name with a namespace colon inside is still one.
    let p = parse_both("<tool_call>mcp:get_time\n</tool_call>", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "mcp:get_time", "arguments": {}}])
    );
}
