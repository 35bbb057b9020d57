//! Property tests: any call rendered in any supported format and embedded in random
//! prose parses back to itself (by auto-detection and with the family hint).

use proptest::prelude::*;
use reagent_parse::{parse, Family, ParseOptions, ParsedCall, StreamParser, ToolSchema};
use serde_json::{json, Map, Value};

/// A generated call: name plus typed arguments.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    args: Vec<(String, Value)>,
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,10}"
}

/// Strings that stress quoting: quotes, backslashes, braces, unicode, newlines.
fn tricky_string() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 _\"'\\\\{}\\[\\]():;,.=é中🎉\n\t-]{0,24}"
}

/// Strings safe as raw XML text and inside Gemma delimiters.
fn xml_string() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_\"'{}():;,.=é中 -]{1,20}"
}

fn value(strings: BoxedStrategy<String>) -> impl Strategy<Value = Value> {
    prop_oneof![
        strings.prop_map(Value::String),
        any::<i32>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        prop::collection::vec(any::<i16>(), 0..4).prop_map(|v| json!(v)),
    ]
}

fn call(strings: BoxedStrategy<String>) -> impl Strategy<Value = Call> {
    (
        name(),
        prop::collection::btree_map("[a-z][a-z0-9_]{0,8}", value(strings), 0..4),
    )
        .prop_map(|(name, args)| Call {
            name,
            args: args.into_iter().collect(),
        })
}

fn args_obj(c: &Call) -> Value {
    Value::Object(c.args.iter().cloned().collect::<Map<_, _>>())
}

fn py(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Array(items) => format!("[{}]", items.iter().map(py).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn gemma_val(v: &Value, delim: &str) -> String {
    match v {
        Value::String(s) => format!("{delim}{s}{delim}"),
        Value::Array(items) => {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(|i| gemma_val(i, delim))
                    .collect::<Vec<_>>()
                    .join(",")
            )
        }
        other => other.to_string(),
    }
}

fn xml_raw(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Render `c` in `fam`'s syntax.
fn render(fam: Family, c: &Call) -> String {
    let args = args_obj(c).to_string();
    let n = &c.name;
    match fam {
        Family::Hermes => format!("<tool_call>\n{{\"name\": \"{n}\", \"arguments\": {args}}}\n</tool_call>"),
        Family::Llama3Json => format!("{{\"name\": \"{n}\", \"parameters\": {args}}}"),
        Family::Mistral => format!("[TOOL_CALLS]{n}[ARGS]{args}"),
        Family::XlamJsonList => format!("[{{\"name\": \"{n}\", \"arguments\": {args}}}]"),
        Family::Granite => format!("<|tool_call|>[{{\"name\": \"{n}\", \"arguments\": {args}}}]"),
        Family::Phi4Mini => format!("functools[{{\"name\": \"{n}\", \"arguments\": {args}}}]"),
        Family::Internlm2 => {
            format!("<|action_start|><|plugin|>{{\"name\": \"{n}\", \"parameters\": {args}}}<|action_end|>")
        }
        Family::NemotronToolcall => {
            format!("<TOOLCALL>[{{\"name\": \"{n}\", \"arguments\": {args}}}]</TOOLCALL>")
        }
        Family::KimiK2 => format!(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.{n}:0<|tool_call_argument_begin|>{args}<|tool_call_end|><|tool_calls_section_end|>"
        ),
        Family::DeepseekV3 => format!(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{args}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
        ),
        Family::CommandR7b => format!(
            "<|START_ACTION|>[{{\"tool_call_id\": \"0\", \"tool_name\": \"{n}\", \"parameters\": {args}}}]<|END_ACTION|>"
        ),
        Family::Qwen3CoderXml => {
            let ps: String = c
                .args
                .iter()
                .map(|(k, v)| format!("<parameter={k}>\n{}\n</parameter>\n", xml_raw(v)))
                .collect();
            format!("<tool_call>\n<function={n}>\n{ps}</function>\n</tool_call>")
        }
        Family::GlmXml => {
            let ps: String = c
                .args
                .iter()
                .map(|(k, v)| format!("<arg_key>{k}</arg_key>\n<arg_value>{}</arg_value>\n", xml_raw(v)))
                .collect();
            format!("<tool_call>{n}\n{ps}</tool_call>")
        }
        Family::MinimaxXml => {
            let ps: String = c
                .args
                .iter()
                .map(|(k, v)| format!("<parameter name=\"{k}\">{}</parameter>\n", xml_raw(v)))
                .collect();
            format!("<minimax:tool_call>\n<invoke name=\"{n}\">\n{ps}</invoke>\n</minimax:tool_call>")
        }
        Family::Pythonic | Family::Lfm2Pythonic | Family::Olmo3Pythonic => {
            let kw: Vec<String> = c.args.iter().map(|(k, v)| format!("{k}={}", py(v))).collect();
            let one = format!("{n}({})", kw.join(", "));
            match fam {
                Family::Lfm2Pythonic => format!("<|tool_call_start|>[{one}]<|tool_call_end|>"),
                Family::Olmo3Pythonic => format!("<function_calls>{one}</function_calls>"),
                _ => format!("[{one}]"),
            }
        }
        Family::Gemma4 | Family::FunctionGemma => {
            let (open, close, d) = if fam == Family::Gemma4 {
                ("<|tool_call>", "<tool_call|>", "<|\"|>")
            } else {
                ("<start_function_call>", "<end_function_call>", "<escape>")
            };
            let kv: Vec<String> = c.args.iter().map(|(k, v)| format!("{k}:{}", gemma_val(v, d))).collect();
            format!("{open}call:{n}{{{}}}{close}", kv.join(","))
        }
        _ => format!(
            "<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{args}<|call|>"
        ),
    }
}

const JSON_FAMILIES: &[Family] = &[
    Family::Hermes,
    Family::Llama3Json,
    Family::Mistral,
    Family::XlamJsonList,
    Family::Granite,
    Family::Phi4Mini,
    Family::Internlm2,
    Family::NemotronToolcall,
    Family::KimiK2,
    Family::DeepseekV3,
    Family::CommandR7b,
    Family::GptOss,
    Family::Pythonic,
    Family::Lfm2Pythonic,
    Family::Olmo3Pythonic,
];
const TEXT_FAMILIES: &[Family] = &[
    Family::Qwen3CoderXml,
    Family::GlmXml,
    Family::MinimaxXml,
    Family::Gemma4,
    Family::FunctionGemma,
];

/// Rendered families whose call ends with a closing tag of its own and whose content is
/// the text around the call: the stream releases the text after the call live.
const CLOSED_FAMILIES: &[Family] = &[
    Family::Hermes,
    Family::Qwen3CoderXml,
    Family::MinimaxXml,
    Family::Lfm2Pythonic,
    Family::Olmo3Pythonic,
    Family::NemotronToolcall,
    Family::Internlm2,
    Family::KimiK2,
    Family::DeepseekV3,
    Family::CommandR7b,
    Family::Gemma4,
    Family::FunctionGemma,
];

fn tools_for(c: &Call) -> Vec<ToolSchema> {
    let props: Map<String, Value> = c
        .args
        .iter()
        .map(|(k, v)| {
            let ty = match v {
                Value::String(_) => "string",
                Value::Bool(_) => "boolean",
                Value::Array(_) => "array",
                _ => "integer",
            };
            (k.clone(), json!({ "type": ty }))
        })
        .collect();
    vec![ToolSchema {
        name: c.name.clone(),
        parameters: json!({"type": "object", "properties": props}),
    }]
}

/// Prose that holds no call markers.
fn prose() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ,.!?\n]{0,40}"
}

fn check_roundtrip(fam: Family, c: &Call, before: &str, after: &str) -> Result<(), TestCaseError> {
    let text = format!("{before}{}{after}", render(fam, c));
    let want = ParsedCall {
        name: c.name.clone(),
        arguments: args_obj(c),
        id: None,
    };
    for hint in [None, Some(fam)] {
        let opts = ParseOptions {
            format: hint,
            tools: tools_for(c),
            ..ParseOptions::default()
        };
        let got = parse(&text, &opts);
        prop_assert_eq!(
            got.calls.len(),
            1,
            "{:?} hint {:?}: {:?} from {:?}",
            fam,
            hint,
            got,
            text
        );
        prop_assert_eq!(&got.calls[0].name, &want.name);
        prop_assert_eq!(
            &got.calls[0].arguments,
            &want.arguments,
            "{:?} from {:?}",
            fam,
            text
        );
        prop_assert!(!got.truncated);
    }
    Ok(())
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=N runs more.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn json_formats_roundtrip(
        fam in prop::sample::select(JSON_FAMILIES),
        c in call(tricky_string().boxed()),
        before in prose(),
        after in prose(),
    ) {
        // Llama 3 JSON and bare lists drop or keep prose by family rules; calls must match.
        check_roundtrip(fam, &c, &before, &after)?;
    }

    #[test]
    fn text_formats_roundtrip(
        fam in prop::sample::select(TEXT_FAMILIES),
        c in call(xml_string().boxed()),
        before in prose(),
        after in prose(),
    ) {
        check_roundtrip(fam, &c, &before, &after)?;
    }

    #[test]
    fn hermes_content_is_the_surrounding_prose(
        c in call(tricky_string().boxed()),
        before in "[a-zA-Z]{1,10}[a-zA-Z0-9 ,.!?]{0,30}",
        after in "[a-zA-Z0-9 ,.!?]{0,30}[a-zA-Z]{1,10}",
    ) {
        let text = format!("{before}{}{after}", render(Family::Hermes, &c));
        let got = parse(&text, &ParseOptions::default());
        prop_assert_eq!(got.content, Some(format!("{before}{after}")));
        prop_assert_eq!(got.format, Some(Family::Hermes));
    }

    #[test]
    fn truncated_calls_yield_no_call(c in call(tricky_string().boxed()), cut in 0.0f64..1.0) {
        let full = render(Family::Hermes, &c);
        // Cut inside the JSON object (after `{`, before its final `}`).
        let open = full.find('{').unwrap_or(0) + 1;
        let close = full.rfind('}').unwrap_or(full.len());
        let mut at = open + ((close - open) as f64 * cut) as usize;
        while !full.is_char_boundary(at) { at -= 1; }
        let got = parse(&full[..at], &ParseOptions::default());
        prop_assert!(got.calls.is_empty(), "{:?}", got);
        prop_assert!(got.truncated);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    /// Split anywhere, a call of any closed family embedded in prose streams out as exactly
    /// the content: everything before the call, then everything after it once it closed.
    #[test]
    fn text_around_closed_calls_is_released_live(
        fam in prop::sample::select(CLOSED_FAMILIES),
        hinted in any::<bool>(),
        c in call(xml_string().boxed()),
        before in prose(),
        after in prose(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        prop_assert!(fam.streams_text_after_calls());
        // The final `.` settles a trailing word that might have begun `Action`.
        let text = format!("{before}{}{after}.", render(fam, &c));
        let opts = ParseOptions { format: hinted.then_some(fam), ..ParseOptions::default() };
        let whole = parse(&text, &opts);
        prop_assert_eq!(whole.calls.len(), 1, "{:?}", &text);
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|c| c % (text.len() + 1))
            .filter(|c| text.is_char_boundary(*c))
            .chain([text.len()])
            .collect();
        points.sort_unstable();
        let mut sp = StreamParser::new(opts);
        let mut released = String::new();
        let mut last = 0;
        for p in points {
            released.push_str(sp.feed(&text[last..p]));
            last = p;
        }
        prop_assert_eq!(&sp.finish(), &whole);
        prop_assert_eq!(released.as_str(), whole.content.as_deref().unwrap_or_default(), "{:?}", &text);
    }
}
