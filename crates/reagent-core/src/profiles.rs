//! Model profiles: per model family, default options and quirks. Built-in profiles cover common
//! families; profiles from the config file come first. Values set explicitly by the user (flags,
//! `[options]`) always win over a profile.

use crate::config::ToolMode;

/// Defaults and quirks of one model family.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ModelProfile {
    /// Which model names it applies to: a lowercase fragment of the name (`qwen3`, `smollm`).
    pub matches: String,
    /// Default sampling temperature.
    pub temperature: Option<f32>,
    /// Whether thinking is on by default (Qwen3, DeepSeek R1...), where the server supports it.
    pub think: Option<bool>,
    /// The parser format family the model's template emits, as a hint.
    pub parse_format: Option<String>,
    /// Extra system-prompt guidance for this family.
    pub system_hint: Option<String>,
    /// The tool mode `auto` means for this family (`constrained` for models too small to call
    /// tools from a prompt or natively); without it, `auto` follows the server's capabilities.
    pub tool_mode: Option<ToolMode>,
    /// In the constrained mode, end every run that would complete with the plain question
    /// (the results restated in plain text, the answer asked for in words) instead of keeping
    /// the answer the model wrote inside the JSON shape. For models that write nonsense into
    /// a JSON string (SmolLM2, BENCHMARKS.md); a model that answers well in JSON keeps its own
    /// answer and saves the call.
    pub plain_final_question: bool,
    /// In the constrained mode, narrow the schema's free-text arguments to what the task and a
    /// small workspace hold (`crate::weak_model::schema_narrowing`): for models that fill a chosen tool
    /// with whatever text they see nearby (SmolLM2). A capable model keeps free arguments.
    pub narrow_schema: bool,
    /// Whether a run whose task changes files asks for the changed files whole, as text
    /// (`<file path>` elements), with no tools offered (edit turns, `session::edit_turn`), before the
    /// tool loop. Unset: yes for a model under the small-model policy (at most 3B by its name,
    /// native tool calls), where it made far more of the coding suite's edits than the tool
    /// loop (BENCHMARKS.md); `false` keeps such a model on the tool loop, `true` gives the
    /// edit turns to a larger one.
    pub edits_as_text: Option<bool>,
    /// Whether the model gets the small-model measures (`crate::weak_model::Policy::Small`:
    /// the files and searches made for it before its first turn, plain-text tool results, edit
    /// turns...). Unset: yes for a model of at most 3B by its name that calls tools; `false`
    /// keeps a small model on the standard loop (the eval's seed-style baseline), `true` gives
    /// the measures to a larger one.
    pub small_model: Option<bool>,
}

impl ModelProfile {
    /// Whether the profile puts its model under the weak-model policy (`crate::weak_model`,
    /// in the constrained mode): it asks for one of that policy's measures
    /// ([`ModelProfile::plain_final_question`], [`ModelProfile::narrow_schema`]). Of the
    /// built-ins only SmolLM2's does.
    pub fn is_very_small(&self) -> bool {
        self.plain_final_question || self.narrow_schema
    }

    fn builtin(
        matches: &str,
        temperature: Option<f32>,
        think: Option<bool>,
        format: Option<&str>,
    ) -> Self {
        ModelProfile {
            matches: matches.to_owned(),
            temperature,
            think,
            parse_format: format.map(str::to_owned),
            system_hint: None,
            tool_mode: None,
            plain_final_question: false,
            narrow_schema: false,
            edits_as_text: None,
            small_model: None,
        }
    }
}

/// A family whose chat template declares tools: `auto` means the server's own tool calls, and
/// the server (llama-server `--jinja`, Ollama) parses them in `format`.
fn native(matches: &str, temperature: f32, format: &str) -> ModelProfile {
    ModelProfile {
        tool_mode: Some(ToolMode::Native),
        ..ModelProfile::builtin(matches, Some(temperature), None, Some(format))
    }
}

/// A family whose chat template has no tools (Phi-3, Gemma 2/3): calls are forced by a JSON
/// Schema, the one way such a model emits them reliably.
fn constrained(matches: &str, temperature: f32) -> ModelProfile {
    ModelProfile {
        tool_mode: Some(ToolMode::Constrained),
        ..ModelProfile::builtin(matches, Some(temperature), None, Some("generic_json"))
    }
}

/// The built-in profiles, most specific first.
fn builtin() -> Vec<ModelProfile> {
    let mut out = vec![
        ModelProfile::builtin("qwen3-coder", Some(0.7), None, Some("qwen3_coder_xml")),
        ModelProfile::builtin("qwen3", Some(0.6), Some(true), Some("hermes")),
        ModelProfile::builtin("qwq", None, Some(true), Some("hermes")),
        // Qwen2.5(-Coder) templates declare tools and emit Hermes `<tool_call>` JSON, which
        // llama.cpp parses; a coding agent samples cooler than chat (0.7, the model card's).
        native("qwen2.5-coder", 0.2, "hermes"),
        native("qwen2.5", 0.7, "hermes"),
        ModelProfile::builtin("qwen", Some(0.7), None, Some("hermes")),
        ModelProfile::builtin("deepseek-r1", None, Some(true), Some("deepseek_r1")),
        // Llama 3.2 1B/3B: the template's JSON tool calls (`{"name", "parameters"}`).
        native("llama3.2", 0.6, "llama3_json"),
        native("llama-3.2", 0.6, "llama3_json"),
        ModelProfile::builtin("llama3", Some(0.6), None, Some("llama3_json")),
        ModelProfile::builtin("llama-3", Some(0.6), None, Some("llama3_json")),
        ModelProfile::builtin("mistral", Some(0.3), None, Some("mistral")),
        ModelProfile::builtin("devstral", Some(0.3), None, Some("mistral")),
        ModelProfile::builtin("granite", None, None, Some("granite")),
        ModelProfile::builtin("gpt-oss", None, None, Some("gpt_oss")),
    ];
    // Phi-4-mini's template has tools (`functools[...]`); Phi-3/3.5 and Phi-4 have none.
    // Matched as `phi3`, `phi-4`...: a bare `phi` would also match `dolphin`.
    out.extend(["phi4-mini", "phi-4-mini"].map(|m| native(m, 0.0, "phi4_mini")));
    out.extend(["phi3", "phi-3", "phi4", "phi-4"].map(|m| constrained(m, 0.0)));
    // Gemma 4 and FunctionGemma declare tools; Gemma 2 and 3 have no tool template.
    out.extend(["gemma4", "gemma-4"].map(|m| native(m, 0.3, "gemma4")));
    out.push(native("functiongemma", 0.0, "functiongemma"));
    out.push(constrained("gemma", 0.3));
    out.push(ModelProfile {
        system_hint: Some("Be brief. Use one tool at a time.".to_owned()),
        // SmolLM2's template has no tools and it never writes a call in the prompt mode;
        // forced by a schema it calls the right tool (BENCHMARKS.md).
        tool_mode: Some(ToolMode::Constrained),
        plain_final_question: true,
        narrow_schema: true,
        ..ModelProfile::builtin("smollm", Some(0.0), None, None)
    });
    out
}

/// The profile for `model` (`qwen3:8b`, `SmolLM2-135M-Instruct.Q4_1.gguf`...): the first of
/// `custom`, then of the built-ins, whose fragment the lowercase name contains; else an empty one.
pub fn profile_for(model: &str, custom: &[ModelProfile]) -> ModelProfile {
    let lower = model.to_lowercase();
    custom
        .iter()
        .cloned()
        .chain(builtin())
        .find(|p| !p.matches.is_empty() && lower.contains(&p.matches.to_lowercase()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_match_by_family() {
        assert_eq!(profile_for("qwen3:8b", &[]).think, Some(true));
        assert_eq!(
            profile_for("qwen3-coder:30b", &[]).parse_format.as_deref(),
            Some("qwen3_coder_xml")
        );
        assert_eq!(
            profile_for("SmolLM2-135M-Instruct.Q4_1.gguf", &[]).temperature,
            Some(0.0)
        );
        assert_eq!(
            profile_for("smollm2:135m", &[]).tool_mode,
            Some(ToolMode::Constrained)
        );
        assert!(profile_for("smollm2:135m", &[]).plain_final_question);
        assert!(!profile_for("qwen3:8b", &[]).plain_final_question);
        assert!(profile_for("smollm2:135m", &[]).narrow_schema);
        assert!(!profile_for("qwen3:8b", &[]).narrow_schema);
        assert_eq!(profile_for("unknown-model", &[]), ModelProfile::default());
    }

    #[test]
    fn small_coding_families_get_their_tool_mode_and_format() {
        type Case = (
            &'static str,
            Option<ToolMode>,
            Option<&'static str>,
            Option<f32>,
        );
        let cases: [Case; 14] = [
            (
                "qwen2.5-coder:1.5b",
                Some(ToolMode::Native),
                Some("hermes"),
                Some(0.2),
            ),
            (
                "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M",
                Some(ToolMode::Native),
                Some("hermes"),
                Some(0.2),
            ),
            (
                "qwen2.5:3b",
                Some(ToolMode::Native),
                Some("hermes"),
                Some(0.7),
            ),
            ("qwen2:1.5b", None, Some("hermes"), Some(0.7)),
            (
                "llama3.2:1b",
                Some(ToolMode::Native),
                Some("llama3_json"),
                Some(0.6),
            ),
            (
                "Llama-3.2-3B-Instruct-Q4_K_M",
                Some(ToolMode::Native),
                Some("llama3_json"),
                Some(0.6),
            ),
            ("llama3.1:8b", None, Some("llama3_json"), Some(0.6)),
            (
                "phi4-mini:3.8b",
                Some(ToolMode::Native),
                Some("phi4_mini"),
                Some(0.0),
            ),
            (
                "phi3:mini",
                Some(ToolMode::Constrained),
                Some("generic_json"),
                Some(0.0),
            ),
            (
                "Phi-3.5-mini-instruct",
                Some(ToolMode::Constrained),
                Some("generic_json"),
                Some(0.0),
            ),
            (
                "gemma3:1b",
                Some(ToolMode::Constrained),
                Some("generic_json"),
                Some(0.3),
            ),
            (
                "gemma4:e2b",
                Some(ToolMode::Native),
                Some("gemma4"),
                Some(0.3),
            ),
            (
                "functiongemma:270m",
                Some(ToolMode::Native),
                Some("functiongemma"),
                Some(0.0),
            ),
            ("dolphin-mistral", None, Some("mistral"), Some(0.3)),
        ];
        for (model, mode, format, temperature) in cases {
            let p = profile_for(model, &[]);
            assert_eq!(
                (p.tool_mode, p.parse_format.as_deref(), p.temperature),
                (mode, format, temperature),
                "{model}"
            );
            // Only SmolLM2 needs its answers asked for in words and its arguments narrowed.
            assert!(!p.plain_final_question && !p.narrow_schema, "{model}");
        }
    }

    /// What Qwen2.5-Coder-0.5B (Q4_K_M, llama-server `--jinja`, temperature 0) answered to
    /// "Show me what is in the file notes.txt." with a `read_file` tool: the call in a JSON
    /// fence, not in the `<tool_call>` tags its template asks for, so the server returned it
    /// as content. The profile's format hint must still read it as the call.
    const QWEN_CODER_FENCED_CALL: &str =
        "```json\n{\n  \"name\": \"read_file\",\n  \"arguments\": {\n    \"path\": \"notes.txt\"\n  }\n}\n```";

    #[test]
    fn the_qwen_coder_format_hint_reads_its_fenced_calls() {
        let p = profile_for("qwen2.5-coder:0.5b", &[]);
        let options = reagent_parse::ParseOptions {
            format: p.parse_format.as_deref().map(|f| f.parse().unwrap()),
            ..reagent_parse::ParseOptions::default()
        };
        let parsed = reagent_parse::parse(QWEN_CODER_FENCED_CALL, &options);
        assert_eq!(parsed.calls.len(), 1, "{parsed:?}");
        assert_eq!(parsed.calls[0].name, "read_file");
        assert_eq!(parsed.calls[0].arguments["path"], "notes.txt");
    }

    #[test]
    fn every_built_in_format_hint_names_a_parser_family() {
        for p in builtin() {
            if let Some(format) = &p.parse_format {
                assert!(
                    format.parse::<reagent_parse::Family>().is_ok(),
                    "{}: {format}",
                    p.matches
                );
            }
        }
    }

    #[test]
    fn custom_profiles_come_before_the_built_ins() {
        let custom = ModelProfile {
            matches: "Qwen3".into(),
            think: Some(false),
            ..ModelProfile::default()
        };
        let p = profile_for("qwen3:8b", &[custom]);
        assert_eq!((p.think, p.temperature), (Some(false), None));
    }
}
