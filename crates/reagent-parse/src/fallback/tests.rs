//! The fallback's own cases, written before any new held-out data was looked at.

use serde_json::json;

use crate::{parse, Family, ParseOptions, Parsed, ToolSchema};

fn weather_tools() -> ParseOptions {
    ParseOptions {
        tools: vec![
            ToolSchema {
                name: "get_weather".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                    "required": ["city"]
                }),
            },
            ToolSchema {
                name: "read_file".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            },
        ],
        ..ParseOptions::default()
    }
}

fn one_call(p: &Parsed, name: &str, args: serde_json::Value) {
    assert_eq!(p.calls.len(), 1, "{p:?}");
    assert_eq!(p.calls[0].name, name);
    assert_eq!(p.calls[0].arguments, args);
}

#[test]
fn an_unknown_wrapper_around_a_call_object_leaves_the_content() {
    for text in [
        "Checking.<my_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</my_call>",
        "Checking.<|invoke|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}<|/invoke|>",
        "Checking.<|invoke|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n<|invoke_end|>",
        "Checking.[CALL]{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}[/CALL]",
        "Checking.[FUNC] {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}} [END_FUNC]",
        "Checking.<|fn_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}",
    ] {
        for opts in [ParseOptions::default(), weather_tools()] {
            let p = parse(text, &opts);
            one_call(&p, "get_weather", json!({"city": "Oslo"}));
            assert_eq!(p.content.as_deref(), Some("Checking."), "{text}");
        }
    }
}

#[test]
fn other_spellings_of_the_call_object_and_lists_are_read() {
    let text = "<calls>[{\"tool\": \"read_file\", \"input\": {\"path\": \"a.txt\"}}, {\"function\": \"get_weather\", \"args\": {\"city\": \"Rome\"}}]</calls>";
    let p = parse(text, &ParseOptions::default());
    assert_eq!(p.calls.len(), 2, "{p:?}");
    assert_eq!(p.calls[0].name, "read_file");
    assert_eq!(p.calls[0].arguments, json!({"path": "a.txt"}));
    assert_eq!(p.calls[1].arguments, json!({"city": "Rome"}));
    assert_eq!(p.content, None);
}

#[test]
fn markup_that_is_not_a_wrapper_stays() {
    // A lower-case bracket word is a checkbox or a link, not a marker; a closer before
    // the call is not its opener; an opener after it is text.
    let p = parse(
        "[x] done {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}} <b>next</b>",
        &ParseOptions::default(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.content.as_deref(), Some("[x] done  <b>next</b>"));
    let p = parse(
        "</p>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}",
        &ParseOptions::default(),
    );
    assert_eq!(p.content.as_deref(), Some("</p>"));
}

#[test]
fn a_known_tool_name_before_a_json_object_is_a_call() {
    for text in [
        "get_weather{\"city\": \"Oslo\"}",
        "get_weather {\"city\": \"Oslo\"}",
        "get_weather\n{\"city\": \"Oslo\"}",
        "get_weather: {\"city\": \"Oslo\"}",
        "functions.get_weather:{\"city\": \"Oslo\"}",
        "<|tool|>get_weather\n{\"city\": \"Oslo\"}<|/tool|>",
        "[CALL] get_weather {\"city\": \"Oslo\"} [/CALL]",
        "<fn>get_weather{\"city\": \"Oslo\"}</fn>",
    ] {
        let p = parse(&format!("Let me look.\n{text}"), &weather_tools());
        one_call(&p, "get_weather", json!({"city": "Oslo"}));
        assert_eq!(p.content.as_deref(), Some("Let me look.\n"), "{text}");
        assert_eq!(p.format, Some(Family::GenericJson));
    }
}

#[test]
fn named_calls_are_typed_and_several_are_read() {
    let p = parse(
        "get_weather {\"city\": \"Oslo\", \"days\": \"3\"}\nread_file {\"path\": \"x\"}",
        &weather_tools(),
    );
    assert_eq!(p.calls.len(), 2, "{p:?}");
    assert_eq!(p.calls[0].arguments, json!({"city": "Oslo", "days": 3}));
    assert_eq!(p.calls[1].name, "read_file");
    assert_eq!(p.content, None);
}

#[test]
fn a_name_and_object_that_do_not_fit_stay_text() {
    let tools = weather_tools();
    for text in [
        // No tools offered: a name is only a word.
        "get_weather {\"city\": \"Oslo\"}",
        // Inside a fenced block the user asked for.
        "Here is the code:\n```\nget_weather {\"city\": \"Oslo\"}\n```",
        // Keys the tool does not take, or a required one missing.
        "get_weather {\"town\": \"Oslo\"}",
        "get_weather {\"days\": 2}",
        // The name in the middle of a sentence.
        "You could run get_weather {\"city\": \"Oslo\"} yourself.",
        // A longer word that starts with the name, an unclosed object.
        "get_weather_now {\"city\": \"Oslo\"}",
        "get_weather {\"city\": \"Oslo\"",
        // A JSON answer that is the answer.
        "{\"city\": \"Oslo\", \"temperature\": 21}",
    ] {
        let opts = if text.starts_with("get_weather {\"city\": \"Oslo\"}") {
            ParseOptions::default()
        } else {
            tools.clone()
        };
        let p = parse(text, &opts);
        assert!(p.calls.is_empty(), "{text}: {p:?}");
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
}

#[test]
fn a_call_object_naming_no_offered_tool_stays_text() {
    let text = "<x>{\"name\": \"delete_all\", \"arguments\": {}}</x>";
    let p = parse(text, &weather_tools());
    assert!(p.calls.is_empty(), "{p:?}");
    assert_eq!(p.content.as_deref(), Some(text));
}

#[test]
fn a_name_between_marker_tokens_with_arguments_after_more_markers() {
    let text = "Looking.<|x:begin_call:x|><|x:begin_name:x|>get_weather<|x:end_name:x|><|x:args:x|><|x:constrain|>json<|x:msg|>{\"city\": \"Oslo\"}<|x:end_args:x|><|x:end_call:x|><|x:eot|>";
    let p = parse(text, &weather_tools());
    one_call(&p, "get_weather", json!({"city": "Oslo"}));
    assert_eq!(p.content.as_deref(), Some("Looking."));
}

#[test]
fn marker_delimited_argument_pairs_are_read_and_typed() {
    let text = "Sure.<|call:start|>get_weather\n<|arg:start|>city<|arg:value|>Oslo<|arg:end|>\n<|arg:start|>days<|arg:value|>3<|arg:end|>\n<|call:end|>";
    let p = parse(text, &weather_tools());
    one_call(&p, "get_weather", json!({"city": "Oslo", "days": 3}));
    assert_eq!(p.content.as_deref(), Some("Sure."));
    // A key the tool does not take, a value never closed, or plain HTML around the name:
    // no call.
    for text in [
        "<|call:start|>get_weather\n<|arg:start|>town<|arg:value|>Oslo<|arg:end|>\n<|call:end|>",
        "<|call:start|>get_weather\n<|arg:start|>city<|arg:value|>Os",
        "<b>get_weather</b>",
    ] {
        let p = parse(text, &weather_tools());
        assert!(p.calls.is_empty(), "{text}: {p:?}");
        assert_eq!(p.content.as_deref(), Some(text));
    }
}

#[test]
fn an_unknown_tag_around_known_inner_xml_is_a_wrapper() {
    let text = "ok<acme_calls><invoke name=\"get_weather\"><parameter name=\"city\">Oslo</parameter><parameter name=\"days\">2</parameter></invoke></acme_calls>";
    let p = parse(text, &weather_tools());
    one_call(&p, "get_weather", json!({"city": "Oslo", "days": 2}));
    assert_eq!(p.content.as_deref(), Some("ok"));
    let text = "<acme><function=read_file>\n<parameter=path>a.txt</parameter>\n</function></acme>";
    let p = parse(text, &ParseOptions::default());
    one_call(&p, "read_file", json!({"path": "a.txt"}));
    assert_eq!(p.content, None);
}

#[test]
fn a_label_line_above_a_call_leaves_the_content_but_other_lines_stay() {
    let call = "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n```";
    let p = parse(&format!("**Tool Call:**\n{call}"), &weather_tools());
    one_call(&p, "get_weather", json!({"city": "Oslo"}));
    assert_eq!(p.content, None);
    let p = parse(
        &format!("Here is what I will run:\n{call}"),
        &weather_tools(),
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.content.as_deref(), Some("Here is what I will run:\n"));
}

#[test]
fn an_orphan_wrapper_closer_is_dropped_only_without_its_opener() {
    let p = parse("some text </acme_function_call>", &ParseOptions::default());
    assert_eq!(p.content.as_deref(), Some("some text "));
    for text in [
        "a <acme_tool_call>b</acme_tool_call>",
        "see </div>",
        "the tag </acme_call> ends it",
    ] {
        let p = parse(text, &ParseOptions::default());
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
}

#[test]
fn a_tool_name_with_key_value_words_on_its_own_line_is_a_call() {
    let p = parse("read_file path=notes.txt", &weather_tools());
    one_call(&p, "read_file", json!({"path": "notes.txt"}));
    assert_eq!(p.content, None);
    // Quoted values keep their spaces; the schema types the rest.
    let p = parse(
        "Let me check.\nget_weather city=\"New York\" days=3\n",
        &weather_tools(),
    );
    one_call(&p, "get_weather", json!({"city": "New York", "days": 3}));
    assert_eq!(p.content.as_deref(), Some("Let me check.\n"));
}

#[test]
fn key_value_words_stay_text_unless_the_whole_line_is_a_call() {
    for text in [
        // Not an offered tool, a key the tool does not take, a required key missing.
        "list_dir path=src",
        "read_file mode=fast",
        "get_weather days=3",
        // Other words on the line, or none at all.
        "read_file path=a.txt and then stop",
        "Use read_file path=a.txt to read it.",
        "read_file=notes.txt",
        "read_file",
    ] {
        let p = parse(text, &weather_tools());
        assert!(p.calls.is_empty(), "{text}: {p:?}");
        assert_eq!(p.content.as_deref(), Some(text), "{text}");
    }
    // Without offered tools nothing is a call.
    let p = parse("read_file path=notes.txt", &ParseOptions::default());
    assert!(p.calls.is_empty());
}

#[test]
fn an_unknown_call_wrapper_around_an_offered_tools_name_is_a_call_with_no_arguments() {
    let opts = weather_tools();
    let p = parse("<acme_tool_call>get_weather</acme_tool_call>", &opts);
    assert_eq!(p.calls.len(), 1);
    assert_eq!(
        (p.calls[0].name.as_str(), &p.calls[0].arguments),
        ("get_weather", &serde_json::json!({}))
    );
    assert_eq!(p.content, None);
    // A name no tool has, or a tag that does not say it holds a call, is text.
    for text in [
        "<acme_tool_call>weather</acme_tool_call>",
        "<acme_note>get_weather</acme_note>",
    ] {
        let p = parse(text, &opts);
        assert_eq!(
            (p.calls.len(), p.content.as_deref()),
            (0, Some(text)),
            "{text}"
        );
    }
}

/// Qwen2.5-Coder-1.5B (llama-server `--jinja`, the coding suite's run-sum task) ended its
/// run with the call written as a function of one object, outside any tag or fence.
#[test]
fn a_call_written_as_a_function_of_one_object_is_read_when_the_tool_is_offered() {
    let mut opts = weather_tools();
    opts.tools.push(ToolSchema {
        name: "task_complete".into(),
        parameters: json!({"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}),
    });
    let text =
        "The script prints 1157.\ntask_complete({\"summary\": \"python3 total.py prints 1157.\"})";
    let p = parse(text, &opts);
    one_call(
        &p,
        "task_complete",
        json!({"summary": "python3 total.py prints 1157."}),
    );
    assert_eq!(p.content.as_deref(), Some("The script prints 1157.\n"));
    let p = parse("read_file( {\"path\": \"a.txt\"} )", &opts);
    one_call(&p, "read_file", json!({"path": "a.txt"}));
    // The 1.5B's reply ending in the object, its closing parenthesis left out.
    let p = parse("Done.\ntask_complete({\"summary\": \"x\"}\n", &opts);
    one_call(&p, "task_complete", json!({"summary": "x"}));
    // Not a call: an unknown name, a missing closing parenthesis before more text, keys the
    // tool does not take, or the shape inside a code fence.
    for text in [
        "summarize({\"summary\": \"x\"})",
        "task_complete({\"summary\": \"x\"} and more",
        "read_file({\"city\": \"Oslo\"})",
        "```python\nread_file({\"path\": \"a.txt\"})\n```",
    ] {
        let p = parse(text, &opts);
        assert!(p.calls.is_empty(), "{text}: {p:?}");
    }
}
