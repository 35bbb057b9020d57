//! Chat-template tokens a raw generation repeats, loses or garbles: the assistant's turn
//! header at the start, harmony messages whose `<|message|>` token was lost, Kimi call ids
//! with a label before them. Each case is parsed whole
//! and streamed one character at a time (`parse_both`).

use serde_json::json;

use crate::cases::{calls_of, parse_both};

#[test]
fn the_assistants_turn_header_at_the_start_is_not_content() {
    for text in [
        "<|im_start|>assistant\nHello there.<|im_end|>",
        "<|start_header_id|>assistant<|end_header_id|>\n\nHello there.<|eot_id|>",
        "<start_of_turn>model\nHello there.<end_of_turn>",
        // Llama 4 ends a message that expects a tool's result with `<|eom|>`.
        "Hello there.<|eom|>",
    ] {
        assert_eq!(
            parse_both(text, &[]).content.as_deref(),
            Some("Hello there."),
            "{text}"
        );
    }
    let p = parse_both(
        "<|im_start|>assistant\n<tool_call>\n{\"name\": \"ls\", \"arguments\": {}}\n</tool_call>",
        &[],
    );
    assert_eq!(
        (calls_of(&p), p.content),
        (json!([{"name": "ls", "arguments": {}}]), None)
    );
    // Only a header of its own line at the very start: a mention later is text.
    let text = "Write <|im_start|>assistant to open the turn.";
    assert_eq!(parse_both(text, &[]).content.as_deref(), Some(text));
}

#[test]
fn harmony_messages_that_lost_their_message_token_keep_their_words() {
    let final_msg = "<|start|>assistant<|channel|>final<|message|>Done.<|return|>";
    // Text before the first header: its end token is no content.
    let p = parse_both(&format!("Plan first.<|end|>{final_msg}"), &[]);
    assert_eq!(p.content.as_deref(), Some("Plan first.Done."));
    // A channel named without `<|message|>`: the words after the name are its body.
    let p = parse_both(
        &format!("<|channel|>analysis Need a tool.<|end|>{final_msg}"),
        &[],
    );
    assert_eq!(
        (p.reasoning.as_deref(), p.content.as_deref()),
        (Some("Need a tool."), Some("Done."))
    );
    let p = parse_both("<|channel|>commentary Hello<|end|>", &[]);
    assert_eq!(p.content.as_deref(), Some("Hello"));
    // A message with no channel at all.
    let p = parse_both("<|start|>assistant<|message|>Hi there.<|end|>", &[]);
    assert_eq!(p.content.as_deref(), Some("Hi there."));
    // A header still being written says nothing yet.
    assert_eq!(parse_both("<|channel|>analysis", &[]).content, None);
}

#[test]
fn a_kimi_call_with_a_malformed_id_is_reported_and_its_tokens_are_not_text() {
    let block = |id: &str| {
        format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>\
             {{\"command\": \"id\"}}<|tool_call_end|><|tool_calls_section_end|>"
        )
    };
    for id in ["label functions.execute:0", "shell:functions.execute:0"] {
        let p = parse_both(&block(id), &[]);
        assert_eq!(
            (calls_of(&p), p.content.as_deref()),
            (json!([]), None),
            "{id}"
        );
        assert_eq!(p.errors.len(), 1, "{id}: {:?}", p.errors);
    }
    let p = parse_both(&format!("Running it.{}", block("functions.execute:0")), &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "execute", "arguments": {"command": "id"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Running it."));
}

#[test]
fn cwm_raw_commands_name_their_tool_first() {
    let p = parse_both(
        "Looking.\n<tool: function>\nterminal grep -n \"fn main\" src/*.rs\n</tool>\n<tool: python print(1) </tool>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "terminal", "arguments": {"command": "grep -n \"fn main\" src/*.rs"}},
               {"name": "python", "arguments": {"command": "print(1)"}}])
    );
    assert_eq!(p.content.as_deref().map(str::trim), Some("Looking."));
    // Cut off after the opener: flagged; a mention in prose is text.
    let p = parse_both("<tool: function>\nterminal ls", &[]);
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    let text = "Write <tool: name> and a command.";
    assert_eq!(parse_both(text, &[]).content.as_deref(), Some(text));
}
