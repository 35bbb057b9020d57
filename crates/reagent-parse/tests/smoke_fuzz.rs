//! Stable-Rust fuzz smoke run: a few hundred thousand random and mutated inputs (seeded
//! from the corpus) go through `parse` and the streaming parser, which must not panic,
//! must agree, and must finish quickly. `cargo fuzz` (nightly) runs the same target longer.

use std::time::{Duration, Instant};

use reagent_parse::{parse, Family, ParseOptions, StreamParser, ToolSchema};

/// The bound that tells linear work from a blow-up. The inputs are sized so that quadratic
/// work takes minutes; linear work takes well under a second on a quiet machine. The bound is
/// far above that so a loaded machine (CI, parallel builds) cannot fail it: these tests catch
/// super-linear behaviour, and the parser's speed is measured in its benchmarks instead.
const BLOW_UP: Duration = Duration::from_secs(30);

/// A tiny deterministic PRNG (xorshift64*), so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\\",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<function=",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "<|channel|>",
    "<|message|>",
    " to=functions.",
    "<|start|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁sep｜>",
    "```",
    "Action:",
    "Action Input:",
    "Final Answer:",
    "<|tool_call>",
    "call:",
    "<|\"|>",
    "<escape>",
    "(",
    ")",
    "=",
    ",",
    ":",
    "\n",
    "é",
    "🎉",
    "<invoke name=\"",
    "<![CDATA[",
    "]<]minimax[>[",
    "functools",
    "<|python_tag|>",
    ";",
    "✿FUNCTION✿: ",
    "✿ARGS✿: ",
    "<invoke>",
    "<tool_name>",
    "<parameters>",
    "<read_file>",
    "</read_file>",
    "<path>",
    "```tool_code\n",
    "<|reserved_special_token_249|>",
    ">>>",
    "<|im_start|>assistant\n",
    "TOOL_NAME: ",
    "BEGIN_ARG: ",
    "END_ARG",
];

/// Tools offered in a third of the runs, so the readers that need them (an offered tool's
/// name as a tag, the code interpreter after `<|python_tag|>`) are exercised too.
fn offered_tools() -> Vec<ToolSchema> {
    ["read_file", "get_weather", "python"]
        .iter()
        .map(|name| ToolSchema {
            name: (*name).to_string(),
            parameters: serde_json::json!({"type": "object", "properties": {
                "path": {"type": "string"}, "days": {"type": "integer"}}}),
        })
        .collect()
}

fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s: Vec<u8> = seed.as_bytes().to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(s.len() + 1);
        match rng.below(5) {
            0 => {
                let tok = TOKENS[rng.below(TOKENS.len())];
                s.splice(at..at, tok.bytes());
            }
            1 if !s.is_empty() => {
                let end = (at + rng.below(16)).min(s.len());
                s.drain(at.min(s.len())..end);
            }
            2 => s.truncate(at),
            3 if !s.is_empty() => {
                let i = rng.below(s.len());
                s[i] = (rng.next() & 0x7f) as u8;
            }
            _ => {
                let a = rng.below(s.len() + 1);
                let b = (a + rng.below(32)).min(s.len());
                let copy = s[a..b].to_vec();
                s.splice(at..at, copy);
            }
        }
    }
    String::from_utf8_lossy(&s).into_owned()
}

/// The outputs of the main corpus and of the held-out corpus (whose later batches hold the
/// formats read last: Kimi K3, HY, GCML, Gemma 4's variants, ...).
fn seeds() -> Vec<String> {
    let heldout =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/heldout.jsonl");
    [super::corpus::corpus_path(), heldout]
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("CORPUS MISSING: {} ({e})", path.display()));
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["output"].as_str().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn hundreds_of_thousands_of_mutated_inputs_do_not_panic() {
    let seeds = seeds();
    let iterations: usize = if cfg!(debug_assertions) {
        200_000
    } else {
        1_000_000
    };
    // `REAGENT_FUZZ_SEED` explores other inputs; the default keeps CI's run the same.
    let seed = std::env::var("REAGENT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng(seed);
    let tools = offered_tools();
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for n in 0..iterations {
        let seed = &seeds[rng.below(seeds.len())];
        let input = if n % 10 == 0 {
            (0..rng.below(40))
                .map(|_| TOKENS[rng.below(TOKENS.len())])
                .collect()
        } else {
            mutate(&mut rng, seed)
        };
        let opts = match n % 3 {
            0 => ParseOptions::with_format(Family::ALL[rng.below(Family::ALL.len())]),
            1 => ParseOptions {
                tools: tools.clone(),
                ..ParseOptions::default()
            },
            _ => ParseOptions::default(),
        };
        let t0 = Instant::now();
        let one = parse(&input, &opts);
        if n % 50 == 0 {
            let mut sp = StreamParser::new(opts.clone());
            let mut released = String::new();
            let mut at = 0;
            while at < input.len() {
                let mut next = (at + 1 + rng.below(8)).min(input.len());
                while !input.is_char_boundary(next) {
                    next += 1;
                }
                released.push_str(sp.feed(&input[at..next]));
                at = next;
            }
            assert_eq!(sp.finish(), one, "stream/one-shot differ on {input:?}");
            let sound = crate::streaming::released_is_sound(&input, &released, &one);
            assert_eq!(sound, Ok(()), "on {input:?}");
        }
        slowest = slowest.max(t0.elapsed());
    }
    eprintln!(
        "smoke fuzz: {iterations} inputs in {:?}, slowest single input {:?}",
        started.elapsed(),
        slowest
    );
    assert!(slowest < BLOW_UP, "an input took {slowest:?}");
}

#[test]
fn pathological_inputs_finish_quickly() {
    // Large enough that quadratic work would take minutes, even in release.
    let big = if cfg!(debug_assertions) {
        50_000
    } else {
        200_000
    };
    let inputs = [
        "{".repeat(big),
        "{\"a\":".repeat(big / 5),
        "[".repeat(big),
        "<tool_call>x".repeat(big / 12),
        "[TOOL_CALLS]".repeat(big / 12),
        // Closed call blocks that hold no valid call, each kept as text.
        "<tool_call>{bad}</tool_call>".repeat(big / 27),
        // A Qwen3-Coder parameter given again and again: a closer followed by a parameter
        // already given does not end a value, so each value's end is looked for past the
        // others.
        format!(
            "<tool_call>\n<function=f>\n{}",
            "<parameter=zz>x</parameter>".repeat(big / 27)
        ),
        "\"{".repeat(big / 2),
        "<function=f>".repeat(big / 12),
        "<｜tool▁calls▁begin｜>".repeat(big / 30),
        "```json\n{".repeat(big / 9),
        "[a(".repeat(big / 3),
        "<think>".repeat(big / 7),
        "Action: x\n".repeat(big / 10),
        "<|open|>response<|sep|>x<|y|>".repeat(big / 29),
        "<|open|>think<|sep|><|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|>".repeat(big / 64),
        format!(
            "<|open|>call tool=\"f\"<|sep|>{}<|close|>call<|sep|>",
            "<|open|>argument key=\"k\"<|sep|>v".repeat(big / 36)
        ),
        "✿FUNCTION✿: f\n✿ARGS✿: {}\n".repeat(big / 25),
        "Action: f\nAction Input: x\n".repeat(big / 26),
        "<read_file><path>a</path></read_file>".repeat(big / 37),
        "<read_file><path>a".repeat(big / 18),
        "<read_file><path>a</path>b".repeat(big / 26),
        "<invoke><tool_name>f</tool_name></invoke>".repeat(big / 40),
        "get_weather\n{}>>>".repeat(big / 17),
        "<|channel|>analysis x<|end|>".repeat(big / 28),
        "<|channel|>analysis<|message|>x<|end|>".repeat(big / 38),
        "<foo>name\n<bar>".repeat(big / 15),
        "```tool_code\nf()\n```\n".repeat(big / 21),
        "TOOL_NAME: f\nBEGIN_ARG: k\nv\nEND_ARG\n".repeat(big / 37),
        "TOOL_NAME: f\nBEGIN_ARG: k\n".repeat(big / 25),
        "Thought: x\nAction Input: {\"a\": ".repeat(big / 31),
        format!("Thought: x\nz{}", " Answer:".repeat(big / 8)),
        // Strings that lose their closing quote at a line break, read a second time with
        // the strings ending there: nested, failing to parse, and each a Python dict.
        format!(
            "{}\"x\n{} tail",
            "{\"a\" ".repeat(big / 5),
            "}".repeat(big / 5)
        ),
        format!("{}\"x\n{} tail", "{".repeat(big), "}".repeat(big)),
        "{'a': 'x\n} {'a': 'y".repeat(big / 20),
        "{\"request\": \"f\", \"v\": \"x\n".repeat(big / 26),
        // Open bare call wrappers, prose only at the very end.
        format!("{}\n\nProse.", "{\"tool_call\": \"x".repeat(big / 16)),
        // Inkling blocks that never end, and ends with no block.
        "<|content_text|>x".repeat(big / 17),
        format!("<|content_thinking|>{}", "<|end_message|>".repeat(big / 15)),
        // Bare keys and words: each object read a third way, none a call.
        "{a: b c, d: {e: f}} ".repeat(big / 21),
        format!("{{request: f, v: {}}}", "{x: y}, ".repeat(big / 8)),
        // gptme's call heads: lines of them, fences between, one long line of `: {`.
        "@a(b): {\n```\n".repeat(big / 14),
        format!("@a: {}", "x: {".repeat(big / 4)),
        // Offered tools' tags on one long line, fences between.
        "<read_file><path>x</path></read_file>```".repeat(big / 40),
        // A GLM value holding many call openers, closed only at the end.
        format!(
            "<tool_call>f\n<arg_key>k</arg_key><arg_value>{}</arg_value></tool_call>",
            "<tool_call>".repeat(big / 11)
        ),
    ];
    let with_tools = ParseOptions {
        tools: offered_tools(),
        ..ParseOptions::default()
    };
    // A tool that takes one string reads a plain-text tag body: many tags, no closer.
    let shell = ToolSchema {
        name: "shell".to_string(),
        parameters: serde_json::json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    };
    let t0 = Instant::now();
    let _ = parse(
        &"<shell> ls ".repeat(big / 11),
        &ParseOptions {
            tools: vec![shell],
            ..ParseOptions::default()
        },
    );
    assert!(
        t0.elapsed() < BLOW_UP,
        "plain-text tool tags: {:?}",
        t0.elapsed()
    );
    for input in &inputs {
        let t0 = Instant::now();
        let _ = parse(input, &ParseOptions::default());
        let _ = parse(input, &with_tools);
        let took = t0.elapsed();
        eprintln!("{:?}… {took:?}", &input[..input.len().min(16)]);
        assert!(
            took < BLOW_UP,
            "{:?}… took {took:?}",
            &input[..input.len().min(24)]
        );
    }
}

#[test]
fn pathological_streams_finish_quickly() {
    let n = if cfg!(debug_assertions) {
        2_000
    } else {
        20_000
    };
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";
    let inputs = [
        // Every call is cut out and the text after it released: each is parsed once.
        format!("Go.{}", format!("{call} then ").repeat(n)),
        // A held call whose string holds closing tags: only a few are tried.
        format!(
            "<tool_call>{{\"name\": \"f\", \"arguments\": {{\"s\": \"{}",
            "</tool_call>".repeat(n)
        ),
        // Closing tags after a hold that is not a call.
        format!("<tools>{}", "x</tool_call>".repeat(n)),
    ];
    for input in &inputs {
        let t0 = Instant::now();
        let mut sp = StreamParser::new(ParseOptions::default());
        let mut released = 0;
        for (i, c) in input.char_indices() {
            released += sp.feed(&input[i..i + c.len_utf8()]).len();
        }
        let parsed = sp.finish();
        let took = t0.elapsed();
        eprintln!("{:?}… {took:?}, {released} bytes released", &input[..16]);
        assert_eq!(parsed, parse(input, &ParseOptions::default()));
        assert!(took < BLOW_UP, "{:?}… took {took:?}", &input[..24]);
    }
}
