//! The format families, their corpus names, and the per-family quirks.

use std::fmt;
use std::str::FromStr;

macro_rules! families {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// A tool-call output format (model family). `Display`/`FromStr` use the corpus
        /// names (`"hermes"`, `"qwen3_coder_xml"`, ...).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Family {
            $( $(#[$doc])* $variant, )*
        }

        impl Family {
            /// Every family, in declaration order.
            pub const ALL: &'static [Family] = &[ $( Family::$variant, )* ];

            /// The corpus name of the family.
            pub fn name(self) -> &'static str {
                match self { $( Family::$variant => $name, )* }
            }
        }

        impl FromStr for Family {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( $name => Ok(Family::$variant), )*
                    other => Err(format!("unknown format family {other:?}")),
                }
            }
        }
    };
}

families! {
    /// `<tool_call>{json}</tool_call>` (Hermes 2 Pro/3, Qwen 2.5/3, QwQ).
    Hermes => "hermes",
    /// `<tool_call><function=f><parameter=k>v</parameter></function></tool_call>`.
    Qwen3CoderXml => "qwen3_coder_xml",
    /// `<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (GLM 4.5+).
    GlmXml => "glm_xml",
    /// `[TOOL_CALLS][...]` or `[TOOL_CALLS]f[ARGS]{...}`.
    Mistral => "mistral",
    /// `<|tool_call_start|>[f(a=1)]<|tool_call_end|>` (LFM2).
    Lfm2Pythonic => "lfm2_pythonic",
    /// `<|tool_call_start|>[{json}]<|tool_call_end|>` (LFM2).
    Lfm2Json => "lfm2_json",
    /// GPT-OSS harmony channels, `to=functions.f`.
    GptOss => "gpt_oss",
    /// DeepSeek V3 / V3.1 tool-call tokens.
    DeepseekV3 => "deepseek_v3",
    /// DeepSeek R1 tool-call tokens after `</think>`.
    DeepseekR1 => "deepseek_r1",
    /// DeepSeek V3.2/V4 `<｜DSML｜invoke>` XML (V4.1 spaces it: `<｜DSML｜ invoke>` in `<｜DSML｜ calls>`).
    DeepseekDsml => "deepseek_dsml",
    /// Kimi K2 `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{...}`.
    KimiK2 => "kimi_k2",
    /// Kimi K3 XTML `<|open|>tools<|sep|><|open|>call tool="f"<|sep|><|open|>argument key="k"
    /// type="string"<|sep|>v<|close|>argument<|sep|>…`, `response` and `think` channels.
    KimiK3 => "kimi_k3",
    /// IBM Granite 3.x `<|tool_call|>[...]`.
    Granite => "granite",
    /// Gemma 4 `<|tool_call>call:f{k:<|"|>v<|"|>}<tool_call|>`.
    Gemma4 => "gemma4",
    /// FunctionGemma `<start_function_call>call:f{k:<escape>v<escape>}<end_function_call>`.
    FunctionGemma => "functiongemma",
    /// OLMo 3 `<function_calls>f(a=1)\ng()</function_calls>`.
    Olmo3Pythonic => "olmo3_pythonic",
    /// Pythonic list `[f(a='x'), g()]` (Llama 3.2 pythonic prompt, ToolACE).
    Pythonic => "pythonic",
    /// Llama 4 pythonic, optionally inside `<|python_start|>…<|python_end|>`.
    Llama4Pythonic => "llama4_pythonic",
    /// Llama 3.x `{"name", "parameters"}` JSON, `; `-separated.
    Llama3Json => "llama3_json",
    /// Llama 3.1 builtin `<|python_tag|>tool.call(k=v)`.
    Llama3PythonTag => "llama3_python_tag",
    /// Generic `{"tool_call": …}` / `{"tool_calls": […]}` / `{"response": …}` / bare call JSON.
    GenericJson => "generic_json",
    /// xLAM bare JSON list of calls.
    XlamJsonList => "xlam_json_list",
    /// InternLM2 `<|action_start|><|plugin|>{...}<|action_end|>`.
    Internlm2 => "internlm2",
    /// Phi-4-mini `functools[...]`.
    Phi4Mini => "phi4_mini",
    /// FireFunction v2 ` functools[...]`.
    Firefunction => "firefunction",
    /// ByteDance Seed-OSS `<seed:tool_call>` XML.
    SeedOss => "seed_oss",
    /// Command R7B `<|START_ACTION|>[...]<|END_ACTION|>`.
    CommandR7b => "command_r7b",
    /// Command R+ `Action: ```json [...] ````.
    CommandRPlus => "command_r_plus",
    /// Functionary v2 `<|recipient|>f\n<|content|>{...}`, v3.1 `<function=f>{...}</function>`
    /// and v3.2 `>>>f\n{...}`.
    Functionary => "functionary",
    /// MiniMax M2/M3 `<minimax:tool_call><invoke name="f">` XML.
    MinimaxXml => "minimax_xml",
    /// MiniMax M1 `<tool_calls>\n{json}\n</tool_calls>`.
    MinimaxM1 => "minimax_m1",
    /// StepFun Step-3 `<steptml:invoke>` XML inside tool-call tokens.
    Step3 => "step3",
    /// AI21 Jamba `<tool_calls>[...]</tool_calls>`.
    Jamba => "jamba",
    /// Nemotron Nano v2 `<TOOLCALL>[...]</TOOLCALL>`.
    NemotronToolcall => "nemotron_toolcall",
    /// Apertus `<|tools_prefix|>[{"f": {...}}]<|tools_suffix|>`.
    Apertus => "apertus",
    /// Apriel `[BEGIN FINAL RESPONSE]` + `<tool_calls>[...]</tool_calls>`.
    Apriel => "apriel",
    /// GigaChat 3 `function call<|role_sep|>{...}`.
    Gigachat => "gigachat",
    /// Muse Glimmer `<atem:function_calls>` XML.
    Glimmer => "glimmer",
    /// MiniCPM5 `<function name="f"><param name="k">v</param></function>`.
    MinicpmXml => "minicpm_xml",
    /// Meta CWM's raw commands: `<tool: function>\nterminal ls -l\n</tool>`.
    Cwm => "cwm",
    /// Anthropic's legacy XML tool use: `<function_calls><invoke><tool_name>f</tool_name>
    /// <parameters><k>v</k></parameters></invoke></function_calls>`.
    AnthropicXml => "anthropic_xml",
    /// Continue's system-message tools: ```` ```tool ```` then `TOOL_NAME: f`,
    /// `BEGIN_ARG: k` … `END_ARG`.
    ContinueTools => "continue_tools",
    /// Qwen-Agent's prompt: `✿FUNCTION✿: f` then `✿ARGS✿: {…}`, the answer after `✿RETURN✿:`.
    QwenAgent => "qwen_agent",
    /// An offered tool's name as the tag, each argument a child element:
    /// `<read_file><path>a.txt</path></read_file>` (Cline, Roo Code).
    ToolTags => "tool_tags",
    /// Reasoning only: `<think>`, `[THINK]`, `<seed:think>` …
    ThinkTags => "think_tags",
    /// ReAct `Thought:/Action:/Action Input:/Final Answer:` text.
    ReactText => "react_text",
    /// ReAct with a JSON `{action, action_input}` blob.
    ReactJson => "react_json",
    /// LangChain XML agent `<tool>…</tool><tool_input>…</tool_input>`.
    XmlAgent => "xml_agent",
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Family {
    /// Text between two calls is dropped (vLLM GLM behaviour).
    pub(crate) fn drops_text_between_calls(self) -> bool {
        matches!(self, Family::GlmXml)
    }

    /// All surrounding text is dropped once a call is found (vLLM Llama 3 JSON).
    pub(crate) fn drops_all_content_with_calls(self) -> bool {
        matches!(self, Family::Llama3Json)
    }

    /// Text after the calls is dropped (vLLM Mistral non-streaming).
    pub(crate) fn drops_trailing_text(self) -> bool {
        matches!(self, Family::Mistral)
    }

    /// Content is whitespace-trimmed (vLLM MiniMax, ollama Mistral before the marker).
    pub(crate) fn trims_content(self) -> bool {
        matches!(self, Family::MinimaxM1 | Family::Mistral)
    }

    /// Calls closed by a tag of their own (`</tool_call>`, `<|tool_call_end|>`, …), and
    /// content that is exactly the text around them: the streaming parser cuts such a call
    /// out once it is closed and releases the text after it live.
    pub fn streams_text_after_calls(self) -> bool {
        matches!(
            self,
            Family::Hermes
                | Family::Qwen3CoderXml
                | Family::MinimaxXml
                | Family::XlamJsonList
                | Family::SeedOss
                | Family::Lfm2Pythonic
                | Family::Lfm2Json
                | Family::Gemma4
                | Family::FunctionGemma
                | Family::NemotronToolcall
                | Family::Olmo3Pythonic
                | Family::CommandR7b
                | Family::Internlm2
                | Family::KimiK2
                | Family::KimiK3
                | Family::DeepseekV3
        )
    }

    /// Arguments given as a non-JSON string are kept as that string.
    pub(crate) fn keeps_string_arguments(self) -> bool {
        matches!(self, Family::Hermes)
    }

    /// Unknown tool names are dropped when tools were offered.
    pub(crate) fn validates_names(self) -> bool {
        matches!(
            self,
            Family::Internlm2 | Family::GenericJson | Family::XlamJsonList
        )
    }

    /// XML parameter values are JSON-typed when no schema is known.
    pub(crate) fn untyped_values_are_json(self) -> bool {
        !matches!(
            self,
            Family::Qwen3CoderXml | Family::SeedOss | Family::ToolTags | Family::AnthropicXml
        )
    }
}
