//! What a run did, read back from the store: a row per cycle, the reflections' similarity
//! matrix, the memory as it stood at the end; as a text table ([`Report::table`]) or an HTML
//! page with charts ([`crate::charts`]).

use reagent_store::{ExperimentRecord, MemoryItem, Store};
use serde::Serialize;
use serde_json::Value;

use crate::CyclesError;

/// One cycle's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleRow {
    /// Its number.
    pub cycle: u32,
    /// How its session ended.
    pub outcome: String,
    /// Whether a limit ended it.
    pub cut_short: bool,
    /// Tool calls.
    pub tool_calls: u64,
    /// Memory operations.
    pub memory_ops: u64,
    /// Messages to the operator.
    pub operator_messages: u64,
    /// Prompt plus completion tokens.
    pub tokens: u64,
    /// Wall time, milliseconds.
    pub duration_ms: u64,
    /// Characters of the reflection.
    pub reflection_chars: u64,
    /// Keys in memory at the end of the cycle.
    pub memory_keys: u64,
    /// Highest similarity to an earlier reflection.
    pub similarity_max: Option<f64>,
    /// `strong`, `moderate` or `none`.
    pub similarity_level: String,
    /// `embeddings` or `tfidf`.
    pub similarity_method: String,
    /// The reflection.
    pub reflection: String,
}

/// A run, read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The experiment's row.
    pub experiment: ExperimentRecord,
    /// A row per finished cycle.
    pub cycles: Vec<CycleRow>,
    /// `matrix[i][j]`: the similarity of cycle i+1's reflection to cycle j+1's (1 on the
    /// diagonal; symmetric), as the monitor measured it.
    pub matrix: Vec<Vec<f64>>,
    /// The memory at the end.
    pub memory: Vec<MemoryItem>,
}

fn count(m: &Value, key: &str) -> u64 {
    m.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl Report {
    /// The report of experiment `id`.
    pub async fn load(store: &Store, id: &str) -> Result<Report, CyclesError> {
        let experiment = store
            .experiment(id)
            .await?
            .ok_or_else(|| CyclesError::NotFound(id.to_owned()))?;
        let records = store.cycles(id).await?;
        let memory = store.experiment_memory(id).await?;
        let mut cycles = Vec::new();
        let n = records.len();
        let mut matrix = vec![vec![0.0; n]; n];
        for (i, r) in records.iter().enumerate() {
            let m: Value = serde_json::from_str(&r.metrics).unwrap_or(Value::Null);
            matrix[i][i] = 1.0;
            if let Some(scores) = m.get("similarity_scores").and_then(Value::as_array) {
                for pair in scores {
                    let (Some(c), Some(s)) = (
                        pair.get(0).and_then(Value::as_u64),
                        pair.get(1).and_then(Value::as_f64),
                    ) else {
                        continue;
                    };
                    if let Some(j) = records.iter().position(|x| x.cycle == c as i64) {
                        matrix[i][j] = s;
                        matrix[j][i] = s;
                    }
                }
            }
            cycles.push(CycleRow {
                cycle: u32::try_from(r.cycle).unwrap_or(0),
                outcome: r.outcome.clone(),
                cut_short: r.cut_short,
                tool_calls: count(&m, "tool_calls_total"),
                memory_ops: count(&m, "memory_ops_total"),
                operator_messages: count(&m, "messages_to_operator"),
                tokens: count(&m, "total_tokens"),
                duration_ms: count(&m, "duration_ms"),
                reflection_chars: count(&m, "reflection_chars"),
                memory_keys: count(&m, "memory_keys_end"),
                similarity_max: m.get("similarity_max").and_then(Value::as_f64),
                similarity_level: m
                    .get("similarity_level")
                    .and_then(Value::as_str)
                    .unwrap_or("none")
                    .to_owned(),
                similarity_method: m
                    .get("similarity_method")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                reflection: r.reflection.clone(),
            });
        }
        Ok(Report {
            experiment,
            cycles,
            matrix,
            memory,
        })
    }

    /// The per-cycle table as text.
    pub fn table(&self) -> String {
        let e = &self.experiment;
        let mut out = format!(
            "experiment {}  model {}  status {}  cycles {}/{}\n\n",
            e.id, e.model, e.status, e.cycles_done, e.cycles
        );
        out.push_str(
            "cycle  outcome          cut  tools  mem  op  tokens    secs   refl  keys  sim    advisory\n",
        );
        for c in &self.cycles {
            out.push_str(&format!(
                "{:<5}  {:<15}  {:<3}  {:>5}  {:>3}  {:>2}  {:>7}  {:>6.1}  {:>5}  {:>4}  {:<5}  {}\n",
                c.cycle,
                c.outcome,
                if c.cut_short { "yes" } else { "" },
                c.tool_calls,
                c.memory_ops,
                c.operator_messages,
                c.tokens,
                c.duration_ms as f64 / 1000.0,
                c.reflection_chars,
                c.memory_keys,
                c.similarity_max
                    .map_or("-".to_owned(), |s| format!("{s:.2}")),
                c.similarity_level,
            ));
        }
        out.push_str(&format!(
            "\nmemory at the end ({} keys):\n",
            self.memory.len()
        ));
        for m in &self.memory {
            let value: String = m.value.chars().take(80).collect();
            out.push_str(&format!("  {}: {}\n", m.key, value.replace('\n', " ")));
        }
        out
    }
}
