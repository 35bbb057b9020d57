//! Fuzz target: `parse` must never panic or hang on any input, with or without a family
//! hint, and the streaming parser fed the same bytes in chunks must agree with it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reagent_parse::{parse, Family, ParseOptions, StreamParser};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let fams = Family::ALL;
    let opts = if (sel as usize) < fams.len() {
        ParseOptions::with_format(fams[sel as usize])
    } else {
        ParseOptions::default()
    };
    let whole = parse(&text, &opts);
    let _ = reagent_parse::render_human(&whole);
    let _ = reagent_parse::render_json(&whole);
    // Stream in chunks whose size comes from the selector byte.
    let step = 1 + (sel as usize % 7);
    let mut sp = StreamParser::new(opts);
    let mut at = 0;
    let mut released = String::new();
    while at < text.len() {
        let mut next = (at + step).min(text.len());
        while !text.is_char_boundary(next) {
            next += 1;
        }
        released.push_str(&sp.push(&text[at..next]));
        at = next;
    }
    assert_eq!(sp.finish(), whole);
    // Released text is drawn in order from the input; once a call was cut out of it (so it
    // is no longer a prefix of the input) it is a prefix of the content, unless the end of
    // the text re-read the turn (earlier text became reasoning, another format took over).
    // The only text of its own the stream adds is the line break that follows thinking
    // (`parse` puts one between text before and after a think block).
    let mut rest = text.chars();
    assert!(
        released
            .chars()
            .all(|c| c == '\n' || rest.any(|d| d == c)),
        "released text not from the input"
    );
    let content = whole.content.as_deref().unwrap_or_default();
    assert!(
        text.starts_with(released.as_str())
            || whole.reasoning.is_some()
            || text.contains("]<]minimax[>[")
            || !whole.format.is_some_and(Family::streams_text_after_calls)
            || content.starts_with(released.as_str()),
        "released text is neither a prefix of the input nor of the content"
    );
});
