//! Held-out records of batches AH onward reagent does not yet read as their source expects,
//! each with its reason, under the same rules as [`super::known_misses`].

/// Counted records of batches AH onward reagent does not read as their source expects, in
/// both modes, for now.
pub(super) const LATER_KNOWN_MISSES: &[(&str, &str)] = &[
    // batch AI, scored before any fix (66/103 counted, both modes, the same 37 misses; one moved to DISAGREEMENTS after scoring)
    ("ai-lai-peg-markers-call-id-between", "`<function=NAME>[ID]{json}</function>`: the bracketed call id between the name and the JSON is not read, so reagent gives the call with no id and empty arguments; LocalAI's tag_with_json markers read the id and the arguments"),
    ("ai-lai-rsn-only-closing", "a lone `</thinking>` with no prefill is read as the end of empty reasoning and dropped; LocalAI keeps it as content (as ag-trt-nano-parse-6: reagent's forced-open reading of a lone closer)"),
    // batch AH, scored before any fix: 34/68 counted, both modes; the same 34 misses in each.
    ("ah-smol-gtc-basic", "`{\"name\": f, \"arguments\": \"New York\"}`: reagent reads no call when the arguments are a string that is not JSON; smolagents' get_tool_call_from_text passes the string on as the arguments"),
    ("ah-smol-gtc-numeric-args", "as ah-smol-gtc-basic, with the number 42 as the arguments"),
    ("ah-smol-gtc-custom-keys", "`{\"tool\": f, \"params\": \"New York\"}`: reagent knows no `tool`/`params` call keys (smolagents is configured with them) and reads no call; the arguments are also a plain string"),
    ("ah-smol-gtc-name-key-missing", "`{\"action\": …, \"arguments\": …}` with no name: reagent keeps the object as content; smolagents raises (no call, no content); batch W marked the same shape a disagreement (w-swe-json-missing-command), not reclassified after scoring"),
    ("ah-gptme-toolcall-missing-comma", "gptme's `@NAME(ID): {JSON}` (read since batch AH) with a comma missing between two members: reagent reads no call (tolerant JSON does not add commas: the robustness record rob-malformed-hermes-first expects that call dropped); gptme mends it with json_repair"),
    ("ah-gptme-unrunnable-structured", "gptme's `@NAME(ID): {JSON}` naming a tool that is not offered (read since batch AH): with tools offered the line stays text, as a bare JSON call to an unknown tool does; gptme reads the call and answers 'not available'"),
    ("ah-gptme-interrupt-two-calls", "as ah-gptme-unrunnable-structured, two calls"),
    ("ah-gptme-render-xml-patch", "gptme's xml format with its `args` attribute, `<patch args=\"test.txt\">body</patch>`, for a tool of two parameters: not read (a text body is read only for a tool whose one parameter is a string, since batch AH); gptme maps the args and the body to its own parameter order"),
    ("ah-gptme-render-markdown-patch", "gptme's markdown format, a fenced block named for an offered tool (```patch test.txt): read as text; gptme reads a call to patch {path, patch}"),
    // batch AJ, scored before any fix (51/57 counted in both modes for its first part)
    ("aj-bfcl-granite3-function-doc-not-a-call", "an object with keys beside name and arguments (the function document: `type`, `description`) is read as a call; BFCL's Granite 3 and Phi handlers take it for no call"),
    ("aj-sgl-gigachat3-missing-arguments", "a GigaChat 3 call object with no `arguments` field is read as a call with `{}`; SGLang's GigaChat 3 detector reads no call"),
    // batch AJ, second part (the rest of the registered SGLang file), scored before any fix (4/6)
    // batch AL, scored before any fix (59/60 counted, both modes, the same miss)
    ("al-lai-pegutil-function-as-key", "`<tool_calls>[{\"NAME\": {\"id\": …, \"args\": {…}}}]</tool_calls>` (the function name as the key, its arguments under `args` beside an `id`) gives no call: the `<tool_calls>` list reader wants name/arguments keys and the name-as-key reader (Apertus) only `<|tools_prefix|>` with the arguments directly under the name; LocalAI's StandardJSONTools (FunctionIsKey, ArgsKey args, CallIDKey id) reads the call and its id"),
    // batch AK, scored before any fix (29/44 counted, both modes, the same 15 misses)
    ("ak-dify-text-json-text-mix", "Dify's `{\"action\", \"input\"}` blob (read since batch AK) with text on both sides: reagent's ReAct JSON reading returns the call alone, the text around it is dropped; Dify streams it as the reply"),
    ("ak-dify-multiple-code-blocks", "two fenced Dify blobs with text between: reagent's ReAct JSON reading takes the first action only (one action per ReAct step); Dify yields both"),
    ("ak-bee-lp-inline-final-answer-error", "a `Final Answer:` inside a `Thought:` line is read as the final answer (content 'The discussion thread is about ...'); BeeAI's LinePrefixParser takes prefixes only at a line start, so the reply is one thought (no content) and, with the thought not an end node, an error"),
    ("ak-bee-lp-inline-final-answer-thought", "as ak-bee-lp-inline-final-answer-error: upstream reads the whole line as the thought, no content"),
    ("ak-bee-parser-chunked-json", "the Bee agent's `Tool Name:` / `Tool Input:` lines (each value on the next line) are not read as ReAct's `Action:` / `Action Input:`, so no call; upstream reads the call Google {query}"),
    ("ak-bee-parser-chunking-colorado", "`Final answer :` (lower-case `answer`, a space before the colon) is not read as the final-answer prefix, so the prefix stays in the content; the Bee agent's parser matches it loosely"),
    ("ak-bee-parser-chunking-lowercase", "as ak-bee-parser-chunking-colorado, for `final answer:`"),
    // batch AN, scored before any fix (39/44 counted, both modes, the same five misses)
    ("an-lagent-rewoo-plan", "a ReWOO plan (`Plan: …` lines, each followed by `#E1 = NAME[INPUT]`) gives no call: reagent has no reader for the `#En = NAME[INPUT]` worker lines; lagent's ReWOOProtocol.parse_worker reads one action per plan, the text between the brackets as its input"),
    // batch AM, scored before any fix (61/69 counted, both modes, the same 8 misses)
    ("am-skyrl-search-empty", "`<search></search>` for an offered tool whose one parameter is a string: an empty tag is a call with no arguments, by reagent's rule (tests/prompted.rs: `<read_file></read_file>`, so the loop reports the missing argument); SkyRL's search environment reads the query \"\""),
    // batch AQ, scored before any fix (32/43 counted, both modes, the same 11 misses; the three
    // genkit misses of joined reasoning blocks were moved to DISAGREEMENTS after scoring)
    // batch AP, scored before any fix (37/68 counted, both modes, the same 31 misses)
    ("ap-nlc-harmony-thought-comment", "a harmony commentary message with no recipient (a preamble) between analysis and final: reagent adds it to the content before the final text; node-llama-cpp reads it as a comment segment, neither thought nor answer, and the answer is the final message alone"),
    ("ap-nlc-template-brackets-call", "a user-defined call template `[[call: NAME(JSON)]]` after text gives no call: no family or fallback reads a `[[call: …]]` bracket form; node-llama-cpp's TemplateChatWrapper reads func2 with its JSON"),
    ("ap-nlc-template-call-function-line", "a user-defined call template `Call function: NAME with params JSON.` gives no call: the fallback does not read this prose-shaped line; node-llama-cpp's TemplateChatWrapper reads func2"),
    ("ap-nlc-jinja-llama31-text-call", "text glued before a Llama 3 JSON call (`Hello!{\"name\": …, \"parameters\": …}`): the call is read but the text is dropped, as reagent follows vLLM for text around Llama 3 JSON calls (see sgl-py-llama32-trailing-text); node-llama-cpp keeps `Hello!` as the text before the call (an upstream contradiction found after scoring, kept counted)"),
    ("ap-mp-hermes-relaxed-line-comment", "relaxed JSON in <tool_call> (unquoted keys, a `//` comment holding a quote and `</tool_call>`) gives no call: reagent's lenient JSON reads unquoted keys (ap-mp-hermes-relaxed-unquoted-slashes passes) but not JSON5 comments; ai-sdk-tool-call-middleware skips the comment and reads line_comment {}"),
    ("ap-mp-hermes-relaxed-block-comment", "as ap-mp-hermes-relaxed-line-comment, a `/* … */` comment holding `<tool_call>`"),
    ("ap-mp-hermes-relaxed-number-comment", "as ap-mp-hermes-relaxed-line-comment, a `//` comment right after a number"),
    ("ap-mp-q3c-wrapperless-text-around", "text around a wrapperless `<function=…>` call: reagent joins `before ` and ` after` with one space (`before after`); upstream keeps both pieces as written (`before  after`)"),
    ("ap-mp-q3c-wrapperless-then-cut-block", "the text after a wrapperless call loses its leading space (`between <tool_call>…`); upstream keeps ` between ` as written"),
    ("ap-mp-q3c-stray-closer-before-function", "a stray `</tool_call>` before a wrapperless call is dropped as upstream wants, but the text pieces are trimmed and joined by a newline (`before \\nafter`); upstream keeps ` after` as written"),
    ("ap-mp-exaone-think-in-argument", "`<think>…</think>` inside a Qwen3-Coder parameter value: no call (most likely the think split taking the `<think>` inside the value before the call is read); upstream keeps the markup as data in the argument"),
    ("ap-mp-morph-item-floats", "`<item>` children of an array-typed parameter are read as a list since batch AP, typed by the schema, but a whole float (`2.0000000000000001`) becomes the integer 2 by reagent's number rule (a whole float is the integer, vLLM's DSML test); upstream keeps 2.0"),
    ("ap-mp-morph-item-scientific", "as ap-mp-morph-item-floats, `5.67e2` read as the integer 567"),
    ("ap-mp-morph-nested-object", "nested tags under an object-typed parameter: reagent keeps the inner XML as a string; upstream reads an object ({theme: {dark: \"true\"}})"),
    ("ap-mp-q3c-call-tool-invoke-variants", "`<call=NAME>`, `<tool=NAME>`, `<invoke=NAME>` in place of `<function=NAME>` inside <tool_call>, with `</parameter>` missing: no call; the middleware reads each variant opener as a call and ends an unclosed value at the variant's closer"),
    ("ap-mp-q3c-variant-opener-ends-value", "as ap-mp-q3c-call-tool-invoke-variants, the first call's closer missing too (the next variant opener ends it)"),
    ("ap-mp-q3c-name-tag-call", "`<tool_call><name>NAME</name><parameter=K>V</tool_call>` (the name in a `<name>` tag, the value unclosed up to the wrapper's closer): no call; upstream reads alpha with the value up to </tool_call>"),
    // batch AO, scored before any fix (100/100 counted, both modes): no miss to register
    // batch AT, scored before any fix (66/82 counted, both modes, the same 16 misses)
    ("at-oll-ds3-empty-tool-name", "a bare V3.1 call `NAME<｜tool▁sep｜>{…}` (read since batch AT) with an empty name: no call (a call needs a tool name); ollama accepts a call named \"\""),
    ("at-oll-ds3-malformed-tool-call-invalid-json", "a DeepSeek V3.1 call block whose arguments are not JSON (`{invalid json}`) stays in the content, markers and all; ollama drops the malformed block and keeps only the text before it (`Testing.`)"),
    ("at-oll-min-content-after-tool-call", "text glued after a Mistral v11 call's JSON (`[ARGS]{\"a\": 1}some content after`) is dropped; ollama's Ministral parser ends the arguments where the JSON closes and keeps the rest as content"),
    // batch AR, scored before any fix (97/100 counted, both modes, the same 3 misses)
    // batch AS, scored before any fix (41/86 counted, both modes, the same 45 misses)
    ("as-mp-cc-backslash-raw-newline", "a backslash right before a raw newline inside a JSON string: reagent's lenient JSON keeps the backslash and the newline (`foo\\\\\\n`); ai-sdk-tool-call-middleware reads the pair as an escaped newline (`foo\\nbar`)"),
    ("as-mp-cc-backslash-raw-tab", "as as-mp-cc-backslash-raw-newline, a backslash before a raw tab"),
    ("as-mp-cc-line-comment-apostrophe", "relaxed JSON in <tool_call> with a `//` line comment (holding an apostrophe) and an extra key: no call, reagent's lenient JSON does not skip JSON5 comments (as ap-mp-hermes-relaxed-line-comment)"),
    ("as-mp-cc-line-comment-slow-path", "as as-mp-cc-line-comment-apostrophe, with a raw newline inside a string before the comment"),
    ("as-mp-cc-cr-ends-line-comment", "as as-mp-cc-line-comment-apostrophe, the `//` comment ended by a carriage return"),
    ("as-mp-q3c-live-missing-lt", "GLM-4.7's `<tool_call>function=NAME>` (the opener's `<` missing): no call; the middleware reads `function=NAME>` right after <tool_call> as the opener"),
    ("as-mp-q3c-live-bare-name-close-name", "GLM-4.7's `<tool_call>NAME` then property tags, closed by `</NAME>`: no call (GLM's own reader wants <arg_key>/<arg_value>); the middleware reads the bare name and the offered tool's property tags"),
    ("as-mp-q3c-live-name-as-text", "Llama 3.1's `<function>NAME</function>` then nameless `<parameter>KEY</parameter>` each followed by its value: no call; the middleware reads the name from the element text and the key/value pairs"),
    ("as-mp-q3c-value-element-unwrapped", "a `<value>0.8</value>` element around a number-typed parameter's value is kept as the string; the middleware unwraps it and types 0.8"),
    ("as-mp-q3c-nameless-params", "nameless `<parameter>KEY</parameter>` followed by the value as text (Qwen2.5): the call is read with no arguments; the middleware reads KEY and the text up to the next tag as its value"),
    ("as-mp-q3c-nameless-literal-close-in-value", "as as-mp-q3c-nameless-params, DeepSeek V3.1's shape with a redundant `</parameter>` after each value (one a literal inside the value)"),
    ("as-mp-q3c-nameless-escaped-close-literal", "as as-mp-q3c-nameless-literal-close-in-value, with an entity-escaped `&lt;/parameter&gt;` in a value"),
    ("as-mp-q3c-nameless-no-schema-redundant-close", "as as-mp-q3c-nameless-params, no tools: the middleware keeps the redundant `</parameter>` in the value"),
    ("as-mp-q3c-nameless-then-named", "as as-mp-q3c-nameless-params: a nameless parameter then a named one; the middleware ends the nameless value at the next <parameter=…> and reads both"),
    ("as-mp-q3c-name-attributes-trimmed", "`<function name=\" NAME \">` and `<parameter name=\" K \">`, `<parameter= K >` (attribute spellings, spaces around the names): no call; the middleware trims the names"),
    ("as-mp-yaml-tag-inside-block-scalar", "a YAML-bodied tool tag (`<write_file>` with `key: value` lines) holding `<get_weather/>` in a block scalar: reagent reads the inner self-closing tag as the call and not the YAML body; the middleware reads write_file from its YAML"),
    ("as-mp-yaml-two-calls", "two YAML-bodied tool tags (`<write_file>file_path: …</write_file>`, `<get_weather>location: Seoul</get_weather>`): no call, reagent's tool tags want child tags or one string parameter, not YAML lines"),
    ("as-mp-q3c-rec-wrapperless-then-incomplete", "a wrapperless `<function=alpha>…</function>` then `<function=beta><parameter=y>2</parameter>` with no `</function>` at the end: no call at all; the middleware reads both"),
    ("as-mp-q3c-rec-bare-function-unclosed", "a wrapperless `<function=NAME><parameter=…>…</parameter>` with no `</function>` at the end of the text: no call; the middleware reads it"),
    ("as-mp-q3c-rec-bare-function-text-around", "text around a wrapperless call whose `</function>` is missing: the call is read, but the pieces are joined by one space (`before after`); upstream keeps them as written (`before  after`), as ap-mp-q3c-wrapperless-text-around"),
    ("as-mp-morph-send-plain-copy", "a morphXml tool tag with a plain-text body for a tool with two properties (message, and an object card): no call; reagent reads a plain body only as an offered tool's one string parameter; the middleware takes it as the required-or-only string property `message`"),
    ("as-mp-morph-send-flattened-card", "as as-mp-morph-send-plain-copy, the body holding an `<image_url>` tag of the nested card object (taken out of the message upstream)"),
    ("as-mp-morph-send-strip-self-closing", "as as-mp-morph-send-plain-copy, with self-closing `<debug/>`, `<LINE-BREAK />` tags upstream removes"),
    ("as-mp-morph-send-entities", "as as-mp-morph-send-plain-copy, with `&amp;` and `&lt;` upstream decodes"),
    ("as-mp-morph-send-comments-pi-cdata", "as as-mp-morph-send-plain-copy, with a processing instruction and a comment upstream drops and CDATA it reads as text"),
    ("as-mp-morph-send-cdata-markup", "as as-mp-morph-send-plain-copy, the body one CDATA section"),
    ("as-mp-morph-send-nul-placeholder-literal", "as as-mp-morph-send-plain-copy, NUL characters and a CDATA section in the body"),
    ("as-mp-morph-send-optional-tag-as-text", "as as-mp-morph-send-plain-copy (message and an optional image_url, message required): upstream reads the `<image_url>` tag inside the body as text of the message"),
    ("as-mp-morph-update-plan-split-close", "nested tags under an object-typed parameter (an array of objects, one `</step>` missing, one closer split as `</\\n  step>`): reagent keeps the inner XML as a string (as ap-mp-morph-nested-object); the middleware reads the object with its list of two steps"),
    ("as-mp-rec-json-nested-payload-not-call", "a call object nested under a key (`{\"tool\": {\"name\": …, \"arguments\": …}}`) in prose is read as a call; the middleware's JSON-candidate recovery reads only top-level call objects"),
    ("as-mp-rec-json-args-only-one-tool", "an arguments object alone (`{\"city\":\"Seoul\"}`) with one tool offered: no call; the middleware's recovery calls the only tool with it"),
    ("as-mp-rec-json-args-only-unknown-key", "as as-mp-rec-json-args-only-one-tool, a key the schema forbids dropped"),
    ("as-mp-rec-json-orphan-opener-think-closer", "`<tool_call>{call}</think>` (a stray closer of another tag in place of </tool_call>): no call; the middleware takes the complete object"),
    ("as-mp-rec-q3c-step35-extra-param", "a Qwen3-Coder block with newlines around the values and a parameter the schema lacks (mood): the first value runs on to the end, holding the next parameter's markup; the middleware reads city and drops mood by the schema"),
    ("as-mp-rec-q3c-call-name-attr", "`<call name=\"NAME\">` in place of `<function=NAME>` inside <tool_call>: no call (as ap-mp-q3c-call-tool-invoke-variants)"),
    ("as-mp-rec-q3c-tool-name-child", "`<tool><tool_name>NAME</tool_name><parameter=…>` inside <tool_call>: no call (as ap-mp-q3c-name-tag-call)"),
    ("as-mp-rec-q3c-garbage-close-ends-unclosed", "an unclosed value with a junk closer `</function garbage>` and no later `</function>`: the value runs to `</parameter>` (`Seoul </function garbage> done `); the middleware ends the call at the junk closer"),
    ("as-mp-rec-yaml-envelope-granite", "a YAML `name:` / `arguments:` body in <tool_call>, closed by a stray `</weather>`: no call; no family reads YAML call bodies; the middleware reads get_weather and drops unit by the schema"),
    ("as-mp-rec-yaml-bare-args-closed-by-name", "YAML arguments alone in <tool_call>, the tool named only by the closer `</get_weather>`: no call (as as-mp-rec-yaml-envelope-granite)"),
    ("as-mp-rec-yaml-namespaced-close", "as as-mp-rec-yaml-envelope-granite, closed by `</functions:get_weather>`"),
    ("as-mp-rec-yaml-namespaced-close-bare-args", "as as-mp-rec-yaml-bare-args-closed-by-name, closed by `</functions:get_weather>`"),
    // batch AV, scored before any fix (68/74 counted, both modes, the same 6 misses)
    (
        "av-glm46-missing-required-argument",
        "a GLM call with no </tool_call> at the end of the stream is finalized though it lacks a required argument; ollama finalizes such a call only when the schema's required keys are present",
    ),
    // batch AU, scored before any fix (71/76 counted by auto-detection, 72/76 with the hint; no DISAGREEMENTS entry)
    ("au-llama-minimaxm3-union-string-structured", "a MiniMax M3 value of a oneOf string|object parameter holding nested M3 tags is read as the object {\"text\": \"hi\"}; llama.cpp takes the string alternative and keeps the inner markup as text"),
    ("au-llama-rplus-action", "Command R+'s `Action:` label before the fenced JSON call list stays in the content; llama.cpp drops it with the block"),
    // batch AX, scored before any fix (14/14 counted, both modes): no misses, nothing to add
];
