//! The hub's own model work: decomposing a goal into a [`TaskGraph`] and verifying finished
//! work against the graph's acceptance checks. Each reply is forced by a JSON Schema through
//! the provider layer (Ollama `format`, OpenAI `response_format`; a server that refuses schemas
//! gets the provider's JSON-mode fallback), then parsed and checked here.

use std::sync::Arc;
use std::time::Duration;

use reagent_protocol::{CancellationToken, ChatRequest, Message, ModelOptions, Provider};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{HubError, Result};
use crate::graph::{graph_schema, TaskGraph};

/// How long one planning call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The model the hub thinks with.
#[derive(Clone)]
pub struct Planner {
    provider: Arc<dyn Provider>,
    model: String,
    known_tools: Vec<String>,
}

/// What one finished task left, for verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskOutcome {
    /// The graph task's id.
    pub id: String,
    /// What it was asked to do.
    pub task: String,
    /// Its final queue state (`done`, `failed`, `dead`, `cancelled`).
    pub state: String,
    /// Its result (the agent's answer) or error.
    pub result: String,
}

/// The verdict on a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every acceptance check passed.
    Verified,
    /// Some passed.
    Partial,
    /// None passed.
    Failed,
}

impl Verdict {
    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Partial => "partial",
            Verdict::Failed => "failed",
        }
    }
}

/// One acceptance check as the model judged it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// The check.
    pub check: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why.
    #[serde(default)]
    pub note: String,
}

/// The model's verification of a goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Derived from the checks (not taken from the model's word).
    pub verdict: Verdict,
    /// Each check.
    pub checks: Vec<CheckResult>,
}

const DECOMPOSE_PROMPT: &str = "You plan work for a team of coding agents. Split the goal into \
small tasks an agent can do alone in a working directory. Give each task a short id, say \
plainly what to do, list the ids of the tasks that must finish first in depends_on (no \
cycles), and the tools it needs. Add acceptance checks: statements about the finished \
result that can be checked. Answer with JSON only.";

const VERIFY_PROMPT: &str = "You check finished work. For each acceptance check, say whether \
the results show that it holds (passed true or false) and why, in one sentence. Answer with \
JSON only.";

fn verify_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "checks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "check": {"type": "string"},
                        "passed": {"type": "boolean"},
                        "note": {"type": "string"}
                    },
                    "required": ["check", "passed", "note"]
                }
            }
        },
        "required": ["checks"]
    })
}

impl Planner {
    /// A planner on `model` at `provider`; graphs may use only `known_tools` (empty: any).
    pub fn new(provider: Arc<dyn Provider>, model: &str, known_tools: Vec<String>) -> Self {
        Planner {
            provider,
            model: model.to_owned(),
            known_tools,
        }
    }

    /// The model name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Ask for a task graph for `goal`, given what went wrong before (`correction`: failed
    /// checks, or a rejected graph). The graph is validated: a cycle, an unknown dependency or
    /// tool is an [`HubError::InvalidGraph`].
    pub async fn decompose(&self, goal: &str, correction: Option<&str>) -> Result<TaskGraph> {
        let mut user = format!("Goal: {goal}");
        if let Some(c) = correction {
            user.push_str("\n\nWhat happened before, to correct:\n");
            user.push_str(c);
        }
        if !self.known_tools.is_empty() {
            user.push_str(&format!("\n\nTools: {}", self.known_tools.join(", ")));
        }
        let reply = self
            .ask(DECOMPOSE_PROMPT, user, graph_schema(&self.known_tools))
            .await?;
        let graph: TaskGraph = serde_json::from_value(reply)
            .map_err(|e| HubError::Model(format!("the task graph does not fit its schema: {e}")))?;
        graph.validate(&self.known_tools)?;
        Ok(graph)
    }

    /// Ask whether `outcomes` meet the graph's acceptance checks.
    pub async fn verify(
        &self,
        goal: &str,
        graph: &TaskGraph,
        outcomes: &[TaskOutcome],
    ) -> Result<Verification> {
        let user = json!({
            "goal": goal,
            "acceptance": graph.acceptance,
            "results": outcomes,
        })
        .to_string();
        let reply = self.ask(VERIFY_PROMPT, user, verify_schema()).await?;
        let checks: Vec<CheckResult> = reply
            .get("checks")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| HubError::Model(format!("the verification does not fit its schema: {e}")))?
            .unwrap_or_default();
        Ok(Verification {
            verdict: verdict_of(&checks, graph.acceptance.len()),
            checks,
        })
    }

    async fn ask(&self, system: &str, user: String, schema: Value) -> Result<Value> {
        let mut request =
            ChatRequest::new(&self.model, [Message::system(system), Message::user(user)]);
        request.response_schema = Some(schema);
        request.options = ModelOptions {
            temperature: Some(0.0),
            ..ModelOptions::default()
        };
        let cancel = CancellationToken::new();
        let reply =
            tokio::time::timeout(CALL_TIMEOUT, self.provider.chat(&request, &|_| {}, &cancel))
                .await
                .map_err(|_| {
                    HubError::Model(format!("no answer within {} s", CALL_TIMEOUT.as_secs()))
                })?
                .map_err(|e| HubError::Model(e.to_string()))?;
        parse_json_reply(&reply.message.content)
    }
}

/// The JSON object in a reply (servers in JSON mode may still wrap it in a code fence).
fn parse_json_reply(text: &str) -> Result<Value> {
    let start = text.find('{');
    let end = text.rfind('}');
    let body = match (start, end) {
        (Some(s), Some(e)) if s < e => &text[s..=e],
        _ => text,
    };
    serde_json::from_str(body).map_err(|e| {
        let shown: String = text.chars().take(200).collect();
        HubError::Model(format!("the reply is not JSON ({e}): {shown}"))
    })
}

/// Verified when every acceptance check passed (and none is missing), failed when none
/// passed, partial otherwise.
fn verdict_of(checks: &[CheckResult], expected: usize) -> Verdict {
    let passed = checks.iter().filter(|c| c.passed).count();
    if passed == 0 {
        Verdict::Failed
    } else if passed == checks.len() && checks.len() >= expected {
        Verdict::Verified
    } else {
        Verdict::Partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(passed: bool) -> CheckResult {
        CheckResult {
            check: "c".into(),
            passed,
            note: String::new(),
        }
    }

    #[test]
    fn the_verdict_follows_the_checks() {
        assert_eq!(
            verdict_of(&[check(true), check(true)], 2),
            Verdict::Verified
        );
        assert_eq!(
            verdict_of(&[check(true), check(false)], 2),
            Verdict::Partial
        );
        assert_eq!(verdict_of(&[check(true)], 2), Verdict::Partial);
        assert_eq!(verdict_of(&[check(false)], 1), Verdict::Failed);
        assert_eq!(verdict_of(&[], 1), Verdict::Failed);
    }

    #[test]
    fn json_is_found_inside_a_fence() {
        let v = parse_json_reply("```json\n{\"a\": 1}\n```").unwrap();
        assert_eq!(v["a"], 1);
        assert!(parse_json_reply("no json here").is_err());
    }
}
