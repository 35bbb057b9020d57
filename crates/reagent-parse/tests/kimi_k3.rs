//! Kimi K3's XTML channels (`<|open|>tools<|sep|>…`): calls, typed arguments, the response
//! and think channels, cut-off sections and markers, and prose that only quotes a marker.
//! Each case is parsed whole and streamed one character at a time (`parse_both`); the
//! response channel and the text after a tools section stream live.

use reagent_parse::{parse, Family, ParseOptions, ReasoningMode, StreamParser};
use serde_json::{json, Value};

use crate::cases::{calls_of, parse_both};

/// An argument element.
fn argument(key: &str, ty: &str, value: &str) -> String {
    format!("<|open|>argument key=\"{key}\" type=\"{ty}\"<|sep|>{value}<|close|>argument<|sep|>")
}

/// A call element with its arguments.
fn call(tool: &str, index: usize, arguments: &[String]) -> String {
    format!(
        "<|open|>call tool=\"{tool}\" index=\"{index}\"<|sep|>{}<|close|>call<|sep|>",
        arguments.concat()
    )
}

/// A tools section holding `calls`.
fn section(calls: &[String]) -> String {
    format!(
        "<|open|>tools<|sep|>{}<|close|>tools<|sep|>",
        calls.concat()
    )
}

fn read_file_tool() -> Vec<(&'static str, Value)> {
    vec![(
        "read_file",
        json!({"type": "object", "properties": {"path": {"type": "string"},
               "limit": {"type": "integer"}}}),
    )]
}

#[test]
fn two_calls_in_one_section_after_the_response() {
    let text = format!(
        "<|open|>response<|sep|>Reading both.<|close|>response<|sep|>\n{}<|close|>message<|sep|>",
        section(&[
            call("read_file", 1, &[argument("path", "string", "a.txt")]),
            "\n".to_string(),
            call("read_file", 2, &[argument("path", "string", "b.txt")]),
        ])
    );
    let p = parse_both(&text, &read_file_tool());
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "a.txt"}},
               {"name": "read_file", "arguments": {"path": "b.txt"}}])
    );
    assert_eq!(p.content.as_deref().map(str::trim), Some("Reading both."));
    assert_eq!(p.format, Some(Family::KimiK3));
    assert!(!p.truncated && p.errors.is_empty(), "{p:?}");
}

#[test]
fn arguments_are_typed_by_their_type_attribute() {
    let text = section(&[call(
        "configure",
        1,
        &[
            argument("n", "integer", "42"),
            argument("ratio", "number", "0.5"),
            argument("on", "boolean", "false"),
            argument("tags", "array", "[\"a\", \"b\"]"),
            argument("opts", "object", "{\"deep\": {\"x\": null}}"),
            argument("none", "null", "null"),
            // Not JSON: the text stays.
            argument("bad", "object", "{not json"),
            // A string is raw text, even when it reads as JSON or holds entities.
            argument("s", "string", " 42 &amp; \"q\" "),
        ],
    )]);
    let p = parse_both(&text, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "configure", "arguments": {
            "n": 42, "ratio": 0.5, "on": false, "tags": ["a", "b"],
            "opts": {"deep": {"x": null}}, "none": null, "bad": "{not json",
            "s": " 42 &amp; \"q\" "}}])
    );
    // The tool's schema still types a value written as a string.
    let text = section(&[call(
        "read_file",
        1,
        &[
            argument("path", "string", "notes.txt"),
            argument("limit", "string", "20"),
        ],
    )]);
    let p = parse_both(&text, &read_file_tool());
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "notes.txt", "limit": 20}}])
    );
}

#[test]
fn attribute_values_are_xml_unescaped() {
    let text = section(&[
        "<|open|>call tool=\"a&amp;b\" index=\"1\"<|sep|>".to_string(),
        "<|open|>argument key=\"say &quot;x&quot;\"<|sep|>v<|close|>argument<|sep|>".to_string(),
        "<|close|>call<|sep|>".to_string(),
    ]);
    let p = parse_both(&text, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "a&b", "arguments": {"say \"x\"": "v"}}])
    );
}

#[test]
fn a_cut_off_section_keeps_its_complete_calls() {
    let first = call("read_file", 1, &[argument("path", "string", "a.txt")]);
    let kept = json!([{"name": "read_file", "arguments": {"path": "a.txt"}}]);
    // The section's closer is missing: the complete call stands, nothing was cut.
    let p = parse_both(&format!("<|open|>tools<|sep|>{first}"), &read_file_tool());
    assert_eq!(calls_of(&p), kept);
    assert!(!p.truncated);
    // The second call is cut off inside its argument: it is not guessed.
    for cut in [
        "<|open|>call tool=\"read_file\" index=\"2\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>b.t",
        "<|open|>call tool=\"read_fi",
        "<|open|>call tool=\"read_file\" index=\"2\"<|sep|>",
        "<|open|>cal",
    ] {
        let text = format!("<|open|>tools<|sep|>{first}{cut}");
        let p = parse_both(&text, &read_file_tool());
        assert_eq!(calls_of(&p), kept, "{cut}");
        assert_eq!(p.content, None, "{cut}");
        assert_eq!(p.truncated, cut != "<|open|>cal", "{cut}");
    }
    // Cut before its first call: no call, flagged.
    let p = parse_both(
        "Checking.<|open|>tools<|sep|><|open|>call tool=\"x\"<|sep|>",
        &[],
    );
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    assert_eq!(p.content.as_deref(), Some("Checking."));
}

#[test]
fn response_and_think_channels() {
    let text = format!(
        "<|open|>think<|sep|>The user wants a.txt.<|close|>think<|sep|>\
         <|open|>response<|sep|>Opening it.<|close|>response<|sep|>{}",
        section(&[call("read_file", 1, &[argument("path", "string", "a.txt")])])
    );
    let p = parse_both(&text, &read_file_tool());
    assert_eq!(p.reasoning.as_deref(), Some("The user wants a.txt."));
    assert_eq!(p.content.as_deref(), Some("Opening it."));
    assert_eq!(calls_of(&p).as_array().map(Vec::len), Some(1));
    // Thinking opened by the prompt: its closer alone ends it.
    let p = parse_both(
        "still thinking<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|><|close|>message<|sep|>",
        &[],
    );
    assert_eq!(
        (p.reasoning.as_deref(), p.content.as_deref()),
        (Some("still thinking"), Some("Hi."))
    );
    // A think channel left open ends where the tools section opens.
    let p = parse_both(
        &format!("<|open|>think<|sep|>plan{}", section(&[call("ls", 1, &[])])),
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("plan"));
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
    // A response left open ends where the tools section opens; one quoting a marker keeps
    // the quote.
    let p = parse_both(
        &format!(
            "<|open|>response<|sep|>On it.{}",
            section(&[call("ls", 1, &[])])
        ),
        &[],
    );
    assert_eq!(p.content.as_deref(), Some("On it."));
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
    let p = parse_both(
        "<|open|>response<|sep|>Type <|open|> then a name.<|close|>response<|sep|>",
        &[],
    );
    assert_eq!(p.content.as_deref(), Some("Type <|open|> then a name."));
    // Kept reasoning stays in the content, markers and all.
    let keep = ParseOptions {
        reasoning: ReasoningMode::Keep,
        ..ParseOptions::default()
    };
    let p = parse("<|open|>think<|sep|>hmm<|close|>think<|sep|>Done", &keep);
    assert_eq!(
        p.content.as_deref(),
        Some("<|open|>think<|sep|>hmm<|close|>think<|sep|>Done")
    );
}

#[test]
fn a_marker_cut_off_at_the_end_is_dropped() {
    for (text, content) in [
        ("all done<|open|>", "all done"),
        ("done<|open|>tool", "done"),
        ("done<|open|>response", "done"),
        (
            "<|open|>response<|sep|>Hi<|close|>response<|sep|><|close|>mess",
            "Hi",
        ),
        ("<|open|>response<|sep|>Hi<|close|>", "Hi"),
    ] {
        let p = parse_both(text, &[]);
        assert_eq!(p.content.as_deref(), Some(content), "{text}");
        assert!(p.calls.is_empty() && !p.truncated, "{text}");
    }
}

#[test]
fn a_literal_open_marker_in_prose_stays_text() {
    for text in [
        "Kimi K3 opens a channel with <|open|> and a name.",
        "The tokens <|open|>, <|sep|> and <|close|> frame each channel.",
        "Write <|open|>tools without the separator.",
        "Other tokens stay too: <|im_start|> at the end <|",
    ] {
        let p = parse_both(text, &[]);
        assert_eq!(p.content.as_deref(), Some(text));
        assert!(
            p.calls.is_empty() && !p.truncated && p.format.is_none(),
            "{text}"
        );
    }
}

#[test]
fn the_family_hint_reads_the_same() {
    let text = format!(
        "<|open|>response<|sep|>Run.<|close|>response<|sep|>{}",
        section(&[call("python", 1, &[argument("code", "string", "print(1)")])])
    );
    let auto = parse(&text, &ParseOptions::default());
    let hinted = parse(&text, &ParseOptions::with_format(Family::KimiK3));
    assert_eq!(auto, hinted);
    assert_eq!(
        calls_of(&hinted),
        json!([{"name": "python", "arguments": {"code": "print(1)"}}])
    );
    assert_eq!("kimi_k3".parse::<Family>(), Ok(Family::KimiK3));
}

#[test]
fn a_broken_call_beside_good_ones_is_skipped_and_reported() {
    let text = section(&[
        call("ls", 1, &[]),
        "<|open|>call index=\"2\"<|sep|><|close|>call<|sep|>".to_string(),
        call("cat", 3, &[argument("path", "string", "x")]),
    ]);
    let p = parse_both(&text, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "ls", "arguments": {}}, {"name": "cat", "arguments": {"path": "x"}}])
    );
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    assert!(!p.truncated);
}

#[test]
fn every_cut_of_an_output_keeps_only_complete_calls() {
    let text = format!(
        "<|open|>think<|sep|>plan<|close|>think<|sep|><|open|>response<|sep|>Two reads.<|close|>response<|sep|>{}<|close|>message<|sep|>",
        section(&[
            call("read_file", 1, &[argument("path", "string", "a.txt")]),
            call("read_file", 2, &[argument("path", "string", "b.txt"), argument("limit", "integer", "5")]),
        ])
    );
    let whole = parse_both(&text, &read_file_tool());
    let all = calls_of(&whole);
    let all = all.as_array().expect("a list of calls");
    assert_eq!(all.len(), 2);
    for cut in (0..=text.len()).filter(|c| text.is_char_boundary(*c)) {
        let p = parse(&text[..cut], &ParseOptions::default());
        let got = calls_of(&p);
        let got = got.as_array().expect("a list of calls");
        assert!(
            got.len() <= all.len() && got[..] == all[..got.len()],
            "cut at {cut}: {got:?}"
        );
        // No marker of the format is ever content or reasoning.
        for text in [p.content, p.reasoning].into_iter().flatten() {
            assert!(
                !text.contains("<|open|>") && !text.contains("<|close|>"),
                "cut at {cut}: {text:?}"
            );
        }
    }
}

#[test]
fn the_response_streams_as_it_comes() {
    let mut sp = StreamParser::new(ParseOptions::default());
    let tools = section(&[call("ls", 1, &[])]);
    for (chunk, released) in [
        ("<|open|>think<|sep|>", ""),
        ("plan<|close|>think<|sep|>", ""),
        ("<|open|>response<|sep|>", ""),
        ("Opening ", "Opening "),
        ("it.", "it."),
        ("<|close|>response<|sep|>", ""),
        (tools.as_str(), ""),
        ("Done.", "Done."),
    ] {
        assert_eq!(sp.push(chunk), released, "pushing {chunk:?}");
    }
    let p = sp.finish();
    assert_eq!(p.content.as_deref(), Some("Opening it.Done."));
    assert_eq!(p.reasoning.as_deref(), Some("plan"));
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
}
