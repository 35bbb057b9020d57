//! Criterion benchmarks: one-shot throughput on 1 MB of prose (no calls) and on 1 MB of
//! output with calls, and the cost of streaming 1 MB one byte at a time versus one-shot
//! (`stream_byte_at_a_time` through the zero-copy `feed`, `stream_push_into` through the
//! copying `push_into`). `stream_floor` is a reference, not the parser: the same
//! byte-at-a-time loop that only keeps each byte and hands it back (what any streaming
//! parser that releases text live and parses exactly at the end must at least do).

// criterion_group! generates an undocumented public fn.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use reagent_parse::{parse, ParseOptions, StreamParser};

const MB: usize = 1 << 20;

/// 1 MB of prose with punctuation, digits and newlines, but no call markers.
fn prose() -> String {
    let words = [
        "the",
        "model",
        "reads",
        "a",
        "file,",
        "then",
        "writes",
        "42",
        "lines.",
        "Next",
        "it",
        "checks",
        "results;",
        "errors",
        "are",
        "rare!",
        "Why?",
        "because\n",
        "tests",
        "pass.",
    ];
    let mut s = String::with_capacity(MB + 64);
    let mut i = 0usize;
    while s.len() < MB {
        s.push_str(words[i % words.len()]);
        s.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7) % 1009;
    }
    s.truncate(MB);
    s
}

/// 1 MB of assistant output: prose with Hermes calls (nested JSON, escapes) in between.
fn with_calls() -> String {
    let block = concat!(
        "I'll look at the file first, then fix the failing test in the parser module.\n",
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\", ",
        "\"range\": [1, 120], \"opts\": {\"follow\": true, \"note\": \"a } brace and \\\"quotes\\\"\"}}}\n",
        "</tool_call>\n",
        "Now the edit.\n<tool_call>\n{\"name\": \"edit\", \"arguments\": {\"old\": \"fn a() {\\n    1\\n}\", ",
        "\"new\": \"fn a() {\\n    2\\n}\"}}\n</tool_call>\n"
    );
    let mut s = String::with_capacity(MB + block.len());
    while s.len() < MB {
        s.push_str(block);
    }
    s
}

/// Calls `each` with `text` one character at a time (one byte at a time for ASCII).
#[inline(always)]
fn each_char(text: &str, mut each: impl FnMut(&str)) {
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let (head, tail) = rest.split_at(c.len_utf8());
        each(head);
        rest = tail;
    }
}

/// Streams `text` one character at a time through [`StreamParser::feed`] (the released
/// text is borrowed, as a printer would use it), then finishes.
fn stream_bytewise(text: &str) -> usize {
    let mut sp = StreamParser::new(ParseOptions::default());
    let mut released = 0;
    each_char(text, |chunk| released += sp.feed(chunk).len());
    sp.finish().calls.len() + released
}

/// The same through [`StreamParser::push_into`], which copies the released text into `out`.
fn stream_push_into(text: &str) -> usize {
    let mut sp = StreamParser::new(ParseOptions::default());
    let mut out = String::new();
    each_char(text, |chunk| sp.push_into(chunk, &mut out));
    sp.finish().calls.len() + out.len()
}

/// The reference floor: no parsing; each chunk is kept (as the parser must, to finish
/// exactly) and handed back, as `feed` does.
fn floor_bytewise(text: &str) -> usize {
    let mut kept = String::new();
    let mut released = 0;
    each_char(text, |chunk| {
        match *chunk.as_bytes() {
            [c] => kept.push(char::from(c)),
            _ => kept.push_str(chunk),
        }
        released += kept[kept.len() - chunk.len()..].len();
    });
    black_box(kept).len() + released
}

/// One way of streaming a text through, returning a count so nothing is optimised away.
type Streamer = fn(&str) -> usize;

fn benches(c: &mut Criterion) {
    let opts = ParseOptions::default();
    let inputs = [("prose_1mb", prose()), ("with_calls_1mb", with_calls())];
    let mut g = c.benchmark_group("one_shot");
    for (name, text) in &inputs {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), text, |b, t| {
            b.iter(|| parse(black_box(t), &opts))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("stream_byte_at_a_time");
    g.sample_size(10);
    for (name, text) in &inputs {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), text, |b, t| {
            b.iter(|| stream_bytewise(black_box(t)))
        });
    }
    g.finish();
    let (name, prose) = &inputs[0];
    let references: [(&str, Streamer); 2] = [
        ("stream_push_into", stream_push_into),
        ("stream_floor", floor_bytewise),
    ];
    for (group, run) in references {
        let mut g = c.benchmark_group(group);
        g.sample_size(10);
        g.throughput(Throughput::Bytes(prose.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), prose, |b, t| {
            b.iter(|| run(black_box(t)))
        });
        g.finish();
    }
}

criterion_group!(parse_benches, benches);
criterion_main!(parse_benches);
