//! Built-in model profiles: per model family, default options and quirks. Values set by the
//! user always win over a profile.

/// Defaults and quirks of one model family.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelProfile {
    /// Family name, for logs.
    pub family: &'static str,
    /// Default sampling temperature.
    pub temperature: Option<f32>,
    /// Whether thinking is on by default (Qwen3, DeepSeek R1...).
    pub think: Option<bool>,
    /// The parser format family the model's template emits, as a hint.
    pub parse_format: Option<&'static str>,
    /// Extra system-prompt guidance for this family.
    pub system_hint: Option<&'static str>,
}

/// `(name fragment, profile)`, first match wins; fragments are matched in lowercase.
fn builtin() -> Vec<(&'static str, ModelProfile)> {
    vec![
        (
            "qwen3-coder",
            ModelProfile {
                family: "qwen3-coder",
                temperature: Some(0.7),
                parse_format: Some("qwen3_coder_xml"),
                ..Default::default()
            },
        ),
        (
            "qwen3",
            ModelProfile {
                family: "qwen3",
                temperature: Some(0.6),
                think: Some(true),
                parse_format: Some("hermes"),
                ..Default::default()
            },
        ),
        (
            "qwen",
            ModelProfile {
                family: "qwen2.5",
                temperature: Some(0.7),
                parse_format: Some("hermes"),
                ..Default::default()
            },
        ),
        (
            "qwq",
            ModelProfile {
                family: "qwq",
                think: Some(true),
                parse_format: Some("hermes"),
                ..Default::default()
            },
        ),
        (
            "deepseek-r1",
            ModelProfile {
                family: "deepseek-r1",
                think: Some(true),
                parse_format: Some("deepseek_r1"),
                ..Default::default()
            },
        ),
        (
            "llama3",
            ModelProfile {
                family: "llama3",
                temperature: Some(0.6),
                parse_format: Some("llama3_json"),
                ..Default::default()
            },
        ),
        (
            "llama-3",
            ModelProfile {
                family: "llama3",
                temperature: Some(0.6),
                parse_format: Some("llama3_json"),
                ..Default::default()
            },
        ),
        (
            "mistral",
            ModelProfile {
                family: "mistral",
                temperature: Some(0.3),
                parse_format: Some("mistral"),
                ..Default::default()
            },
        ),
        (
            "devstral",
            ModelProfile {
                family: "mistral",
                temperature: Some(0.3),
                parse_format: Some("mistral"),
                ..Default::default()
            },
        ),
        (
            "granite",
            ModelProfile {
                family: "granite",
                parse_format: Some("granite"),
                ..Default::default()
            },
        ),
        (
            "gpt-oss",
            ModelProfile {
                family: "gpt-oss",
                parse_format: Some("gpt_oss"),
                ..Default::default()
            },
        ),
        (
            "smollm",
            ModelProfile {
                family: "smollm2",
                temperature: Some(0.0),
                system_hint: Some("Be brief. Use one tool at a time."),
                ..Default::default()
            },
        ),
    ]
}

/// The profile for `model` (`qwen3:8b`, `SmolLM2-135M-Instruct.Q4_1.gguf`...), or an empty one.
pub fn profile_for(model: &str) -> ModelProfile {
    let lower = model.to_lowercase();
    builtin()
        .into_iter()
        .find(|(fragment, _)| lower.contains(fragment))
        .map(|(_, p)| p)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_match_by_family() {
        assert_eq!(profile_for("qwen3:8b").think, Some(true));
        assert_eq!(
            profile_for("qwen3-coder:30b").parse_format,
            Some("qwen3_coder_xml")
        );
        assert_eq!(
            profile_for("SmolLM2-135M-Instruct.Q4_1.gguf").temperature,
            Some(0.0)
        );
        assert_eq!(profile_for("unknown-model"), ModelProfile::default());
    }
}
