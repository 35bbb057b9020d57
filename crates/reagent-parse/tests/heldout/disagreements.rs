//! Held-out records where upstream projects contradict each other or a recorded choice of
//! reagent: reported, not counted. Each cites the contradicting evidence.

/// Records where upstream behaviour contradicts a deliberate choice of reagent; reported,
/// not counted.
pub(super) const DISAGREEMENTS: &[(&str, &str)] = &[
    (
        "sgl-py-glm45-unknown-name",
        "SGLang drops a call to a tool that was not offered; reagent keeps it so the loop can tell the model the tool does not exist and list the valid ones",
    ),
    (
        "sgl-glm47-unknown-name",
        "as sgl-py-glm45-unknown-name",
    ),
    (
        "sgl-py-llama32-trailing-text",
        "SGLang keeps the text around Llama 3 JSON calls as content; vLLM drops it (main corpus, vllm-llama3-*) and reagent follows vLLM; the calls match",
    ),
    (
        "sgl-py-llama32-intro-python-tag",
        "as sgl-py-llama32-trailing-text",
    ),
    (
        "sglr-mixed-llama-python-tag-after-text",
        "as sgl-py-llama32-trailing-text",
    ),
    (
        "ov-llama3-text-then-tag",
        "as sgl-py-llama32-trailing-text (OpenVINO Model Server keeps the text before the call too); the call matches",
    ),
    (
        "ov-hermes-invalid-name-key",
        "OpenVINO Model Server drops a call object whose name is under \"tool_name\"; Command R7B writes its calls that way (main corpus, llama-r7b-*) and reagent reads the key; the other calls match",
    ),
    (
        "ov-mistral-one-valid-two-invalid",
        "as ov-hermes-invalid-name-key; the call with \"options\" instead of arguments is dropped by both",
    ),
    (
        "ov-phi4-two-functools",
        "OpenVINO Model Server drops the prose between two calls; SGLang keeps it (sgl-minicpm4-interleaved) and so does reagent; the calls match",
    ),
    (
        "vllm-hunyuan-content-after-dropped",
        "vLLM strips the text after a <tool_calls> list; SGLang keeps text after calls (sgl-minicpm4-single-around) and so does reagent; the call matches",
    ),
    (
        "sgl-gptoss-truncate-after-call",
        "SGLang drops a final message after a harmony call; OpenVINO Model Server keeps it as content (ov-gptoss-multi-turn) and so does reagent; the call matches",
    ),
    (
        "vllm-minimax-m2-two-params-no-schema",
        "with no tool schema vLLM's MiniMax M2 parser keeps every value as text; vLLM's DSML parser (vllm-dsv32-no-schema-json) and ollama's GLM parser read JSON scalars, and so does reagent for MiniMax",
    ),
    (
        "ov-q3c-typed-0-int_tool",
        "a Qwen3-Coder parameter with no schema (its tool was not offered): OpenVINO Model Server and ollama read it as JSON, vLLM and SGLang keep the text, and so does reagent (tests/xml_typing.rs); the call matches",
    ),
    ("ov-q3c-three-params-unknown-tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-json-object-param", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-two-calls", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-content-between", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-1-float_tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-2-bool_tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-3-bool_tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-4-list_tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-5-list_tool", "as ov-q3c-typed-0-int_tool"),
    ("ov-q3c-typed-6-object_tool", "as ov-q3c-typed-0-int_tool"),
    (
        "vllm-dsv31-two-suffix",
        "vLLM drops the text after DeepSeek calls; ollama keeps it (main corpus, ollama-ds3-content-after-call), and so does reagent; the calls match",
    ),
    (
        "vllm-apertus-incomplete",
        "vLLM's Apertus parser completes a call object whose closing brace is missing; its DeepSeek V3 test expects no call for a JSON missing its brace (main corpus, vllm-dsv3-malformed-unclosed-json), as reagent does: a cut call is flagged, never completed",
    ),
    (
        "d-pangu-after",
        "vLLM's Pangu parser drops the text after the <|tool_call_end|> list; SGLang keeps text after calls (sgl-minicpm4-single-around) and so does reagent; the call matches",
    ),
    (
        "e-mrs-hunyuan-no-closer",
        "mistral.rs reads no call while </tool_calls> is missing; OpenVINO Model Server reads a complete call whose closer is missing (ov-hermes-three-last-unclosed) and ollama finalizes one at the end of the stream (main corpus, ollama-glm46-no-close-on-done), and so does reagent",
    ),
    ("e-mrs-liquid-no-closer", "as e-mrs-hunyuan-no-closer, for <|tool_call_end|>"),
    (
        "e-lmd-llama3-text-after-call",
        "as sgl-py-llama32-trailing-text (lmdeploy keeps the text after a Llama 3 call as content); the call matches",
    ),
    (
        "e-lmd-glm47-no-schema-stream",
        "with no tool schema lmdeploy's GLM-4.7 parser keeps every value as text; ollama's GLM parser reads JSON scalars (main corpus, ollama-glm46-typed), and so does reagent for GLM (tests/xml_typing.rs)",
    ),
    ("e-lmd-glm47-inner-no-schema", "as e-lmd-glm47-no-schema-stream"),
    (
        "e-mlx-temperature-glm47-quoted",
        "(found after scoring) a parameter typed \"str\": mlx-lm does not know the type and JSON-decodes the quoted value to London; mistral.rs keeps a value of a type it does not know as text (coerce_param_value in mistralrs-core/src/tools/mod.rs), and so does reagent, which for Python's name for a string keeps the string raw, its quotes included (as e-mrs-qwen-xml-schema-typed expects under \"string\")",
    ),
    (
        "f-trt-kimi-undefined",
        "TensorRT-LLM's Kimi K2 parser drops a call to a tool that was not offered (its other parsers keep it, tool_index -1); reagent keeps it, as sgl-py-glm45-unknown-name",
    ),
    (
        "f-trt-q3c-malformed-typo",
        "TensorRT-LLM reads no call where the <tool_call> opener is misspelled; vLLM and llama.cpp read <function=...> with no <tool_call> (main corpus, vllm-qwen3coder-no-tool-call-tags, llama-qwen3coder-missing-open-tag), and so does reagent",
    ),
    (
        "f-trt-dsv3-parameters-key",
        "TensorRT-LLM keeps a lone \"parameters\" key as the arguments; vLLM unwraps a lone wrapper key the schema does not name (vllm-dsv32-arguments-wrapper), and so does reagent",
    ),
    ("f-trt-dsv31-parameters-key", "as f-trt-dsv3-parameters-key"),
    (
        "f-trt-glm4-malformed",
        "TensorRT-LLM's GLM-4.5 parser reads no call in <tool_call>NAME</tool_call> with no newline, while its GLM-4.7 parser reads the same shape as a call with no arguments (f-trt-glm47-zero-arg); reagent reads both versions as one family",
    ),
    (
        "f-trt-poolside-malformed-no-closer",
        "as vllm-glm4-incomplete: TensorRT-LLM reads no call while </tool_call> is missing; ollama finalizes a complete GLM call at the end of the stream (main corpus, ollama-glm46-no-close-on-done), and so does reagent",
    ),
    (
        "f-trt-gemma4-extract-no-closer",
        "as e-mrs-hunyuan-no-closer: TensorRT-LLM reads no call while <tool_call|> is missing; OpenVINO Model Server and ollama read a complete call whose closer is missing, and so does reagent",
    ),
    (
        "f-trt-kimi-malformed",
        "(found after scoring) arguments that are not JSON: TensorRT-LLM's Kimi K2 parser drops the call; vLLM's Kimi K2 test keeps it with the arguments as written (test_invalid_json_still_extracted in tests/tool_parsers/test_kimi_k2_tool_parser.py), and so does reagent (rob-malformed-kimi-middle)",
    ),
    (
        "f-trt-glm47-text-between",
        "(found after scoring) TensorRT-LLM keeps the text between two GLM calls; vLLM drops it (main corpus, vllm-glm4-text-between-calls) and reagent follows vLLM for GLM; the calls match",
    ),
    (
        "vllm-fgemma-no-commas",
        "(reclassified during batch F, counted as a miss before) vLLM reads <escape>10<escape> as the number 10 with no schema; ollama's FunctionGemma parser returns an <escape>-delimited value as a string (parseValue in model/parsers/functiongemma.go, commit fb30760), and so does reagent unless the schema types it",
    ),
    (
        "g-oll-cogito-split-calls-begin",
        "ollama's Cogito parser, streamed with <｜tool▁calls▁begin｜> split across two chunks, keeps the whole block as content (its test: the parser is conservative); the same markup unsplit is a call in its own test (g-oll-cogito-tool-call-simple) and vLLM's DeepSeek V3 tests read text then this block as content and a call (main corpus, vllm-dsv3-*), and so does reagent, whose stream gives the one-shot result for any chunking",
    ),
    (
        "g-oll-glm47-indexing",
        "with no tool offered ollama keeps every GLM value as text (parseTypedToolValue in model/parsers/qwen3coder.go, commit fb30760); mlx-lm's GLM-4.7 parser, modified from vLLM's glm4_moe parser, JSON-decodes every value not typed string, also with no tools (_deserialize in mlx_lm/tool_parsers/glm47.py, commit 30fba51), and so does reagent for GLM",
    ),
    ("g-oll-glm47-indexing-streaming", "as g-oll-glm47-indexing"),
    ("g-oll-glm47-index-reset", "as g-oll-glm47-indexing"),
    (
        "g-oll-laguna-alias-name",
        "ollama's Laguna parser renames a call to read_file, a tool not offered, to the offered read; TensorRT-LLM's parsers other than Kimi keep a call to a tool not offered under its name (tool_index -1, see f-trt-kimi-undefined), and so does reagent, so the loop can tell the model which tools exist",
    ),
    (
        "i-oll-glimmer-undeclared-tool",
        "ollama's Glimmer parser keeps a block for a tool not offered as content; TensorRT-LLM's parsers other than Kimi keep a call to a tool not offered (tool_index -1, see f-trt-kimi-undefined), and so does reagent, so the loop can tell the model which tools exist",
    ),
    (
        "i-oll-glimmer-no-tools-declared",
        "with no tool offered ollama's Glimmer parser keeps a call block as content; ollama's own Nemotron 3 and Qwen3 parsers read a call with no tools offered (g-oll-nemo-think-call, g-oll-qwen3-tool-call), and so does reagent",
    ),
    (
        "i-oll-glimmer-undeclared-recipient",
        "as i-oll-glimmer-no-tools-declared and i-oll-glimmer-undeclared-tool (no tool offered, the recipient names none)",
    ),
    (
        "k-sgl-unknown-tool-dropped",
        "SGLang's default (SGLANG_FORWARD_UNKNOWN_TOOLS off) drops a call to a tool that was not offered; the same test file forwards it with the switch on (k-sgl-unknown-tool-forwarded) and SGLang's K2-V3 detector forwards one by default (k-sgl-k2v3-unknown-tool-forwarded); reagent keeps it in call markup, as sgl-py-glm45-unknown-name. (Found after scoring: a bare JSON object naming no offered tool is text for reagent, so this record would pass while its forwarded twin is a known miss; it stays uncounted, as marked before scoring)",
    ),
    (
        "k-sgl-kimik3-parser-no-tools-declared",
        "with no tool offered SGLang's Kimi K3 parser drops the call; ollama's Nemotron 3 and Qwen3 parsers read a call with no tools offered (g-oll-nemo-think-call, g-oll-qwen3-tool-call), and so does reagent, as i-oll-glimmer-no-tools-declared",
    ),
    (
        "l-oll-gemma4-thinking-disabled-channel",
        "with thinking off ollama's Gemma 4 parser drops a <|channel>…<channel|> block; ollama's Qwen3-VL parser with no thinking keeps a whole <think>…</think> block as content (l-oll-qwen3vl-nt-trip-thinking, qwen3vl_nonthinking_test.go), and so does reagent (batch G's rule: thinking off keeps the reasoning in the content)",
    ),
    (
        "ov-q3c-repeated-param",
        "a parameter given twice: OpenVINO Model Server keeps the first value, vLLM the later one (tests/tool_parsers/test_hy_v4_duplicate_arg_key.py), and so does reagent",
    ),
    (
        "j-sglr-deepseek-complete",
        "SGLang's Rust parsers drop the text after the calls in a whole output; the same MiniMax and Mistral parsers streamed keep it (j-sglr-minimax-char-by-char, j-sglr-mistral-streaming-closing-bracket), SGLang's Python tests keep it (sgl-minicpm4-single-around), ollama keeps it (main corpus, ollama-ds3-content-after-call), and so does reagent; the calls match",
    ),
    ("j-sglr-glm4-complete", "as j-sglr-deepseek-complete"),
    ("j-sglr-kimik2-complete", "as j-sglr-deepseek-complete"),
    ("j-sglr-minimax-complete", "as j-sglr-deepseek-complete"),
    (
        "j-sglr-minimax-text-before-and-after",
        "as j-sglr-deepseek-complete",
    ),
    (
        "j-sglr-llama-python-tag-format",
        "as sgl-py-llama32-trailing-text (SGLang's Rust Llama parser keeps the text before <|python_tag|>); the call matches",
    ),
    ("j-sglr-llama-text-before", "as j-sglr-llama-python-tag-format"),
    (
        "j-sglr-llama-json-trailing-text",
        "SGLang's Rust Llama parser reads no call where text follows the JSON; SGLang's Python Llama 3.2 test reads the call (sgl-py-llama32-trailing-text), its Rust JSON parser reads a call inside text (j-sglr-json-extraction-from-text), vLLM reads it and drops the text (main corpus, vllm-llama3-*), and reagent follows vLLM",
    ),
    (
        "j-sglr-minimax-nested-json",
        "with no tool schema SGLang's Rust MiniMax M2 parser keeps a JSON object or list as text; its GLM-4 MoE test decodes the same values (j-sglr-glm4-nested-json), and reagent reads JSON for MiniMax with no schema (as vllm-minimax-m2-two-params-no-schema)",
    ),
    ("j-sglr-minimax-nested-xml-like", "as j-sglr-minimax-nested-json"),
    (
        "j-sglr-minimax-invalid-json-in-params",
        "as j-sglr-minimax-nested-json (the valid object {\"key\": \"value\"} is kept as text upstream)",
    ),
    (
        "j-sglr-minimax-invalid-function-name",
        "SGLang's Rust MiniMax M2 parser skips a call to a tool that was not offered; reagent keeps it, as sgl-py-glm45-unknown-name (TensorRT-LLM's parsers other than Kimi keep it too, see f-trt-kimi-undefined)",
    ),
    (
        "j-sglr-minimax-invalid-function-progressive",
        "as j-sglr-minimax-invalid-function-name (upstream hands the block back as text)",
    ),
    // Batch M, marked before scoring.
    (
        "m-sglr-qc-nested-json",
        "with no tool schema SGLang's Rust Qwen Coder parser and LocalAI's XML parser read a Qwen3-Coder value as JSON (objects, numbers, booleans, null); SGLang's Python Qwen3-Coder detector and vLLM keep the text, and so does reagent (ov-q3c-typed-0-int_tool, tests/xml_typing.rs); the calls' names match",
    ),
    ("m-sglr-qc-string-parameters", "as m-sglr-qc-nested-json"),
    ("m-sglr-qc-type-conversion", "as m-sglr-qc-nested-json"),
    ("m-lai-xml-two-calls-numbers", "as m-sglr-qc-nested-json"),
    ("m-lai-xml-json-value", "as m-sglr-qc-nested-json"),
    ("m-lai-xml-json-scalars", "as m-sglr-qc-nested-json"),
    ("m-lai-pfc-json-then-xml", "as m-sglr-qc-nested-json"),
    ("m-lai-pfc-text-json-xml", "as m-sglr-qc-nested-json"),
    ("m-lai-iter-stream-typed", "as m-sglr-qc-nested-json"),
    ("m-lai-iter-scientific", "as m-sglr-qc-nested-json"),
    ("m-lai-iter-negative", "as m-sglr-qc-nested-json"),
    ("m-lai-iter-json-compact", "as m-sglr-qc-nested-json"),
    ("m-lai-iter-json-object-value", "as m-sglr-qc-nested-json"),
    (
        "m-sglr-qc-whitespace",
        "SGLang's Rust Qwen Coder parser trims the edges of every value (`  spaces around  ` becomes `spaces around`); vLLM keeps the spaces (main corpus, vllm-step3-whitespace-preserved) and so does reagent: whitespace inside a value is data, only layout around it is dropped",
    ),
    (
        "m-sglr-qc-content-before-and-after",
        "as j-sglr-deepseek-complete (SGLang's Rust parse_complete drops the text after the calls)",
    ),
    (
        "m-sglr-fb-mixed-valid-invalid",
        "as j-sglr-deepseek-complete: upstream's normal text is the text before the first call only, dropping the text between and after the calls and the malformed block; the good call matches",
    ),
    (
        "m-sglr-qc-invalid-function-name",
        "as sgl-py-glm45-unknown-name: SGLang skips a call to a tool that was not offered; reagent keeps it",
    ),
    (
        "m-sglr-fb-qwen-missing-closer-then-text",
        "SGLang reads no call in a Hermes <tool_call> whose closer is missing; OpenVINO Model Server reads it (ov-hermes-single-no-closer), and reagent keeps a complete call object whose closer is missing (sglr-qwen-missing-closer, issue 15's missing-closer rule)",
    ),
    (
        "m-sglr-wt-missing-end",
        "SGLang's JsonParser configured with a <tool> wrapper reads no call when the wrapper's closer or opener is missing, while the same file reads the bare object as a call (m-sglr-wt-empty-tokens, m-sglr-wt-no-wrapper); reagent reads a call whose opener or closer is missing (issue 15's rule; ov-hermes-single-no-closer, sglr-qwen-missing-closer, sglr-qwen-missing-opener)",
    ),
    ("m-sglr-wt-missing-start", "as m-sglr-wt-missing-end"),
    // Batch N, marked before scoring.
    (
        "n-vllm-dsv4-function-calls-block-rejected",
        "vLLM's DeepSeek V4 parser reads no call in a <｜DSML｜function_calls> block (V3.2's wrapper name); vLLM's DeepSeek V3.2 tests read the same block as calls (vllm-dsv32-no-params, vllm-dsv32-two-params, tests/tool_parsers/test_deepseekv32_tool_parser.py), and so does reagent, which reads both wrapper names as one DSML family",
    ),
    (
        "n-vllm-hytr-hy3-cut-mid-value",
        "vLLM's HY parsers finalize a call cut off mid-value at the end of a stream, the value as far as written; vLLM's DeepSeek V3 test expects no call for a call cut before its end (main corpus, vllm-dsv3-malformed-unclosed-json), as reagent does: a cut call is flagged, never completed (as vllm-apertus-incomplete)",
    ),
    (
        "n-vllm-hytr-hy3-cut-after-key",
        "as n-vllm-hytr-hy3-cut-mid-value (a key with no value yet: upstream emits the call with no arguments)",
    ),
    (
        "n-vllm-hytr-hy3-second-call-cut",
        "as n-vllm-hytr-hy3-cut-mid-value (the second call is cut mid-value; the first is complete)",
    ),
    ("n-vllm-hytr-hy4-cut-mid-value", "as n-vllm-hytr-hy3-cut-mid-value"),
    // Batch O, marked before scoring.
    (
        "o-hf-qwen3-tool-calls",
        "transformers' Qwen3 response schema reads a Qwen3-Coder value as JSON with no tool schema (a list here); the same project's string-args template keeps the text when no tools are given (o-hf-qwen3-string-args-no-tools), SGLang's Python Qwen3-Coder detector and vLLM keep it, and so does reagent (ov-q3c-typed-0-int_tool, tests/xml_typing.rs)",
    ),
    ("o-hf-qwen3-lax-values-no-tools", "as o-hf-qwen3-tool-calls (`true` read as a boolean with no schema)"),
    (
        "o-hf-qwen3-label-lax-parser",
        "transformers' Qwen3 template reads `1.50` as the float 1.5 before the schema says label is a string; the same test gives the string \"1.50\" for the same text and tools through its string-args template (o-hf-qwen3-label-string-schema), and reagent types a value by its schema (string: the text kept)",
    ),
    // Batch P, marked before scoring.
    (
        "p-vllm-hy4-unknown-tool-text",
        "a GLM value for a tool not offered (no schema): vLLM's HY4 parser keeps the text \"1\"; mlx-lm's GLM-4.7 parser JSON-decodes every value not typed string, also with no tools (g-oll-glm47-indexing), and so does reagent for GLM",
    ),
    ("p-vllm-hy4-no-tools-declared", "as p-vllm-hy4-unknown-tool-text (no tools at all)"),
    (
        "p-vllm-hy4-malformed-missing-tool-calls-end",
        "as e-mrs-hunyuan-no-closer: vLLM's strict HY4 parser reads no call while </tool_calls:…> is missing after a complete call; OpenVINO Model Server reads a complete call whose closer is missing (ov-hermes-three-last-unclosed), the same vLLM file's lenient mode recovers it (test_lenient_recovers_best_effort), and so does reagent",
    ),
    (
        "p-vllm-hy4-malformed-unbalanced-tool-call",
        "a GLM call whose </tool_call:…> is missing before </tool_calls:…>: vLLM's HY4 parser reads no call; ollama finalizes a GLM call with no </tool_call> (main corpus, ollama-glm46-no-close-on-done) and OpenVINO Model Server a Hermes one (ov-hermes-three-last-unclosed), and reagent reads a complete call whose closer is missing",
    ),
    (
        "p-vllm-hcx-single",
        "vLLM's HyperCLOVA X SEED Think parser JSON-decodes a quoted <arg_value> (\"Seoul\" → Seoul) for a parameter the schema types string; mistral.rs keeps the quotes of a string-typed XML value (e-mrs-qwen-xml-schema-typed, \"\\\"C\\\"\"), and so does reagent (string parameters are raw text, see e-mlx-temperature-glm47-quoted)",
    ),
    ("p-vllm-hcx-content-before", "as p-vllm-hcx-single (upstream asserts the content; its parser's arguments decode the quotes)"),
    ("p-vllm-hcx-reasoning-prefix", "as p-vllm-hcx-content-before"),
    ("p-vllm-hcx-two-calls", "as p-vllm-hcx-single"),
    ("p-vllm-hcx-stream-single", "as p-vllm-hcx-single"),
    ("p-vllm-hcx-stream-content-then-call", "as p-vllm-hcx-content-before"),
    (
        "p-vllm-k2h-unknown-tool",
        "vLLM's K2 Horizon parser drops a call to a tool not offered; reagent keeps it, as sgl-py-glm45-unknown-name (TensorRT-LLM's parsers other than Kimi keep it too, f-trt-kimi-undefined)",
    ),
    (
        "p-vllm-k2h-malformed-missing-outer-closer",
        "as p-vllm-hy4-malformed-missing-tool-calls-end: a complete <ifm|tool_call> whose </ifm|tool_calls> is missing",
    ),
    // Batch Q, marked before scoring.
    (
        "q-vllm-mcpm5-single-around",
        "vLLM's MiniCPM5 parser drops the text around a call from a whole output (content None); the same file's streamed test of the same text keeps it (q-vllm-mcpm5-stream-single), SGLang's MiniCPM4 test keeps it (sgl-minicpm4-single-around), and so does reagent; the call matches",
    ),
    (
        "q-vllm-mcpm5-interleaved",
        "as q-vllm-mcpm5-single-around, for the text around and between two calls (streamed twin q-vllm-mcpm5-stream-multiple, SGLang's sgl-minicpm4-interleaved)",
    ),
    (
        "q-vllm-mcpm5-unknown-tool",
        "vLLM's MiniCPM5 parser keeps a block for a tool not offered as content; reagent keeps it as a call, as sgl-py-glm45-unknown-name (TensorRT-LLM's parsers other than Kimi keep it too, f-trt-kimi-undefined)",
    ),
    (
        "q-vllm-mcpm5-duplicate-param",
        "vLLM's MiniCPM5 parser reads no call when a parameter is given twice; vLLM's HY4 parser keeps the later value (tests/tool_parsers/test_hy_v4_duplicate_arg_key.py), and so does reagent (as ov-q3c-repeated-param)",
    ),
    (
        "q-vllm-mcpm5-alias-phone",
        "vLLM's MiniCPM5 parser renames a call to a tool not offered (get_details_by_phone) to an offered one; as g-oll-laguna-alias-name, reagent keeps the call under its name so the loop can tell the model which tools exist",
    ),
    ("q-vllm-mcpm5-alias-line", "as q-vllm-mcpm5-alias-phone (also renames and drops arguments)"),
    ("q-vllm-mcpm5-alias-roaming", "as q-vllm-mcpm5-alias-phone (also adds an argument)"),
    (
        "q-vllm-opv2-single-object",
        "vLLM's OpenPangu V2 parser rejects a lone call object where its list is expected; vLLM's Nemotron JSON parser reads a lone object in its list wrapper as one call (q-vllm-nemojson-single-object)",
    ),
    // Batch R, marked before scoring.
    (
        "r-vllm-trinity-think-call",
        "vLLM's Trinity tool parser, run with no reasoning parser, strips the <think> tags and returns their text as content; ollama's Qwen3-VL parser with no thinking keeps the whole <think>…</think> block as content (l-oll-qwen3vl-nt-trip-thinking), and reagent either keeps the block (batch G's rule) or reads it as reasoning, never tag-stripped content",
    ),
    ("r-vllm-trinity-think-no-call", "as r-vllm-trinity-think-call, with no call"),
    (
        "r-vllm-trinity-call-within-think",
        "vLLM's Trinity tool parser extracts a call written inside <think> and drops the reasoning after it; llama.cpp ignores calls inside reasoning (llama-reka-fake-call-in-reasoning) and so does vLLM's MiniMax parser (vllm-minimax-calls-in-think), as reagent does",
    ),
    // Batch U, marked before scoring.
    (
        "u-lm-check-bare-call",
        "llama-models' ToolUtils reads no call in a bare `name(k=v)` with no list around it (is_valid_python_list is False); vLLM's Granite pythonic parser reads a bare call as a call, with no tools offered (n-vllm-gpy-single): no parser reads both",
    ),
    ("u-ls-invalid-bare-call", "as u-lm-check-bare-call (llama-stack's ToolUtils, 'missing outer brackets')"),
    (
        "u-ag-r1-text-before-think",
        "autogen's parse_r1_content drops the text before <think> (content 'How are you?' for 'Hello, <think>world</think> How are you?'); pydantic-ai keeps the text before a thinking block as content (u-pyd-text-then-think, u-pyd-think-between-text)",
    ),
    (
        "u-ag-r1-unclosed-think",
        "text, then a <think> that never closes: autogen keeps the whole text, tag and all, as content; pydantic-ai drops the tag and keeps the rest as content (u-pyd-unclosed-think); pydantic-ai with no end tag reads the rest as thinking (u-pyd-no-end-tag), as ollama reads an unclosed <think> (g-oll-laguna-fakeout-thinking): three readings of one shape",
    ),
    ("u-pyd-unclosed-think", "as u-ag-r1-unclosed-think (pydantic-ai's default tags: the tag dropped, the text kept as content)"),
    (
        "u-pyd-open-start-text-only",
        "thinking forced open and no </think> in the output: pydantic-ai reads it all as text; ollama's Qwen 3.5 parser (g-oll-qwen35-unclosed-thinking), lmdeploy's DeepSeek V3.1 parser (e-lmd-dsv31-thinking-on) and LiteLLM's Bedrock DeepSeek R1 iterator (u-llm-dsr1-unterminated) read it as reasoning",
    ),
    // Batch W, marked before scoring.
    (
        "w-swe-action-parser",
        "SWE-agent's ActionParser reads a whole plain message ('ls -l') as the command when its first word is an offered command; a plain reply is the answer, with no call, in haystack's HuggingFaceLocalChatGenerator (w-hs-berlin-is-cool) and in reagent's prompt mode (s-smol-*): no parser reads both without the agent's protocol",
    ),
    (
        "w-swe-action-parser-invalid",
        "plain text with no action: SWE-agent raises a format error; haystack reads a plain reply as the answer with no error (w-hs-berlin-is-cool), camel's MCP parser returns no call and no error (w-camel-mcp-no-payload), as reagent does",
    ),
    (
        "w-swe-thought-action",
        "SWE-agent's ThoughtActionParser takes a bare ``` fenced block as the shell command; a fenced command beside an offered shell tool is content in reagent's prompt mode (s-smol-read-flower-4) and a fenced JSON object is content in llama.cpp (llama-ministral-json-fence)",
    ),
    ("w-swe-thought-action-no-block", "as w-swe-action-parser-invalid (ThoughtActionParser, EditFormat)"),
    ("w-swe-xml-no-tags", "as w-swe-action-parser-invalid (XMLThoughtActionParser)"),
    ("w-swe-json-not-json", "as w-swe-action-parser-invalid (JsonParser)"),
    (
        "w-swe-json-missing-command",
        "a JSON object with no call in it: SWE-agent's JsonParser raises a format error; llama.cpp reads such an object as content (llama-ministral-json-fence), as reagent does",
    ),
    ("w-mswea-no-backtick-block", "as w-swe-action-parser-invalid (mini-swe-agent's parse_regex_actions)"),
    ("w-mswea-regex-no-action", "as w-swe-action-parser-invalid (mini-swe-agent's parse_regex_actions)"),
    ("w-mswea-regex-nope", "as w-swe-action-parser-invalid (mini-swe-agent's parse_regex_actions)"),
    // Batch V, marked before scoring.
    (
        "v-roo-partial-param",
        "cut off inside a value: Roo Code reads the value written so far and runs the call once the stream ends (AssistantMessageParser.spec's finalizeContentBlocks test); vLLM's DeepSeek V3.1 test expects no call for a block cut off inside it (vllm-dsv31-cut-off), and reagent flags a call cut inside an argument as truncated, never guessed (the corpus README's robustness rule)",
    ),
    ("v-roo-stream-partial-param", "as v-roo-partial-param (the streaming parser, `src/file`)"),
    (
        "v-roo-whitespace-param",
        "Roo Code trims every parameter but `content`; vLLM's Step-3 test keeps leading and trailing whitespace in an XML parameter value as data (vllm-step3-whitespace-preserved), and so does Roo Code itself for `content`; reagent strips one line break at each end only",
    ),
    (
        "v-goose-execute-to-shell",
        "goose rewrites a call to `execute`, a tool not offered, into a call to the offered `shell` by reading the TypeScript in its code: a renaming to an offered tool, as ollama's Laguna alias (g-oll-laguna-alias-name); reagent keeps the call as written so the loop can say the tool does not exist (sgl-py-glm45-unknown-name)",
    ),
    ("v-goose-execute-decoy-data", "as v-goose-execute-to-shell"),
    (
        "v-goose-rejected-execute-two-shell-calls",
        "a well-formed Kimi K2 call to `execute`, a tool not offered, dropped with its text by goose; SGLang forwards such calls when asked (k-sgl-unknown-tool-forwarded) and K2-V3 keeps them; reagent keeps the call (sgl-py-glm45-unknown-name)",
    ),
    ("v-goose-rejected-execute-computed-command", "as v-goose-rejected-execute-two-shell-calls"),
    (
        "v-goose-rejected-execute-no-closers",
        "complete arguments whose <|tool_call_end|> and section end never come, to a tool not offered: goose drops it; OpenVINO Model Server and ollama read a complete call whose closer is missing (e-mrs-hunyuan-no-closer), as reagent does, and reagent keeps calls to tools not offered",
    ),
    (
        "v-goose-unterminated-shell",
        "complete arguments whose <|tool_call_end|> never comes: goose's tokenized parser reads no call; OpenVINO Model Server and ollama read a complete call whose closer is missing (e-mrs-hunyuan-no-closer, e-mrs-liquid-no-closer), as reagent does",
    ),
    (
        "v-goose-no-argument-marker",
        "goose resolves `functions.Nadirclawusage.usageSummary` to the offered `Nadirclawusage__usageSummary`: a renaming to an offered tool, as ollama's Laguna alias (g-oll-laguna-alias-name); reagent keeps the name the model wrote",
    ),
    (
        "v-goose-malformed-json-directive",
        "goose clears the whole text part around a malformed call directive; SGLang returns a malformed call block as the normal text (m-sglr-fb-qwen-malformed-json), and reagent keeps the text of a reply with no call",
    ),
    // batch Y, marked before scoring
    (
        "y-llama31-code-interpreter",
        "raw code after <|python_tag|> with Environment: ipython: llama-models' own decoder (models/llama3/chat_format.py, decode_assistant_message_from_content) names the call `code_interpreter`; functionary's Llama 3.1 template names such text a call to `python` (t-fy-v3-llama31-python), as the corpus convention does; no name satisfies both",
    ),
    ("y-llama32-code-interpreter", "as y-llama31-code-interpreter"),
    // batch AA, marked before scoring
    (
        "aa-gc-g33-cot-on-no-response",
        "thinking on, a <think> that never closes: granite-common's Granite 3.3 output processor keeps the whole text, tag and all, as content; ollama's Laguna parser with thinking on reads an unclosed <think> as reasoning (g-oll-laguna-fakeout-thinking), as pydantic-ai does (u-pyd-no-end-tag): the readings of u-ag-r1-unclosed-think",
    ),
    // batch AC, marked before scoring
    (
        "ac-lcjs-react-no-action-error",
        "plain text with no Action and no Final Answer: langchainjs' ReActSingleInputOutputParser throws; haystack reads a plain reply as the answer with no error (w-hs-berlin-is-cool), as reagent does: as w-swe-action-parser-invalid",
    ),
    (
        "ac-rig-qwen-args-array",
        "a Hermes call whose arguments are not an object: rig's Qwen3 parser rejects the turn; vLLM's Hermes parser keeps such a call (main corpus vllm-hermes-bare-string-args), and reagent keeps it so the loop can answer it (smol-shot-10)",
    ),
    (
        "ac-rig-qwen-orphan-closer-first",
        "a </tool_call> before any <tool_call>, then a good call: rig rejects the whole turn; OpenVINO Model Server reads the calls on both sides of a closer whose opener is missing (ov-hermes-three-no-opener), SGLang reads a call whose opener is missing (sglr-qwen-missing-opener), as reagent's robustness rule does",
    ),
    (
        "ac-rig-qwen-nested-blocks",
        "a doubled <tool_call> opener around one call: rig rejects the turn; ollama's Laguna parser reads the call out of a repeated opener (g-oll-laguna-duplicated-nested)",
    ),
    (
        "ac-rig-oll-unterminated",
        "a Qwen3 prompt that prefilled <think>, and no </think>: rig keeps the text visible; ollama's Laguna parser with thinking on reads an unclosed <think> as reasoning (g-oll-laguna-fakeout-thinking), as pydantic-ai does (u-pyd-no-end-tag): the readings of aa-gc-g33-cot-on-no-response",
    ),
    ("ac-rig-oll-literal-open-marker", "as ac-rig-oll-unterminated"),
    ("ac-rig-oll-visible-indentation", "as ac-rig-oll-unterminated"),
    (
        "ac-rig-oll-inline-close-marker",
        "a Qwen3 prompt that prefilled <think>, then a lone </think> inside a line: rig splits only at a leading block or at \\n</think>\\n\\n and keeps it all visible; lmdeploy's Qwen3 parser reads the text before a lone inline </think> as reasoning (e-lmd-qwen3-reasoning-no-open-tag)",
    ),
    (
        "ac-rig-oll-close-marker-own-line",
        "a Qwen3 prompt that prefilled <think>, then </think> followed by one newline: rig keeps it all visible; llama.cpp reads the text before such a </think> as reasoning with thinking forced open (main corpus llamaold-hermes-qwq-think-call, llama-stepfun-numeric-string)",
    ),
    // batch AE, marked before scoring
    (
        "ae-xinf-qwen-malformed-sibling-json-no-args",
        "a Qwen3-Coder parameter with no schema (no tools offered): Xinference's Qwen parser reads `1` as the number 1; vLLM and SGLang keep the text, and so does reagent (ov-q3c-typed-0-int_tool, tests/xml_typing.rs)",
    ),
    (
        "ae-xinf-qwen-malformed-sibling-oops",
        "as ae-xinf-qwen-malformed-sibling-json-no-args",
    ),
    // batch AF, marked before scoring
    (
        "af-vllm-gemma4-invalid-simple",
        "a lone <channel|> with no <|channel>: vLLM's Gemma 4 reasoning parser reads the text before it as reasoning on the whole output and gives it all as content (marker dropped) when streamed, in the same test file (INVALID_SIMPLE_NONSTREAMING / INVALID_SIMPLE_STREAMING); the record holds the whole-output reading",
    ),
    (
        "af-vllm-gemma4-invalid-complete",
        "as af-vllm-gemma4-invalid-simple (INVALID_COMPLETE_NONSTREAMING / INVALID_COMPLETE_STREAMING)",
    ),
    (
        "af-vllm-glm45-only-open-tag",
        "an unclosed <think> with no prefill: vLLM's GLM-4.5 parser keeps it all as content on the whole output and reads the text as reasoning when streamed (ONLY_OPEN_TAG / ONLY_OPEN_TAG_STREAM); ollama's Laguna parser and pydantic-ai read an unclosed <think> as reasoning (g-oll-laguna-fakeout-thinking, u-pyd-no-end-tag)",
    ),
    (
        "af-vllm-glm45-append-empty",
        "an empty output: vLLM's glm45_append_think parser gives the content '<think>' on the whole output and nothing when streamed (EMPTY / EMPTY_STREAMING); an empty reply holds no content",
    ),
    // batch AG, marked before scoring
    (
        "ag-trt-r1-parse-4",
        "thinking forced open, then the model writes <think> itself: TensorRT-LLM's deepseek-r1 and nano-v3 reasoning parsers keep the repeated <think> in the reasoning (\"<think> a \"), as llama.cpp does (main corpus llamaold-dsr1-think-in-content-forced-open); ollama's Nemotron 3 and Qwen3 parsers drop it (g-oll-nemo-leading-open-tag, g-oll-qwen3-explicit-open), and so does reagent since 960fb95",
    ),
    (
        "ag-trt-kimi-parse-0",
        "text before <think>: TensorRT-LLM's kimi_k2, qwen3 and laguna reasoning parsers drop it from a whole output (content 'c' for 'a<think>b</think>c') but keep it in the stream (ag-trt-kimi-stream-7, 'content<think>reason</think>after' gives 'contentafter'); autogen drops it, pydantic-ai keeps it (u-ag-r1-text-before-think)",
    ),
    (
        "ag-trt-gemma4-parse-1",
        "Gemma 4's thought channel: TensorRT-LLM's gemma4 reasoning parser keeps the channel name in the reasoning ('thought\\nreasoning'); ollama's Gemma 4 parser strips it (l-oll-gemma4-thinking-then-content, l-oll-gemma4-streaming), and so does reagent",
    ),
    ("ag-trt-gemma4-parse-5", "as ag-trt-gemma4-parse-1, with an empty thought ('thought\\n' against none)"),
];
