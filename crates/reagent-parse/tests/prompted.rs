//! Call formats taught by a prompt rather than a chat template: an agent's instructions
//! (Cline's tool-name tags) or a model vendor's prompting guide. Each case is parsed
//! whole and streamed one character at a time (`parse_both`).

use serde_json::{json, Value};

use crate::cases::{calls_of, parse_both};

fn coding_tools() -> Vec<(&'static str, Value)> {
    vec![
        (
            "read_file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        ),
        (
            "write_to_file",
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "content": {"type": "string"},
                "line_count": {"type": "integer"}}}),
        ),
    ]
}

#[test]
fn an_offered_tools_name_as_the_tag_is_a_call() {
    let tools = coding_tools();
    let p = parse_both(
        "I'll read the entry point first.\n\n<read_file>\n<path>src/main.rs</path>\n</read_file>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "src/main.rs"}}])
    );
    assert_eq!(
        p.content.as_deref(),
        Some("I'll read the entry point first.\n\n")
    );
    // Values are raw text typed by the schema; one line break at each end is layout, the
    // rest (markup included) is the value.
    let p = parse_both(
        "<write_to_file>\n<path>7</path>\n<content>\n<b>hi</b>\n\nbye\n</content>\n<line_count>3</line_count>\n</write_to_file>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_to_file", "arguments": {
            "path": "7", "content": "<b>hi</b>\n\nbye", "line_count": 3}}])
    );
    // A file's content may quote its own closing tag: the value ends at the closer that
    // the next argument or the call's closer follows.
    let p = parse_both(
        "<write_to_file><content>a </content> tag</content><path>x.md</path></write_to_file>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_to_file", "arguments": {"content": "a </content> tag", "path": "x.md"}}])
    );
    // Two calls, and a call with no arguments.
    let p = parse_both(
        "<read_file><path>a</path></read_file>\n<read_file></read_file>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "a"}},
               {"name": "read_file", "arguments": {}}])
    );
}

#[test]
fn tool_tags_in_prose_or_cut_off_are_not_guessed() {
    let tools = coding_tools();
    // The tag in prose, a tag naming no offered tool, and no tools offered: text.
    for (text, tools) in [
        ("Use <read_file> to look at a file.", &tools[..]),
        ("<list_files><path>.</path></list_files>", &tools[..]),
        ("<read_file>\n<path>a.txt</path>\n</read_file>", &[][..]),
    ] {
        let p = parse_both(text, tools);
        assert_eq!(
            (calls_of(&p), p.content.as_deref()),
            (json!([]), Some(text))
        );
    }
    // Cut off inside an argument: flagged, never guessed.
    let p = parse_both("Reading.\n<read_file>\n<path>src/ma", &tools);
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    assert_eq!(p.content.as_deref(), Some("Reading.\n"));
    // The closer lost after complete arguments (at the end, or before more text): read.
    let want = json!([{"name": "read_file", "arguments": {"path": "a"}}]);
    for text in [
        "<read_file><path>a</path>",
        "<read_file><path>a</path></read_fi",
    ] {
        let p = parse_both(text, &tools);
        assert_eq!((calls_of(&p), p.truncated), (want.clone(), false), "{text}");
    }
    let p = parse_both("<read_file><path>a</path>\nThen I will edit it.", &tools);
    assert_eq!(calls_of(&p), want);
    assert_eq!(p.content.as_deref(), Some("Then I will edit it."));
}

fn weather_tool() -> Vec<(&'static str, Value)> {
    vec![(
        "get_weather",
        json!({"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}}}),
    )]
}

#[test]
fn gemma_3_tool_code_fences_hold_pythonic_calls() {
    let tools = weather_tool();
    let p = parse_both(
        "Let me check.\n```tool_code\nget_weather(city=\"Paris\")\n```\n",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Let me check.\n\n"));
    // `print(…)` around a call, a namespace before the name, two calls.
    let p = parse_both(
        "```tool_code\nprint(default_api.get_weather(city=\"Paris\", days=2))\nget_weather(city=\"Rome\")\n```",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
               {"name": "get_weather", "arguments": {"city": "Rome"}}])
    );
    // Code that is not only calls to offered tools, or a fence left open, is text.
    for text in [
        "```tool_code\nx = get_weather(city=\"Paris\")\n```",
        "```tool_code\nlist_files(path=\".\")\n```",
        "```tool_code\nget_weather(city=\"Paris\")",
        "```python\nget_weather(city=\"Paris\")\n```",
    ] {
        let p = parse_both(text, &tools);
        assert_eq!(
            (calls_of(&p), p.content.as_deref()),
            (json!([]), Some(text))
        );
    }
}

#[test]
fn qwen_agent_function_and_args_markers() {
    let tools = weather_tool();
    let p = parse_both(
        "Let me look.\n✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Paris\"}\n",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Let me look."));
    // Two calls; a result the model wrote itself is dropped; the answer after ✿RETURN✿ is
    // content.
    let p = parse_both(
        "✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Paris\"}\n✿RESULT✿: sunny\n\
         ✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Rome\", \"days\": 2}\n✿RETURN✿: Both sunny.",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}},
               {"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}])
    );
    assert_eq!(p.content.as_deref(), Some("Both sunny."));
    let p = parse_both("✿RETURN✿: It is sunny {really}.", &tools);
    assert_eq!(
        (calls_of(&p), p.content.as_deref()),
        (json!([]), Some("It is sunny {really}."))
    );
    // Cut off inside the arguments: flagged, not guessed; a malformed call beside a good
    // one is skipped and reported.
    let p = parse_both("✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Pa", &tools);
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    let p = parse_both(
        "✿FUNCTION✿: get_weather\n✿ARGS✿: not json\n✿FUNCTION✿: get_weather\n✿ARGS✿: {\"city\": \"Oslo\"}",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Oslo"}}])
    );
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    // The flower in prose is text.
    let text = "I like ✿ flowers {a lot}.";
    assert_eq!(parse_both(text, &tools).content.as_deref(), Some(text));
}

#[test]
fn react_actions_one_call_each_and_no_stop_marker_in_the_input() {
    let p = parse_both(
        "Thought: two files.\nAction: read_file\nAction Input: {\"path\": \"a\"}\nAction: read_file\nAction Input: b.txt<|eot_id|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "a"}},
               {"name": "read_file", "arguments": {"input": "b.txt"}}])
    );
    let p = parse_both("Action: search\nAction Input: rust parsers</s>", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search", "arguments": {"input": "rust parsers"}}])
    );
    // The input runs over lines that only mention an action, up to an Observation.
    let p = parse_both(
        "Action: note\nAction Input: the Action: field names a tool\nObservation: ok",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "note", "arguments": {"input": "the Action: field names a tool"}}])
    );
}

#[test]
fn anthropic_legacy_invokes_with_tool_name_and_parameters() {
    let tools = weather_tool();
    let p = parse_both(
        "Checking.\n<function_calls>\n<invoke>\n<tool_name>get_weather</tool_name>\n<parameters>\n\
         <city>Paris</city>\n<days>3</days>\n</parameters>\n</invoke>\n</function_calls>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}])
    );
    assert_eq!(p.content.as_deref(), Some("Checking.\n"));
    // No wrapper; a list as repeated items; a malformed invoke beside a good one is skipped.
    let p = parse_both(
        "<invoke><tool_name>tag</tool_name><parameters><names><item>a</item><item>b</item>\
         </names></parameters></invoke><invoke><parameters></parameters></invoke>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "tag", "arguments": {"names": ["a", "b"]}}])
    );
    assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
    // Cut off inside an invoke: flagged, never guessed.
    let p = parse_both(
        "<function_calls><invoke><tool_name>get_weather</tool_name><parameters><city>Par",
        &tools,
    );
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
}

#[test]
fn a_tool_tag_call_is_held_back_from_the_stream() {
    use reagent_parse::{ParseOptions, StreamParser, ToolSchema};
    let tools = coding_tools()
        .into_iter()
        .map(|(name, parameters)| ToolSchema {
            name: name.to_string(),
            parameters,
        })
        .collect();
    let mut sp = StreamParser::new(ParseOptions {
        tools,
        ..ParseOptions::default()
    });
    let mut released = String::new();
    for ch in "Reading <b>now</b>.\n<read_file>\n<path>a.txt</path>\n</read_file>".chars() {
        released.push_str(&sp.push(ch.encode_utf8(&mut [0; 4])));
    }
    assert_eq!(released, "Reading <b>now</b>.\n");
    let p = sp.finish();
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "a.txt"}}])
    );
}

#[test]
fn qwen_agent_markers_that_share_a_flower_do_not_overlap() {
    for text in [
        "✿FUNCTION✿ARGS✿: {}",
        "✿RETURN✿RESULT✿",
        "x ✿FUNCTION✿✿ARGS✿ {\"a\": 1}",
    ] {
        // Parsed whole and streamed (no panic on the shared `✿`); no call is made up.
        assert_eq!(calls_of(&parse_both(text, &[])), json!([]), "{text}");
    }
}

#[test]
fn react_inputs_as_agent_frameworks_write_them() {
    let call = |text: &str| calls_of(&parse_both(text, &[]));
    // Quotes around a string input are not part of it (also one left open); inner ones are.
    assert_eq!(
        call("Thought: look\nAction: search\nAction Input: \"it's 'SF'\""),
        json!([{"name": "search", "arguments": {"input": "it's 'SF'"}}])
    );
    assert_eq!(
        call("Thought: look\nAction: search\nAction Input: \"weather in SF"),
        json!([{"name": "search", "arguments": {"input": "weather in SF"}}])
    );
    // JSON after emphasis, inside a constructor, annotated, or missing its closer.
    let add = json!([{"name": "add", "arguments": {"a": 1, "b": 2}}]);
    for input in [
        "** {\"a\": 1, \"b\": 2}",
        "AddTool({\"a\": 1, \"b\": 2})",
        "{'a': 1 /* first */, 'b': 2}, roughly.",
        "{\"a\": 1, \"b\": 2",
    ] {
        assert_eq!(
            call(&format!("Thought: sum\nAction: add\nAction Input: {input}")),
            add,
            "{input}"
        );
    }
    // A remark after the action's name; a name with spaces stays whole.
    assert_eq!(
        call("Action: add (two numbers)\nAction Input: {\"a\": 1, \"b\": 2}"),
        add
    );
    assert_eq!(
        call("Action: Search the web\nAction Input: rust"),
        json!([{"name": "Search the web", "arguments": {"input": "rust"}}])
    );
    // llama_index's `Answer:` after a thought is the answer; an input with no action is an
    // error, not an answer.
    let p = parse_both("Thought: I know it.\nAnswer: 42\n", &[]);
    assert_eq!(
        (calls_of(&p), p.content.as_deref()),
        (json!([]), Some("42"))
    );
    let p = parse_both("Thought: hmm\nAction Input: what?", &[]);
    assert_eq!(
        (calls_of(&p), p.content.as_deref(), p.errors.len()),
        (json!([]), None, 1)
    );
    // Prose that merely starts a line with `Answer:` and has no thought is left alone.
    let text = "Answer: yes, the file exists.";
    assert_eq!(parse_both(text, &[]).content.as_deref(), Some(text));
}

#[test]
fn continue_tool_blocks_in_a_fence_or_bare() {
    let tools = coding_tools();
    let p = parse_both(
        "Reading it.\n```tool\nTOOL_NAME: read_file\nBEGIN_ARG: path\nsrc/main.rs\nEND_ARG\n```\nThen I edit.",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "src/main.rs"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Reading it.\n\nThen I edit."));
    // No fence; values that are JSON are typed, multi-line text stays whole.
    let p = parse_both(
        "TOOL_NAME: write_to_file\nBEGIN_ARG: path\nnotes.md\nEND_ARG\nBEGIN_ARG: line_count\n2\nEND_ARG\n\
         BEGIN_ARG: content\nfirst\nsecond\nEND_ARG\n",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_to_file", "arguments": {
            "path": "notes.md", "line_count": 2, "content": "first\nsecond"}}])
    );
    // Cut off inside an argument: flagged, not guessed; a mention in prose is text.
    let p = parse_both("TOOL_NAME: read_file\nBEGIN_ARG: path\nsrc/ma", &tools);
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    let text = "Write the tool after TOOL_NAME: in the block.";
    assert_eq!(parse_both(text, &tools).content.as_deref(), Some(text));
}

#[test]
fn a_parameter_header_that_lost_its_bracket_still_names_its_value() {
    let p = parse_both(
        "<function=edit>\n<parameter=command=replace</parameter>\n<parameter=path>a.py</parameter>\n</function>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "edit", "arguments": {"command": "replace", "path": "a.py"}}])
    );
}

#[test]
fn a_tool_element_holding_markup_is_no_xml_agent_name() {
    // LangChain's XML agent names its tool in one line of text; another format's element
    // inside `<tool>` is not a tool called after that markup.
    let text = "<tool>\n<request>read_file</request>\n<path>a.txt</path>\n</tool>";
    let p = parse_both(text, &[]);
    assert!(
        calls_of(&p).as_array().is_some_and(|c| c
            .iter()
            .all(|call| !call["name"].as_str().is_some_and(|n| n.contains('<')))),
        "{p:?}"
    );
    let p = parse_both("<tool>search</tool><tool_input>rust</tool_input>", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search", "arguments": {"input": "rust"}}])
    );
}
