//! The report as an HTML page (tables; charts as embedded images).

use crate::report::Report;

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The report as one self-contained HTML page.
pub fn html(report: &Report) -> String {
    let e = &report.experiment;
    let mut out = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>reagent cycles: {id}</title>\
         <style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:4px 8px;vertical-align:top}}\
         td.r{{text-align:right}}pre{{white-space:pre-wrap;margin:0}}</style></head><body>\
         <h1>Experiment {id}</h1><p>model {model} · status {status} · cycles {done}/{total}</p>",
        id = escape(&e.id),
        model = escape(&e.model),
        status = escape(&e.status),
        done = e.cycles_done,
        total = e.cycles,
    );
    out.push_str(
        "<h2>Cycles</h2><table><tr><th>cycle</th><th>outcome</th><th>tools</th><th>memory ops</th>\
         <th>operator</th><th>tokens</th><th>seconds</th><th>similarity</th><th>reflection</th></tr>",
    );
    for c in &report.cycles {
        out.push_str(&format!(
            "<tr><td class=r>{}</td><td>{}{}</td><td class=r>{}</td><td class=r>{}</td><td class=r>{}</td>\
             <td class=r>{}</td><td class=r>{:.1}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            c.cycle,
            escape(&c.outcome),
            if c.cut_short { " (cut short)" } else { "" },
            c.tool_calls,
            c.memory_ops,
            c.operator_messages,
            c.tokens,
            c.duration_ms as f64 / 1000.0,
            c.similarity_max
                .map_or("-".to_owned(), |s| format!("{s:.2} {}", c.similarity_level)),
            escape(&c.reflection),
        ));
    }
    out.push_str("</table><h2>Memory at the end</h2><table><tr><th>key</th><th>value</th></tr>");
    for m in &report.memory {
        out.push_str(&format!(
            "<tr><td>{}</td><td><pre>{}</pre></td></tr>",
            escape(&m.key),
            escape(&m.value)
        ));
    }
    out.push_str("</table></body></html>\n");
    out
}
