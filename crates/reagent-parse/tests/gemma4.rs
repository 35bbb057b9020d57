//! Gemma 4's thinking channels, the markers it writes after a call, and the malformed
//! values ollama repairs (ollama issue 15315), each parsed whole and streamed.

use reagent_parse::{parse, ParseOptions, Parsed, StreamParser};
use serde_json::json;

use crate::cases::{calls_of, parse_both};

/// Parse with the prompt's `prefill` (whole, and streamed one character at a time).
fn parse_prefilled(input: &str, prefill: &str) -> Parsed {
    let opts = ParseOptions {
        prefill: prefill.to_string(),
        ..ParseOptions::default()
    };
    let whole = parse(input, &opts);
    let mut stream = StreamParser::new(opts);
    for ch in input.chars() {
        stream.push(ch.encode_utf8(&mut [0; 4]));
    }
    assert_eq!(stream.finish(), whole, "stream differs for {input:?}");
    whole
}

#[test]
fn every_channel_block_is_reasoning_with_or_without_its_name() {
    let weather = json!([{"name": "get_weather", "arguments": {"city": "Oslo"}}]);
    let call = "<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>}<tool_call|>";
    for (input, reasoning, content) in [
        (
            "<|channel>thought\nCheck it.<channel|>Sunny.",
            "Check it.",
            Some("Sunny."),
        ),
        (
            "<|channel>Check it.<channel|>Sunny.",
            "Check it.",
            Some("Sunny."),
        ),
        (
            "<|channel>one<channel|><|channel>two<channel|>Sunny.",
            "onetwo",
            Some("Sunny."),
        ),
        (
            "<|channel>thought\nonly thinking<channel|>",
            "only thinking",
            None,
        ),
        // `thought` opening a sentence is the reasoning's word, not the channel's name.
        (
            "<|channel>thought it over<channel|>Sunny.",
            "thought it over",
            Some("Sunny."),
        ),
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.reasoning.as_deref(), Some(reasoning), "{input}");
        assert_eq!(p.content.as_deref(), content, "{input}");
        assert!(p.calls.is_empty(), "{input}");
    }
    // A call after the channel, or with the channel left open, is read; the open channel
    // ends at the call.
    for input in [
        format!("<|channel>Need the weather.<channel|>{call}"),
        format!("<|channel>thought\nNeed the weather.{call}"),
    ] {
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), weather, "{input}");
        assert_eq!(p.reasoning.as_deref(), Some("Need the weather."), "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // A call inside a closed channel is thought about, not made.
    let p = parse_both(&format!("<|channel>maybe {call}<channel|>No."), &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some("No."));
}

#[test]
fn the_text_after_a_closed_thinking_block_streams_live() {
    for block in [
        "<|channel>thought\nPlan.<channel|>",
        "<|channel>Plan.<channel|>",
        "<ifm|think>Plan.</ifm|think>",
        "<ifm|think_faster>Plan.</ifm|think_faster>",
    ] {
        let answer = "The answer is 42, as computed.";
        let mut stream = StreamParser::new(ParseOptions::default());
        let mut released = String::new();
        for ch in block.chars().chain(answer.chars()) {
            released.push_str(&stream.push(ch.encode_utf8(&mut [0; 4])));
        }
        // Released before `finish`, all but what may still be a marker's start.
        assert!(
            released.starts_with("The answer is 42"),
            "{block}: released {released:?}"
        );
        let p = stream.finish();
        assert_eq!(p.reasoning.as_deref(), Some("Plan."), "{block}");
        assert_eq!(p.content.as_deref(), Some(answer), "{block}");
    }
}

#[test]
fn a_prefill_ending_in_the_channel_opener_is_thinking_forced_open() {
    let p = parse_prefilled("Look at the files.<channel|>a.txt and b.txt", "<|channel>");
    assert_eq!(p.reasoning.as_deref(), Some("Look at the files."));
    assert_eq!(p.content.as_deref(), Some("a.txt and b.txt"));
    // The model names the channel the prompt opened.
    let p = parse_prefilled("thought\nLook.<channel|>Done.", "<|channel>");
    assert_eq!(p.reasoning.as_deref(), Some("Look."));
    assert_eq!(p.content.as_deref(), Some("Done."));
    // Still open at a call: the thinking ends there.
    let p = parse_prefilled(
        "Read it.<|tool_call>call:read{path:<|\"|>a.txt<|\"|>}<tool_call|>",
        "<|channel>",
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read", "arguments": {"path": "a.txt"}}])
    );
    assert_eq!(p.reasoning.as_deref(), Some("Read it."));
}

#[test]
fn markers_after_a_call_are_dropped_and_the_text_after_them_kept() {
    let call = "<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>}<tool_call|>";
    let weather = json!([{"name": "get_weather", "arguments": {"city": "Oslo"}}]);
    for (after, content) in [
        ("<tool_call|>", None),
        ("<tool_call|>Done.", Some("Done.")),
        ("<tool_call|><tool_call|>", None),
        ("<|tool_response>", None),
        ("<|tool_response>Done.", Some("Done.")),
        ("<tool_call|><|tool_response>Done.", Some("Done.")),
    ] {
        let input = format!("{call}{after}");
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), weather, "{input}");
        assert_eq!(p.content.as_deref(), content, "{input}");
    }
    // Two calls with a repeated closer between them: both calls, nothing else.
    let input = format!("{call}<tool_call|>{call}");
    let p = parse_both(&input, &[]);
    assert_eq!(p.calls.len(), 2, "{input}");
    assert_eq!(p.content, None, "{input}");
    // With no call, the markers are the model's text.
    for input in [
        "Write <tool_call|> to close.",
        "The <|tool_response> token.",
    ] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(input));
    }
}

/// `write` (two string properties) and `tally` (a string and an integer).
fn typed_tools() -> [(&'static str, serde_json::Value); 2] {
    [
        (
            "write",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"}}}),
        ),
        (
            "tally",
            json!({"type": "object", "properties": {
                "label": {"type": "string"}, "count": {"type": "integer"}}}),
        ),
    ]
}

#[test]
fn malformed_string_values_are_repaired_where_the_schema_says_string() {
    let tools = typed_tools();
    for (call, args) in [
        // No delimiter: the value runs to the next declared key, or to the final `}`.
        (
            "call:write{content:Hello, world: hi,path:<|\"|>a.md<|\"|>}",
            json!({"content": "Hello, world: hi", "path": "a.md"}),
        ),
        (
            "call:write{path:<|\"|>a.md<|\"|>,content:\n# Title\n\nSee `x`, it's {ok}.}",
            json!({"path": "a.md", "content": "\n# Title\n\nSee `x`, it's {ok}."}),
        ),
        // No delimiter and no `}`: the value runs to the closer.
        (
            "call:write{path:a.md,content:Line one\nline two",
            json!({"path": "a.md", "content": "Line one\nline two"}),
        ),
        // A delimited string left open on the last value closes at the final `}`.
        (
            "call:write{path:<|\"|>a.md<|\"|>,content:<|\"|>hi}",
            json!({"path": "a.md", "content": "hi"}),
        ),
        // A single-quoted value with a stray delimiter after it.
        (
            "call:write{path:'a.md'<|\"|>,content:<|\"|>hi<|\"|>}",
            json!({"path": "a.md", "content": "hi"}),
        ),
        // An integer property stays typed beside a repaired string.
        (
            "call:tally{label:apples and pears,count:3}",
            json!({"label": "apples and pears", "count": 3}),
        ),
    ] {
        let input = format!("<|tool_call>{call}<tool_call|>Done.");
        let p = parse_both(&input, &tools);
        let name = call[5..].split('{').next().unwrap_or_default();
        assert_eq!(
            calls_of(&p),
            json!([{"name": name, "arguments": args}]),
            "{input}"
        );
        assert_eq!(p.content.as_deref(), Some("Done."), "{input}");
        assert!(!p.truncated, "{input}");
    }
    // FunctionGemma, the sibling dialect with `<escape>` delimiters, is repaired alike.
    let input = "<start_function_call>call:write{content:hi there,path:<escape>a.md<escape>}<end_function_call>";
    let p = parse_both(input, &tools);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write", "arguments": {"content": "hi there", "path": "a.md"}}])
    );
    // The repaired call and a good one in the same block: both.
    let input = "<|tool_call>call:write{path:a.md,content:<|\"|>x<|\"|>}call:tally{label:<|\"|>n<|\"|>,count:2}<tool_call|>";
    let p = parse_both(input, &tools);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write", "arguments": {"path": "a.md", "content": "x"}},
               {"name": "tally", "arguments": {"label": "n", "count": 2}}])
    );
}

#[test]
fn no_repair_against_the_schema_or_of_a_cut_call() {
    let tools = typed_tools();
    for (input, with) in [
        // The property is an integer: its raw text is not made a string.
        (
            "<|tool_call>call:tally{count:three}<tool_call|>",
            &tools[..],
        ),
        // An open delimiter before another property: ambiguous, not guessed.
        (
            "<|tool_call>call:write{content:<|\"|>a,path:<|\"|>b<|\"|>}<tool_call|>",
            &tools[..],
        ),
    ] {
        let p = parse_both(input, with);
        assert!(p.calls.is_empty(), "{input}: {p:?}");
        // Nothing is lost: the unread block stays the model's text.
        assert_eq!(p.content.as_deref(), Some(input));
    }
    // With no schema, an undelimited value is its bare words, as vLLM's and mlx-vlm's
    // Gemma 4 parsers read it; numbers stay numbers.
    let p = parse_both(
        "<|tool_call>call:write{content:hello world,n:3}<tool_call|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write", "arguments": {"content": "hello world", "n": 3}}])
    );
    // An opened block cut off mid-value is truncated, not completed.
    let p = parse_both("Sure.<|tool_call>call:write{path:a.md,content:Line", &tools);
    assert!(p.calls.is_empty(), "{p:?}");
    assert!(p.truncated);
    assert_eq!(p.content.as_deref(), Some("Sure."));
}

#[test]
fn gemma_calls_with_a_lost_or_fumbled_opener() {
    let expect = json!([{"name": "bash", "arguments": {"command": "make -j8"}}]);
    for input in [
        // After a lone channel closer (the prompt opened the channel).
        "<channel|>call:bash{command:<|\"|>make -j8<|\"|>}",
        // A colon slipped in before the call.
        "<|tool_call>:call:bash{command:<|\"|>make -j8<|\"|>}<tool_call|>",
        // On its own line after plain prose.
        "some prose\ncall:bash{command:<|\"|>make -j8<|\"|>}",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // A prose line that merely starts with `call:` stays text, and is not cut off.
    let text = "Notes\ncall:me{maybe later";
    let p = parse_both(text, &[]);
    assert!(p.calls.is_empty());
    assert!(!p.truncated);
    assert_eq!(p.content.as_deref(), Some(text));
}
