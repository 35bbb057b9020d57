//! Streaming equivalence: splitting the input anywhere (and into any number of chunks)
//! changes nothing, and released text is always a prefix of the input.

use proptest::prelude::*;
use reagent_parse::{parse, Family, ParseOptions, StreamParser};

/// Fragments that build realistic and adversarial outputs.
const FRAGMENTS: &[&str] = &[
    "Hello",
    " world",
    "\n",
    "<tool_call>",
    "</tool_call>",
    "{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
    "{\"name\": \"g\"",
    "}",
    "]",
    "[TOOL_CALLS]",
    "f[ARGS]{\"x\": \"}\"}",
    "<think>",
    "</think>",
    "[f(a=1)]",
    "[link](url)",
    "<function=f>",
    "<parameter=k>\nv\n</parameter>",
    "</function>",
    "Action: search\n",
    "Action Input: q\n",
    "Final Answer: done",
    "```json\n",
    "```",
    "<|channel|>analysis<|message|>",
    "<|end|>",
    "<|start|>assistant",
    " to=functions.f",
    "<|message|>{}",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "f<｜tool▁sep｜>{}",
    "<｜tool▁call▁end｜>",
    "é中🎉",
    "<div>",
    "a < b",
    "[",
    "{",
    "<",
    "`",
    "'",
    "\"",
    "\\",
    "reAction",
    " fin",
    "cAction: x",
    " Final",
    " Answer: ok",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..12).prop_map(|v| v.concat())
}

fn stream(text: &str, cuts: &[usize], opts: &ParseOptions) -> (String, reagent_parse::Parsed) {
    let mut sp = StreamParser::new(opts.clone());
    let mut released = String::new();
    let mut last = 0;
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| c % (text.len() + 1))
        .filter(|c| text.is_char_boundary(*c))
        .collect();
    points.sort_unstable();
    // `push`, `push_into` and `feed` in turns: they release the same text.
    for (k, p) in points.into_iter().chain([text.len()]).enumerate() {
        let chunk = &text[last..p];
        match k % 3 {
            0 => released.push_str(&sp.push(chunk)),
            1 => sp.push_into(chunk, &mut released),
            _ => released.push_str(sp.feed(chunk)),
        }
        last = p;
    }
    assert_eq!(released, sp.released());
    (released, sp.finish())
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=N runs more.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn any_split_gives_the_one_shot_result(t in text(), cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let opts = ParseOptions::default();
        let (released, streamed) = stream(&t, &cuts, &opts);
        prop_assert_eq!(&streamed, &parse(&t, &opts));
        prop_assert!(t.starts_with(&released), "released {:?} of {:?}", released, t);
    }

    #[test]
    fn byte_by_byte_equals_one_shot_with_hint(t in text(), fam in prop::sample::select(Family::ALL)) {
        let opts = ParseOptions::with_format(fam);
        let cuts: Vec<usize> = (0..=t.len()).collect();
        let (released, streamed) = stream(&t, &cuts, &opts);
        prop_assert_eq!(&streamed, &parse(&t, &opts));
        prop_assert!(t.starts_with(&released));
    }
}

#[test]
fn prose_is_released_live() {
    let mut sp = StreamParser::new(ParseOptions::default());
    assert_eq!(sp.push("Hello, "), "Hello, ");
    assert_eq!(sp.push("world. <b>bold</b> "), "world. <b>bold</b> ");
    // A possible marker prefix is held until it resolves.
    assert_eq!(sp.push("<tool"), "");
    assert_eq!(
        sp.push("_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"),
        ""
    );
    let p = sp.finish();
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.content.as_deref(), Some("Hello, world. <b>bold</b> "));
}

#[test]
fn markdown_brackets_do_not_block_release() {
    let mut sp = StreamParser::new(ParseOptions::default());
    let out = sp.push("See [the docs](https://x.y) and {braces} here");
    assert_eq!(out, "See [the docs](https://x.y) and {braces} here");
}

/// Byte-by-byte through the one-byte fast path, including words that only look like
/// markers mid-word, ReAct words the fast path never examines, and a prefill.
#[test]
fn one_byte_pushes_match_one_shot() {
    let texts = [
        "plain prose, no markers at all.\n",
        "the reAction was fine",
        "xFinal Answer: 42",
        "a caf\u{e9} then cats",
        "reasoning only</think>then the answer",
        "fun call: f(x)",
        "   ",
        "",
    ];
    let prefilled = ParseOptions {
        prefill: "<think>".to_string(),
        ..ParseOptions::default()
    };
    let mut all_opts = vec![ParseOptions::default(), prefilled];
    all_opts.extend(Family::ALL.iter().map(|f| ParseOptions::with_format(*f)));
    for opts in &all_opts {
        for t in texts {
            let cuts: Vec<usize> = (0..=t.len()).collect();
            let (released, streamed) = stream(t, &cuts, opts);
            assert_eq!(streamed, parse(t, opts), "{t:?} with {opts:?}");
            assert!(t.starts_with(&released), "{released:?} of {t:?}");
        }
    }
}
