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

/// Parse with tools offered (or none), and check that a stream fed one character at a
/// time finishes with the same result.
pub(crate) fn parse_both(input: &str, tools: &[(&str, Value)]) -> reagent_parse::Parsed {
    let opts = ParseOptions {
        tools: tools
            .iter()
            .map(|(name, parameters)| ToolSchema {
                name: (*name).to_string(),
                parameters: parameters.clone(),
            })
            .collect(),
        ..ParseOptions::default()
    };
    let whole = parse(input, &opts);
    let mut stream = reagent_parse::StreamParser::new(opts);
    for ch in input.chars() {
        stream.push(ch.encode_utf8(&mut [0; 4]));
    }
    assert_eq!(stream.finish(), whole, "stream differs for {input:?}");
    whole
}

pub(crate) fn calls_of(p: &reagent_parse::Parsed) -> Value {
    p.calls
        .iter()
        .map(|c| json!({"name": c.name, "arguments": c.arguments}))
        .collect()
}

#[test]
fn gemma_calls_follow_each_other_and_survive_a_lost_opener() {
    let two = json!([{"name": "glob", "arguments": {"pattern": "a*.md"}},
                     {"name": "tag", "arguments": {"n": 2}}]);
    for input in [
        "<|tool_call>call:glob{pattern:<|\"|>a*.md<|\"|>}call:tag{n:2}<tool_call|>",
        "call:glob{pattern:<|\"|>a*.md<|\"|>}call:tag{n:2}",
        "  call:glob{pattern:<|\"|>a*.md<|\"|>}\ncall:tag{n:2}<tool_call|>",
        "<start_function_call>call:glob{pattern:<escape>a*.md<escape>} call:tag{n:2}<end_function_call>",
        "call:glob{pattern:<escape>a*.md<escape>}call:tag{n:2}",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), two, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // A second call cut off keeps the first, flagged; the text after a call stays.
    let p = parse_both("call:glob{pattern:<|\"|>x<|\"|>}call:tag{n:", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "glob", "arguments": {"pattern": "x"}}])
    );
    assert!(p.truncated);
    let p = parse_both("call:tag{n:2} Done.", &[]);
    assert_eq!(p.content.as_deref(), Some(" Done."));
    // Not at the very start, or not a call shape: prose.
    for input in [
        "I will call:tag{n:2}",
        "call: me maybe {later}",
        "call:tag is a word",
    ] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}: {p:?}");
        assert_eq!(p.content.as_deref(), Some(input));
    }
}

#[test]
fn minimax_invokes_at_the_start_need_no_wrapper() {
    let input = "<invoke name=\"search\">\n<parameter name=\"q\">rust</parameter>\n</invoke>\n<invoke name=\"read\">\n<parameter name=\"path\">a.txt</parameter>\n</invoke>";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search", "arguments": {"q": "rust"}},
               {"name": "read", "arguments": {"path": "a.txt"}}])
    );
    // Inside prose, markup shown is text.
    let prose = "Write <invoke name=\"x\"></invoke> to call x.";
    let p = parse_both(prose, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some(prose));
}

#[test]
fn glm_pairs_read_a_vendor_prefix_like_longcat() {
    let tools = [(
        "multiply",
        json!({"type": "object", "properties": {"a": {"type": "number"}}}),
    )];
    let expect = json!([{"name": "multiply", "arguments": {"a": 12}}]);
    for input in [
        "multiply<longcat_arg_key>a</longcat_arg_key>\n<longcat_arg_value>12</longcat_arg_value>",
        "<longcat_tool_call>multiply\n<longcat_arg_key>a</longcat_arg_key><longcat_arg_value>12</longcat_arg_value></longcat_tool_call>",
        "<tool_call>multiply<arg_key>a</arg_key><arg_value>12</arg_value></tool_call>",
    ] {
        let p = parse_both(input, &tools);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // LongCat's JSON form is still read.
    let p = parse_both(
        "<longcat_tool_call>{\"name\": \"multiply\", \"arguments\": {\"a\": 12}}</longcat_tool_call>",
        &tools,
    );
    assert_eq!(calls_of(&p), expect);
}

#[test]
fn deepseek_section_opened_again_before_a_call_keeps_every_call() {
    let (calls, call, end, sep) = (
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁sep｜>",
    );
    let expect = json!([{"name": "get_weather", "arguments": {"location": "Paris"}},
                        {"name": "search_web", "arguments": {"query": "AI"}}]);
    let v3 = format!(
        "{calls}{call}function{sep}get_weather\n```json\n{{\"location\": \"Paris\"}}\n```{end}\
         {calls}{call}function{sep}search_web\n```json\n{{\"query\": \"AI\"}}\n```{end}<｜tool▁calls▁end｜>"
    );
    let v31 = format!(
        "{calls}{call}get_weather{sep}{{\"location\": \"Paris\"}}{end}\
         {calls}{call}search_web{sep}{{\"query\": \"AI\"}}{end}<｜tool▁calls▁end｜>"
    );
    for input in [v3, v31] {
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
}

#[test]
fn an_invoke_whose_body_is_a_json_object_takes_it_as_arguments() {
    let expect = json!([{"name": "search_web", "arguments": {"query": "AI", "n": 2}}]);
    for input in [
        "<｜DSML｜function_calls> <｜DSML｜invoke name=\"search_web\"> { \"query\": \"AI\", \"n\": 2 } </｜DSML｜invoke> </｜DSML｜function_calls>",
        "<｜DSML｜tool_calls><｜DSML｜invoke name=\"search_web\">\n{\"query\": \"AI\", \"n\": 2}\n</｜DSML｜invoke></｜DSML｜tool_calls>",
        "<minimax:tool_call><invoke name=\"search_web\">{\"query\": \"AI\", \"n\": 2}</invoke></minimax:tool_call>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // A body that is not a JSON object still gives no arguments.
    let p = parse_both(
        "<minimax:tool_call><invoke name=\"now\">{not json}</invoke></minimax:tool_call>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "now", "arguments": {}}]));
}

#[test]
fn a_glm_closer_inside_a_value_is_data() {
    let p = parse_both(
        "<tool_call>search_web\n<arg_key>query</arg_key>\n<arg_value>literal </tool_call> marker</arg_value>\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search_web", "arguments": {"query": "literal </tool_call> marker"}}])
    );
    assert_eq!(p.content, None);
    // A value left open before the closer, with the next call after it, ends at the closer:
    // the next call's </arg_value> does not pull the closer into the first value.
    let p = parse_both(
        "<tool_call>a<arg_key>k</arg_key><arg_value>x</tool_call><tool_call>b<arg_key>k</arg_key><arg_value>y</arg_value></tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "a", "arguments": {"k": "x"}}, {"name": "b", "arguments": {"k": "y"}}])
    );
}

#[test]
fn a_glm_name_alone_at_the_end_of_the_output_is_cut_off() {
    for input in ["<tool_call>get_wea", "Checking.<tool_call>get_weather\n"] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}: {p:?}");
        assert!(p.truncated, "{input}");
    }
    // With its closer it is a call with no arguments; a complete pair without the closer
    // is still read.
    let p = parse_both("<tool_call>get_time</tool_call>", &[]);
    assert_eq!(calls_of(&p), json!([{"name": "get_time", "arguments": {}}]));
    let p = parse_both(
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    );
}

#[test]
fn a_type_name_no_dialect_knows_reads_like_no_type() {
    let tool = |ty: &str| {
        (
            "f",
            json!({"type": "object", "properties": {"v": {"type": ty}}}),
        )
    };
    let input = "<tool_call>\n<function=f>\n<parameter=v>{'a': 3, 'b': [1, 2]}</parameter>\n</function>\n</tool_call>";
    let p = parse_both(input, &[tool("other_type")]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"v": {"a": 3, "b": [1, 2]}}}])
    );
    // Names servers give a string keep the text.
    for ty in ["string", "str", "text", "varchar"] {
        let p = parse_both(input, &[tool(ty)]);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "f", "arguments": {"v": "{'a': 3, 'b': [1, 2]}"}}]),
            "{ty}"
        );
    }
}

#[test]
fn a_deepseek_call_at_the_start_with_its_begin_tokens_lost_is_read() {
    let sep = "<｜tool▁sep｜>";
    let expect = json!([{"name": "get_weather", "arguments": {"location": "Paris"}}]);
    for input in [
        format!("function{sep}get_weather\n```json\n{{\"location\":\"Paris\"}}\n```"),
        format!("\nfunction{sep}  get_weather  \n```json\n{{\"location\": \"Paris\"}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        "function<|tool▁sep|>get_weather\n```json\n{\"location\":\"Paris\"}\n```".to_string(),
    ] {
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // A name that runs into its fence or object is no call, at the start or in a block.
    for input in [
        format!("function{sep}get_weather```json\n{{\"location\":\"Paris\"}}"),
        format!("function{sep}get_weather{{\"location\":\"Paris\"}}```"),
        format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function{sep}get_weather```json\n{{\"location\":\"Paris\"}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    ] {
        let p = parse_both(&input, &[]);
        assert!(p.calls.is_empty(), "{input}: {p:?}");
        assert!(!p.errors.is_empty(), "{input}");
    }
    // Only at the very start, and only before the separator token: prose stays prose.
    for input in [
        format!("I wrote function{sep}get_weather\n```json\n{{}}\n```"),
        "functions are values.".to_string(),
        "function f() { return 1; }".to_string(),
    ] {
        let p = parse_both(&input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(input.as_str()));
    }
    let mut stream = reagent_parse::StreamParser::new(ParseOptions::default());
    let mut released = String::new();
    for ch in "functions are values.".chars() {
        released.push_str(&stream.push(ch.encode_utf8(&mut [0; 4])));
    }
    assert_eq!(released, "functions are values.");
}

#[test]
fn a_deepseek_tool_output_block_the_model_wrote_is_not_content() {
    let block = "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{\"temperature\": 22}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>";
    let p = parse_both(block, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content, None);
    let p = parse_both(&format!("Checking.{block} It is warm."), &[]);
    assert_eq!(p.content.as_deref(), Some("Checking. It is warm."));
}

#[test]
fn a_glm_name_followed_by_a_json_object_takes_it_as_arguments() {
    let expect =
        json!([{"name": "get_weather", "arguments": {"location": "San Francisco", "days": 3}}]);
    for input in [
        "<tool_call>get_weather\n{\"location\":\"San Francisco\",\"days\":3}</tool_call>",
        "Checking.\n<tool_call>get_weather\n{\"location\": \"San Francisco\", \"days\": 3}\n</tool_call>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // Pairs after the name are read as pairs; a body that is not an object gives none.
    let p = parse_both(
        "<tool_call>f\n{x}\n<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"k": "v"}}])
    );
    let p = parse_both("<tool_call>f\n{not json}</tool_call>", &[]);
    assert_eq!(calls_of(&p), json!([{"name": "f", "arguments": {}}]));
}

#[test]
fn glm_pairs_under_an_unknown_tag_are_a_call() {
    let p = parse_both(
        "I'll read it.\n<user>read\n<arg_key>path</arg_key>\n<arg_value>go.mod</arg_value>\n</user>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read", "arguments": {"path": "go.mod"}}])
    );
    assert_eq!(p.content.as_deref(), Some("I'll read it.\n"));
    // A tag around words, or around a name with no pairs, stays text.
    for input in ["<user>hello</user>", "<b>note\nsee below</b>"] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(input));
    }
}

#[test]
fn an_end_of_turn_token_glued_to_the_text_is_not_content() {
    for (input, content) in [
        ("<|START_TEXT|>answer<|END_OF_TURN_TOKEN|>", "answer"),
        ("plain answer<|END_OF_TURN_TOKEN|>", "plain answer"),
        (" to=user<|message|>Hello<|eot|>", "Hello"),
        (
            " to=user<|message|>Running:\n<b>bold</b><|eot|>",
            "Running:\n<b>bold</b>",
        ),
    ] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(content), "{input}");
    }
    // A Glimmer message ends at `<|eot|>`: what follows is not part of it.
    let p = parse_both(
        " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">SF</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "SF"}}])
    );
    assert_eq!(p.content, None);
}

#[test]
fn glimmer_messages_to_self_are_reasoning_and_a_fumbled_header_keeps_its_call() {
    let p = parse_both(
        " to=self<|message|>Check the facts.<|eom|><|start|>assistant to=user<|message|>Answer<|eot|>",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("Check the facts."));
    assert_eq!(p.content.as_deref(), Some("Answer"));
    let block = "<atem:function_calls>\n<atem:invoke name=\"muse.bash\">\n<atem:parameter name=\"command\">pwd</atem:parameter>\n</atem:invoke>\n</atem:function_calls>";
    let expect = json!([{"name": "muse.bash", "arguments": {"command": "pwd"}}]);
    // A message that is nothing but a call block, under no header, the user's or a bare
    // `assistant`, is that call.
    for input in [
        format!("<|message|>{block}<|eom|>"),
        format!(" to=user<|message|>{block}<|eot|>"),
        format!(" to=self<|message|>look<|eom|><|start|>assistant<|message|>{block}<|eom|>"),
    ] {
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // Beside prose the block is the user's text.
    let input = format!(" to=user<|message|>Running:\n{block}<|eot|>");
    let p = parse_both(&input, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content, Some(format!("Running:\n{block}")));
    // A message to a tool that holds no call block is reported, not dropped silently.
    let p = parse_both(" to=get_weather<|message|>{\"city\":\"SF\"}", &[]);
    assert!(p.calls.is_empty());
    assert!(!p.errors.is_empty());
}

#[test]
fn a_harmony_start_token_that_opens_no_message_is_text() {
    let p = parse_both(" to=user<|message|>Use `<|start|>` here.", &[]);
    assert_eq!(p.content.as_deref(), Some("Use `<|start|>` here."));
    let p = parse_both(" to=self<|message|>Use `<|start|>` here.", &[]);
    assert_eq!(p.reasoning.as_deref(), Some("Use `<|start|>` here."));
    assert_eq!(p.content, None);
    // One that opens a message still separates the two.
    let p = parse_both(
        " to=self<|message|>Think<|start|>assistant to=user<|message|>Done<|eot|>",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("Think"));
    assert_eq!(p.content.as_deref(), Some("Done"));
}

#[test]
fn a_control_token_in_an_invoke_name_is_no_part_of_it() {
    let expect = json!([{"name": "read", "arguments": {"path": "go.mod"}}]);
    let param = "<atem:parameter name=\"path\">go.mod</atem:parameter>\n";
    for invoke in [
        format!("read<|message|>\">{param}"),
        format!("re<|message|>ad\">{param}"),
        format!("read<|message|><|message|>\">{param}"),
        // The token took the place of the name's `">`: the body starts at the next tag.
        format!("read<|message|>{param}"),
    ] {
        let input = format!(
            " to=read<|message|><atem:function_calls>\n<atem:invoke name=\"{invoke}</atem:invoke>\n</atem:function_calls><|eot|>"
        );
        let p = parse_both(&input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // The same in another family's invoke.
    let p = parse_both(
        "<minimax:tool_call>\n<invoke name=\"read<|message|>\">\n<parameter name=\"path\">go.mod</parameter>\n</invoke>\n</minimax:tool_call>",
        &[],
    );
    assert_eq!(calls_of(&p), expect);
}

#[test]
fn a_comma_missing_between_listed_call_objects_keeps_both_calls() {
    let expect = json!([
        {"name": "a", "arguments": {}},
        {"name": "b", "arguments": {"x": "{not json}"}}
    ]);
    for input in [
        "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"a\", \"parameters\": {}}{\"tool_call_id\": \"1\", \"tool_name\": \"b\", \"parameters\": {\"x\": \"{not json}\"}}]<|END_ACTION|>",
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}\n{\"name\": \"b\", \"arguments\": {\"x\": \"{not json}\"}}]",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
}
