//! Several runs side by side: each run's totals and means over its cycles.

use reagent_store::Store;
use serde::Serialize;

use crate::report::Report;
use crate::CyclesError;

/// One run's summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The experiment.
    pub run_id: String,
    /// Its model.
    pub model: String,
    /// Its status.
    pub status: String,
    /// Cycles done.
    pub cycles_done: usize,
    /// Cycles cut short by a limit.
    pub cut_short: usize,
    /// Tool calls over all cycles.
    pub tool_calls: u64,
    /// Memory operations over all cycles.
    pub memory_ops: u64,
    /// Messages to the operator over all cycles.
    pub operator_messages: u64,
    /// Tokens over all cycles.
    pub tokens: u64,
    /// Mean wall time of a cycle, seconds.
    pub mean_cycle_secs: f64,
    /// Mean characters of a reflection.
    pub mean_reflection_chars: f64,
    /// Mean of each cycle's highest similarity to earlier ones (cycles 2 on).
    pub mean_similarity: Option<f64>,
    /// Cycles after which an advisory was given.
    pub advisories: usize,
    /// Keys in memory at the end.
    pub memory_keys: usize,
}

impl RunSummary {
    /// The summary of a report.
    pub fn of(report: &Report) -> RunSummary {
        let c = &report.cycles;
        let n = c.len().max(1) as f64;
        let sims: Vec<f64> = c.iter().filter_map(|r| r.similarity_max).collect();
        RunSummary {
            run_id: report.experiment.id.clone(),
            model: report.experiment.model.clone(),
            status: report.experiment.status.clone(),
            cycles_done: c.len(),
            cut_short: c.iter().filter(|r| r.cut_short).count(),
            tool_calls: c.iter().map(|r| r.tool_calls).sum(),
            memory_ops: c.iter().map(|r| r.memory_ops).sum(),
            operator_messages: c.iter().map(|r| r.operator_messages).sum(),
            tokens: c.iter().map(|r| r.tokens).sum(),
            mean_cycle_secs: c.iter().map(|r| r.duration_ms as f64 / 1000.0).sum::<f64>() / n,
            mean_reflection_chars: c.iter().map(|r| r.reflection_chars as f64).sum::<f64>() / n,
            mean_similarity: (!sims.is_empty())
                .then(|| sims.iter().sum::<f64>() / sims.len() as f64),
            advisories: c.iter().filter(|r| r.similarity_level != "none").count(),
            memory_keys: report.memory.len(),
        }
    }
}

/// The summaries of `runs`, in the order given.
pub async fn compare(store: &Store, runs: &[String]) -> Result<Vec<RunSummary>, CyclesError> {
    let mut out = Vec::new();
    for id in runs {
        out.push(RunSummary::of(&Report::load(store, id).await?));
    }
    Ok(out)
}

/// The metrics shown, as (label, value of a summary).
type Column = (&'static str, fn(&RunSummary) -> String);

const COLUMNS: [Column; 13] = [
    ("model", |s| s.model.clone()),
    ("status", |s| s.status.clone()),
    ("cycles done", |s| s.cycles_done.to_string()),
    ("cut short", |s| s.cut_short.to_string()),
    ("tool calls", |s| s.tool_calls.to_string()),
    ("memory ops", |s| s.memory_ops.to_string()),
    ("operator messages", |s| s.operator_messages.to_string()),
    ("tokens", |s| s.tokens.to_string()),
    ("mean cycle (s)", |s| format!("{:.1}", s.mean_cycle_secs)),
    ("mean reflection chars", |s| {
        format!("{:.0}", s.mean_reflection_chars)
    }),
    ("mean similarity", |s| {
        s.mean_similarity
            .map_or("-".to_owned(), |x| format!("{x:.2}"))
    }),
    ("advisories", |s| s.advisories.to_string()),
    ("memory keys at end", |s| s.memory_keys.to_string()),
];

/// The runs side by side as a text table: a metric per row, a run per column.
pub fn table(runs: &[RunSummary]) -> String {
    let label_width = COLUMNS.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let cells: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            std::iter::once(r.run_id.clone())
                .chain(COLUMNS.iter().map(|(_, f)| f(r)))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = cells
        .iter()
        .map(|col| col.iter().map(|c| c.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let labels = std::iter::once("run").chain(COLUMNS.iter().map(|(l, _)| *l));
    for (row, label) in labels.enumerate() {
        out.push_str(&format!("{label:<label_width$}"));
        for (col, w) in cells.iter().zip(&widths) {
            out.push_str(&format!("  {:>w$}", col[row], w = *w));
        }
        out.push('\n');
    }
    out
}

/// The runs side by side as an HTML page.
pub fn html(runs: &[RunSummary]) -> String {
    let mut out = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>reagent cycles compare</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th:first-child{text-align:left}</style>\
         </head><body><h1>Runs compared</h1><table><tr><th>metric</th>",
    );
    for r in runs {
        out.push_str(&format!("<th>{}</th>", crate::charts::escape(&r.run_id)));
    }
    out.push_str("</tr>");
    for (label, f) in COLUMNS {
        out.push_str(&format!("<tr><th>{label}</th>"));
        for r in runs {
            out.push_str(&format!("<td>{}</td>", crate::charts::escape(&f(r))));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></body></html>\n");
    out
}
