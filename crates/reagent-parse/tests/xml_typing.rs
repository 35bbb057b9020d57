//! XML-parameter formats carry text: with the tool schemas given, each value is typed
//! against its property's schema (integer, number, boolean, null, array, object; strings
//! stay strings even when they look like numbers), the same in Qwen3-Coder
//! `<parameter=k>`, Seed-OSS and GLM `<arg_key>/<arg_value>`, MiniMax and Step-3
//! `<invoke>/<parameter name>`, and DeepSeek's DSML (`string="false"` values), in [`parse`]
//! and in the streaming parser for any chunking.

use reagent_parse::{parse, Family, ParseOptions, StreamParser, ToolSchema};
use serde_json::{json, Value};

/// One value per JSON type, as a model writes it: (key, schema, raw text, typed value).
fn fields() -> Vec<(&'static str, Value, &'static str, Value)> {
    vec![
        ("count", json!({"type": "integer"}), "42", json!(42)),
        ("offset", json!({"type": "integer"}), "-3", json!(-3)),
        // Zero padding is dropped where the schema says integer (vLLM's MiniMax M3 test).
        ("padded", json!({"type": "integer"}), "018956", json!(18956)),
        ("ratio", json!({"type": "number"}), "2.5", json!(2.5)),
        ("whole", json!({"type": "number"}), "7", json!(7)),
        // A whole float is the integer (vLLM's DSML test: `5.0` → `5`).
        ("whole_float", json!({"type": "number"}), "5.0", json!(5)),
        ("flag", json!({"type": "boolean"}), "true", json!(true)),
        ("off", json!({"type": "boolean"}), "False", json!(false)),
        ("nothing", json!({"type": "null"}), "null", Value::Null),
        (
            "maybe",
            json!({"type": ["integer", "null"]}),
            "null",
            Value::Null,
        ),
        (
            "either",
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            "5",
            json!(5),
        ),
        (
            "items",
            json!({"type": "array", "items": {}}),
            "[1, \"two\", {\"x\": 3.5}, null]",
            json!([1, "two", {"x": 3.5}, null]),
        ),
        (
            "opts",
            json!({"type": "object"}),
            "{\"a\": [1, 2], \"b\": {\"c\": false}, \"d\": null}",
            json!({"a": [1, 2], "b": {"c": false}, "d": null}),
        ),
        ("zip", json!({"type": "string"}), "007", json!("007")),
        ("yes", json!({"type": "string"}), "true", json!("true")),
        (
            "list_text",
            json!({"type": "string"}),
            "[1, 2]",
            json!("[1, 2]"),
        ),
        (
            "none_text",
            json!({"type": "string"}),
            "null",
            json!("null"),
        ),
        // JSON escaped once more, as if inside a string: one level comes off whole, so a
        // Windows path keeps one backslash (SGLang's GLM-4.5/4.7 tests).
        (
            "escaped",
            json!({"type": "array"}),
            r#"[{\"path\": \"C:\\\\x\", \"note\": \"a \\\\n b\"}]"#,
            json!([{"path": "C:\\x", "note": "a \\n b"}]),
        ),
        // Text that is not of the schema's type is kept as the text, never dropped.
        ("loose", json!({"type": "integer"}), "many", json!("many")),
    ]
}

fn tool() -> ToolSchema {
    let props: serde_json::Map<String, Value> = fields()
        .into_iter()
        .map(|(k, s, _, _)| (k.to_string(), s))
        .collect();
    ToolSchema {
        name: "configure".into(),
        parameters: json!({"type": "object", "properties": props}),
    }
}

fn expected() -> Value {
    Value::Object(
        fields()
            .into_iter()
            .map(|(k, _, _, v)| (k.to_string(), v))
            .collect(),
    )
}

fn qwen3_coder() -> String {
    let mut s = String::from("Setting it up.\n<tool_call>\n<function=configure>\n");
    for (k, _, raw, _) in fields() {
        s.push_str(&format!("<parameter={k}>\n{raw}\n</parameter>\n"));
    }
    s.push_str("</function>\n</tool_call>");
    s
}

fn seed_oss() -> String {
    let mut s =
        String::from("<seed:think>plan</seed:think><seed:tool_call>\n<function=configure>\n");
    for (k, _, raw, _) in fields() {
        s.push_str(&format!("<parameter={k}>{raw}</parameter>\n"));
    }
    s.push_str("</function>\n</seed:tool_call>");
    s
}

fn glm() -> String {
    let mut s = String::from("<tool_call>configure\n");
    for (k, _, raw, _) in fields() {
        s.push_str(&format!(
            "<arg_key>{k}</arg_key>\n<arg_value>{raw}</arg_value>\n"
        ));
    }
    s.push_str("</tool_call>");
    s
}

/// `<{ns}invoke name="configure">` with one `<{ns}parameter name="k"{attr}>` per field.
fn invoke(ns: &str, attr: &str) -> String {
    let mut s = format!("<{ns}invoke name=\"configure\">\n");
    for (k, _, raw, _) in fields() {
        s.push_str(&format!(
            "<{ns}parameter name=\"{k}\"{attr}>{raw}</{ns}parameter>\n"
        ));
    }
    s.push_str(&format!("</{ns}invoke>\n"));
    s
}

fn minimax() -> String {
    format!(
        "Checking.\n<minimax:tool_call>\n{}</minimax:tool_call>",
        invoke("", "")
    )
}

fn dsml() -> String {
    format!(
        "<｜DSML｜function_calls>\n{}</｜DSML｜function_calls>",
        invoke("｜DSML｜", " string=\"false\"")
    )
}

fn step3() -> String {
    format!(
        "<｜tool_calls_begin｜><｜tool_call_begin｜>{}<｜tool_call_end｜><｜tool_calls_end｜>",
        invoke("steptml:", "").trim_end()
    )
}

fn formats() -> [(Family, String); 6] {
    [
        (Family::Qwen3CoderXml, qwen3_coder()),
        (Family::SeedOss, seed_oss()),
        (Family::GlmXml, glm()),
        (Family::MinimaxXml, minimax()),
        (Family::DeepseekDsml, dsml()),
        (Family::Step3, step3()),
    ]
}

fn opts(hint: Option<Family>) -> ParseOptions {
    ParseOptions {
        format: hint,
        tools: vec![tool()],
        ..ParseOptions::default()
    }
}

#[test]
fn every_json_type_is_typed_against_the_schema_in_parse() {
    for (family, text) in formats() {
        for hint in [None, Some(family)] {
            let p = parse(&text, &opts(hint));
            assert_eq!(p.format, Some(family), "{family} hint {hint:?}");
            assert_eq!(p.calls.len(), 1, "{family} hint {hint:?}: {p:?}");
            assert_eq!(p.calls[0].name, "configure");
            assert_eq!(p.calls[0].arguments, expected(), "{family} hint {hint:?}");
            assert!(p.errors.is_empty() && !p.truncated, "{family}: {p:?}");
        }
    }
}

#[test]
fn every_json_type_is_typed_against_the_schema_when_streamed() {
    for (family, text) in formats() {
        let whole = parse(&text, &opts(None));
        for chunk in [1, 2, 5, 13, text.len()] {
            let mut sp = StreamParser::new(opts(None));
            let mut released = String::new();
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let mut cut = chunk.min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                released.push_str(&sp.push(&rest[..cut]));
                rest = &rest[cut..];
            }
            let streamed = sp.finish();
            assert_eq!(streamed, whole, "{family}, chunks of {chunk}");
            assert_eq!(
                streamed.calls[0].arguments,
                expected(),
                "{family}, chunks of {chunk}"
            );
            assert!(
                !released.contains("<parameter") && !released.contains("<arg_value>"),
                "{family}, chunks of {chunk}: call text released as content: {released:?}"
            );
        }
    }
}

#[test]
fn without_schemas_qwen_values_stay_text_and_glm_values_read_as_json() {
    let p = parse(&qwen3_coder(), &ParseOptions::default());
    assert_eq!(p.calls[0].arguments["count"], json!("42"));
    assert_eq!(
        p.calls[0].arguments["items"],
        json!("[1, \"two\", {\"x\": 3.5}, null]")
    );
    let p = parse(&glm(), &ParseOptions::default());
    assert_eq!(p.calls[0].arguments["count"], json!(42));
    assert_eq!(
        p.calls[0].arguments["items"],
        json!([1, "two", {"x": 3.5}, null])
    );
    // Without a schema GLM cannot know "007" is a string: JSON reads it as text (not a
    // valid JSON number), so it stays "007".
    assert_eq!(p.calls[0].arguments["zip"], json!("007"));
}
