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
