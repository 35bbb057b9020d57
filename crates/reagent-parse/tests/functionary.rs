//! Functionary's spellings: v2's `<|recipient|>` messages, v2.5's Llama 3 separator token,
//! v3.2's `>>>` blocks, raw code for the `python` interpreter, and the strict reading of a
//! bare `NAME\n{json}` when nothing says the text is Functionary's. Each case is parsed
//! whole and streamed one character at a time (`parse_both`).

use reagent_parse::{parse, Family, ParseOptions};
use serde_json::{json, Value};

use crate::cases::{calls_of, parse_both};

const SEP: &str = "<|reserved_special_token_249|>";

fn weather(city: &str) -> Value {
    json!({"name": "get_weather", "arguments": {"city": city}})
}

#[test]
fn the_llama_3_separator_token_joins_calls_after_text() {
    let p = parse_both(
        &format!("Checking both.{SEP}get_weather\n{{\"city\": \"Oslo\"}}{SEP}get_weather\n{{\"city\": \"Rome\"}}"),
        &[],
    );
    assert_eq!(calls_of(&p), json!([weather("Oslo"), weather("Rome")]));
    assert_eq!(p.content.as_deref(), Some("Checking both."));
    let p = parse_both(&format!("{SEP}python\nimport os\nos.getcwd()"), &[]);
    assert_eq!(
        calls_of(&p),
        json!([{"name": "python", "arguments": {"code": "import os\nos.getcwd()"}}])
    );
}

#[test]
fn blocks_joined_by_arrows_read_text_calls_and_code() {
    let p = parse_both(
        "all\nLet me see.>>>get_weather\n{\"city\": \"Oslo\"}>>>python\nprint(1)",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([weather("Oslo"), {"name": "python", "arguments": {"code": "print(1)"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Let me see."));
    // v2's messages: the interpreter takes raw code there too.
    let p = parse_both(
        "all\n<|content|>Computing.\n<|from|>assistant\n<|recipient|>python\n<|content|>print(2)",
        &[],
    );
    assert_eq!(
        calls_of(&p),
        json!([{"name": "python", "arguments": {"code": "print(2)"}}])
    );
    assert_eq!(p.content.as_deref(), Some("Computing."));
    // With the hint, text alone after the prompt's `>>>` loses its `all` line.
    let hinted = parse(
        "all\nJust text.",
        &ParseOptions::with_format(Family::Functionary),
    );
    assert_eq!(
        (calls_of(&hinted), hinted.content.as_deref()),
        (json!([]), Some("Just text."))
    );
}

#[test]
fn a_bare_name_line_before_json_is_a_call_only_when_it_looks_like_a_function() {
    let p = parse_both("get_weather\n{\"city\": \"Oslo\"}\n", &[]);
    assert_eq!(calls_of(&p), json!([weather("Oslo")]));
    let p = parse_both("getWeather\n{\"city\": \"Oslo\"}", &[]);
    assert_eq!(calls_of(&p)[0]["name"], "getWeather");
    for text in [
        "Sure\n{\"city\": \"Oslo\"}",
        "json\n{\"city\": \"Oslo\"}",
        "all\nplain words",
    ] {
        let p = parse_both(text, &[]);
        assert_eq!(
            (calls_of(&p), p.content.as_deref()),
            (json!([]), Some(text))
        );
    }
}

#[test]
fn raw_code_after_the_python_tag_calls_an_offered_interpreter() {
    let code = "<|python_tag|>import math\nmath.sqrt(2)<|eom_id|>";
    let want =
        |name: &str| json!([{"name": name, "arguments": {"code": "import math\nmath.sqrt(2)"}}]);
    let schema = json!({"type": "object", "properties": {"code": {"type": "string"}}});
    assert_eq!(
        calls_of(&parse_both(code, &[("python", schema.clone())])),
        want("python")
    );
    assert_eq!(
        calls_of(&parse_both(code, &[("code_interpreter", schema)])),
        want("code_interpreter")
    );
    // No interpreter offered and no hint: the text after the tag is not a call.
    let p = parse_both("<|python_tag|>not a call at all", &[]);
    assert_eq!(calls_of(&p), json!([]));
}
