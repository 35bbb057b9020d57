//! Text reports: the summary tables of one result, and the comparison of two.

use std::fmt::Write;

use serde::Serialize;

use crate::result::{EvalResult, ModeSummary, NamedStats, Stats};

/// A table cell: `passed/runs pct · iterations · tokens · seconds` (per run).
fn cell(s: &Stats) -> String {
    format!(
        "{}/{} {:>3.0}% {:>4.1}it {:>5.0}tok {:>5.1}s",
        s.passed,
        s.runs,
        s.pass_rate * 100.0,
        s.mean_iterations,
        s.mean_tokens,
        s.mean_wall_ms / 1000.0
    )
}

/// A category cell: [`cell`], and with several samples the spread of their pass rates
/// (`±std pt [min–max%]`).
fn cell_with_spread(s: &Stats) -> String {
    let mut text = cell(s);
    let sp = &s.spread;
    if sp.samples > 1 {
        let _ = write!(
            text,
            " ±{:.0}pt [{:.0}–{:.0}%]",
            sp.std * 100.0,
            sp.min * 100.0,
            sp.max * 100.0
        );
    }
    text
}

/// A cost cell: tool calls per run, and model calls, tokens and seconds per finished (passed)
/// task; with `--attempts`, the attempts per run too.
fn cost_cell(s: &Stats) -> String {
    let mut cell = match (
        s.model_calls_per_pass,
        s.tokens_per_pass,
        s.wall_ms_per_pass,
    ) {
        (Some(calls), Some(tokens), Some(wall)) => format!(
            "{:>4.1}calls {:>4.1}llm {:>6.0}tok {:>6.1}s",
            s.mean_tool_calls,
            calls,
            tokens,
            wall / 1000.0
        ),
        _ => format!("{:>4.1}calls            - none passed", s.mean_tool_calls),
    };
    if s.mean_attempts > 1.0 {
        cell.push_str(&format!(" {:.2}att", s.mean_attempts));
    }
    cell
}

/// Rows (categories or tasks) with one cell per mode, modes side by side.
fn table(
    out: &mut String,
    title: &str,
    summary: &[ModeSummary],
    rows: fn(&ModeSummary) -> &[NamedStats],
    cell: fn(&Stats) -> String,
) {
    let mut names: Vec<&str> = Vec::new();
    for m in summary {
        for r in rows(m) {
            if !names.contains(&r.name.as_str()) {
                names.push(r.name.as_str());
            }
        }
    }
    let cells: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            summary
                .iter()
                .map(|m| {
                    rows(m)
                        .iter()
                        .find(|r| r.name == *name)
                        .map(|r| cell(&r.stats))
                        .unwrap_or_else(|| "-".to_owned())
                })
                .collect()
        })
        .collect();
    let width = names
        .iter()
        .map(|n| n.len())
        .chain([title.len(), 7])
        .max()
        .unwrap_or(7);
    let cell_width = cells
        .iter()
        .flatten()
        .map(|c| c.chars().count())
        .chain(summary.iter().map(|m| m.mode.len()))
        .max()
        .unwrap_or(0);
    let _ = write!(out, "{title:<width$}");
    for m in summary {
        let _ = write!(out, "  {:<cell_width$}", m.mode);
    }
    out.push('\n');
    for (name, row) in names.iter().zip(&cells) {
        let _ = write!(out, "{name:<width$}");
        for text in row {
            let _ = write!(out, "  {text:<cell_width$}");
        }
        out.push('\n');
    }
}

/// The summary with an `overall` row after the categories.
fn with_overall(summary: &[ModeSummary]) -> Vec<ModeSummary> {
    summary
        .iter()
        .map(|m| {
            let mut categories = m.categories.clone();
            categories.push(NamedStats {
                name: "overall".to_owned(),
                stats: m.overall.clone(),
            });
            ModeSummary {
                mode: m.mode.clone(),
                overall: m.overall.clone(),
                categories,
                tasks: Vec::new(),
            }
        })
        .collect()
}

/// The report of a result: per task (its pass fraction over the samples), per category and
/// overall (with the spread of the samples' pass rates when there are several), then what a
/// finished task costs per category; modes side by side. A cell is `passed/runs pass-rate
/// mean-iterations mean-tokens mean-seconds`.
pub fn render_summary(result: &EvalResult) -> String {
    let samples = if result.seeds > 1 {
        format!(
            "{} samples per task: seeds 1..={}",
            result.seeds, result.seeds
        )
    } else {
        "1 sample per task: seed 1".to_owned()
    };
    let mut out = format!(
        "suite {} ({} tasks, {samples}) · model {} · provider {} · {}\n\n",
        result.suite, result.tasks, result.model, result.provider, result.started
    );
    if result.interrupted {
        let planned = result.tasks as usize * result.modes.len() * result.seeds as usize;
        out.push_str(&format!(
            "interrupted: {} of {planned} runs finished; the rates are of those\n\n",
            result.runs.len()
        ));
    }
    table(&mut out, "task", &result.summary, |m| &m.tasks, cell);
    out.push('\n');
    let categories = with_overall(&result.summary);
    table(
        &mut out,
        "category",
        &categories,
        |m| &m.categories,
        cell_with_spread,
    );
    out.push_str(
        "\nper finished task (tool calls per run; model calls, tokens and seconds of all runs per \
         pass; attempts per run when more than one)\n",
    );
    table(
        &mut out,
        "category",
        &categories,
        |m| &m.categories,
        cost_cell,
    );
    out
}

/// One row of a comparison: a mode's category (or `overall`) in results A and B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    /// Mode name.
    pub mode: String,
    /// Category, or `overall`.
    pub category: String,
    /// In A, if it ran there.
    pub a: Option<Stats>,
    /// In B, if it ran there.
    pub b: Option<Stats>,
    /// B's pass rate minus A's, in percentage points (when both ran).
    pub pass_rate_delta: Option<f64>,
}

/// Two results side by side, per mode and category.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Model and suite of A.
    pub a: String,
    /// Model and suite of B.
    pub b: String,
    /// Rows: for each mode (A's order, then B's own), its categories, then `overall`.
    pub rows: Vec<ComparisonRow>,
}

/// Compare two results per mode and category (modes matched by name).
pub fn compare(a: &EvalResult, b: &EvalResult) -> Comparison {
    let mut modes: Vec<&str> = a.summary.iter().map(|m| m.mode.as_str()).collect();
    for m in &b.summary {
        if !modes.contains(&m.mode.as_str()) {
            modes.push(&m.mode);
        }
    }
    let find = |r: &EvalResult, mode: &str| r.summary.iter().find(|m| m.mode == mode).cloned();
    let mut rows = Vec::new();
    for mode in modes {
        let (ma, mb) = (find(a, mode), find(b, mode));
        let mut categories: Vec<String> = Vec::new();
        for m in ma.iter().chain(mb.iter()) {
            for c in &m.categories {
                if !categories.contains(&c.name) {
                    categories.push(c.name.clone());
                }
            }
        }
        let stats = |m: &Option<ModeSummary>, cat: &str| {
            m.as_ref().and_then(|m| {
                m.categories
                    .iter()
                    .find(|c| c.name == cat)
                    .map(|c| c.stats.clone())
            })
        };
        let row = |category: String, a: Option<Stats>, b: Option<Stats>| ComparisonRow {
            mode: mode.to_owned(),
            pass_rate_delta: match (&a, &b) {
                (Some(a), Some(b)) => Some((b.pass_rate - a.pass_rate) * 100.0),
                _ => None,
            },
            category,
            a,
            b,
        };
        for cat in categories {
            let (sa, sb) = (stats(&ma, &cat), stats(&mb, &cat));
            rows.push(row(cat, sa, sb));
        }
        rows.push(row(
            "overall".to_owned(),
            ma.as_ref().map(|m| m.overall.clone()),
            mb.as_ref().map(|m| m.overall.clone()),
        ));
    }
    let label = |r: &EvalResult| format!("{} on {} ({})", r.model, r.suite, r.started);
    Comparison {
        a: label(a),
        b: label(b),
        rows,
    }
}

/// A comparison as a table: pass rates of A and B and the change, per mode and category.
pub fn render_comparison(c: &Comparison) -> String {
    let mut out = format!("A: {}\nB: {}\n\n", c.a, c.b);
    let width = c
        .rows
        .iter()
        .map(|r| r.category.len())
        .chain([8])
        .max()
        .unwrap_or(8);
    let rate = |s: &Option<Stats>| match s {
        Some(s) => format!("{}/{} {:.0}%", s.passed, s.runs, s.pass_rate * 100.0),
        None => "-".to_owned(),
    };
    let _ = writeln!(
        out,
        "{:<12} {:<width$}  {:>12}  {:>12}  {:>8}  {:>9}",
        "mode", "category", "A", "B", "change", "tokens Δ"
    );
    for r in &c.rows {
        let delta = r
            .pass_rate_delta
            .map(|d| format!("{d:+.0} pt"))
            .unwrap_or_else(|| "-".to_owned());
        let tokens = match (&r.a, &r.b) {
            (Some(a), Some(b)) => format!("{:+.0}", b.mean_tokens - a.mean_tokens),
            _ => "-".to_owned(),
        };
        let _ = writeln!(
            out,
            "{:<12} {:<width$}  {:>12}  {:>12}  {:>8}  {:>9}",
            r.mode,
            r.category,
            rate(&r.a),
            rate(&r.b),
            delta,
            tokens
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::tests::{result, run};

    #[test]
    fn the_summary_shows_tasks_categories_and_modes_side_by_side() {
        let r = result(
            vec![
                run("a", "read", "constrained", true, 2),
                run("b", "edit", "constrained", false, 4),
                run("a", "read", "seed", false, 1),
                run("b", "edit", "seed", false, 1),
            ],
            &["constrained", "seed"],
        );
        let text = render_summary(&r);
        let line = |start: &str| {
            text.lines()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start}: {text}"))
                .to_owned()
        };
        assert!(line("task").contains("constrained") && line("task").contains("seed"));
        assert!(line("read ").contains("1/1 100%"), "{text}");
        assert!(line("read ").contains("0/1   0%"), "{text}");
        assert!(line("overall").contains("1/2  50%"), "{text}");
        assert!(line("overall").contains("0/2   0%"), "{text}");
        assert!(line("a ").contains("2.0it"), "{text}");
        assert!(line("edit").contains("410tok"), "{text}");
    }

    #[test]
    fn compare_gives_per_category_deltas_for_matching_modes() {
        let a = result(
            vec![
                run("a", "read", "constrained", false, 2),
                run("b", "edit", "constrained", false, 2),
                run("a", "read", "seed", false, 2),
            ],
            &["constrained", "seed"],
        );
        let b = result(
            vec![
                run("a", "read", "constrained", true, 2),
                run("b", "edit", "constrained", false, 3),
                run("a", "read", "prompt", true, 2),
            ],
            &["constrained", "prompt"],
        );
        let c = compare(&a, &b);
        let find = |mode: &str, cat: &str| {
            c.rows
                .iter()
                .find(|r| r.mode == mode && r.category == cat)
                .unwrap_or_else(|| panic!("no row {mode}/{cat}"))
        };
        assert_eq!(find("constrained", "read").pass_rate_delta, Some(100.0));
        assert_eq!(find("constrained", "edit").pass_rate_delta, Some(0.0));
        assert_eq!(find("constrained", "overall").pass_rate_delta, Some(50.0));
        assert_eq!(find("seed", "read").b, None);
        assert_eq!(find("seed", "read").pass_rate_delta, None);
        assert_eq!(find("prompt", "overall").a, None);
        let text = render_comparison(&c);
        let row = text
            .lines()
            .find(|l| l.starts_with("constrained  read"))
            .unwrap();
        assert!(
            row.contains("0/1 0%") && row.contains("1/1 100%") && row.contains("+100 pt"),
            "{row}"
        );
        let edit = text
            .lines()
            .find(|l| l.starts_with("constrained  edit"))
            .unwrap();
        assert!(edit.ends_with("+100"), "tokens change: {edit}");
    }
}
