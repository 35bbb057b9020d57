//! `reagent runs export ID --html FILE`: one self-contained page (inline CSS, no scripts, no
//! external assets) with the run's timeline. Every piece of run data is HTML-escaped.

use reagent_cycles::charts::escape;
use reagent_protocol::{Event, EventKind};
use reagent_store::{RunRecord, StoredEvent};

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;\
color:#1d2330;background:#f7f8fa}h1{font-size:1.3em}table{border-collapse:collapse;width:100%}\
td,th{padding:.35em .6em;border-bottom:1px solid #dde1e8;vertical-align:top;text-align:left}\
th{background:#eceff4}.t{color:#667;white-space:nowrap;font-variant-numeric:tabular-nums}\
.k{font-weight:600;white-space:nowrap}.model .k{color:#2457a6}.tool .k{color:#1f7a4a}\
.fail .k,.guardrail .k{color:#b3261e}.guardrail{background:#fff4f2}pre{margin:.3em 0;\
white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e3e6ec;padding:.4em;\
max-height:24em;overflow:auto}dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}\
dt{color:#667}dd{margin:0}";

/// The whole page.
pub(crate) fn page(run: &RunRecord, events: &[StoredEvent]) -> String {
    let start = humantime::parse_rfc3339(&run.started).ok();
    let mut rows = String::new();
    for stored in events {
        let offset = match (start, humantime::parse_rfc3339(&ts_of(stored))) {
            (Some(a), Ok(b)) => b
                .duration_since(a)
                .map(|d| format!("+{:.3} s", d.as_secs_f64()))
                .unwrap_or_default(),
            _ => String::new(),
        };
        let (class, kind, detail) = match stored.parse() {
            Ok(e) => row(&e),
            Err(_) => (
                "other",
                stored.kind.clone(),
                format!("<pre>{}</pre>", escape(&stored.json)),
            ),
        };
        if detail.is_empty() {
            continue;
        }
        rows.push_str(&format!(
            "<tr class=\"{class}\"><td class=\"t\">{}</td><td class=\"k\">{}</td><td>{detail}</td></tr>\n",
            escape(&offset),
            escape(&kind)
        ));
    }
    let answer = run.answer.as_deref().unwrap_or("");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>reagent run {id}</title><style>{STYLE}</style></head><body>\n\
         <h1>reagent run <code>{id}</code></h1>\n<dl>\
         <dt>task</dt><dd><pre>{task}</pre></dd><dt>outcome</dt><dd>{outcome}{error}</dd>\
         <dt>model</dt><dd>{model} ({provider}, {mode})</dd><dt>started</dt><dd>{started}</dd>\
         <dt>finished</dt><dd>{finished}</dd><dt>iterations</dt><dd>{iterations}</dd>\
         <dt>tool calls</dt><dd>{tool_calls}</dd><dt>tokens</dt><dd>{prompt} prompt + {completion} completion</dd>\
         <dt>workspace</dt><dd>{workspace}</dd></dl>\n\
         <h2>Timeline</h2>\n<table><thead><tr><th>time</th><th>event</th><th>detail</th></tr></thead><tbody>\n\
         {rows}</tbody></table>\n<h2>Answer</h2>\n<pre>{answer}</pre>\n</body></html>\n",
        id = escape(&run.id),
        task = escape(&run.task),
        outcome = escape(&run.outcome),
        error = run
            .error
            .as_deref()
            .map(|e| format!(" — {}", escape(e)))
            .unwrap_or_default(),
        model = escape(&run.model),
        provider = escape(&run.provider),
        mode = escape(&run.tool_mode),
        started = escape(&run.started),
        finished = escape(run.finished.as_deref().unwrap_or("—")),
        iterations = run.iterations,
        tool_calls = run.tool_calls,
        prompt = run.prompt_tokens,
        completion = run.completion_tokens,
        workspace = escape(&run.workspace),
        answer = escape(answer),
    )
}

fn ts_of(stored: &StoredEvent) -> String {
    serde_json::from_str::<serde_json::Value>(&stored.json)
        .ok()
        .and_then(|v| v.get("ts").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_default()
}

fn pre(text: &str) -> String {
    format!("<pre>{}</pre>", escape(text))
}

/// (row class, event label, detail HTML); an empty detail leaves the event out.
fn row(e: &Event) -> (&'static str, String, String) {
    let label = e.type_name().replace('_', " ");
    match &e.kind {
        EventKind::RunStarted { task, tools, .. } => (
            "start",
            label,
            format!("{}tools: {}", pre(task), escape(&tools.join(", "))),
        ),
        EventKind::LlmRequest {
            iteration,
            messages,
            estimated_tokens,
        } => (
            "model",
            label,
            format!("step {iteration}: {messages} messages, ~{estimated_tokens} tokens"),
        ),
        EventKind::LlmResponse {
            iteration,
            latency_ms,
            prompt_tokens,
            completion_tokens,
            finish_reason,
            tool_calls,
            ..
        } => (
            "model",
            label,
            format!(
                "step {iteration}: <b>{latency_ms} ms</b>, {prompt_tokens} prompt + \
                 {completion_tokens} completion tokens, {tool_calls} calls, finish {}",
                escape(finish_reason)
            ),
        ),
        EventKind::AssistantMessage {
            content, reasoning, ..
        } => {
            let mut d = String::new();
            if let Some(r) = reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                d.push_str(&format!("<details><summary>thinking</summary>{}</details>", pre(r)));
            }
            d.push_str(&pre(content));
            ("model", label, d)
        }
        EventKind::ToolCall {
            name,
            arguments,
            ok,
            duration_ms,
            summary,
            ..
        } => (
            if *ok { "tool" } else { "fail" },
            label,
            format!(
                "<b>{}</b> ({}, {duration_ms} ms) {}{}",
                escape(name),
                if *ok { "ok" } else { "failed" },
                escape(summary),
                pre(&serde_json::to_string_pretty(arguments).unwrap_or_default())
            ),
        ),
        EventKind::ToolResult {
            name,
            ok,
            output,
            truncated,
            ..
        } => (
            if *ok { "tool" } else { "fail" },
            label,
            format!(
                "<details open><summary>{}{}</summary>{}</details>",
                escape(name),
                if *truncated { " (cut at the cap)" } else { "" },
                pre(output)
            ),
        ),
        EventKind::Guardrail {
            guardrail,
            action,
            detail,
        } => (
            "guardrail",
            label,
            format!(
                "<b>{}</b> → {}: {}",
                guardrail.as_str(),
                action.as_str(),
                escape(detail)
            ),
        ),
        EventKind::UserMessage { content, .. } => ("user", label, pre(content)),
        EventKind::Compaction {
            rounds_removed,
            estimated_tokens_before,
            estimated_tokens_after,
            ..
        } => (
            "guardrail",
            label,
            format!("{rounds_removed} rounds removed, ~{estimated_tokens_before} → ~{estimated_tokens_after} tokens"),
        ),
        EventKind::Retry { attempt, error, .. } => (
            "fail",
            label,
            format!("attempt {attempt}: {}", escape(error)),
        ),
        EventKind::RunFinished {
            outcome,
            wall_ms,
            model_ms,
            ..
        } => (
            "end",
            label,
            format!("{} in {wall_ms} ms ({model_ms} ms waiting for the model)", outcome.as_str()),
        ),
        _ => ("other", label, String::new()),
    }
}
