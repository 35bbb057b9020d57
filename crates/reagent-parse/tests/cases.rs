//! Hand-written cases for the tolerance rules of the issue that the corpus does not
//! cover, plus the renderings, as data-driven `check(input, expect)` tests.

use reagent_parse::{
    parse, render_human, render_json, Family, ParseOptions, ReasoningMode, ToolSchema,
};
use serde_json::{json, Value};

/// Parse with default options and compare the JSON rendering.
fn check(input: &str, expect: Value) {
    let got = render_json(&parse(input, &ParseOptions::default()));
    assert_eq!(got, expect, "input: {input:?}");
}

#[test]
fn tolerance_rules() {
    // A single trailing comma and Python literals inside a Hermes block.
    check(
        "<tool_call>{'name': 'f', 'arguments': {'a': True, 'b': None, 'c': [1, 2,],},}</tool_call>",
        json!({"content": null, "reasoning": null, "format": "hermes", "truncated": false,
               "calls": [{"name": "f", "arguments": {"a": true, "b": null, "c": [1, 2]}}]}),
    );
    // Fenced JSON call between prose.
    check(
        "Sure.\n```json\n{\"name\": \"ls\", \"arguments\": {\"path\": \"a}b\"}}\n```\nDone.",
        json!({"content": "Sure.\n\nDone.", "reasoning": null, "format": "hermes", "truncated": false,
               "calls": [{"name": "ls", "arguments": {"path": "a}b"}}]}),
    );
    // Thinking that runs straight into a call (no </think>).
    check(
        "<think>I should list files<tool_call>{\"name\": \"ls\", \"arguments\": {}}</tool_call>",
        json!({"content": null, "reasoning": "I should list files", "format": "hermes",
               "truncated": false, "calls": [{"name": "ls", "arguments": {}}]}),
    );
    // `arguments` as a JSON-encoded string is decoded once.
    check(
        "{\"tool_call\": {\"name\": \"f\", \"arguments\": \"{\\\"x\\\": \\\"{y}\\\"}\"}}",
        json!({"content": null, "reasoning": null, "format": "generic_json", "truncated": false,
               "calls": [{"name": "f", "arguments": {"x": "{y}"}}]}),
    );
    // Cut off mid-JSON: no call, truncated, nothing guessed.
    check(
        "Let me look. <tool_call>{\"name\": \"read\", \"arguments\": {\"path\": \"src/",
        json!({"content": "Let me look. ", "reasoning": null, "format": null, "truncated": true,
               "calls": [], "errors": ["tool call cut off before it was complete"]}),
    );
    // `{"tool_calls": [...]}` wrapper with two calls.
    check(
        "{\"tool_calls\": [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"n\": 1}}]}",
        json!({"content": null, "reasoning": null, "format": "generic_json", "truncated": false,
               "calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"n": 1}}]}),
    );
    // Plain prose with brackets and braces stays prose.
    check(
        "Use [links](x) and {braces}; f(x) = [a, b].",
        json!({"content": "Use [links](x) and {braces}; f(x) = [a, b].", "reasoning": null,
               "format": null, "truncated": false, "calls": []}),
    );
}

#[test]
fn unknown_tool_names_are_still_returned_for_marked_formats() {
    let opts = ParseOptions {
        tools: vec![ToolSchema {
            name: "read".into(),
            parameters: json!({}),
        }],
        ..ParseOptions::default()
    };
    let p = parse(
        "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>",
        &opts,
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "nope");
}

#[test]
fn schema_types_xml_values_and_coerces_json_ones() {
    let opts = ParseOptions {
        tools: vec![ToolSchema {
            name: "w".into(),
            parameters: json!({"type": "object", "properties": {
                "n": {"type": "integer"}, "s": {"type": "string"}, "o": {"type": "object"}}}),
        }],
        ..ParseOptions::default()
    };
    let xml = "<tool_call>\n<function=w>\n<parameter=n>\n7\n</parameter>\n<parameter=s>\n  7 \n</parameter>\n<parameter=o>\n{\"k\": 1}\n</parameter>\n</function>\n</tool_call>";
    let p = parse(xml, &opts);
    assert_eq!(
        p.calls[0].arguments,
        json!({"n": 7, "s": "  7 ", "o": {"k": 1}})
    );
    let js =
        "<tool_call>{\"name\": \"w\", \"arguments\": {\"n\": \"7\", \"s\": \"7\"}}</tool_call>";
    assert_eq!(
        parse(js, &opts).calls[0].arguments,
        json!({"n": 7, "s": "7"})
    );
}

#[test]
fn reasoning_modes() {
    let text = "<think>hmm</think>Answer";
    let p = parse(text, &ParseOptions::default());
    assert_eq!(
        (p.reasoning.as_deref(), p.content.as_deref()),
        (Some("hmm"), Some("Answer"))
    );
    let keep = ParseOptions {
        reasoning: ReasoningMode::Keep,
        ..ParseOptions::default()
    };
    let p = parse(text, &keep);
    assert_eq!((p.reasoning, p.content.as_deref()), (None, Some(text)));
    let forced = ParseOptions {
        prefill: "<think>".into(),
        ..ParseOptions::default()
    };
    let p = parse("still thinking", &forced);
    assert_eq!(
        (p.reasoning.as_deref(), p.content),
        (Some("still thinking"), None)
    );
}

#[test]
fn family_names_round_trip() {
    for f in Family::ALL {
        assert_eq!(f.to_string().parse::<Family>(), Ok(*f));
    }
    assert!("nonsense".parse::<Family>().is_err());
}

#[test]
fn human_rendering_lists_everything() {
    let p = parse(
        "<think>plan</think>Hi<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"c1\"}</tool_call>",
        &ParseOptions::default(),
    );
    let text = render_human(&p);
    assert_eq!(
        text,
        "reasoning:\n  plan\ncontent:\n  Hi\ncall 1: f (id c1)\n  {\n    \"a\": 1\n  }\nformat: hermes\n"
    );
}

#[test]
fn fuzz_regressions_do_not_panic() {
    // Text (with a multi-byte char) between MiniMax M3 nested elements.
    let input = "<tool_call>\n<invoke name=\"f\"><tags><item>a</item>Ė<item>b</item></tags></invoke></tool_call>";
    let p = parse(input, &ParseOptions::default());
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].name, "f");
}

#[test]
fn stop_markers_glued_to_the_text_are_not_content() {
    let p = |t: &str| parse(t, &ParseOptions::default()).content;
    assert_eq!(p("Done.<|im_end|>").as_deref(), Some("Done."));
    assert_eq!(p("Done.<|endoftext|>").as_deref(), Some("Done."));
    assert_eq!(p("Done.</s>").as_deref(), Some("Done."));
    assert_eq!(p("Done.<seed:eos>\n").as_deref(), Some("Done."));
    // Only at the end, and not when it closes an HTML strike-through.
    assert_eq!(p("a</s>b").as_deref(), Some("a</s>b"));
    assert_eq!(
        p("It was <s>wrong</s>").as_deref(),
        Some("It was <s>wrong</s>")
    );
}
