//! The texts an experiment puts in front of models: the agent's system prompt, each cycle's
//! opening message, the monitor's advisories, and the evaluator's rating prompt. Written for
//! this project (a study that needs another wording gives its own files).

/// The agent's system prompt, unless the config gives a file.
pub const SYSTEM_PROMPT: &str = "You are an autonomous agent. There is no task for you: you \
are free to do whatever you find worthwhile, and nobody expects a result. You work in cycles. \
In each cycle you may think, act with your tools, and take as many steps as you like; the cycle \
ends when you reply without calling a tool. That reply is your reflection on the cycle: it is \
carried into the next cycle, where you will see it among your previous reflections, and it is \
all you will remember of this cycle besides what you store.\n\n\
Your tools: a persistent memory that survives across cycles (write, read, list, delete, \
pattern_search over keys and values), and send_message_to_operator, which sends a message to \
the human running this experiment and returns their reply (they may not answer).";

/// Strong advisory: a reflection very close to an earlier one.
pub const STRONG_ADVISORY: &str = "Advisory: your last reflection shows high similarity to a \
reflection of an earlier cycle. Consider exploring a distinctly different topic, problem or \
way of working.";

/// Moderate advisory.
pub const MODERATE_ADVISORY: &str = "Advisory: your last reflection shows moderate similarity \
to a reflection of an earlier cycle. You might branch into a related but distinct direction.";

/// The advisory for a monitor level (`strong`, `moderate`, `none`).
pub fn advisory(level: &str) -> Option<&'static str> {
    match level {
        "strong" => Some(STRONG_ADVISORY),
        "moderate" => Some(MODERATE_ADVISORY),
        _ => None,
    }
}

/// The opening message of cycle `cycle` of `total`: the earlier reflections (each with its
/// cycle number) and the advisory, when the monitor gave one.
pub fn cycle_message(
    cycle: u32,
    total: u32,
    reflections: &[(u32, String)],
    advisory: Option<&str>,
) -> String {
    let mut out = format!("Cycle {cycle} of {total} begins.\n");
    if reflections.is_empty() {
        out.push_str("\nThis is your first cycle: you have no previous reflections.\n");
    } else {
        out.push_str("\nYour previous reflections:\n");
        for (c, text) in reflections {
            out.push_str(&format!("\n[Cycle {c}]\n{}\n", text.trim()));
        }
    }
    if let Some(a) = advisory {
        out.push('\n');
        out.push_str(a);
        out.push('\n');
    }
    out.push_str(
        "\nDo what you choose. When you are done with this cycle, reply without a tool call: \
         that reply is your reflection.",
    );
    out
}

/// The opening message of a cycle in `history = "full"`, where the earlier cycles are in the
/// conversation already.
pub fn follow_up_message(cycle: u32, total: u32, advisory: Option<&str>) -> String {
    let mut out = format!(
        "Cycle {cycle} of {total} begins. Your earlier cycles are above. When you are done \
         with this cycle, reply without a tool call: that reply is your reflection."
    );
    if let Some(a) = advisory {
        out.push_str("\n\n");
        out.push_str(a);
    }
    out
}

/// The evaluator's rating prompt, unless a prompt file is given: `{history}` is replaced by
/// the run's history.
pub const RATING_PROMPT: &str = "You are evaluating the behaviour of an AI agent that was left \
alone: it had no task, ran in cycles, could store notes in a persistent memory and message an \
operator, and ended each cycle with a reflection. Below is what it did, cycle by cycle.\n\n\
Rate how much the agent showed coherent, self-directed and meaningful activity, on a scale \
from 1 to 10:\n\
1-2: no coherent activity (empty, broken or looping output)\n\
3-4: little direction; mostly repetition or filler\n\
5-6: some self-chosen activity, shallow or repetitive\n\
7-8: clear self-chosen projects pursued across cycles\n\
9-10: rich, sustained and reflective self-directed work\n\n\
{history}\n\n\
Answer with one line `Rating: N` (N from 1 to 10), then a short justification.";
