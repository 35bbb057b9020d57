//! Streaming equivalence: splitting the input anywhere (and into any number of chunks)
//! changes nothing, and the released text is sound (see [`released_is_sound`]).

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

/// The released text is the input with some parts left out, in order; and when it is not
/// simply a prefix of the input (a call was cut out of it), it is a prefix of the final
/// content, unless the end of the text re-read the turn: a `</think>` with no opening tag
/// made earlier text reasoning, harmony channels (or another format) took over, or
/// MiniMax's `]<]minimax[>[` noise, which `parse` deletes first, joined text around it.
pub(crate) fn released_is_sound(
    input: &str,
    released: &str,
    parsed: &reagent_parse::Parsed,
) -> Result<(), String> {
    // The stream adds no text of its own (`parse` joins the text around a think block as
    // written).
    let mut rest = input.chars();
    if !released.chars().all(|c| rest.any(|d| d == c)) {
        return Err(format!(
            "released {released:?} is not drawn in order from the input"
        ));
    }
    let content = parsed.content.as_deref().unwrap_or_default();
    let reread = parsed.reasoning.is_some()
        || input.contains("]<]minimax[>[")
        || !parsed
            .format
            .is_some_and(reagent_parse::Family::streams_text_after_calls);
    if input.starts_with(released) || reread || content.starts_with(released) {
        Ok(())
    } else {
        Err(format!(
            "released {released:?} is neither a prefix of the input nor of the content {content:?}"
        ))
    }
}

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
        prop_assert_eq!(released_is_sound(&t, &released, &streamed), Ok(()));
    }

    #[test]
    fn byte_by_byte_equals_one_shot_with_hint(t in text(), fam in prop::sample::select(Family::ALL)) {
        let opts = ParseOptions::with_format(fam);
        let cuts: Vec<usize> = (0..=t.len()).collect();
        let (released, streamed) = stream(&t, &cuts, &opts);
        prop_assert_eq!(&streamed, &parse(&t, &opts));
        prop_assert_eq!(released_is_sound(&t, &released, &streamed), Ok(()));
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
            assert_eq!(released_is_sound(t, &released, &streamed), Ok(()));
        }
    }
}

/// Prose, whitespace, stray closers, think blocks and `<tool_call>` calls of the families
/// that keep the text around them (one with a closing tag inside an argument string):
/// nothing in these texts is held except the calls and the thinking.
const CUT_FRAGMENTS: &[&str] = &[
    "Hello",
    " world",
    "\n",
    "  ",
    "ok.",
    "é中🎉",
    "}",
    // A `]` alone at the very end may still begin MiniMax's noise: the space settles it.
    "] ",
    "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>",
    "<tool_call>\n{\"name\": \"g\", \"arguments\": {\"s\": \"x}y\"}}\n</tool_call>",
    "<tool_call>{\"name\": \"h\", \"arguments\": {\"s\": \"</tool_call>\"}}</tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1 \n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n</tool_call>",
    "<tool_call>[{\"name\": \"f\", \"arguments\": {}}, {\"name\": \"g\", \"arguments\": {}}]</tool_call>",
    "<think>plan</think>",
    "<think>\nweigh it\n</think>\n\n",
];

/// Kimi K3's channels around prose: the response channel's text, a think channel and a
/// tools section (its closer has its own line here, as the template writes it).
const K3_FRAGMENTS: &[&str] = &[
    "Hello",
    " world",
    "\n",
    "ok.",
    "<|open|>response<|sep|>On it.<|close|>response<|sep|>",
    "<|open|>response<|sep|>\nSee below.\n<|close|>response<|sep|>",
    "<|open|>think<|sep|>plan<|close|>think<|sep|>",
    "<|open|>tools<|sep|><|open|>call tool=\"ls\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    "<|open|>tools<|sep|>\n<|open|>call tool=\"read\" index=\"1\"<|sep|><|open|>argument key=\"p\" type=\"string\"<|sep|>a>b<|close|>argument<|sep|><|close|>call<|sep|>\n<|close|>tools<|sep|>",
];

/// Streams `parts` (one byte at a time, or cut at `cuts`) and checks that the stream
/// parses as the whole text does, and that everything the content holds was released by
/// the end of the stream: none of it waited for `finish`, and nothing else was released.
fn check_released_live(
    parts: &[&str],
    cuts: Vec<usize>,
    one_byte: bool,
) -> Result<(), TestCaseError> {
    let t = parts.concat();
    let opts = ParseOptions::default();
    let cuts: Vec<usize> = if one_byte {
        (0..=t.len()).collect()
    } else {
        cuts
    };
    let (released, streamed) = stream(&t, &cuts, &opts);
    prop_assert_eq!(&streamed, &parse(&t, &opts));
    prop_assert_eq!(
        released.as_str(),
        streamed.content.as_deref().unwrap_or_default()
    );
    Ok(())
}

proptest! {
    #[test]
    fn text_after_calls_is_released_live(
        parts in prop::collection::vec(prop::sample::select(CUT_FRAGMENTS), 0..10),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        one_byte in any::<bool>(),
    ) {
        check_released_live(&parts, cuts, one_byte)?;
    }

    #[test]
    fn kimi_k3_text_is_released_live(
        parts in prop::collection::vec(prop::sample::select(K3_FRAGMENTS), 0..10),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        one_byte in any::<bool>(),
    ) {
        check_released_live(&parts, cuts, one_byte)?;
    }
}

/// Pushes `steps` (chunk, text it must release) through one parser, then checks the
/// released total and the final result.
fn check_releases(steps: &[(&str, &str)], content: &str, calls: usize) {
    let mut sp = StreamParser::new(ParseOptions::default());
    for (chunk, want) in steps {
        assert_eq!(sp.push(chunk), *want, "pushing {chunk:?}");
    }
    assert_eq!(sp.released(), content);
    let p = sp.finish();
    assert_eq!(p.calls.len(), calls);
    assert_eq!(p.content.as_deref(), Some(content));
}

#[test]
fn text_after_a_call_is_released_as_it_streams() {
    check_releases(
        &[
            ("Let me look.\n", "Let me look.\n"),
            ("<tool_call>\n{\"name\": \"read\", \"arguments\": ", ""),
            ("{\"path\": \"a\"}}\n</tool_call>", ""),
            // Text came before the call, so the whitespace after it is content at once.
            ("\n", "\n"),
            ("I will wait", "I will wait"),
            (" for it.", " for it."),
        ],
        "Let me look.\n\nI will wait for it.",
        1,
    );
}

#[test]
fn whitespace_around_calls_waits_for_text() {
    // No text yet: whitespace before, between and after the calls is kept back (a reply of
    // calls alone prints nothing), and a stray `}` after a call is dropped as `parse` does.
    check_releases(
        &[
            ("\n", ""),
            (
                "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
                "",
            ),
            ("}\n", ""),
            (
                "<tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>\n",
                "",
            ),
            ("Done", "\n\n\nDone"),
        ],
        "\n\n\nDone",
        2,
    );
}

#[test]
fn calls_after_thinking_are_cut_when_nothing_was_released() {
    let mut sp = StreamParser::new(ParseOptions::default());
    let out: String = [
        "<think>\nwhich file?\n</think>\n\n",
        "<tool_call>\n{\"name\": \"read\", \"arguments\": {}}\n</tool_call>",
        "\nreading it",
    ]
    .iter()
    .map(|c| sp.push(c))
    .collect();
    assert_eq!(out, "\nreading it");
    let p = sp.finish();
    assert_eq!(p.reasoning.as_deref(), Some("which file?"));
    assert_eq!(p.content.as_deref(), Some("\nreading it"));
}

#[test]
fn calls_of_families_that_drop_text_stay_held() {
    // GLM drops the text between its calls; a Mistral hint drops the text after them:
    // neither is cut, the text after waits for `finish`.
    let glm = "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n</tool_call> between";
    let hermes = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call> after";
    let mistral = ParseOptions::with_format(Family::Mistral);
    for (text, opts) in [(glm, ParseOptions::default()), (hermes, mistral)] {
        let mut sp = StreamParser::new(opts);
        assert_eq!(sp.push(text), "", "{text}");
    }
}

/// Streams `t` whole and in `step`-byte chunks: each gives the one-shot result and sound
/// released text. Returns both streams' released text and result.
fn stream_checked(t: &str, step: usize) -> [(String, reagent_parse::Parsed); 2] {
    let opts = ParseOptions::default();
    let whole = stream(t, &[], &opts);
    let chunked = stream(t, &(0..=t.len()).step_by(step).collect::<Vec<_>>(), &opts);
    for (released, streamed) in [&whole, &chunked] {
        assert_eq!(streamed, &parse(t, &opts));
        assert_eq!(released_is_sound(t, released, streamed), Ok(()));
    }
    [whole, chunked]
}

/// Found by `cargo fuzz`: a MiniMax block left open runs to the end of the text, so a
/// `</tool_call>` inside it does not close a call and the text after it is not content.
#[test]
fn a_call_left_open_is_not_cut_at_a_later_closing_tag() {
    let t = "I'm\n<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1</parameter>\n</invoke>\n{\"name\": \"g\", \"arguments\": {}}</tool_call> swallowed";
    for (released, streamed) in stream_checked(t, 1) {
        assert_eq!(released, "I'm\n");
        assert_eq!(streamed.content.as_deref(), Some("I'm\n"));
    }
}

/// Found by `cargo fuzz`: `parse` deletes MiniMax's `]<]minimax[>[` noise from the whole
/// text, so the stream never releases it, even after a cut.
#[test]
fn minimax_noise_is_never_released() {
    let t = "Hi <tool_call>\n<invoke name=\"f\">\n</invoke>\n</tool_call> a]<]minimax[>[b";
    for (released, _) in stream_checked(t, 1) {
        assert!(!released.contains("minimax"), "{released:?}");
    }
}

/// Found by `cargo fuzz`: a call that swallows the whitespace after it (a bare
/// `<function=` left open) is not cut, so that whitespace is never released.
#[test]
fn a_call_that_swallows_the_whitespace_after_it_is_not_cut() {
    let t = "<t/ol_call><function=first><parameter=a>1</parameter></function></tool_call>\n<tool_call><function=second><parameter=b>2�Џ�rameter>*</eter=a>1</parameter></function><function=</tool_call>\n<tool_call><function_call><function=second><parameter=b>2�Џ�rameter>*</eter=a>1</parameter></function></tool_call>\n<tool_call><function=second><parameter=b>2</parameter></function></tool_call>\n<tool_call>=second><parameter=b>2</parameter></function></tool_call>\n<tool_call><function=third><parameter=c>6</pararemre></functionfunction></tool_call>\n<tool_call><function=third><parameter=c>6</parameter.</f%unction></tool_call>";
    for (released, streamed) in stream_checked(t, 4) {
        assert!(streamed.content.unwrap_or_default().starts_with(&released));
    }
}

#[test]
fn the_answer_after_thinking_is_released_as_it_streams() {
    check_releases(
        &[
            ("<think>\nWhich file", ""),
            ("? a.txt\n</think>", ""),
            // `parse` trims the start of the text after thinking: so does the stream.
            ("\n\n", ""),
            ("The answer", "The answer"),
            (" is 42.", " is 42."),
        ],
        "The answer is 42.",
        0,
    );
    // Text before the block: the text around it is joined as written.
    check_releases(
        &[
            ("Hi. ", "Hi. "),
            ("<think>plan</think> ", " "),
            ("Done.", "Done."),
        ],
        "Hi.  Done.",
        0,
    );
}

#[test]
fn thinking_forced_open_by_the_prompt_is_cut_at_its_close() {
    let opts = ParseOptions {
        prefill: "<think>\n".to_string(),
        ..ParseOptions::default()
    };
    let mut sp = StreamParser::new(opts.clone());
    let out: Vec<String> = [
        "weighing it",
        "</think>\n\n",
        "Answer",
        ": 42",
        "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
        " then more",
    ]
    .iter()
    .map(|c| sp.push(c))
    .collect();
    assert_eq!(out, ["", "", "Answer", ": 42", "", " then more"]);
    let p = sp.finish();
    assert_eq!(p.reasoning.as_deref(), Some("weighing it"));
    assert_eq!(p.content.as_deref(), Some("Answer: 42 then more"));
    assert_eq!(p.calls.len(), 1);
}
