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
    /// small workspace hold (`crate::schema_narrowing`): for models that fill a chosen tool
    /// with whatever text they see nearby (SmolLM2). A capable model keeps free arguments.
    pub narrow_schema: bool,
}

impl ModelProfile {
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
        }
    }
}

/// The built-in profiles, most specific first.
fn builtin() -> Vec<ModelProfile> {
    vec![
        ModelProfile::builtin("qwen3-coder", Some(0.7), None, Some("qwen3_coder_xml")),
        ModelProfile::builtin("qwen3", Some(0.6), Some(true), Some("hermes")),
        ModelProfile::builtin("qwq", None, Some(true), Some("hermes")),
        ModelProfile::builtin("qwen", Some(0.7), None, Some("hermes")),
        ModelProfile::builtin("deepseek-r1", None, Some(true), Some("deepseek_r1")),
        ModelProfile::builtin("llama3", Some(0.6), None, Some("llama3_json")),
        ModelProfile::builtin("llama-3", Some(0.6), None, Some("llama3_json")),
        ModelProfile::builtin("mistral", Some(0.3), None, Some("mistral")),
        ModelProfile::builtin("devstral", Some(0.3), None, Some("mistral")),
        ModelProfile::builtin("granite", None, None, Some("granite")),
        ModelProfile::builtin("gpt-oss", None, None, Some("gpt_oss")),
        ModelProfile {
            system_hint: Some("Be brief. Use one tool at a time.".to_owned()),
            // SmolLM2's template has no tools and it never writes a call in the prompt mode;
            // forced by a schema it calls the right tool (BENCHMARKS.md).
            tool_mode: Some(ToolMode::Constrained),
            plain_final_question: true,
            narrow_schema: true,
            ..ModelProfile::builtin("smollm", Some(0.0), None, None)
        },
    ]
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
