//! Held-out records reagent does not yet read as their source expects, each with its
//! reason: a miss not listed here fails the held-out test, and a listed one that starts to
//! pass must leave the list.

/// Counted records reagent does not read as their source expects, for now: a regression is a
/// miss not listed here.
pub(super) const KNOWN_MISSES: &[(&str, &str)] = &[
    (
        "d-plamo3-eot",
        "PLaMo 3's end-of-turn token is kept in the content",
    ),
    (
        "d-plamo3-incomplete",
        "an unfinished PLaMo 3 block's tokens are kept in the content",
    ),
    (
        "e-lmd-glm47-inner-no-args",
        "a lone word is not read as a call",
    ),
    (
        "f-trt-dsv3-malformed",
        "reagent reads a Python dict as the arguments on purpose; TensorRT-LLM reads no call",
    ),
    ("f-trt-dsv31-malformed", "as f-trt-dsv3-malformed"),
    (
        "g-oll-laguna-off-think-block",
        "thinking off: Ollama's Laguna parser drops think tags that its Qwen3.5, Nemotron 3 \
         and Cogito parsers keep; reagent keeps them",
    ),
    (
        "g-oll-laguna-off-think-block-tools",
        "as g-oll-laguna-off-think-block",
    ),
    (
        "g-oll-laguna-disabled-think-block",
        "as g-oll-laguna-off-think-block",
    ),
    (
        "g-oll-laguna-disabled-leading-close",
        "as g-oll-laguna-off-think-block",
    ),
    (
        "h-xinf-llama3-no-name-key",
        "reagent takes `function` as the name key on purpose; Xinference and vLLM's Llama 3 \
         parser read no call",
    ),
    (
        "h-xinf-llama3-no-parameters-key",
        "reagent takes `args` as the arguments key on purpose; as h-xinf-llama3-no-name-key",
    ),
    (
        "i-oll-glimmer-suppressed-thinking",
        "thinking off maps to reasoning kept in the content (batch G's rule), so the message \
         to self is content; Ollama drops it",
    ),
    (
        "i-oll-glimmer-mismatched-invoke",
        "an invoke naming another tool than its recipient: Ollama reports an error, reagent \
         reads the invoke's call",
    ),
    (
        "k-sgl-unknown-tool-forwarded",
        "a bare Llama 3 JSON object naming no offered tool is read as text, not a call; SGLang \
         forwards it with SGLANG_FORWARD_UNKNOWN_TOOLS on and drops it by default (the same \
         output, k-sgl-unknown-tool-dropped)",
    ),
    (
        "l-oll-gemma4-inner-invalid-raw-escape",
        "a `\"…\"` Gemma 4 value with escapes JSON does not allow (`\\u` not hex): reagent \
         decodes it leniently (`\\b`, `\\f` become control characters), Ollama rejects the call",
    ),
    (
        "l-oll-qwen3vl-t-prefill-content-close",
        "an assistant prefill with content maps to the default options (batch G's rule), \
         where text before a lone `</think>` is reasoning; Ollama keeps it all as content \
         after a content prefill",
    ),
    (
        "l-oll-qwen3vl-t-prefill-content-close-then-text",
        "as l-oll-qwen3vl-t-prefill-content-close",
    ),
    (
        "l-oll-qwen3vl-t-prefill-content-fakeout",
        "as l-oll-qwen3vl-t-prefill-content-close",
    ),
    (
        "l-oll-qwen3vl-t-prefill-content-spaces",
        "as l-oll-qwen3vl-t-prefill-content-close",
    ),
    (
        "l-oll-qwen3vl-t-prefill-content-then-call",
        "as l-oll-qwen3vl-t-prefill-content-close",
    ),
    (
        "l-oll-qwen3vl-t-trip-thinking",
        "(passed when scored, a miss since 960fb95) a `<think>` the model repeats after the \
         prompt opened one: ollama's Qwen3-VL parser keeps it in the reasoning, as llama.cpp \
         does; its Qwen3, Qwen3.8, Nemotron 3 and Laguna parsers drop it, and so does reagent",
    ),
    (
        "l-oll-qwen3vl-t-interleaved-thinking",
        "as l-oll-qwen3vl-t-trip-thinking",
    ),
    (
        "j-sglr-mistral-streaming-closing-bracket",
        "text after a Mistral `[TOOL_CALLS] [...]` list is dropped on purpose (family.rs, \
         after vLLM's non-streaming Mistral parser); SGLang's streamed test keeps it, while \
         its whole-output test drops it (j-sglr-mistral-real-world, which reagent passes)",
    ),
    (
        "j-sglr-mistral-streaming-bracket-in-text",
        "as j-sglr-mistral-streaming-closing-bracket",
    ),
    // Batch M, scored on the parser as it stood (no change to src/ on this branch).
    (
        "m-sglr-qc-incomplete-tool-call",
        "a Qwen3-Coder block whose </function> and </tool_call> never come: reagent reads no \
         call, as SGLang does, but withholds the block from the content; SGLang returns the \
         input unchanged as the normal text",
    ),
    (
        "m-sglr-fb-json-very-long-invalid",
        "a bare call object that never closes (1000 fields, then `incomplete`): reagent reads \
         no call, as SGLang does, but withholds the text; SGLang returns it unchanged",
    ),
    (
        "m-sglr-fb-json-missing-quote",
        "as m-sglr-fb-json-very-long-invalid: a bare call object whose last string never \
         closes",
    ),
    (
        "m-sglr-fb-mistral-missing-bracket",
        "(marked a disagreement before scoring, counted after: its stated reason, that reagent \
         keeps the call, proved false) a Mistral list missing its `]`: reagent reads no call, as \
         SGLang does, but withholds the text; SGLang returns the input unchanged",
    ),
    (
        "m-sglr-fb-json-name-only-in-text",
        "a bare `{\"name\": \"example\"}` inside prose, no tools offered: reagent keeps it as the \
         answer's text (0e7378f: only inside a call tag is a name-only object a call); SGLang's \
         JsonParser extracts it as a call with no arguments",
    ),
    (
        "m-sglr-fb-json-single-quotes",
        "`{'name': 'test', 'arguments': {}}`: reagent's lenient reading takes single-quoted \
         keys and strings as a call; SGLang's JsonParser requires JSON's double quotes and reads \
         no call",
    ),
    // Batch N, scored on the parser as it stood (no change to src/ on this branch).
    (
        "n-vllm-g4rx-fragmented-call-tag",
        "`<call>NAME{…}` (Gemma 4's opener fragmented by multimodal input) is not read; \
         vLLM's fallback reads it",
    ),
    (
        "n-vllm-g4-incomplete",
        "a Gemma 4 call cut off before `<tool_call|>`: reagent reads no call, as vLLM does, but \
         withholds the cut markup from the content; vLLM returns the text unchanged (as \
         m-sglr-qc-incomplete-tool-call)",
    ),
    (
        "n-vllm-gpy-text-then-call",
        "a bare Granite call (`get_weather(location=\"London\")`) on the line after prose is \
         not read: reagent reads bare pythonic calls only as a whole reply, so prose that \
         mentions a call stays text; vLLM reads it",
    ),
    (
        "j-sglr-minimax-incomplete",
        "(passed when scored, a miss since the batch O fixes) an invoke whose last parameter \
         closed and whose closers never come: SGLang's MiniMax parser reads no call; TabbyAPI's \
         Glimmer parser reads the call (o-tab-glimmer-fmt-missing-closing-invoke), as reagent \
         reads a complete GLM or Hermes call whose closer is missing, and so does reagent now",
    ),
    // Batch O, scored on the parser as it stood (no change to src/ on this branch).
    (
        "o-tab-glimmer-truncated-header",
        "a Glimmer recipient header cut off before `<|message|>` (` to=se`) is kept as the \
         content `to=se`; TabbyAPI discards the unfinished header",
    ),
    // Batch P, scored on the parser as it stood (no change to src/ on this branch).
    (
        "p-vllm-hy4-malformed-end-before-start",
        "`</tool_calls:…>` before a complete call and `<tool_calls:…>` after it: reagent \
         reads the call; vLLM's strict HY4 parser returns the text unchanged (its lenient \
         mode reads a call)",
    ),
    (
        "p-vllm-hy4-malformed-unparsed-argument-payload",
        "stray text (`JUNK`) after a closed GLM pair inside a call: reagent keeps the call \
         and drops the stray text; vLLM's strict HY4 parser returns the text unchanged",
    ),
    (
        "p-vllm-interns1-malformed-json",
        "an InternLM2 action block whose arguments never close: reagent reads no call, as \
         vLLM does, but withholds the block from the content; vLLM keeps it (as \
         m-sglr-qc-incomplete-tool-call)",
    ),
    (
        "p-vllm-iquest2-missing-value-end",
        "an `<arg_value>` never closed before the call's closer: reagent reads the value up \
         to the closer; vLLM drops the call",
    ),
    (
        "p-vllm-k2h-malformed-cut-after-name",
        "an IFM block cut off after the tool name: reagent reads no call, as vLLM does, but \
         withholds the cut markup from the content; vLLM returns the text unchanged (as \
         m-sglr-qc-incomplete-tool-call)",
    ),
    (
        "p-vllm-k2h-stream-incomplete",
        "as p-vllm-k2h-malformed-cut-after-name (text before the cut block is kept)",
    ),
    // Batch Q, scored on the parser as it stood (no change to src/ on this branch).
    (
        "q-vllm-mcpm5-missing-function-end",
        "(marked a disagreement before scoring, counted after: its stated reason, that reagent \
         reads the call, proved false) a MiniCPM5 `<function>` whose `</function>` never comes: \
         reagent reads no call, as vLLM does, but withholds the block from the content; vLLM \
         keeps it (as m-sglr-qc-incomplete-tool-call)",
    ),
    (
        "q-vllm-mcpm5-sentencepiece-text",
        "plain text written in byte-level BPE markers (U+010A for a newline, U+0120 for a \
         space) is kept as written; vLLM's MiniCPM5 parser normalizes it",
    ),
    (
        "q-vllm-mcpm5-case-sensitive-param",
        "a parameter the schema does not name (`City`) with the required `city` missing: \
         reagent keeps the call as written (the loop checks arguments); vLLM's MiniCPM5 parser \
         validates against the schema and reads no call",
    ),
    (
        "q-vllm-mcpm5-wrapped-unknown-key",
        "as q-vllm-mcpm5-case-sensitive-param (`properties` holding only an undeclared key)",
    ),
    (
        "q-vllm-mcpm5-extra-arg-no-required",
        "as q-vllm-mcpm5-case-sensitive-param (only an undeclared parameter)",
    ),
    (
        "q-vllm-mcpm5-extra-arg-dropped",
        "a parameter the schema does not name is kept; vLLM's MiniCPM5 parser drops it when \
         the tool's schema is known",
    ),
    (
        "q-vllm-mcpm5-zero-arg-extra",
        "as q-vllm-mcpm5-extra-arg-dropped",
    ),
    (
        "q-vllm-mm2san-args",
        "vLLM's sanitizing MiniMax M2 parser rewrites `monkey_character. gd` to \
         `monkey_character.gd` in the arguments; reagent keeps the model's text",
    ),
    (
        "q-vllm-mm2san-content",
        "as q-vllm-mm2san-args, in the content and the arguments",
    ),
    (
        "q-vllm-opv2-only-start",
        "an OpenPangu V2 list cut off after its opener (`<|tool_call_start|>[{\"name\": …}` at \
         the end of the output): reagent flags it as cut off and keeps no content; vLLM \
         returns the text as content",
    ),
    // Batch R, scored before any fix (13/16 counted in both modes).
    (
        "r-oll-harmony-missing-brace",
        "a harmony call whose JSON body ends one `}` short at the end of the stream (no \
         `<|call|>`): reagent reads no call; ollama closes the missing braces outside strings \
         and reads it (`closed_braces:1`)",
    ),
    (
        "r-oll-harmony-missing-braces",
        "as r-oll-harmony-missing-brace, two `}` short (`closed_braces:2`)",
    ),
    // Batch U, scored before any fix (47/61 counted by auto-detection, 48/61 with the hint).
    (
        "u-ag-r1-close-before-open",
        "a `</think>` before any `<think>`: reagent drops the stray closer and reads the later \
         block as reasoning (content `Hello,`); autogen's parse_r1_content extracts no thought \
         and keeps the text whole",
    ),
    (
        "u-ag-r1-close-before-open-unclosed",
        "as u-ag-r1-close-before-open, the later <think> never closed",
    ),
    // batch S, scored before any fix (98/103 in both modes as first labelled; 99/103 after
    // four labels were corrected, see crates/reagent-parse/HELDOUT.md, "nineteenth widening").
    // batch W, scored before any fix (31/55 counted, both modes; the same 24 misses in both).
    (
        "w-swe-xml-thought-action",
        "SWE-agent's `<command>…</command>` action block is text: reagent reads an XML tag as \
         a call only when the tag names an offered tool (tool_tags), and `command` is SWE-agent's \
         action tag, not a tool",
    ),
    (
        "w-mswea-litellm-echo",
        "mini-swe-agent's ```mswea_bash_command fenced block is text: reagent reads no fenced \
         block as a call to the shell tool",
    ),
    ("w-mswea-openrouter-echo", "as w-mswea-litellm-echo"),
    (
        "w-camel-mcp-yaml-block",
        "a ```yaml block with tool_name/tool_args: reagent reads no YAML as a call",
    ),
    // batch V, scored before any fix (39/55 counted, both modes; see crates/reagent-parse/HELDOUT.md,
    // "twenty-second widening").
    (
        "v-goose-rejected-execute-cut-json",
        "a Kimi K2 call whose arguments are `{\"code\":` (cut, then <|tool_call_end|>): reagent \
         keeps a call with the raw text as arguments; goose reads no call and drops the block",
    ),
    // batch X, scored before any fix: 105/105 in both modes, no miss to register (see
    // crates/reagent-parse/HELDOUT.md, "twenty-fourth widening").
    // batch Y, scored before any fix (40/41 counted, both modes; see crates/reagent-parse/HELDOUT.md,
    // "twenty-fifth widening"); its one miss (Llama 4's `<|eom|>`) is read since.
    // batch Z, scored before any fix (auto-detection 6/50, with the hint 7/50; see
    // crates/reagent-parse/HELDOUT.md, "twenty-sixth widening"): langroid's JSON and XML tool messages.
    (
        "z-lgr-json-mixed-quotes-dq-nl-brace",
        "an object whose string lost its closing quote, then one in the other quote style whose value holds the first style's quote and a `}`: read strictly the two are one valid object (the first value runs to that quote), so reagent reads one call `bad` with that long value; langroid cuts the first string at its line break and reads two calls",
    ),
    ("z-lgr-json-mixed-quotes-dq-sp-brace", "as z-lgr-json-mixed-quotes-dq-nl-brace"),
    ("z-lgr-json-mixed-quotes-sq-nl-brace", "as z-lgr-json-mixed-quotes-dq-nl-brace"),
    ("z-lgr-json-mixed-quotes-sq-sp-brace", "as z-lgr-json-mixed-quotes-dq-nl-brace"),
    (
        "z-lgr-xml-two-tools-text-between",
        "langroid's XMLToolMessage `<tool><request>NAME</request><FIELD>..</FIELD></tool>`: reagent reads no `<request>` child as the tool name (auto-detection takes `<tool>` for the XML agent's tag and names a call after its whole body; with the tool_tags hint no call); langroid expects the call, fields typed by schema, CDATA unwrapped",
    ),
    ("z-lgr-xml-last-tool-unclosed", "as z-lgr-xml-two-tools-text-between"),
    ("z-lgr-xml-parse-cdata-fenced", "as z-lgr-xml-two-tools-text-between"),
    ("z-lgr-xml-tolerant-whitespace", "as z-lgr-xml-two-tools-text-between"),
    ("z-lgr-xml-complex-nested", "as z-lgr-xml-two-tools-text-between"),
    // batch AA, scored before any fix (39/51 counted, both modes, the same 12 misses; see
    // crates/reagent-parse/HELDOUT.md, "twenty-seventh widening"): vendors' own Granite, InternLM and GLM tests.
    (
        "aa-gc-g32-cot-on-cot-pre",
        "Granite 3.2's plain-text reasoning markers with text before the start marker: reagent reads the reasoning and joins the two texts with a newline; granite-common joins them with one space (see aa-gc-g33-cot-on-cot-pre)",
    ),
    (
        "aa-gc-g32-cite-citation",
        "Granite 3.2's citations (`<co>1</co>` marks and a `# Citations:` section after the answer): reagent keeps them in the content; granite-common takes them out (the content is the answer alone)",
    ),
    (
        "aa-gc-g32-cite-hallucination",
        "as aa-gc-g32-cite-citation, with a `# Hallucinations:` section after the citations",
    ),
    (
        "aa-gc-g33-cite-citation",
        "Granite 3.3's citations (`<|start_of_cite|>{..}<|end_of_cite|>` marks and a `{\"id\": \"citation\"}` section): reagent keeps them in the content; granite-common takes them out",
    ),
    (
        "aa-gc-g33-cite-hallucination",
        "as aa-gc-g33-cite-citation, with a `{\"id\": \"hallucination\"}` section after the citations",
    ),
    (
        "aa-gc-g33-cot-on-no-thinking",
        "thinking on, a lone `</think>` with no `<think>` and no prefill: reagent reads the text before it as reasoning (the forced-open reading); granite-common, whose Granite 3.3 prompt opens nothing, keeps it all as content",
    ),
    (
        "aa-gc-g33-cot-on-cot-pre",
        "text, then a `<think>` block, then text: reagent joins the two texts with a newline (`something before \\nrespond respond`); granite-common strips them and joins with one space (pydantic-ai joins them with nothing: u-pyd-think-between-text)",
    ),
    // batch AA, second part, scored before any fix (5/9 counted, both modes).
    // batch AC, scored before any fix (56/65 counted, both modes).
    (
        "ac-vai-generate-multiple-think",
        "two `<think>` blocks: reagent joins the two reasonings with nothing (`analyzing the requestthinking about the response`); vercel/ai's extractReasoningMiddleware joins them, and the texts around them, with its separator, a newline (langchainjs' ChatDeepSeek joins reasonings with nothing: ac-lcjs-deepseek-multiple-blocks)",
    ),
    (
        "ac-vai-generate-no-start-with-reasoning",
        "startWithReasoning false, a lone `</think>` and no prefill: reagent reads the text before it as reasoning (the forced-open reading, as aa-gc-g33-cot-on-no-thinking); vercel/ai keeps it all as text, the tag included",
    ),
    (
        "ac-vai-stream-no-start-with-reasoning",
        "as ac-vai-generate-no-start-with-reasoning, streamed (`\\n</think>`)",
    ),
    (
        "ac-rig-qwen-reasoning-text-two-calls",
        "text around Hermes calls: reagent keeps the text outside the calls verbatim (`Before \\n after`); rig's Qwen3 parser trims each text segment and joins them with one space (`Before after`)",
    ),
    (
        "ac-rig-qwen-text-between-calls",
        "as ac-rig-qwen-reasoning-text-two-calls: text glued to the calls, reagent `firstsecondthird`, rig `first second third`",
    ),
    (
        "ac-rig-qwen-duplicate-ids",
        "two well-formed calls with the same `id`: reagent reads both (both with id `x`); rig's Qwen3 parser rejects the whole turn (no call, an error)",
    ),
    (
        "ac-rig-qwen-hyphen-delimiter",
        "`<tool-call>{..}</tool-call>`: reagent reads the hyphenated spelling as `<tool_call>` and returns the call; rig's Qwen3 parser rejects it as an unsupported delimiter (no call, an error)",
    ),
    // batch AB, scored before any fix (45/59 in both modes)
    (
        "ab-mlxvlm-cohere-action-array",
        "`\\|` inside a JSON string of a Cohere action list: reagent keeps the backslash \
         (`<\\|channel>`); mlx-vlm reads the invalid escape as the bare character (`<|channel>`)",
    ),
    (
        "ab-mlxvlm-gemma4-bare-function",
        "a Gemma 4 call body with no `call:` prefix and no tag (`get_weather{city:Austin}`, mlx-vlm's server passes the text inside the tags): with no tools offered reagent reads no call in `NAME{…}` text (prose like `foo{bar}` would become calls); mlx-vlm reads one",
    ),
    (
        "ab-mlxvlm-gemma4-bare-namespaced",
        "as ab-mlxvlm-gemma4-bare-function, the name holding a dot and a colon",
    ),
    // batch AE, scored before any fix (35/43 counted, both modes)
    (
        "ae-llama-mcpm5-stripped-tags",
        "MiniCPM5 output with its `<function`/`<param` openers and closers stripped (` name=\"python\"> name=\"code\">…`): reagent reads no call; llama.cpp's MiniCPM5 PEG grammar reads the offered tool's call",
    ),
    // batch AD, scored before any fix (98/105 in both modes)
    (
        "ad-smol-list-root-1",
        "a bare `{\"name\", \"arguments\"}` object after `Example:` and a `user` role word, no <tool_call> markup: reagent reads a read_file call; labelled content (an example turn, not the instructed markup; marked ambiguous before scoring)",
    ),
    (
        "ad-smol-create-hello-1",
        "a malformed block (a JavaScript function as a value, `</pre>` before `</tool_call>`) beside a good call: the call and the parse failure are right, but the block is cut where its JSON braces balance, so `</pre>` stays in the content",
    ),
    (
        "ad-smol-run-echo-1",
        "unclosed `<tool_call>` openers in code fences: a complete call object run on with `,\\n\"command\": …` is read as a list_directory call (scored, `<tool_call>\\nFalse:` was also read as a GLM call named `False:`: a name ending in `:` is a label since); labelled content, no block holding an executable call",
    ),
    (
        "ad-smol-config-env-3",
        "a bare `{\"tool_call\": {\"name\": …}` object (no markup) whose outer brace never closes, followed by prose: scored, it was taken as a call cut off and all the text after it withheld; after the fixes the text is kept (prose after a blank line: an example left open), but the complete bare `{\"name\", \"arguments\"}` objects in it are read as read_file calls, which the label (marked ambiguous) keeps as content",
    ),
    (
        "ad-smol-replace-color-3",
        "a closed block whose arguments are `[None, \"path\"]` (Python's None, a list): reagent reads a list_directory call with array arguments; labelled content (no JSON call, batch S's corrected rule)",
    ),
    (
        "ad-smol-replace-name-2",
        "`<tool_call>` then `{\"name\": \"list_to_list_…\"}}` (no arguments, a stray brace, never closed) and prose: reagent reads a call with empty arguments to a tool not offered; labelled content (marked ambiguous before scoring)",
    ),
    // batch AF, scored before any fix (78/96 counted, both modes, the same 18 misses)
    (
        "af-vllm-apertus-think-strings",
        "Apertus thinks in `<|inner_prefix|>`…`<|inner_suffix|>`; a `<think>` it writes is text to vLLM's Apertus parser, but reagent reads every `<think>` block as reasoning",
    ),
    // batch AG, scored before any fix (27/66 counted, both modes, the same 39 misses)
    ("ag-trt-nano-parse-6", "thinking off (no prompt prefill): TensorRT-LLM's nano-v3 keeps a lone </think> and the text before it as content; reagent reads the text before a lone </think> as reasoning (the forced-open reading llama.cpp's records need)"),
    ("ag-trt-nano-parse-7", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-parse-8", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-stream-8", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-stream-9", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-stream-11", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-stream-12", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-stream-13", "as ag-trt-nano-parse-6"),
    ("ag-trt-nano-parse-14", "`<tool_call>NAME</tool_call>` is read as a name-only call; TensorRT-LLM's nano-v3 reasoning parser hands the markup on as text, its GLM-4.7 tool parser reads one call and its GLM-4.5 parser none (batch F)"),
    ("ag-trt-nano-parse-15", "as ag-trt-nano-parse-14"),
    ("ag-trt-nano-parse-16", "as ag-trt-nano-parse-14"),
    ("ag-trt-nano-parse-18", "as ag-trt-nano-parse-14"),
    ("ag-trt-nano-stream-14", "a `<tool_call>` left open at the end is a cut-off call: reagent withholds its markup (flagged truncated); TensorRT-LLM's reasoning parser hands the text on as content"),
    ("ag-trt-nano-stream-15", "as ag-trt-nano-stream-14"),
    ("ag-trt-nano-stream-16", "as ag-trt-nano-stream-14"),
    ("ag-trt-nano-stream-18", "as ag-trt-nano-stream-14"),
    ("ag-trt-nano-stream-20", "as ag-trt-nano-stream-14"),
];

/// Counted records missed only with the family hint (auto-detection reads them): known
/// misses of the hinted run alone, held to the same rules as [`KNOWN_MISSES`].
pub(super) const KNOWN_MISSES_WITH_HINT: &[(&str, &str)] = &[(
    "p-vllm-interns1-spaced-tokens",
    "a space between `<|action_start|>` and `<|plugin|>`: with the internlm2 hint the call \
     is read but `<|action_start|>` stays in the content; auto-detection reads it clean",
)];

/// Counted records missed only by auto-detection (the family hint reads them): known misses
/// of the unhinted run alone, held to the same rules as [`KNOWN_MISSES`].
pub(super) const KNOWN_MISSES_WITHOUT_HINT: &[(&str, &str)] = &[
    // Batch T, scored before any fix (44/68 counted by auto-detection, 52/68 with the hint);
    // what auto-detection still misses after the fixes (the hint reads all of batch T).
    (
        "t-fy-v3-llama3-python",
        "Functionary v3's `python\\nCODE` as the whole output (the prompt ended with `>>>`): \
         without the hint or a `>>>` in the text, a word on a line before code is text",
    ),
    (
        "t-fy-v3-llama3-text",
        "Functionary v3's `all\\nTEXT` (the prompt ended with `>>>`): without the hint a \
         leading `all` line is text",
    ),
    ("t-fy-v3-llama3-text-choice-none", "as t-fy-v3-llama3-text"),
    (
        "t-fy-v3-llama3-text-then-python",
        "`all\\nTEXT>>>python\\nCODE` holds no byte that can start a call (no `{`, `<`), so \
         auto-detection takes the prose fast path; with the hint it is read",
    ),
    (
        "t-fy-v3-llama31-python",
        "raw code after `<|python_tag|>` is a call to the code interpreter only with the \
         functionary hint or an interpreter tool offered; SGLang's Llama parser keeps \
         `<|python_tag|>` text as text (m-sglr-fb-llama-tag-no-json)",
    ),
    (
        "t-fy-v3-llama31-text-then-python",
        "as t-fy-v3-llama31-python, after text",
    ),
    // batch AU, auto-detection only
    (
        "au-llama-fy32-all",
        "as t-fy-v3-llama3-text: Functionary v3.2's `all\\nTEXT` (the prompt ended with `>>>`) \
         is read only with the hint",
    ),
];
