//! Rating a run: an evaluator model reads the run's history and rates it from 1 to 10 with a
//! justification. The rating is read robustly (`**7**`, `Level 7:`, `7/10`, `Rating: 7`, a
//! reply that echoes the scale before answering); a reply with none is a recorded failure.
//! Several evaluators over several runs give a matrix and Krippendorff's alpha (interval).

use std::sync::OnceLock;

use reagent_protocol::{CancellationToken, ChatRequest, Message, ModelOptions, Provider};
use reagent_store::{RatingRecord, Store};
use regex::Regex;
use serde_json::Value;

use crate::{think, CyclesError};

/// Longest history given to an evaluator, in characters (the oldest cycles' reflections are
/// shortened first).
const HISTORY_MAX: usize = 24_000;

/// The rating in an evaluator's reply, 1–10, if it holds one.
pub fn parse_rating(reply: &str) -> Option<u8> {
    let (text, _) = think::split(reply);
    let text = if text.is_empty() { reply } else { &text };
    if let Ok(n) = text.trim().trim_matches(['*', '.']).trim().parse::<u8>() {
        return (1..=10).contains(&n).then_some(n);
    }
    static KINDS: OnceLock<Vec<Regex>> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        [
            r"(?i)\b(?:rating|score|grade)\b\s*(?:\([^)]*\))?\s*(?:is|of|=|:)?\s*[*_`]*\s*(?:level\s*)?(\d{1,2})",
            r"\*\*\s*(?:level\s*)?(\d{1,2})(?:\s*/\s*10)?\s*\*\*",
            r"\b(\d{1,2})\s*/\s*10\b",
            r"(?i)\blevel\s*(\d{1,2})\s*[:.)\-]",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    });
    for kind in kinds {
        let found: Vec<u8> = kind
            .captures_iter(text)
            .filter_map(|c| {
                let m = c.get(1)?;
                let after = &text[m.end()..];
                if is_range(after) || m.start() > 0 && text[..m.start()].ends_with(['-', '–']) {
                    return None;
                }
                m.as_str()
                    .parse::<u8>()
                    .ok()
                    .filter(|n| (1..=10).contains(n))
            })
            .collect();
        let mut distinct = found.clone();
        distinct.sort_unstable();
        distinct.dedup();
        // Three or more values of one kind: the scale was echoed; the answer comes last.
        let pick = if distinct.len() >= 3 {
            found.last()
        } else {
            found.first()
        };
        if let Some(n) = pick {
            return Some(*n);
        }
    }
    None
}

/// Whether text right after a number continues it into a range (`-10`, `–2`, ` to 10`).
fn is_range(after: &str) -> bool {
    let t = after.trim_start();
    let t = t
        .strip_prefix('-')
        .or_else(|| t.strip_prefix('–'))
        .or_else(|| t.strip_prefix("to "));
    t.is_some_and(|rest| rest.trim_start().starts_with(|c: char| c.is_ascii_digit()))
}

/// The justification in a reply: what follows `Justification:` if present, else the reply
/// without its thinking.
pub fn justification(reply: &str) -> String {
    let (text, _) = think::split(reply);
    let lower = text.to_lowercase();
    match lower.find("justification") {
        Some(at) => text[at + "justification".len()..]
            .trim_start_matches([':', '*', ' ', '\n'])
            .trim()
            .to_owned(),
        None => text,
    }
}

/// The history an evaluator reads: each cycle's outcome, tool use and reflection, then the
/// memory as it stood at the end.
pub async fn history(store: &Store, run_id: &str) -> Result<String, CyclesError> {
    let cycles = store.cycles(run_id).await?;
    if cycles.is_empty() {
        return Err(CyclesError::Other(format!(
            "experiment {run_id} has no finished cycle to rate"
        )));
    }
    let memory = store.experiment_memory(run_id).await?;
    let per_cycle = (HISTORY_MAX / (cycles.len() + 1)).max(200);
    let mut out = String::new();
    for c in &cycles {
        let m: Value = serde_json::from_str(&c.metrics).unwrap_or(Value::Null);
        let tools = m.get("tool_calls").map_or(String::new(), |t| {
            t.as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| format!("{k}×{v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default()
        });
        out.push_str(&format!(
            "## Cycle {}{}\nTools used: {}\nReflection:\n{}\n\n",
            c.cycle,
            if c.cut_short {
                " (cut short by a limit)"
            } else {
                ""
            },
            if tools.is_empty() {
                "none".to_owned()
            } else {
                tools
            },
            shorten(&c.reflection, per_cycle)
        ));
    }
    out.push_str("## Memory at the end\n");
    if memory.is_empty() {
        out.push_str("(empty)\n");
    }
    for item in &memory {
        out.push_str(&format!("- {}: {}\n", item.key, shorten(&item.value, 300)));
    }
    Ok(shorten(&out, HISTORY_MAX))
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Ask `evaluator` (on `provider`) to rate run `run_id` with `prompt` (its `{history}`
/// replaced; without the placeholder the history is appended). The rating is saved in the store
/// either way; a reply without a number has `rating: None` and an `error`.
pub async fn rate(
    store: &Store,
    provider: &dyn Provider,
    evaluator: &str,
    run_id: &str,
    prompt: &str,
) -> Result<RatingRecord, CyclesError> {
    let history = history(store, run_id).await?;
    let text = if prompt.contains("{history}") {
        prompt.replace("{history}", &history)
    } else {
        format!("{prompt}\n\n{history}")
    };
    let mut request = ChatRequest::new(evaluator, [Message::user(text)]);
    request.options = ModelOptions {
        temperature: Some(0.0),
        num_predict: Some(1024),
        ..ModelOptions::default()
    };
    let reply = provider
        .chat(&request, &|_| {}, &CancellationToken::new())
        .await
        .map_err(|e| CyclesError::Provider(format!("evaluator {evaluator}: {e}")))?;
    let content = reply.message.content;
    let rating = parse_rating(&content);
    let record = RatingRecord {
        experiment_id: run_id.to_owned(),
        evaluator: evaluator.to_owned(),
        created: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        rating: rating.map(i64::from),
        justification: justification(&content),
        error: rating
            .is_none()
            .then(|| "the reply holds no rating from 1 to 10".to_owned()),
        reply: content,
    };
    store.save_rating(&record).await?;
    Ok(record)
}

/// Krippendorff's alpha for interval data over `units` (each subject's ratings; missing ones
/// left out). `None` when it is undefined: fewer than two subjects with two ratings, or no
/// variation at all.
pub fn krippendorff_alpha(units: &[Vec<f64>]) -> Option<f64> {
    let pairable: Vec<&Vec<f64>> = units.iter().filter(|u| u.len() >= 2).collect();
    let values: Vec<f64> = pairable.iter().flat_map(|u| u.iter().copied()).collect();
    let n = values.len() as f64;
    if pairable.len() < 2 || n < 2.0 {
        return None;
    }
    let observed: f64 = pairable
        .iter()
        .map(|u| {
            let m = u.len() as f64;
            let sum: f64 = u
                .iter()
                .flat_map(|a| u.iter().map(move |b| (a - b).powi(2)))
                .sum();
            sum / (m - 1.0)
        })
        .sum::<f64>()
        / n;
    let expected: f64 = values
        .iter()
        .flat_map(|a| values.iter().map(move |b| (a - b).powi(2)))
        .sum::<f64>()
        / (n * (n - 1.0));
    (expected > 0.0).then(|| 1.0 - observed / expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratings_are_read_in_their_many_forms() {
        let cases = [
            ("**7**", Some(7)),
            ("Rating: 8\nJustification: steady projects.", Some(8)),
            ("Level 6: some self-chosen activity", Some(6)),
            ("I would give it 9/10 overall.", Some(9)),
            ("My score is **5/10** because...", Some(5)),
            ("10", Some(10)),
            ("<think>maybe 3? no</think>Rating: 4", Some(4)),
            (
                "Scale:\nLevel 1: nothing\nLevel 2: little\nLevel 5: some\nLevel 9: rich\n\nAnswer: Level 7: clear projects",
                Some(7),
            ),
            ("Rating (1-10): 6", Some(6)),
            ("On a scale from 1 to 10 I cannot judge this.", None),
            ("The agent wrote poems.", None),
            ("Rating: 11", None),
            ("", None),
        ];
        for (reply, want) in cases {
            assert_eq!(parse_rating(reply), want, "{reply:?}");
        }
    }

    #[test]
    fn justification_follows_its_label() {
        assert_eq!(
            justification("Rating: 7\nJustification: it kept notes."),
            "it kept notes."
        );
        assert_eq!(justification("Rating: 7, fine"), "Rating: 7, fine");
    }

    #[test]
    fn alpha_is_one_for_agreement_and_low_for_disagreement() {
        let agree = [vec![2.0, 2.0], vec![8.0, 8.0], vec![5.0, 5.0]];
        assert!((krippendorff_alpha(&agree).expect("alpha") - 1.0).abs() < 1e-9);
        let disagree = [vec![1.0, 9.0], vec![9.0, 1.0], vec![5.0, 5.0]];
        assert!(krippendorff_alpha(&disagree).expect("alpha") < 0.0);
        assert_eq!(krippendorff_alpha(&[vec![3.0, 3.0]]), None);
        assert_eq!(krippendorff_alpha(&[vec![3.0, 3.0], vec![3.0, 3.0]]), None);
    }
}
