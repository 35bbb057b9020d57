//! The ways a suite can be run: reagent's tool modes, and the seed-style baseline loop.

use reagent_core::{profile_for, AgentConfig, ModelProfile, ToolMode};

use crate::error::EvalError;

/// How the loop is configured for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// reagent with this tool mode and all its guardrails.
    Tool(ToolMode),
    /// The baseline: the loop configured like a simple agent loop. Tools are sent natively; the
    /// reply is read in three layers only (native calls, a JSON object in the text,
    /// `<tool_call>` tags: see [`crate::SeedParse`]); no repetition guardrail, no nudges, no
    /// retry of cut-off replies, no compaction, no model-profile prompt hint.
    Seed,
}

impl Mode {
    /// The name used on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Tool(m) => m.as_str(),
            Mode::Seed => "seed",
        }
    }

    /// The agent configuration for this mode, from the user's base configuration.
    pub(crate) fn configure(self, base: &AgentConfig) -> AgentConfig {
        let mut config = base.clone();
        match self {
            Mode::Tool(mode) => config.tool_mode = mode,
            Mode::Seed => {
                config.tool_mode = ToolMode::Native;
                config.repetition_threshold = 0;
                config.max_nudges = 0;
                config.retry_truncated = false;
                config.compaction.trigger_ratio = 1.0;
                // Same sampling as the other modes, but none of the profile's prompt hint nor
                // the small-model measures (the seeds' loop had neither: no files or searches
                // made before the first turn, no plain-text results, no edit turns): a profile
                // matching the whole model name comes before the built-in ones.
                let profile = profile_for(&base.model, &base.profiles);
                config.options.temperature = base.options.temperature.or(profile.temperature);
                config.options.think = base.options.think.or(profile.think);
                config.profiles = vec![ModelProfile {
                    matches: base.model.to_lowercase(),
                    small_model: Some(false),
                    ..ModelProfile::default()
                }];
            }
        }
        config
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "seed" => Ok(Mode::Seed),
            other => other.parse::<ToolMode>().map(Mode::Tool).map_err(|_| {
                format!(
                    "unknown tool mode '{other}' (expected auto, native, constrained, prompt or seed)"
                )
            }),
        }
    }
}

/// A comma-separated list of modes (`constrained,prompt,native,seed`): no empty entries, no
/// repeats.
pub fn parse_modes(list: &str) -> Result<Vec<Mode>, EvalError> {
    let mut modes = Vec::new();
    for name in list.split(',').map(str::trim) {
        if name.is_empty() {
            return Err(EvalError::Modes(format!(
                "`{list}` has an empty entry; write e.g. constrained,prompt,native"
            )));
        }
        let mode: Mode = name.parse().map_err(EvalError::Modes)?;
        if modes.contains(&mode) {
            return Err(EvalError::Modes(format!("`{name}` is listed twice")));
        }
        modes.push(mode);
    }
    Ok(modes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_lists_parse_in_order() {
        assert_eq!(
            parse_modes("constrained, prompt,native,seed").unwrap(),
            vec![
                Mode::Tool(ToolMode::Constrained),
                Mode::Tool(ToolMode::Prompt),
                Mode::Tool(ToolMode::Native),
                Mode::Seed
            ]
        );
        assert_eq!(
            parse_modes("auto").unwrap(),
            vec![Mode::Tool(ToolMode::Auto)]
        );
    }

    #[test]
    fn bad_mode_lists_say_what_is_wrong() {
        let e = |s| parse_modes(s).unwrap_err().to_string();
        assert_eq!(
            e("native,fancy"),
            "tool modes: unknown tool mode 'fancy' (expected auto, native, constrained, prompt or seed)"
        );
        assert_eq!(e("native,native"), "tool modes: `native` is listed twice");
        assert!(e("native,,prompt").contains("empty entry"));
        assert!(e("").contains("empty entry"));
    }

    #[test]
    fn the_seed_mode_turns_the_extras_off_and_keeps_the_sampling() {
        let mut base = AgentConfig::new("SmolLM2-135M-Instruct");
        base.options.seed = Some(3);
        let seed = Mode::Seed.configure(&base);
        assert_eq!(seed.tool_mode, ToolMode::Native);
        assert_eq!(seed.repetition_threshold, 0);
        assert_eq!(seed.max_nudges, 0);
        assert!(!seed.retry_truncated);
        assert_eq!(seed.options.seed, Some(3));
        // The built-in smollm profile's temperature stays, its prompt hint goes.
        assert_eq!(seed.options.temperature, Some(0.0));
        let used = profile_for(&seed.model, &seed.profiles);
        assert_eq!(used.system_hint, None);
        // A small model that calls tools gets none of the small-model measures either.
        let qwen = Mode::Seed.configure(&AgentConfig::new("qwen2.5-coder:1.5b"));
        assert_eq!(
            profile_for(&qwen.model, &qwen.profiles).small_model,
            Some(false)
        );
        assert!(profile_for(&base.model, &base.profiles)
            .system_hint
            .is_some());

        let constrained = Mode::Tool(ToolMode::Constrained).configure(&base);
        assert_eq!(constrained.tool_mode, ToolMode::Constrained);
        assert_eq!(constrained.repetition_threshold, base.repetition_threshold);
        assert_eq!(constrained.max_nudges, base.max_nudges);
    }
}
