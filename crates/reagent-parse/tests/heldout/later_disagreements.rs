//! Held-out records of batches AH onward where upstream projects contradict each other or a
//! recorded choice of reagent: reported, not counted, as [`super::disagreements`]' are.

/// Records of batches AH onward whose upstream contradicts a deliberate choice of reagent
/// (or another upstream); reported, not counted.
pub(super) const LATER_DISAGREEMENTS: &[(&str, &str)] = &[
    // batch AI, marked before scoring
    (
        "ai-lai-lfm2-numeric-boolean",
        "LocalAI's LFM2 regex config gives every Pythonic argument as a string ('42', 'false'; its comment calls a typed parser a future enhancement); llama.cpp's LFM2 parser reads Python literals typed (main corpus llama-lfm2-basic: arg1=1 is 1; llama-lfm2-python-true), and so does reagent",
    ),
    // batch AI, moved after scoring (a reagent miss before; the contradicting upstream tests
    // were not seen when the batch was written)
    (
        "ai-lai-chat-native-forced-open-none",
        "thinking forced open with the reasoning kept in the content: LocalAI's port of llama.cpp's chat PEG test hands the output back as written ('…</think>\\nHello'); vLLM's glm45_append_think parser puts the opened <think> back before it (af-vllm-glm45-append-simple, af-vllm-glm45-append-multiple-lines), and so does reagent",
    ),
    // batch AI, moved after scoring by the lead (misses before; the contradicting upstream
    // tests were not weighed when the batch was written)
    (
        "ai-lai-rsn-multiple-thinking",
        "several reasoning blocks: LocalAI joins their texts with a blank line ('First\\n\\nSecond'); llama.cpp (main corpus llamaold-glm45-interleaved-think), langchainjs (ac-lcjs-deepseek-multiple-blocks) and TensorRT-LLM (ag-trt-interleaved-think) join them with nothing, vercel/ai with one newline (ac-vai-generate-multiple-think); reagent joins them with nothing",
    ),
    ("ai-lai-rsn-multiple-tag-types", "as ai-lai-rsn-multiple-thinking"),
    ("ai-lai-rsn-order", "as ai-lai-rsn-multiple-thinking"),
    ("ai-lai-rsncfg-prefill-off-multiple", "as ai-lai-rsn-multiple-thinking"),
    // batch AH (marked before scoring)
    (
        "ah-smol-gtc-missing-args",
        "a call with no arguments key: smolagents' get_tool_call_from_text gives arguments None; SGLang reads a name-only call as arguments {} (m-sglr-fb-json-name-only-in-text) and so does ollama (l-oll-qwen3vl-t-ws-then-call); reagent's arguments are always an object, {} here",
    ),
    // batch AJ, marked before scoring
    (
        "aj-sgl-lfm2-unknown-name",
        "as sgl-py-glm45-unknown-name: SGLang's LFM2 detector drops a call to a tool that was not offered (SGLANG_FORWARD_UNKNOWN_TOOLS off); reagent keeps it so the loop can name the valid tools",
    ),
    // Batch AL, marked before scoring.
    (
        "al-lai-complete-tagless-answer",
        "thinking opened by the prompt (<think> prefilled) and no </think> in a complete reply: LocalAI's ExtractReasoningComplete and applyAutoparserOverride keep it as content; LocalAI's own ExtractReasoningWithConfig reads the same shape as reasoning (ai-lai-rsncfg-becomes-tagged), as do ollama's Qwen 3.5 parser (g-oll-qwen35-unclosed-thinking), lmdeploy's DeepSeek V3.1 parser (e-lmd-dsv31-thinking-on) and LiteLLM's Bedrock DeepSeek R1 iterator (u-llm-dsr1-unterminated); pydantic-ai keeps it as text (u-pyd-open-start-text-only); reagent reads it as reasoning",
    ),
    ("al-lai-chat-prefill-tagless", "as al-lai-complete-tagless-answer (applyAutoparserOverride, the same rule)"),
    ("al-lai-chat-prefill-json-summary", "as al-lai-complete-tagless-answer (a JSON answer)"),
    (
        "al-lai-pegutil-seed-quotes",
        "a Seed-OSS value ending in a newline before </parameter>: LocalAI's constructed-tools mapper drops one whitespace character at each end (chat.go, trimOneSpace); llama.cpp keeps the trailing newline of the same edit's values (main corpus llama-seedoss-quotes-in-value); the test itself asserts only the name and that filename is set",
    ),
    (
        "al-jan-unterminated",
        "a <think> that never closes: Jan's removeReasoningContent hands it back as written, as autogen does (u-ag-r1-unclosed-think); LocalAI reads the rest as reasoning (ai-lai-rsn-unclosed-think), as ollama's Laguna parser (g-oll-laguna-fakeout-thinking) and pydantic-ai with no end tag (u-pyd-no-end-tag) do, and so does reagent",
    ),
    (
        "al-jan-think-then-harmony",
        "text before a reasoning block: Jan's harmony step drops everything before the final channel ('middle' before the analysis channel), as autogen drops text before <think> (u-ag-r1-text-before-think); pydantic-ai keeps text before a thinking block as content (u-pyd-text-then-think), the reading reagent records for <think>; on this harmony shape reagent gives 'done' as Jan does (seen after scoring; left uncounted as marked)",
    ),
    // batch AK, marked before scoring
    (
        "ak-dify-code-block-multiple-json",
        "two JSON action objects on separate lines of one fence: Dify's CoT parser reads no action (invalid combined JSON); langroid reads each top-level object of a reply as its own call (z-lgr-json-multiline-array-dq, z-lgr-json-unterminated-then-call-dq-nl): no parser reads both",
    ),
    (
        "ak-dify-prefix-action-lower",
        "an `action:` line with no input: Dify strips the prefix and streams the rest as the reply ('something'); crewAI and LangChain read `Action:` with no `Action Input:` as a format error with no content (w-crew-missing-action-input-error, main corpus lc-mrkl-missing-action-input)",
    ),
    ("ak-dify-prefix-action-upper", "as ak-dify-prefix-action-lower"),
    (
        "ak-dify-prefix-thought-lower",
        "a reply that is only a thought: Dify strips `thought:` and streams the thought as the visible reply; BeeAI's LinePrefixParser keeps such a reply as the thought with no final answer (ak-bee-lp-inline-final-answer-thought), and reagent's ReAct convention keeps a thought out of the content (w-crew-*, w-li-*)",
    ),
    ("ak-dify-prefix-thought-upper", "as ak-dify-prefix-thought-lower"),
    (
        "ak-bee-lp-chunk-sizes",
        "a tool call and a final answer in one reply: BeeAI's LinePrefixParser gives both; LangChain and langchainjs raise on an action beside a final answer (main corpus lc-mrkl-action-and-answer, ac-lcjs-react-action-and-finish-error), and reagent follows them",
    ),
    (
        "ak-bee-parser-newlines-collapsed",
        "the Bee agent's parser rewrites a final answer's line breaks by its options: the same text gives 'I need to find the fastest car.' here and 'I need to find\\n the fastest car.' with preserveNewLines (ak-bee-parser-newlines-preserved); LangChain keeps a final answer's lines as written (main corpus lc-mrkl-final-multiline), and so does reagent",
    ),
    ("ak-bee-parser-newlines-preserved", "as ak-bee-parser-newlines-collapsed"),
    (
        "ak-bee-parser-invalid-hello-world",
        "a plain reply with no prefix: the Bee agent's parser (allowMultiLines off) throws; BeeAI's own LinePrefixParser fallback reads such a reply as the final answer (ak-bee-lp-fallback-lines), haystack reads it as the answer (w-hs-berlin-is-cool), as reagent does",
    ),
    ("ak-bee-parser-invalid-tool-brace", "as ak-bee-parser-invalid-hello-world"),
    ("ak-bee-parser-invalid-blank-lines-t", "as ak-bee-parser-invalid-hello-world"),
    (
        "ak-bee-fallback-bad-data",
        "a JSON object that names no tool, with tool_choice required: BeeAI raises ChatModelToolCallError; Dify hands such an object back as the reply text (ak-dify-json-missing-fields) and llama.cpp reads a JSON object as content (main corpus llama-ministral-json-fence), as reagent does (see w-swe-json-not-json)",
    ),
    (
        "ak-kilo-kimi-single",
        "Kilo Code's Kimi parser keeps the `functions.` prefix in the call's name ('functions.read_file'); SGLang reads `functions.ReadFile:0` as ReadFile (sgl-kimi-single) and vLLM and llama.cpp drop the prefix too (main corpus kimi_k2 records), as reagent does",
    ),
    ("ak-kilo-kimi-two-in-section", "as ak-kilo-kimi-single"),
    ("ak-kilo-kimi-stream-accumulate", "as ak-kilo-kimi-single"),
    (
        "ak-kilo-kimi-two-sections",
        "Kilo Code's Kimi parser drops the text between two call sections ('some text') and keeps the text after the last; SGLang keeps text between calls (sgl-minicpm4-interleaved), as reagent does",
    ),
    // Batch AN, marked before scoring.
    (
        "an-msa-parser-single-quoted",
        "a single-quoted Python dict as the call object: ModelScope-Agent's MsActionParser raises (its earlier version returned no call); NousResearch's Hermes reference reads the same shape inside <tool_call> as a call with ast.literal_eval (y-hermes-readme-single-quoted) and llama_index's ReAct parser reads single-quoted inputs (w-li-action-reasoning-step)",
    ),
    // Batch AM, marked before scoring.
    (
        "am-rllm-qwen-missing-end",
        "as m-sglr-fb-qwen-missing-closer-then-text: rLLM's QwenToolParser reads no call in a <tool_call> whose closer is missing; OpenVINO Model Server reads a complete call object whose closer is missing (ov-hermes-single-no-closer), and so does reagent (issue 15's missing-closer rule)",
    ),
    (
        "am-rllm-r1-missing-end",
        "as am-rllm-qwen-missing-end, for DeepSeek R1: rLLM's R1ToolParser reads no call while <｜tool▁call▁end｜> is missing after a complete fenced call; OpenVINO Model Server and ollama read a complete call whose closer is missing (ov-hermes-single-no-closer, main corpus ollama-glm46-no-close-on-done), and reagent's missing-closer rule is the same for every family",
    ),
    (
        "am-slime-xml-unknown-tool",
        "as sgl-py-glm45-unknown-name: slime's parse_xml_tool_uses leaves a block for a tool not offered as text; TRL's GRPO trainer counts a call to a tool not offered as a call that fails (am-trl-grpo-envfactory-decrement), TensorRT-LLM's parsers other than Kimi keep it (f-trt-kimi-undefined), and so does reagent, so the loop can name the valid tools",
    ),
    (
        "am-skyrl-search-two-tags",
        "SkyRL's search environment takes the first <search> tag only (one action per turn); Roo Code reads every tool tag of a message (v-roo-consecutive-tools), as gptme does (ah-gptme-xml-two-tools) and reagent does: a parse gives every call and the loop decides how many to run",
    ),
    (
        "am-vf-think-no-tags",
        "verifiers' ThinkParser returns '' for a reply with no </think> (its format reward treats it as malformed); verifiers' own MaybeThinkParser returns the same kind of text unchanged (am-vf-maybe-no-tags), as pydantic-ai keeps text with no thinking block as content (u-pyd-no-tags), and so does reagent",
    ),
    (
        "am-vf-think-multiple-blocks",
        "verifiers' ThinkParser keeps only the text after the last </think>, dropping the text between two think blocks; pydantic-ai keeps the text around a think block as content (u-pyd-think-between-text), as langchainjs does between two blocks (ac-lcjs-deepseek-multiple-blocks), and so does reagent",
    ),
    // Batch AQ, marked before scoring.
    (
        "aq-lcgo-mrkl-trailing-observation",
        "langchaingo's MRKL parser keeps a trailing `Observation:` label in the action input (\"5 + 3\\nObservation:\"); LangChain's conversational parser ends the input at `Observation:` (main corpus lc-convo-observation), as Qwen's LangChain ReAct samples do (an-qwen-lc-step1-call), and the main corpus holds reagent to that: the label starts the tool's reply, it is not the model's input",
    ),
    // batch AQ, moved after scoring (misses before: 32/43 counted counts them; the earlier
    // entry for the same reading, ai-lai-rsn-multiple-thinking, was not checked when the batch
    // was written)
    (
        "aq-gk-two-think-text-between",
        "as ai-lai-rsn-multiple-thinking: genkit's Ollama plugin joins several reasoning blocks with a blank line ('First thought\\n\\nSecond thought'); llama.cpp (main corpus llamaold-glm45-interleaved-think), langchainjs (ac-lcjs-deepseek-multiple-blocks) and TensorRT-LLM (ag-trt-interleaved-think) join them with nothing, vercel/ai with one newline (ac-vai-generate-multiple-think); reagent joins them with nothing; the content matches",
    ),
    ("aq-gk-think-and-thinking", "as aq-gk-two-think-text-between"),
    ("aq-gk-chat-two-think", "as aq-gk-two-think-text-between"),
    // Batch AP, marked before scoring.
    (
        "ap-mp-q3c-repeated-param-text-around",
        "as ov-q3c-repeated-param: ai-sdk-tool-call-middleware's Qwen3-Coder protocol makes a parameter given twice a list ([\"AI\", \"ML\"]); OpenVINO Model Server keeps the first value, vLLM the later one (tests/tool_parsers/test_hy_v4_duplicate_arg_key.py), and so does reagent",
    ),
    ("ap-mp-q3c-two-functions-one-block", "as ap-mp-q3c-repeated-param-text-around (y given twice)"),
    (
        "ap-mp-hermes-unclosed-then-ok-adjacent",
        "as am-rllm-qwen-missing-end: ai-sdk-tool-call-middleware's Hermes protocol drops a complete call object whose </tool_call> is missing (the one it holds is inside a JSON string) when the next <tool_call> follows; OpenVINO Model Server reads a complete call object whose closer is missing (ov-hermes-three-last-unclosed), SGLang's Rust Qwen test too (sglr-qwen-missing-closer), and so does reagent (issue 15's missing-closer rule)",
    ),
    (
        "ap-mp-hermes-unclosed-then-ok-spaced",
        "as ap-mp-hermes-unclosed-then-ok-adjacent, with a space before the next opener (upstream asserts at least the ok call; the record follows the unspaced sibling's exact [ok])",
    ),
    (
        "ap-mp-hermes-unclosed-prefix-once",
        "as ap-mp-hermes-unclosed-then-ok-adjacent: a complete call object in a <tool_call> with no real closer, at the end of the text; upstream asserts only the text, the record takes no call as its sibling tests read such a block",
    ),
    (
        "ap-mp-exaone-think-left-as-text",
        "ai-sdk-tool-call-middleware's K-EXAONE protocol leaves <think>…</think> in the text for a provider's own reasoning parser; vercel/ai's reasoning middleware splits the same shape into reasoning and text (ac-vai-generate-think), as reagent's parse does (reasoning is part of its result)",
    ),
    // Batch AT, marked before scoring.
    (
        "at-oll-min-unknown-tool-returns-error",
        "ollama's Ministral parser returns an error for a call to a tool not offered; reagent keeps the call so the loop can tell the model which tools exist, as sgl-py-glm45-unknown-name (TensorRT-LLM's parsers other than Kimi keep it too, f-trt-kimi-undefined)",
    ),
    (
        "at-oll-min-whitespace-before-think-tag-is-trimmed",
        "ollama's Ministral parser drops the whitespace the model wrote before `[THINK]` when it joins the content around a think block (`contentafter`); langchainjs keeps the text around think blocks as written (ac-lcjs-deepseek-multiple-blocks: `Start  Middle  End`), and so does reagent (the main corpus's llamaold-glm45-interleaved-think contradiction)",
    ),
    (
        "at-oll-ds3-consecutive-tool-calls",
        "ollama's DeepSeek V3 edge-case test expects the content `First.` for two call blocks with `Second.` between them (the calls are not asserted), so the text after the first block is dropped; the same file's emoji_after_tool_call test keeps text after a call block (held in the main corpus as ollama-ds3-content-after-call: `I'll help you.完成 ✅`) and ollama's Ministral and FunctionGemma tests keep text between calls (the main corpus's ollama-fgemma-text-between; at-oll-min-content-after-tool-call); reagent keeps it",
    ),
    // Batch AS, marked before scoring.
    (
        "as-mp-nested-start-no-close-unknown-tool",
        "as ap-mp-hermes-unclosed-then-ok-adjacent: ai-sdk-tool-call-middleware's Hermes protocol does not implicitly close a first <tool_call> (no </tool_call>) holding a call to a tool not offered; OpenVINO Model Server reads a complete call object whose closer is missing (ov-hermes-three-last-unclosed), SGLang's Rust Qwen test too (sglr-qwen-missing-closer), and so does reagent (issue 15's missing-closer rule); upstream expects only the second call",
    ),
    (
        "as-mp-nested-start-no-close-schema-rejected",
        "as as-mp-nested-start-no-close-unknown-tool (a complete call object whose arguments the tool's `false` schema rejects)",
    ),
    (
        "as-mp-nested-start-no-close-proto-key",
        "as as-mp-nested-start-no-close-unknown-tool (a complete call object with a __proto__ key)",
    ),
    (
        "as-mp-nested-start-no-close-relaxed-json",
        "as as-mp-nested-start-no-close-unknown-tool (a complete relaxed-JSON call object)",
    ),
    (
        "as-mp-nested-start-no-close-no-arguments",
        "as as-mp-nested-start-no-close-unknown-tool (a complete call object with no arguments key)",
    ),
    (
        "as-mp-q3c-deepseek-name-then-value",
        "ai-sdk-tool-call-middleware keeps the text null as the string \"null\" for a nullable string ([\"string\", \"null\"]) by policy; vLLM (vllm-dsv32-nullable-null) and TensorRT-LLM (f-trt-q3c-anyof-null) read null as JSON null for a nullable type, reagent's recorded rule (corpus README, schema-dependent typing)",
    ),
    // Batch AV, marked before scoring.
    (
        "av-lfm2-escaped-quote-in-value",
        "ollama's LFM2 parser keeps a backslash escape in a Python string as written (`'echo \\'hello\\''` gives `echo \\'hello\\'`, its comment: not processed); vLLM's pythonic and OLMo 3 parsers decode it (main corpus vllm-pythonic-escaped, vllm-olmo3-escaped: `'Martha\\'s Vineyard'` gives `Martha's Vineyard`), and so does reagent (Python string semantics)",
    ),
    (
        "av-lfm2-newline-in-string-arg",
        "ollama's LFM2 parser keeps `\\n` inside a Python string as a backslash and an n; llama.cpp's LFM2 tests decode it to a line break (main corpus llama-lfm2-escape-tab, llama-lfm2-multiline-code), and so does reagent",
    ),
    (
        "av-glm46-undeclared-tool",
        "ollama's GLM-4.6 parser reports an error and no call for a complete call with no </tool_call> at the end of the stream when the tool was not offered; reagent keeps calls to tools not offered so the loop can tell the model which exist (sgl-py-glm45-unknown-name, at-oll-min-unknown-tool-returns-error) and finalizes a complete GLM call at the end of the stream (ollama-glm46-no-close-on-done)",
    ),
];
