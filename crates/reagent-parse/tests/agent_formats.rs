//! Formats agent frameworks teach a model by prompt, found unread by batches AH–AN of the
//! held-out corpus: gptme's `@NAME(ID): {JSON}` lines, a tool tag whose body is the tool's one
//! string parameter and wrappers left empty around such tags (gptme, SkyRL), tool tags inside
//! code fences (Cline: examples), Dify's ReAct blob with `input`, a Kimi call id without its
//! counter (Kilo Code), ModelScope-Agent's `api_name`, a fenced ReAct input (Qwen), code to
//! harmony's builtin python (rLLM). Each case is parsed whole and
//! streamed one character at a time (`parse_both`).

use serde_json::json;

use crate::cases::{calls_of, parse_both};

#[test]
fn gptme_tool_lines_are_calls_at_a_line_start_outside_fences() {
    let p = parse_both(
        "Listing first.\n@shell(c1): {\"command\": \"ls\"}\nthen\n@browser.view(c2): {\n  \"url\": \"https://example.com\"\n}",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "shell", "arguments": {"command": "ls"}},
            {"name": "browser.view", "arguments": {"url": "https://example.com"}}
        ])
    );
    let ids: Vec<_> = p.calls.iter().map(|c| c.id.as_deref()).collect();
    assert_eq!(ids, [Some("c1"), Some("c2")]);
    assert_eq!(
        p.content.as_deref().map(str::trim),
        Some("Listing first.\n\nthen")
    );
    for text in [
        "some text @tool: {\"param\": \"value\"}",
        "  @tool: {\"param\": \"value\"}",
        "```\n@shell(uid): {\"cmd\": \"ls\"}\n```",
        "@tool: {\"unclosed\": \"string}",
        "@john: see {\"a\": 1}",
    ] {
        let p = parse_both(text, &[]);
        assert!(p.calls.is_empty(), "{text}");
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
    // With tools offered, only an offered tool's name makes a call.
    let shell = ("shell", json!({"type": "object"}));
    let p = parse_both("@nope(x): {\"a\": 1}", std::slice::from_ref(&shell));
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some("@nope(x): {\"a\": 1}"));
}

#[test]
fn a_gptme_head_is_held_back_while_streaming() {
    let mut sp = reagent_parse::StreamParser::new(reagent_parse::ParseOptions::default());
    let mut released = String::new();
    for ch in "Listing.\n@shell(c1): {\"command\": \"ls\"}".chars() {
        released.push_str(&sp.push(&ch.to_string()));
    }
    assert!(!released.contains('@'), "{released:?}");
    let p = sp.finish();
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.content.as_deref().map(str::trim), Some("Listing."));
}

#[test]
fn a_plain_text_body_is_the_one_string_parameter_of_its_tool() {
    let tools = [
        (
            "shell",
            json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        ),
        (
            "patch",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "patch": {"type": "string"}}}),
        ),
    ];
    let shell = json!([{"name": "shell", "arguments": {"command": "echo hello"}}]);
    for text in [
        "<tool-use>\n<shell>\necho hello\n</shell>\n</tool-use>",
        "<tool><shell>echo hello</shell></tool>",
        "<function_calls>\n<invoke name=\"shell\">\necho hello\n</invoke>\n</function_calls>",
    ] {
        let p = parse_both(text, &tools);
        assert_eq!(calls_of(&p), shell, "{text}");
        assert_eq!(p.content, None, "{text}");
    }
    // A tool with two parameters, an unclosed tag, or no schema: no guess.
    for (text, tools) in [
        ("<patch>\nsome diff\n</patch>", &tools[..]),
        ("<shell> is the tool to use", &tools[..]),
        ("<shell>\necho hello\n</shell>", &[][..]),
    ] {
        let p = parse_both(text, tools);
        assert!(p.calls.is_empty(), "{text}");
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
}

#[test]
fn a_tool_tag_inside_a_code_fence_is_an_example() {
    let read = (
        "read_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    );
    for text in [
        "Here is an example:\n```\n<read_file>\n<path>demo.txt</path>\n</read_file>\n```",
        "Quoted:\n> ```\n> <read_file><path>test.txt</path></read_file>\n> ```",
        "```javascript\n<read_file><path>test.txt</path></read_file>",
    ] {
        let p = parse_both(text, std::slice::from_ref(&read));
        assert!(p.calls.is_empty(), "{text}");
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
    // After the fence closes, the tag is a call again.
    let p = parse_both(
        "```\n<read_file><path>a</path></read_file>\n```\n<read_file><path>b</path></read_file>",
        std::slice::from_ref(&read),
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "read_file", "arguments": {"path": "b"}}])
    );
}

#[test]
fn difys_react_blob_names_its_input_input() {
    for text in [
        "{\"action\": \"search\", \"input\": \"query\"}",
        "```json\n{\"action\": \"search\", \"input\": \"query\"}\n```",
    ] {
        let p = parse_both(text, &[]);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "search", "arguments": {"input": "query"}}]),
            "{text}"
        );
    }
    // Other keys beside it, or a tool not offered: data, not a blob.
    let search = ("search", json!({"type": "object"}));
    for (text, tools) in [
        (
            "{\"action\": \"delete\", \"input\": \"a.txt\", \"user\": 7}",
            &[][..],
        ),
        (
            "{\"action\": \"delete\", \"input\": \"a.txt\"}",
            std::slice::from_ref(&search),
        ),
    ] {
        let p = parse_both(text, tools);
        assert!(p.calls.is_empty(), "{text}");
    }
}

#[test]
fn a_kimi_call_id_may_leave_out_its_counter_after_the_namespace() {
    let p = parse_both(
        "<|tool_calls_section_begin|> <|tool_call_begin|> functions.example <|tool_call_argument_begin|> {\"a\": [1, 2]} <|tool_call_end|> <|tool_calls_section_end|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "example", "arguments": {"a": [1, 2]}}])
    );
    // A bare word, or a dotted rest, is no id.
    for id in ["label", "functions.f.0"] {
        let text = format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>{id}<|tool_call_argument_begin|>{{}}<|tool_call_end|><|tool_calls_section_end|>"
        );
        assert!(parse_both(&text, &[]).calls.is_empty(), "{id}");
    }
}

#[test]
fn modelscope_api_name_calls_qwen_fenced_action_inputs_and_harmony_python() {
    let p = parse_both(
        "<|startofthink|>{\"api_name\": \"search_tool\", \"parameters\": {\"x\": \"task\"}}<|endofthink|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search_tool", "arguments": {"x": "task"}}])
    );
    assert_eq!(p.content, None);
    // A ReAct input that is one code block ends at its closing fence.
    let p = parse_both(
        "Thought: compute it.\nAction: code_interpreter\nAction Input:\n```py\n123 + 456\n```\n",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "code_interpreter", "arguments": {"input": "```py\n123 + 456\n```"}}])
    );
    // Code sent in harmony to an offered python tool; with none offered, no call (an
    // unsolicited builtin, as llama.cpp reads it).
    let python = (
        "python",
        json!({"type": "object", "properties": {"code": {"type": "string"}}}),
    );
    let text = " to=python<|channel|>analysis code<|message|>print(1)<|call|>";
    let p = parse_both(text, std::slice::from_ref(&python));
    assert_eq!(
        calls_of(&p),
        json!([{"name": "python", "arguments": {"code": "print(1)"}}])
    );
    assert!(parse_both(text, &[]).calls.is_empty());
}

#[test]
fn tool_tags_close_themselves_repeat_into_arrays_and_list_items() {
    let tools = [
        ("get_location", json!({"type": "object"})),
        (
            "sum",
            json!({"type": "object", "properties": {
                "multiples": {"type": "array", "items": {"type": "number"}},
                "labels": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "number"}}}),
        ),
    ];
    for text in ["Where am I? <get_location/> then", "<get_location   />"] {
        let p = parse_both(text, &tools);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "get_location", "arguments": {}}]),
            "{text}"
        );
    }
    let p = parse_both(
        "<sum>\n<limit>10</limit>\n<multiples>3</multiples>\n<multiples>5</multiples>\n<labels>\n  <item kind=\"s\"> a </item>\n  <item>12</item>\n</labels>\n</sum>",
        &tools,
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "sum", "arguments": {"limit": 10, "multiples": [3, 5], "labels": ["a", "12"]}}])
    );
    // Without an array schema, a repeated tag keeps its last value, as before.
    let p = parse_both("<sum><limit>1</limit><limit>2</limit></sum>", &tools);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "sum", "arguments": {"limit": 2}}])
    );
}

#[test]
fn qwen3_coder_self_closing_functions_cdata_values_and_gemma_json_bodies() {
    let p = parse_both(
        "before <tool_call><function=get_weather/></tool_call> after",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {}}])
    );
    let p = parse_both(
        "<tool_call><function=alpha><parameter=query><![CDATA[use <function=beta> and <parameter=x>]]></parameter></function></tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "alpha", "arguments": {"query": "use <function=beta> and <parameter=x>"}}])
    );
    let p = parse_both(
        "<|tool_call>call:roll{{\"min\": 1, \"max\": 6}}<tool_call|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "roll", "arguments": {"min": 1, "max": 6}}])
    );
    let p = parse_both("<|channel>thoughtLet me think.<channel|>Hello!", &[]);
    assert_eq!(p.reasoning.as_deref(), Some("Let me think."));
    assert_eq!(p.content.as_deref(), Some("Hello!"));
}

#[test]
fn a_qwen3_coder_parameter_written_as_its_own_schema_tag() {
    let write = (
        "write_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
    );
    let p = parse_both(
        "<tool_call>\n<function=write_file>\n<path>\nfizz.py\n</path>\n<content>\nprint(1)\n</content>\n</function>",
        std::slice::from_ref(&write),
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_file", "arguments": {"path": "fizz.py", "content": "print(1)"}}])
    );
    // A tag the schema does not name is no parameter.
    let p = parse_both(
        "<tool_call>\n<function=write_file>\n<note>x</note>\n</function>",
        std::slice::from_ref(&write),
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_file", "arguments": {}}])
    );
}
