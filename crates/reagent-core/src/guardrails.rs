//! Guardrails that keep a weak model from looping or stalling: repetition detection, narration
//! detection for nudges, and budget checks.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::Value;

use crate::config::Budgets;

/// One executed call as the repetition detector sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct CallRecord {
    name: String,
    /// Arguments in canonical JSON form (keys sorted).
    arguments: String,
    /// The result the model saw.
    result: String,
}

/// What the repetition detector saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repetition {
    /// The same tool with the same arguments `n` times in a row.
    SameCall {
        /// Tool name.
        name: String,
        /// How many times in a row.
        times: usize,
    },
    /// An A→B→A→B cycle with the same results.
    Cycle {
        /// The first tool of the cycle.
        a: String,
        /// The second tool of the cycle.
        b: String,
    },
}

impl Repetition {
    /// A sentence for the model and the events.
    pub fn describe(&self) -> String {
        match self {
            Repetition::SameCall { name, times } => {
                format!("you called {name} with the same arguments {times} times in a row")
            }
            Repetition::Cycle { a, b } => format!(
                "you are alternating between {a} and {b} with the same arguments and results"
            ),
        }
    }
}

/// Detects the same call repeated, or an A→B→A→B cycle. Serializable: it is part of a session
/// snapshot.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RepetitionDetector {
    threshold: usize,
    /// The latest calls, oldest first: only as many as a check looks at (the threshold, and
    /// four for a cycle), so a long run does not keep every result.
    calls: VecDeque<CallRecord>,
}

impl RepetitionDetector {
    /// A detector firing at `threshold` identical calls in a row (0 disables it).
    pub fn new(threshold: usize) -> Self {
        RepetitionDetector {
            threshold,
            calls: VecDeque::new(),
        }
    }

    /// Record one executed call and report a repetition if the latest calls form one.
    pub fn record(&mut self, name: &str, arguments: &Value, result: &str) -> Option<Repetition> {
        if self.threshold == 0 {
            return None;
        }
        if self.calls.len() == self.threshold.max(4) {
            self.calls.pop_front();
        }
        self.calls.push_back(CallRecord {
            name: name.to_owned(),
            arguments: canonical_json(arguments),
            result: result.to_owned(),
        });
        let n = self.calls.len();
        if n >= self.threshold {
            let first = &self.calls[n - self.threshold];
            if self
                .calls
                .range(n - self.threshold..)
                .all(|c| c.name == first.name && c.arguments == first.arguments)
            {
                return Some(Repetition::SameCall {
                    name: first.name.clone(),
                    times: self.threshold,
                });
            }
        }
        if n >= 4 {
            let [a1, b1, a2, b2] = [
                &self.calls[n - 4],
                &self.calls[n - 3],
                &self.calls[n - 2],
                &self.calls[n - 1],
            ];
            let different = (a1.name.as_str(), a1.arguments.as_str())
                != (b1.name.as_str(), b1.arguments.as_str());
            if different && a1 == a2 && b1 == b2 {
                return Some(Repetition::Cycle {
                    a: a1.name.clone(),
                    b: b1.name.clone(),
                });
            }
        }
        None
    }
}

/// JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` compare equal.
pub fn canonical_json(value: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by(|x, y| x.0.cmp(y.0));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sort(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

/// The run's work calls (every call but `task_complete`) and how many of them succeeded, to
/// tell an answer built on nothing but failed calls from a real one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CallTally {
    made: u32,
    ok: u32,
}

impl CallTally {
    /// Count one executed call.
    pub fn record(&mut self, name: &str, ok: bool) {
        if name != "task_complete" {
            self.made += 1;
            self.ok += u32::from(ok);
        }
    }

    /// When the run made work calls and every one of them failed: a sentence saying so.
    pub fn only_failures(&self) -> Option<String> {
        (self.made > 0 && self.ok == 0).then(|| {
            format!(
                "all {} tool calls of the run failed; the answer rests on no tool result",
                self.made
            )
        })
    }
}

/// Phrases with which a model announces an action instead of taking it.
const NARRATION_OPENERS: &[&str] = &[
    "i will ",
    "i'll ",
    "let me ",
    "i am going to ",
    "i'm going to ",
    "first, i",
    "next, i",
    "now i will",
    "now, i will",
    "i need to ",
    "i should ",
    "let's ",
    "i can start by",
];

/// Whether a reply without tool calls only narrates what the model is about to do ("Let me
/// read the file first."), rather than giving an answer.
pub fn is_narration(content: &str) -> bool {
    let text = content.trim();
    if text.is_empty() || text.len() > 400 || text.contains("```") {
        return false;
    }
    let lower = text.to_lowercase();
    let announces = NARRATION_OPENERS.iter().any(|p| lower.starts_with(p))
        || lower.split(['.', '\n']).any(|s| {
            let s = s.trim_start();
            NARRATION_OPENERS.iter().any(|p| s.starts_with(p))
        }) && (lower.ends_with(':') || lower.ends_with("...") || lower.ends_with('…'));
    announces && !lower.contains("the answer is") && !lower.contains("done")
}

/// Which budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetKind {
    /// Total tokens.
    Tokens,
    /// Wall-clock time.
    Time,
    /// Tool calls.
    ToolCalls,
}

impl BudgetKind {
    /// The guardrail that reports it.
    pub fn guardrail(self) -> reagent_protocol::Guardrail {
        match self {
            BudgetKind::Tokens => reagent_protocol::Guardrail::BudgetTokens,
            BudgetKind::Time => reagent_protocol::Guardrail::BudgetTime,
            BudgetKind::ToolCalls => reagent_protocol::Guardrail::BudgetToolCalls,
        }
    }
}

/// Check the budgets against what the run has used so far.
pub fn exhausted_budget(
    budgets: &Budgets,
    elapsed: Duration,
    tokens: u64,
    tool_calls: u32,
) -> Option<(BudgetKind, String)> {
    if let Some(max) = budgets.max_total_tokens {
        if tokens >= max {
            return Some((BudgetKind::Tokens, format!("{tokens} tokens used of {max}")));
        }
    }
    if let Some(max) = budgets.max_wall_time {
        if elapsed >= max {
            return Some((
                BudgetKind::Time,
                format!("{} ran of {}", secs(elapsed), secs(max)),
            ));
        }
    }
    if let Some(max) = budgets.max_tool_calls {
        if tool_calls >= max {
            return Some((
                BudgetKind::ToolCalls,
                format!("{tool_calls} tool calls made of {max}"),
            ));
        }
    }
    None
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn same_call_three_times_fires_on_the_third() {
        let mut d = RepetitionDetector::new(3);
        assert_eq!(d.record("read_file", &json!({"path": "a"}), "x"), None);
        assert_eq!(d.record("read_file", &json!({"path": "a"}), "x"), None);
        assert_eq!(
            d.record("read_file", &json!({"path": "a"}), "x"),
            Some(Repetition::SameCall {
                name: "read_file".into(),
                times: 3
            })
        );
    }

    #[test]
    fn key_order_does_not_hide_a_repetition() {
        let mut d = RepetitionDetector::new(2);
        d.record("grep_search", &json!({"pattern": "x", "path": "src"}), "r");
        let r = d.record("grep_search", &json!({"path": "src", "pattern": "x"}), "r");
        assert!(matches!(r, Some(Repetition::SameCall { .. })));
    }

    #[test]
    fn abab_cycle_with_same_results_fires_but_changing_results_do_not() {
        let mut d = RepetitionDetector::new(3);
        d.record("a", &json!({}), "1");
        d.record("b", &json!({}), "2");
        d.record("a", &json!({}), "1");
        assert_eq!(
            d.record("b", &json!({}), "2"),
            Some(Repetition::Cycle {
                a: "a".into(),
                b: "b".into()
            })
        );

        let mut d = RepetitionDetector::new(3);
        d.record("a", &json!({}), "1");
        d.record("b", &json!({}), "2");
        d.record("a", &json!({}), "1-changed");
        assert_eq!(d.record("b", &json!({}), "2"), None);
    }

    #[test]
    fn a_long_run_keeps_only_the_calls_a_check_needs() {
        for threshold in [2, 3, 6] {
            let mut d = RepetitionDetector::new(threshold);
            for i in 0..200 {
                let path = format!("f{i}");
                assert_eq!(
                    d.record("read_file", &json!({ "path": path }), "text"),
                    None
                );
            }
            assert_eq!(d.calls.len(), threshold.max(4));
            let again: Vec<_> = (0..threshold)
                .map(|_| d.record("read_file", &json!({"path": "same"}), "text"))
                .collect();
            assert_eq!(again[..threshold - 1], vec![None; threshold - 1][..]);
            assert!(
                matches!(again[threshold - 1], Some(Repetition::SameCall { times, .. }) if times == threshold)
            );
        }
    }

    #[test]
    fn different_arguments_are_not_a_repetition() {
        let mut d = RepetitionDetector::new(3);
        for i in 0..10 {
            assert_eq!(
                d.record("read_file", &json!({"path": i.to_string()}), "x"),
                None
            );
        }
    }

    #[test]
    fn only_failed_work_calls_are_reported() {
        let mut t = CallTally::default();
        assert_eq!(t.only_failures(), None, "no calls: nothing to report");
        t.record("read_file", false);
        t.record("read_file", false);
        t.record("task_complete", true);
        assert_eq!(
            t.only_failures().as_deref(),
            Some("all 2 tool calls of the run failed; the answer rests on no tool result")
        );
        t.record("list_directory", true);
        assert_eq!(t.only_failures(), None);
        let mut t = CallTally::default();
        t.record("task_complete", true);
        assert_eq!(t.only_failures(), None);
    }

    #[test]
    fn narration_is_recognised_and_answers_are_not() {
        assert!(is_narration("Let me read the file first."));
        assert!(is_narration("I'll check the tests now."));
        assert!(is_narration("Sure. Next, I will look at the config:"));
        assert!(!is_narration(
            "The failing test expected 4 but got 5; I fixed the off-by-one in src/lib.rs."
        ));
        assert!(!is_narration("There are 3 files: a.rs, b.rs and c.rs."));
        assert!(!is_narration(""));
    }

    #[test]
    fn budgets_report_which_ran_out() {
        let b = Budgets {
            max_total_tokens: Some(100),
            max_wall_time: None,
            max_tool_calls: Some(2),
        };
        let t = Duration::from_millis(5);
        assert_eq!(exhausted_budget(&b, t, 99, 1), None);
        assert_eq!(
            exhausted_budget(&b, t, 100, 1).map(|x| x.0),
            Some(BudgetKind::Tokens)
        );
        assert_eq!(
            exhausted_budget(&b, t, 0, 2).map(|x| x.0),
            Some(BudgetKind::ToolCalls)
        );
        let b = Budgets {
            max_wall_time: Some(Duration::ZERO),
            ..Budgets::default()
        };
        assert_eq!(
            exhausted_budget(&b, t, 0, 0).map(|x| x.0),
            Some(BudgetKind::Time)
        );
    }
}
