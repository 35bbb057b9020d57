//! Formats from model vendors' own guides and runtimes' tests that batches AA and AB of the
//! held-out corpus found unread: Granite 3.2's reasoning markers written as text, MiniCPM4's
//! thought tokens and fenced calls, ChatGLM3's call as a new assistant turn, Hunyuan's reply
//! label and end token, DeepSeek V3.2's block without its DSML namespace and V4.1's spaced
//! one, DeepSeek V3.1's first call without its begin token, MiniMax M3's repeated elements
//! and entities; batch AG's joins around think blocks and Kimi's section token before text;
//! batch AI's LocalAI spellings; batch AJ's Phi-4-mini blocks.
//! Each case is parsed whole and streamed one character at a time
//! (`parse_both`).

use serde_json::json;

use crate::cases::{calls_of, parse_both};

#[test]
fn granites_text_markers_split_reasoning_from_the_response_when_both_are_there() {
    for input in [
        "Here is my thought process:\n\nThink think\nHere is my response:\n\nrespond respond",
        "Here's my thought process:\nThink think\nHere's my response:\nrespond respond",
        "Here is my thought process: Think think Here's my response: respond respond",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.reasoning.as_deref(), Some("Think think"), "{input}");
        assert_eq!(p.content.as_deref(), Some("respond respond"), "{input}");
    }
    // One marker alone, or the two in the other order, is the model's prose.
    for input in [
        "Here is my response: the answer is 4.",
        "Here is my thought process: add the numbers.",
        "Here is my response: 4. Here is my thought process: I added.",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.reasoning, None, "{input}");
        assert_eq!(p.content.as_deref(), Some(input), "{input}");
    }
}

#[test]
fn minicpm4_thought_and_fenced_call_are_read() {
    let input = "<|thought_start|>\nI will convert the amount.\n<|thought_end|>\n<|tool_call_start|>\n```python\nget_currency_exchange_rate(from_currency=\"USD\",to_currency=\"EUR\",amount=500)\n```\n<|tool_call_end|>\n";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_currency_exchange_rate",
                "arguments": {"from_currency": "USD", "to_currency": "EUR", "amount": 500}}])
    );
    assert_eq!(p.reasoning.as_deref(), Some("I will convert the amount."));
    assert_eq!(p.content, None);
}

#[test]
fn chatglm3_names_its_call_in_a_new_assistant_header() {
    let input = "Let me look it up.<|assistant|>get_current_weather\n```python\ntool_call(location=\"beijing\", unit=\"celsius\")\n```";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_current_weather",
                "arguments": {"location": "beijing", "unit": "celsius"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Let me look it up."));
    // A header naming no offered tool, or a fence holding other code, is no call; the
    // header token is no content either.
    let offered = ("search", json!({"type": "object"}));
    let p = parse_both(input, &[offered]);
    assert!(p.calls.is_empty());
    let p = parse_both(
        "<|assistant|>plot\n```python\nimport math\nprint(math.pi)\n```",
        &[],
    );
    assert!(p.calls.is_empty());
    assert!(!p.content.unwrap_or_default().contains("<|assistant|>"));
}

#[test]
fn hunyuans_reply_label_and_end_token_are_not_content() {
    let p = parse_both("助手：Thanks. How can I help you?<|eos|>", &[]);
    assert_eq!(p.content.as_deref(), Some("Thanks. How can I help you?"));
    let p = parse_both(
        "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Beijing\"}}]</tool_calls><|eos|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Beijing"}}])
    );
    assert_eq!(p.content, None);
    // The label further in is the model's text.
    let p = parse_both("I said 助手：hello", &[]);
    assert_eq!(p.content.as_deref(), Some("I said 助手：hello"));
}

#[test]
fn deepseek_v32_blocks_without_their_dsml_namespace_are_read() {
    let input = "<function_calls><invoke name=\"get_weather\"><parameter name=\"location\" string=\"true\">杭州</parameter><parameter name=\"days\" string=\"false\">2</parameter></invoke></function_calls>";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"location": "杭州", "days": 2}}])
    );
    assert_eq!(p.content, None);
    // OLMo 3's pythonic lines in the same wrapper are still read as such.
    let p = parse_both(
        "<function_calls>\nget_time(tz=\"UTC\")\n</function_calls>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_time", "arguments": {"tz": "UTC"}}])
    );
}

#[test]
fn a_deepseek_v31_first_call_that_lost_its_begin_token_is_read() {
    let call_end = "<｜tool▁call▁end｜>";
    for input in [
        format!("<｜tool▁calls▁begin｜>get_weather<｜tool▁sep｜>{{\"city\": \"上海\"}}{call_end}<｜tool▁calls▁end｜>"),
        // The call's end token written twice.
        format!("<｜tool▁calls▁begin｜>get_weather<｜tool▁sep｜>{{\"city\": \"上海\"}}{call_end}{call_end}"),
    ] {
        let p = parse_both(&input, &[]);
        assert_eq!(
            calls_of(&p),
            json!([{"name": "get_weather", "arguments": {"city": "上海"}}]),
            "{input}"
        );
        assert_eq!(p.content, None, "{input}");
    }
    // Prose where the first call's name should be is still a malformed block.
    let p = parse_both(
        "<｜tool▁calls▁begin｜>I will call get weather<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        &[],
    );
    assert!(p.calls.is_empty());
    assert!(!p.errors.is_empty());
}

#[test]
fn minimax_m3_repeated_elements_make_a_list_and_entities_are_decoded() {
    let p = parse_both(
        "<minimax:tool_call><invoke name=\"search\"><city>Beijing</city><city>Shanghai</city><q>cats &amp; dogs & birds</q></invoke></minimax:tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "search", "arguments": {
            "city": ["Beijing", "Shanghai"], "q": "cats & dogs & birds"
        }}])
    );
    let p = parse_both(
        "<minimax:tool_call><invoke name=\"f\"><parameter name=\"html\">&lt;b&gt;</parameter></invoke></minimax:tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"html": "<b>"}}])
    );
}

#[test]
fn deepseek_v41_spaces_its_dsml_namespace_and_names_its_block_calls() {
    let input = "Checking. <｜DSML｜ calls>\n<｜DSML｜ invoke name=\"weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">杭州</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"days\" string=\"false\">3</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "weather", "arguments": {"city": "杭州", "days": 3}}])
    );
    assert_eq!(p.content.as_deref().map(str::trim), Some("Checking."));
}

#[test]
fn stop_markers_that_end_the_text_go_in_any_order() {
    for input in [
        "final answer<eos>",
        "final answer<turn|><eos>",
        "final answer <eos> <turn|>",
        "final answer<turn|><turn|>",
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.content.as_deref(), Some("final answer"), "{input}");
    }
    // Inside the text a marker is the model's text.
    let p = parse_both("write <eos> to end it", &[]);
    assert_eq!(p.content.as_deref(), Some("write <eos> to end it"));
}

#[test]
fn hunyuans_answer_wrapper_and_apertus_inner_thoughts() {
    let p = parse_both(
        "<think>\nreasoning here\n</think>\n<answer>\nthe answer\n</answer>",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("reasoning here"));
    assert_eq!(p.content.as_deref(), Some("the answer"));
    // Cut off before its closer, the wrapper still goes.
    let p = parse_both("<think>\nr\n</think>\n<answer>\nthe start", &[]);
    assert_eq!(p.content.as_deref(), Some("the start"));
    let p = parse_both(
        "<|inner_prefix|>Let me think<|inner_suffix|>The answer",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("Let me think"));
    assert_eq!(p.content.as_deref(), Some("The answer"));
}

#[test]
fn inkling_blocks_split_reasoning_content_and_calls() {
    let input = "<|content_thinking|>Consider the weather.<|end_message|><|message_model|><|content_thinking|> Tokyo, probably.<|end_message|><|message_model|><|content_text|>Checking the weather now.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"city\":\"Tokyo\"}}<|end_message|><|content_model_end_sampling|>";
    let p = parse_both(input, &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Tokyo"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Checking the weather now."));
    assert_eq!(
        p.reasoning.as_deref(),
        Some("Consider the weather. Tokyo, probably.")
    );
    // Other kinds of block and text outside blocks are markup; an open block runs to the end.
    let p = parse_both(
        "<|content_text|>Answer<|content_image|>not text<|end_message|><|content_model_end_sampling|>tail",
        &[],
    );
    assert_eq!(p.content.as_deref(), Some("Answer"));
    let p = parse_both("<|content_thinking|>looping 12 13", &[]);
    assert_eq!(p.reasoning.as_deref(), Some("looping 12 13"));
    assert_eq!(p.content, None);
}

#[test]
fn text_around_a_think_block_is_joined_as_written() {
    for (input, content) in [
        ("foo bar<think>thinking</think>baz", "foo barbaz"),
        ("Before <think></think> After", "Before  After"),
        ("<think>plan</think>\n\nThe answer", "The answer"),
        ("a<think>x</think>b<think>y</think>c", "abc"),
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.content.as_deref(), Some(content), "{input}");
    }
}

#[test]
fn a_kimi_section_token_before_text_that_is_no_call_stays_text() {
    let p = parse_both(
        "<think>reasoning</think>text<|tool_calls_section_begin|>tool_call_data",
        &[],
    );
    assert!(p.calls.is_empty());
    assert_eq!(
        p.content.as_deref(),
        Some("text<|tool_calls_section_begin|>tool_call_data")
    );
    // A section holding a call is still read; a token that ends the reply is markup.
    let p = parse_both(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        &[],
    );
    assert_eq!(calls_of(&p), json!([{"name": "ls", "arguments": {}}]));
    let p = parse_both("Checking.<|tool_calls_section_begin|>", &[]);
    assert_eq!(p.content.as_deref(), Some("Checking."));
}

#[test]
fn localai_spellings_short_param_tags_solar_open_and_mismatched_think_tags() {
    // `<param=K>…</param>`, the short spelling of Qwen3-Coder's `<parameter=K>`.
    let p = parse_both(
        "<tool_call><function=get_weather><param=city>Paris</param><param=days>2</param></function></tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris", "days": "2"}}])
    );
    // Solar Open's reasoning turn, then the answer's header.
    let p = parse_both(
        "Text <|think|>Solar reasoning<|end|><|begin|>assistant<|content|> More",
        &[],
    );
    assert_eq!(p.reasoning.as_deref(), Some("Solar reasoning"));
    assert_eq!(p.content.as_deref(), Some("Text  More"));
    // Another dialect's closer does not close an open block: `<thinking>` runs on.
    let p = parse_both("<thinking>Content</think>", &[]);
    assert_eq!(p.reasoning.as_deref(), Some("Content</think>"));
    assert_eq!(p.content, None);
}

#[test]
fn a_prefilled_opener_the_model_writes_again_is_read_once() {
    use reagent_parse::{parse, ParseOptions, ReasoningMode};
    let opts = |reasoning| ParseOptions {
        prefill: "<think>".to_string(),
        reasoning,
        ..ParseOptions::default()
    };
    let text = "<think>say hello back</think>\nHello";
    let kept = parse(text, &opts(ReasoningMode::Keep));
    assert_eq!(kept.content.as_deref(), Some(text));
    let split = parse(text, &opts(ReasoningMode::Extract));
    assert_eq!(split.reasoning.as_deref(), Some("say hello back"));
    assert_eq!(split.content.as_deref(), Some("Hello"));
    // Not repeated: the prefill opens the block.
    let p = parse("plan</think>Hi", &opts(ReasoningMode::Keep));
    assert_eq!(p.content.as_deref(), Some("<think>plan</think>Hi"));
}

#[test]
fn phi4_mini_tool_call_blocks_close_and_may_join_objects_with_commas() {
    let p = parse_both(
        "<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"h\": 150}}]<|/tool_call|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"h": 150}}])
    );
    assert_eq!(p.content, None);
    let p = parse_both(
        "<|tool_call|>{\"name\": \"tax\", \"arguments\": {\"city\": \"Chicago\"}}, {\"name\": \"tax\", \"arguments\": {\"city\": \"Portland\"}}<|/tool_call|>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([
            {"name": "tax", "arguments": {"city": "Chicago"}},
            {"name": "tax", "arguments": {"city": "Portland"}}
        ])
    );
    assert_eq!(p.content, None);
    // Granite 3 writes no closer.
    let p = parse_both("<|tool_call|>[{\"name\": \"f\", \"arguments\": {}}]", &[]);
    assert_eq!(calls_of(&p), json!([{"name": "f", "arguments": {}}]));
}

#[test]
fn capital_think_tags_reasoning_tags_and_a_leading_thinking_fence_are_reasoning() {
    for (input, reasoning) in [
        (
            "<THINKING>UPPER CASE</THINKING>Actual content",
            "UPPER CASE",
        ),
        ("<THINK>Shouting</THINK>Actual content", "Shouting"),
        (
            "<reasoning>Step by step</reasoning>Actual content",
            "Step by step",
        ),
        (
            "```thinking\nmarkdown thoughts\n```\nActual content",
            "markdown thoughts",
        ),
    ] {
        let p = parse_both(input, &[]);
        assert_eq!(p.reasoning.as_deref(), Some(reasoning), "{input}");
        assert_eq!(p.content.as_deref(), Some("Actual content"), "{input}");
    }
    // A thinking fence after text is an ordinary code block.
    let text = "Here:\n```thinking\nnot reasoning\n```";
    let p = parse_both(text, &[]);
    assert_eq!(p.reasoning, None);
    assert_eq!(p.content.as_deref(), Some(text));
}

#[test]
fn deepseek_tool_output_markers_go_and_a_bare_v31_call_is_read() {
    let p = parse_both(
        "Here's the weather: <｜tool▁output▁begin｜>22°C, Sunny<｜tool▁output▁end｜> Hope that helps!",
        &[],
    );
    assert_eq!(
        p.content.as_deref(),
        Some("Here's the weather: 22°C, Sunny Hope that helps!")
    );
    let p = parse_both("get_weather<｜tool▁sep｜>{\"location\": \"Paris\"}", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"location": "Paris"}}])
    );
    // A name that is no tool name (a sentence) before the token is not a call.
    let text = "see the docs<｜tool▁sep｜>{\"a\": 1}";
    assert!(parse_both(text, &[]).calls.is_empty());
}

#[test]
fn a_stray_gemma_channel_closer_ends_nothing_and_a_glm_value_may_quote_the_call_tag() {
    let p = parse_both(
        "<|channel>thought\n<channel|>Hello, world!\nWhat's up?<channel|>",
        &[],
    );
    assert_eq!(p.content.as_deref(), Some("Hello, world!\nWhat's up?"));
    let p = parse_both(
        "<tool_call>note\n<arg_key>text</arg_key>\n<arg_value>has <tool_call> inside</arg_value>\n<arg_key>n</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "note", "arguments": {"text": "has <tool_call> inside", "n": 1}}])
    );
}

#[test]
fn a_bare_pythonic_list_names_an_offered_tool_and_may_keep_lfm2s_closer() {
    let weather = ("get_weather", json!({"type": "object"}));
    let text = "[unknown_tool(location=\"Paris\")]";
    let p = parse_both(text, std::slice::from_ref(&weather));
    assert!(p.calls.is_empty());
    assert_eq!(p.content.as_deref(), Some(text));
    let p = parse_both(
        "[get_weather(city=\"Paris\")]",
        std::slice::from_ref(&weather),
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get_weather", "arguments": {"city": "Paris"}}])
    );
    let p = parse_both("<|CHATBOT_TOKEN|>Hello, world!<|END_OF_TURN_TOKEN|>", &[]);
    assert_eq!(p.content.as_deref(), Some("Hello, world!"));
    let p = parse_both("[bash(command='ls')]<|tool_call_end|>", &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "bash", "arguments": {"command": "ls"}}])
    );
    assert_eq!(p.content, None);
}

#[test]
fn glm_keys_are_literal_text_and_a_value_may_lose_its_opener() {
    let p = parse_both(
        "<tool_call>f\n<arg_key>param<1></arg_key>\n<arg_value>v1</arg_value>\n<arg_key>a&b</arg_key>\n<arg_value>v2</arg_value>\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "f", "arguments": {"param<1>": "v1", "a&b": "v2"}}])
    );
    let p = parse_both(
        "<tool_call>get-weather\n<arg_key>city</arg_key>\nNew York</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>celsius</arg_value>\n</tool_call>",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "get-weather", "arguments": {"city": "New York", "unit": "celsius"}}])
    );
}
