//! Hand-written cases for the recovery rules added after batch I of the held-out corpus
//! (namespaced names, control-token text inside a call block, a GLM call opened again), each
//! parsed whole and streamed.

use serde_json::json;

use crate::cases::{calls_of, parse_both};

#[test]
fn a_namespace_before_an_offered_tool_name_is_dropped() {
    let read = (
        "read",
        json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    );
    let expect = json!([{"name": "read", "arguments": {"path": "go.mod"}}]);
    for input in [
        " to=read<|message|><atem:function_calls>\n<atem:invoke name=\"read.read\">\n<atem:parameter name=\"path\">go.mod</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>",
        "<tool_call>{\"name\": \"default_api.read\", \"arguments\": {\"path\": \"go.mod\"}}</tool_call>",
    ] {
        let p = parse_both(input, std::slice::from_ref(&read));
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // A dotted name the tools offer as written, or one with no offered tool behind it,
    // stays as the model wrote it; so does every name when no tools are offered.
    let dotted = ("fs.read", json!({"type": "object"}));
    let p = parse_both(
        "<tool_call>{\"name\": \"fs.read\", \"arguments\": {}}</tool_call>",
        &[dotted, read.clone()],
    );
    assert_eq!(calls_of(&p), json!([{"name": "fs.read", "arguments": {}}]));
    for tools in [vec![read], vec![]] {
        let p = parse_both(
            "<tool_call>{\"name\": \"fs.write\", \"arguments\": {}}</tool_call>",
            &tools,
        );
        assert_eq!(calls_of(&p), json!([{"name": "fs.write", "arguments": {}}]));
    }
}

#[test]
fn control_token_text_inside_a_call_block_is_the_value() {
    let value = "literal <|eot|> and <|start|>assistant to=user<|message|> text";
    let input = format!(
        " to=echo<|message|><atem:function_calls>\n<atem:invoke name=\"echo\">\n<atem:parameter name=\"text\">{value}</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eot|>"
    );
    let p = parse_both(&input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "echo", "arguments": {"text": value}}])
    );
    assert_eq!(p.content, None);
    // After the block, the tokens end the message and open the next one as before.
    let p = parse_both(
        &format!("{input}<|start|>assistant to=user<|message|>Done<|eot|>"),
        &[],
    );
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.content.as_deref(), Some("Done"));
}

#[test]
fn a_call_opened_again_before_it_closed() {
    let skill = json!([{"name": "skill", "arguments": {"name": "git-diff-review"}}]);
    // The model started the same call over: one call.
    let p = parse_both(
        "<tool_call>skill\n{\"name\":\"git-diff-review\"}\n<tool_call>skill\n{\"name\":\"git-diff-review\"}</tool_call>",
        &[],
    );
    assert_eq!(calls_of(&p), skill);
    let p = parse_both(
        "<tool_call>get_weather<arg_key>city</arg_key><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    );
    // Another call after the opener: the first one ends there, complete.
    let p = parse_both(
        "<tool_call>skill\n{\"name\":\"git-diff-review\"}\n<tool_call>clock\n{\"zone\":\"UTC\"}</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "skill", "arguments": {"name": "git-diff-review"}},
            {"name": "clock", "arguments": {"zone": "UTC"}}
        ])
    );
}

#[test]
fn a_harmony_message_to_a_namespaced_tool_is_a_call() {
    let input = "<|channel|>commentary to=api.users.create<|constrain|>json<|message|>{\"name\": \"John\"}<|call|>";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "create", "arguments": {"name": "John"}}])
    );
    // A recipient the tools offer as written keeps its whole name.
    let offered = ("api.users.create", json!({"type": "object"}));
    let p = parse_both(input, &[offered]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "api.users.create", "arguments": {"name": "John"}}])
    );
    // A body that is no JSON object is an error, not a call.
    let p = parse_both(
        "<|channel|>commentary to=api.users.create<|message|>hello<|call|>",
        &[],
    );
    assert!(p.calls.is_empty());
    assert!(!p.errors.is_empty());
}

#[test]
fn a_qwen3_coder_value_without_its_closer_ends_at_the_next_tag() {
    let weather = (
        "get_weather",
        json!({"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string"}, "days": {"type": "integer"}}}),
    );
    let expect = json!([{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}}]);
    for input in [
        "<function=get_weather>\n<parameter=city>Paris\n<parameter=unit>celsius\n<parameter=days>3\n</function>",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>celsius\n<parameter=days>3</parameter>\n</function>\n</tool_call>",
    ] {
        let p = parse_both(input, std::slice::from_ref(&weather));
        assert_eq!(calls_of(&p), expect, "{input}");
    }
    // A `</function>` inside a value whose own closer follows is text.
    let p = parse_both(
        "<function=write>\n<parameter=code>\nend </function> here\n</parameter>\n</function>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write", "arguments": {"code": "end </function> here"}}])
    );
    // The output ending inside a value is still a cut-off call.
    let p = parse_both("<function=get_weather>\n<parameter=city>Par", &[]);
    assert!(p.calls.is_empty());
    assert!(p.truncated);
}

#[test]
fn glm_tags_under_a_vendor_namespace_are_glm_tags() {
    let p = parse_both(
        "<ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Tokyo</ifm|arg_value></ifm|tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Tokyo"}}])
    );
    assert_eq!(p.content, None);
    // A type named before the value types it: `string` keeps digits as text.
    let p = parse_both(
        "<ifm|tool_call>study<ifm|arg_key>id</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>12345</ifm|arg_value><ifm|arg_key>n</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>7</ifm|arg_value></ifm|tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "study", "arguments": {"id": "12345", "n": 7}}])
    );
    // JSON under the namespaced tags: the tags go with the call.
    let p = parse_both(
        "Before<ifm|tool_calls><ifm|tool_call>{\"name\": \"lookup\", \"arguments\": {\"limit\": 2}}</ifm|tool_call></ifm|tool_calls>after",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "lookup", "arguments": {"limit": 2}}])
    );
    assert_eq!(p.content.as_deref(), Some("Beforeafter"));
    // Prose naming such a tag holds no call and keeps its text.
    let text = "Write <ifm|tool_call> to call a tool.";
    let p = parse_both(text, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some(text));
}

#[test]
fn a_tagged_object_that_is_only_a_name_is_a_call_without_arguments() {
    for input in [
        "<tool_call>{\"name\":\"now\"}</tool_call>",
        "<tool_call>\n{\"name\": \"now\", \"id\": \"c1\"}\n</tool_call>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "now", "arguments": {}}]),
            "{input}"
        );
    }
    // Bare, it is an answer; with another key than the arguments, no call is guessed.
    let p = parse_both("{\"name\": \"now\"}", &[]);
    assert!(p.calls.is_empty());
    let p = parse_both(
        "<tool_call>{\"name\": \"now\", \"options\": {}}</tool_call>",
        &[],
    );
    assert!(p.calls.is_empty());
    assert!(!p.errors.is_empty());
}

#[test]
fn a_call_block_that_names_no_tool_is_text() {
    let block = "<minimax:tool_call>\n<invoke>\n<parameter name=\"city\">Miami</parameter>\n</invoke>\n</minimax:tool_call>";
    let p = parse_both(block, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some(block));
    // Cut off before any invoke, it is still a cut-off call.
    let p = parse_both("Sure.<minimax:tool_call>\n<inv", &[]);
    assert!(p.calls.is_empty());
    assert!(p.truncated);
}

#[test]
fn a_tool_calls_wrapper_around_tagged_calls_holds_their_calls() {
    let p = parse_both(
        "<think>need lookup</think>\n<tool_calls>\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>Tokyo</arg_value></tool_call>\n<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call>\n</tool_calls>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "get_weather", "arguments": {"city": "Tokyo"}},
            {"name": "now", "arguments": {}}
        ])
    );
    assert_eq!(p.content, None);
    assert_eq!(p.reasoning.as_deref(), Some("need lookup"));
}

#[test]
fn a_closed_call_block_that_holds_no_valid_call_stays_text_with_its_error() {
    for block in [
        "<tool_call>\n{\"name\": \"test\", \"arguments\": invalid}\n</tool_call>",
        "[TOOL_CALLS] [{\"name\": invalid json}]",
    ] {
        let input = format!("Let me try.{block}");
        let p = parse_both(&input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert_eq!(p.content.as_deref(), Some(input.as_str()));
        assert!(!p.errors.is_empty(), "{input}");
    }
    // One bad call beside a good one: the good one is read, the bad one is not text.
    let p = parse_both(
        "<tool_call>{\"name\": \"ls\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"x\", \"arguments\": bad}</tool_call>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
    // A block cut off at the end is still a cut-off call, not text.
    let p = parse_both(
        "Let me look. <tool_call>{\"name\": \"read\", \"arguments\": {\"pa",
        &[],
    );
    assert_eq!(p.content.as_deref(), Some("Let me look. "));
    assert!(p.truncated);
}

#[test]
fn qwen3_coder_layout_written_as_escapes_or_indentation() {
    // A literal `\n` between tags is layout; inside a value it is the value's text.
    let p = parse_both(
        "Looking.\\n\\n<tool_call>\\n<function=bash>\\n<parameter=script>\\ncd /tmp\\n</parameter>\\n</function>\\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "bash", "arguments": {"script": "\\ncd /tmp\\n"}}])
    );
    // A value of nothing but its closing tag's indentation is empty.
    let p = parse_both(
        "<tool_call>\n  <function=f>\n    <parameter=a>\n    </parameter>\n    <parameter=b>\n  x\n    </parameter>\n  </function>\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"a": "", "b": "x"}}])
    );
}

#[test]
fn dsml_under_another_fullwidth_namespace_is_dsml() {
    let p = parse_both(
        "I will check.<｜GCML｜tool_calls><｜GCML｜invoke name=\"store\"><｜GCML｜parameter name=\"city\" string=\"true\">Tokyo</｜GCML｜parameter><｜GCML｜parameter name=\"n\" string=\"false\">{\"a\": 1}</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "store", "arguments": {"city": "Tokyo", "n": {"a": 1}}}])
    );
    assert_eq!(p.content.as_deref(), Some("I will check."));
    // A fullwidth bar in prose opens nothing.
    let text = "Use <｜GCML｜ as the prefix.";
    assert_eq!(parse_both(text, &[]).content.as_deref(), Some(text));
}

#[test]
fn hy_tool_separators_and_tag_suffixes_are_glm() {
    let expect = json!([{"name": "get_weather", "arguments": {"city": "Beijing"}}]);
    for input in [
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n</tool_calls>",
        "<tool_calls:opensource>\n<tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Beijing</arg_value:opensource></tool_call:opensource>\n</tool_calls:opensource>",
        // A complete value whose closers were cut off is read, as for GLM.
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n",
        // HY3 under the suffix, its separator included.
        "<tool_calls:a+b(c><tool_call:a+b(c>get_weather<arg_key:a+b(c>city</arg_key:a+b(c><arg_value:a+b(c>Beijing</arg_value:a+b(c></tool_call:a+b(c></tool_calls:a+b(c>",
        "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Beijing</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    let p = parse_both(
        "pondering</think:opensource>Checking.<tool_calls:opensource><tool_call:opensource>get_weather<tool_sep:opensource><arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Beijing</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
        &[],
    );
    assert_eq!(calls_of(&p), expect);
    assert_eq!(p.reasoning.as_deref(), Some("pondering"));
    assert_eq!(p.content.as_deref(), Some("Checking."));
    // A reply that only thinks, its think tags under the suffix too.
    let p = parse_both(
        "<think:opensource>\nNo tool needed.\n</think:opensource>\n\nBeijing is sunny.",
        &[],
    );
    assert_eq!(
        (p.reasoning.as_deref(), p.content.as_deref()),
        (Some("No tool needed."), Some("Beijing is sunny."))
    );
    let p = parse_both(
        "<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_current_date", "arguments": {}}])
    );
}

#[test]
fn an_end_of_turn_token_after_a_call_is_not_content() {
    for input in ["<|tool_call>call:now{}<turn|>", "Done.<end_of_turn>"] {
        let p = parse_both(input, &[]);
        let content = p.content.unwrap_or_default();
        assert!(!content.contains("turn"), "{input}: {content:?}");
    }
}

#[test]
fn an_invoke_with_its_wrapper_lost_at_the_start_is_a_call() {
    let expect = json!([{"name": "f", "arguments": {"a": "hello"}}]);
    for input in [
        "<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"a\" string=\"true\">hello</｜DSML｜parameter>\n</｜DSML｜invoke>",
        "<atem:invoke name=\"f\">\n<atem:parameter name=\"a\">hello</atem:parameter>\n</atem:invoke>",
        // Its closer missing at the end, after a closed parameter: complete.
        "<atem:invoke name=\"f\">\n<atem:parameter name=\"a\">hello</atem:parameter>\n",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
        assert_eq!(p.content, None, "{input}");
    }
    // Cut off before any parameter closed: no call is guessed.
    for input in [
        "<atem:invoke name=\"f\">\n<atem:parameter name=\"a\">hel",
        "<｜GCML｜tool_calls><｜GCML｜invoke name=\"f\">",
    ] {
        let p = parse_both(input, &[]);
        assert!(p.calls.is_empty(), "{input}");
        assert!(p.truncated, "{input}");
    }
    // After prose, a bare invoke is text.
    let text = "Write <atem:invoke name=\"f\"> to call f.";
    assert!(parse_both(text, &[]).calls.is_empty());
}

#[test]
fn a_nullable_string_parameter_takes_null() {
    let alarm = (
        "set_alarm",
        json!({"type": "object", "properties": {"label": {"type": "string", "nullable": true}}}),
    );
    for (value, expect) in [("null", json!(null)), ("wake up", json!("wake up"))] {
        let input = format!(
            "<tool_call>\n<function=set_alarm>\n<parameter=label>\n{value}\n</parameter>\n</function>\n</tool_call>"
        );
        let p = parse_both(&input, std::slice::from_ref(&alarm));
        assert_eq!(
            calls_of(&p),
            json!([{"name": "set_alarm", "arguments": {"label": expect}}])
        );
    }
}

#[test]
fn harmony_arguments_that_are_no_json_pass_through_trimmed() {
    let p = parse_both(
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": <|call|>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "f", "arguments": "{\"a\":"}]));
    // Nothing after the header: a call with no arguments.
    let p = parse_both(
        "<|channel|>commentary to=functions.now <|constrain|>json<|message|>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "now", "arguments": {}}]));
}

#[test]
fn an_answer_wrapped_whole_in_response_tags_is_the_text_inside() {
    let p = parse_both(
        "Think first.\n</think>\n\n<response>\nHello there!\n</response>\n</s>",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("Think first."));
    assert_eq!(p.content.as_deref(), Some("Hello there!"));
    // Only part of the answer wrapped: the text stays as written.
    let text = "Use <response>x</response> in the template.";
    assert_eq!(parse_both(text, &[]).content.as_deref(), Some(text));
}

#[test]
fn a_reply_of_nothing_but_bare_pythonic_calls_is_those_calls() {
    let p = parse_both(
        "get_weather(location=\"Paris\")\nsearch_web(query=\"vLLM release notes\")\n",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "get_weather", "arguments": {"location": "Paris"}},
            {"name": "search_web", "arguments": {"query": "vLLM release notes"}}
        ])
    );
    assert_eq!(p.content, None);
    assert_eq!(
        calls_of(&parse_both("list_files()", &[])),
        json!([{"name": "list_files", "arguments": {}}])
    );
    // Prose around a call, a call the offered tools do not name, or code stays text.
    let weather = ("get_weather", json!({"type": "object"}));
    for (text, tools) in [
        ("Call get_weather(location=\"Paris\") to know.", vec![]),
        ("print(x=1)", vec![weather.clone()]),
        ("f(1, 2)", vec![]),
    ] {
        let p = parse_both(text, &tools);
        assert!(p.calls.is_empty(), "{text}");
        assert_eq!(p.content.as_deref(), Some(text));
    }
}

#[test]
fn a_qwen3_coder_value_may_quote_the_format_itself() {
    let write = (
        "write_file",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
    );
    let content = "doc = \"\"\"\n<tool_call>\n<function=write_file>\n<parameter=path>\nliteral.txt\n</parameter>\n<parameter=content>\nhello\n</parameter>\n</function>\n</tool_call>\n\"\"\"";
    let input = format!(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nfixture.py\n</parameter>\n<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    );
    let p = parse_both(&input, std::slice::from_ref(&write));
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_file", "arguments": {"path": "fixture.py", "content": content}}])
    );
    // A closer followed by a parameter the schema does not name is the value's text.
    let content = "A = \"\"\"\n</parameter>\n<parameter=new_string>\nx\n</parameter>\n\"\"\"";
    let input = format!(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nt.py\n</parameter>\n<parameter=content>\n{content}\n</parameter>\n</function>\n</tool_call>"
    );
    let p = parse_both(&input, std::slice::from_ref(&write));
    assert_eq!(
        calls_of(&p),
        json!([{"name": "write_file", "arguments": {"path": "t.py", "content": content}}])
    );
}

#[test]
fn a_function_with_no_valid_name_is_skipped_and_its_siblings_kept() {
    let p = parse_both(
        "<tool_call>\n<function={{ tc.name }}>\n<parameter={{ k }}>\n{{ v }}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=ls>\n</function>\n</tool_call>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
    assert_eq!(p.content, None);
    assert!(!p.errors.is_empty());
    // Alone, the block is text with its error (nothing is lost).
    let block = "<tool_call>\n<function=get_weather\n<parameter=city>Dallas</parameter>\n</function>\n</tool_call>";
    let p = parse_both(block, &[]);
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some(block));
    assert!(!p.errors.is_empty());
}

#[test]
fn an_attribute_tag_whose_space_is_a_tokenizer_marker_or_lost() {
    let expect = json!([{"name": "get_weather", "arguments": {"city": "Dallas"}}]);
    for input in [
        "<function name=\"get_weather\"><param name=\"city\">Dallas</param></function>",
        "<function\u{120}name=\"get_weather\"><param\u{120}name=\"city\">Dallas</param></function>",
        "<functionname=\"get_weather\"><paramname=\"city\">Dallas</param></function>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(calls_of(&p), expect, "{input}");
    }
}

#[test]
fn arguments_under_the_schemas_properties_key_or_encoded_twice_are_read() {
    let phone = (
        "lookup",
        json!({"type": "object", "properties": {"phone": {"type": "string"}, "data": {"type": "object"}}}),
    );
    // A small model copies the schema's `properties` around its arguments, as text too.
    for input in [
        "<tool_call>{\"name\": \"lookup\", \"arguments\": {\"properties\": {\"phone\": \"555\"}}}</tool_call>",
        "<function name=\"lookup\"><param name=\"properties\">{'phone': '555'}</param></function>",
    ] {
        let p = parse_both(input, std::slice::from_ref(&phone));
        assert_eq!(calls_of(&p), json!([{"name": "lookup", "arguments": {"phone": "555"}}]), "{input}");
    }
    // An object the schema wants, written as a JSON string of a Python dict.
    let p = parse_both(
        "<tool_call>\n<function=lookup>\n<parameter=data>\n\"{'key': 'value', 'n': 1}\"\n</parameter>\n</function>\n</tool_call>",
        std::slice::from_ref(&phone),
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "lookup", "arguments": {"data": {"key": "value", "n": 1}}}])
    );
}

#[test]
fn pythonic_names_may_hold_hyphens_and_a_nested_list_is_data() {
    let p = parse_both("[add-note(title='demo', body=\"x\"), get-time()]", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "add-note", "arguments": {"title": "demo", "body": "x"}},
               {"name": "get-time", "arguments": {}}])
    );
    for text in ["[[get_time()]]", "[ [get_time(), f(a=1)] ]"] {
        let p = parse_both(text, &[]);
        assert_eq!(
            (calls_of(&p), p.content.as_deref()),
            (json!([]), Some(text))
        );
    }
}

#[test]
fn a_closed_block_of_broken_json_or_code_is_text_not_a_cut_off_call() {
    // An unescaped quote leaves a string open, but the block's closer came: the block is
    // the model's text (no call in the turn), and what follows it is not withheld.
    let text = "<tool_call>\n{\"name\": \"run\", \"arguments\": {\"cmd\": \"say \"hi\"}}\n</tool_call>\nuser\nDone?";
    let p = parse_both(text, &[]);
    assert_eq!((calls_of(&p), p.truncated), (json!([]), false));
    assert_eq!(p.content.as_deref(), Some(text));
    // The same JSON cut off at the end of the output is flagged, not guessed.
    let p = parse_both(
        "<tool_call>\n{\"name\": \"run\", \"arguments\": {\"cmd\": \"say",
        &[],
    );
    assert_eq!((calls_of(&p), p.truncated), (json!([]), true));
    // Code or a fence after a lone `<tool_call>` names no tool.
    for text in [
        "Like this:\n<tool_call>\n\"\"\"\nx = 1\n\"\"\"\n",
        "Example:\n```\n<tool_call>\n```",
    ] {
        let p = parse_both(text, &[]);
        assert_eq!((calls_of(&p), p.truncated), (json!([]), false), "{text}");
        assert_eq!(p.content.as_deref(), Some(text));
    }
}
